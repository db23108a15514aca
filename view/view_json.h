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

#include "../store/store.h"

/* A guest-chosen string as JSON text: the escapes of util/safe_text.h
 * kept visible (a C1 control is the six characters \u009b), so a decoded
 * value is as inert as the terminal form.  Never NULL for valid input. */
json_t *view_json_guest(const char *s);
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
