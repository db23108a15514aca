/*
 * prof_feed.c - reading a GHC time profile (time_profile.h): bytes fed in
 * any pieces to the text or the JSON reader, chosen by the first byte that
 * is not white space; at the end, the inherited totals (and, for JSON, the
 * percentages), then GHC's table of top cost centres checked against the
 * tree; the model's start and end.
 *
 * May call: the readers (prof_text.c, prof_json.c), the model they build
 * (prof_model.c), GHC's table (prof_table.c), parse_util.c, util/id_index,
 * util/grow.h.
 */
#include "config.h"

#include "profile/common/parse_util.h"
#include "time_profile.h"
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tp_init(struct time_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->line_no = 1;
}

void tp_free(struct time_profile *p)
{
	tp_json_free(p);
	tp_table_free_rows(p);
	free(p->title);
	free(p->command);
	for (size_t i = 0; i < p->nccs; i++) {
		free(p->ccs[i].name);
		free(p->ccs[i].module);
		free(p->ccs[i].src);
	}
	free(p->ccs);
	free(p->nodes);
	free(p->lines.buf);
	free(p->stack);
	id_index_free(&p->cc_index);
	memset(p, 0, sizeof(*p));
}

/* ---- feeding ------------------------------------------------------------------ */

static int line_done(void *ctx, char *line, size_t len)
{
	struct time_profile *p = ctx;
	if (tp_text_line(p, line, len) != 0)
		return -1;
	p->line_no++;
	return 0;
}

static int feed_known(struct time_profile *p, const char *d, size_t len)
{
	if (p->format == TP_JSON)
		return tp_json_feed(p, d, len);
	int rc = pf_lines_feed(&p->lines, &p->fed, TP_MAX_LINE, d, len, line_done, p);
	if (rc == PF_TOO_LONG)
		return tp_fail(p, "a line longer than %u bytes", TP_MAX_LINE);
	if (rc == PF_NO_MEMORY)
		return tp_fail(p, "out of memory");
	return rc ? -1 : 0;
}

int tp_feed(struct time_profile *p, const void *data, size_t len)
{
	const char *d = data;
	if (p->failed)
		return -1;
	if (p->format != TP_UNKNOWN)
		return feed_known(p, d, len);
	/* The format is told by the first byte that is not white space; until
	 * it comes, white space waits in the line buffer, to be read as the
	 * format reads it (so pieces of any size parse alike). */
	size_t i = 0;
	while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r' ||
	                   d[i] == '\v' || d[i] == '\f'))
		i++;
	if (p->lines.len + i > TP_MAX_LINE)
		return tp_fail(p, "more than %u bytes of white space", TP_MAX_LINE);
	if (GROW(p->lines.buf, p->lines.cap, p->lines.len + i + 1) != 0)
		return tp_fail(p, "out of memory");
	memcpy(p->lines.buf + p->lines.len, d, i);
	p->lines.len += i;
	if (i == len)
		return 0;
	p->format = d[i] == '{' ? TP_JSON : TP_TEXT;
	char *held = p->lines.buf;
	size_t nheld = p->lines.len;
	p->lines = (struct pf_lines){0};
	int rc = feed_known(p, held, nheld);
	free(held);
	return rc ? rc : feed_known(p, d + i, len - i);
}

int tp_finish(struct time_profile *p)
{
	if (p->failed || p->finished)
		return p->failed ? -1 : 0;
	if (p->format == TP_TEXT && p->lines.len) {
		p->lines.buf[p->lines.len] = '\0';
		if (tp_text_line(p, p->lines.buf, p->lines.len) != 0)
			return -1;
		p->lines.len = 0;
	}
	if (p->format == TP_JSON && tp_json_finish(p) != 0)
		return -1;
	p->finished = 1;
	if (p->nnodes == 0)
		return tp_fail(p, p->format == TP_UNKNOWN ? "the time profile is empty"
		                                          : "not a GHC time profile (.prof): no call tree");
	/* Inherited ticks and bytes: children come after their parent. */
	for (size_t i = 0; i < p->nnodes; i++) {
		p->nodes[i].inh_ticks = p->nodes[i].ticks;
		p->nodes[i].inh_bytes = p->nodes[i].bytes;
	}
	for (size_t i = p->nnodes; i-- > 0;) {
		struct tp_node *n = &p->nodes[i];
		if (n->parent == TP_NONE)
			continue;
		struct tp_node *up = &p->nodes[n->parent];
		up->inh_ticks = up->inh_ticks > UINT64_MAX - n->inh_ticks ? UINT64_MAX
		                                                          : up->inh_ticks + n->inh_ticks;
		up->inh_bytes = up->inh_bytes > UINT64_MAX - n->inh_bytes ? UINT64_MAX
		                                                          : up->inh_bytes + n->inh_bytes;
	}
	/* JSON gives ticks and bytes only: percentages from the totals. */
	if (p->format == TP_JSON)
		for (size_t i = 0; i < p->nnodes; i++) {
			struct tp_node *n = &p->nodes[i];
			double tt = p->total_ticks ? (double)p->total_ticks : 1;
			double ta = p->total_alloc ? (double)p->total_alloc : 1;
			n->time = 100.0 * (double)n->ticks / tt;
			n->alloc = 100.0 * (double)n->bytes / ta;
			n->inh_time = 100.0 * (double)n->inh_ticks / tt;
			n->inh_alloc = 100.0 * (double)n->inh_bytes / ta;
		}
	return tp_table_finish(p);
}
