/*
 * cli_json.h - the JSON objects profdb and profdb serve share, built with
 * jansson: one constructor per documented object (docs/json.md), so a run
 * or a device has the same fields whichever command or API path prints
 * it, and one way to print a document.
 */
#ifndef PROFSVC_CLI_JSON_H
#define PROFSVC_CLI_JSON_H

#include <jansson.h>
#include <stdint.h>

#include "../store/store.h"

/* A guest-chosen string as JSON text: the escapes of util/safe_text.h
 * kept visible (a C1 control is the six characters \u009b), so a decoded
 * value is as inert as the terminal form.  Never NULL for valid input. */
json_t *json_guest(const char *s);
/* A byte count, or null when negative (unknown). */
json_t *json_bytes_or_null(int64_t b);
/* The run object (docs/json.md "run"); now_us measures a running run's
 * duration. */
json_t *json_run(const struct store_run *r, int64_t now_us);
/* The device object (docs/json.md "device"), with its "status" block. */
json_t *json_device(const struct store_device_info *d);
/* The status object: what a profile device's status block said. */
json_t *json_status(const struct store_device_info *d);
/* Prints doc (stolen) to stdout, compact, on one line (reals to 12
 * significant digits), and flushes: 0, or 1 (reported). */
int json_print(json_t *doc);
/* {"key":[item, ...]} printed as json_print would, one item at a time as
 * it comes (each built, written, freed): a tree of 10,000 runs cost three
 * times the query that read them, most of it in malloc.  begin, add (v
 * stolen) for each item, end (which reports a failure once): 0 or 1. */
struct json_list {
	char *buf;
	size_t cap, n;
	int failed;
};
int json_list_begin(struct json_list *l, const char *key);
int json_list_add(struct json_list *l, json_t *v);
int json_list_end(struct json_list *l);
#endif
