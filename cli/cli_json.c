/*
 * cli_json.c - how profdb prints JSON documents on stdout (cli_json.h):
 * one compact document per line, lists streamed item by item.  Every
 * document is written through view_json_unmark, so guest text is in the
 * form view_json_guest promises (docs/json.md).
 *
 * May call: cli_util.h, view/view_json.h, util/grow.h, jansson.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "cli_util.h"
#include "util/grow.h"
#include "view/view_json.h"

int cli_json_list_begin(struct cli_json_list *l, const char *key)
{
	memset(l, 0, sizeof(*l));
	l->failed = printf("{\"%s\":[", key) < 0;
	return l->failed;
}

int cli_json_list_add(struct cli_json_list *l, json_t *v)
{
	const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(12);
	/* Dumped once into the kept buffer; again only when it had to grow
	 * (jansson says the size it needed). */
	size_t len = v && l->buf ? json_dumpb(v, l->buf, l->cap, flags) : 0;
	if (v && !l->failed && (!l->buf || len > l->cap)) {
		size_t need = l->buf ? len : json_dumpb(v, NULL, 0, flags);
		if (GROW(l->buf, l->cap, need ? need : 1) == 0)
			len = json_dumpb(v, l->buf, l->cap, flags);
		else
			l->failed = 1;
	}
	if (v && !l->failed && len && len <= l->cap)
		len = view_json_unmark(l->buf, len);
	l->failed = l->failed || !v || len == 0 || len > l->cap ||
	            (l->n && fputc(',', stdout) == EOF) || fwrite(l->buf, 1, len, stdout) != len;
	l->n++;
	json_decref(v);
	return l->failed;
}

int cli_json_list_end(struct cli_json_list *l)
{
	int rc = l->failed || fputs("]}\n", stdout) == EOF || fflush(stdout) != 0;
	free(l->buf);
	l->buf = NULL;
	l->cap = 0;
	if (rc)
		cli_err("writing JSON to standard output failed (out of memory or a closed pipe)");
	return rc;
}

int cli_json_print(json_t *doc)
{
	/* compact, one document per line: what the web API serves too, and
	 * what a shell pipeline (grep, jq -c) takes line by line */
	char *s = view_json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(12));
	int rc = !s || fputs(s, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) != 0;
	free(s);
	json_decref(doc);
	if (rc)
		cli_err("writing JSON to standard output failed (out of memory or a closed pipe)");
	return rc;
}
