/*
 * cli_json.h - how profdb prints JSON documents on stdout: one compact
 * document per line (what the web API serves too, and what a shell
 * pipeline takes line by line); the objects are view/view_json.h's.
 *
 * May call: cli_util.h, jansson.
 */
#ifndef PROFSVC_CLI_JSON_H
#define PROFSVC_CLI_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "view/view_json.h"

/* Prints doc (stolen) to stdout, compact, on one line (reals to 12
 * significant digits), and flushes: 0, or 1 (reported). */
int cli_json_print(json_t *doc);
/* {"key":[item, ...]} printed as cli_json_print would, one item at a time as
 * it comes (each built, written, freed): a tree of 10,000 runs cost three
 * times the query that read them, most of it in malloc.  begin, add (v
 * stolen) for each item, end (which reports a failure once): 0 or 1. */
struct cli_json_list {
	char *buf;
	size_t cap, n;
	int failed;
};
int cli_json_list_begin(struct cli_json_list *l, const char *key);
int cli_json_list_add(struct cli_json_list *l, json_t *v);
int cli_json_list_end(struct cli_json_list *l);
#endif
