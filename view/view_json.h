/*
 * view_json.h - the JSON objects profdb and profdb serve share, built with
 * jansson: one constructor per documented object (docs/json.md), so a run
 * or a device has the same fields whichever command or API path prints it.
 *
 * May call: store/store.h, util/safe_text.h, view_format.h, jansson.
 */
#ifndef PROFSVC_VIEW_JSON_H
#define PROFSVC_VIEW_JSON_H

#include <jansson.h>
#include <stdint.h>

#include "store/store.h"

/* A guest-chosen string as JSON: the exact text once parsed (one
 * backslash is one backslash; a byte that is not UTF-8 is the lone
 * surrogate U+DC00 + byte, as util/safe_text's safe_text_json_bytes), while
 * the document itself stays inert: C0, DEL, C1 and bidi controls are
 * written as \uXXXX escapes.  Only a document written through
 * view_json_dumps (or view_json_unmark) has that form: see view_json.c.
 * NULL when out of memory. */
json_t *view_json_guest(const char *s);
/* json_dumps(v, flags) with view_json_guest's characters written as
 * their escapes; NULL on failure; free() it. */
char *view_json_dumps(const json_t *v, size_t flags);
/* The same for len bytes jansson dumped at s, in place (the text only
 * gets shorter; terminated when it did); returns the new length. */
size_t view_json_unmark(char *s, size_t len);
/* A byte count, or null when negative (unknown). */
json_t *view_json_bytes_or_null(int64_t b);
/* The run object (docs/json.md "run"); now_us measures a running run's
 * duration. */
json_t *view_json_run(const struct store_run *r, int64_t now_us);
/* The device object (docs/json.md "device"), with its "status" block. */
json_t *view_json_device(const struct store_device_info *d);
/* The status object: what a profile device's status block said. */
json_t *view_json_status(const struct store_device_info *d);

#endif
