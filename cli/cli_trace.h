/*
 * cli_trace.h - a run's MirageOS trace exported (CTF, JSON, Chrome trace)
 * and summarised for `profdb show`; loaded by view/view_trace.h.
 *
 * May call: view/view_trace.h, store/store.h, cli_util.h, cli_view.h,
 * cli_json.h (cli_trace.c).
 */
#ifndef PROFSVC_CLI_TRACE_H
#define PROFSVC_CLI_TRACE_H

#include <jansson.h>
#include "store/store.h"
#include "view/view_trace.h"

/* `profdb export RUN --ctf DIR --trace-json FILE --chrome-trace FILE`
 * (any of them; NULL: not asked).  0, or 1 (reported). */
struct view;
struct view_run;
int cli_trace_export(struct view *v, const struct view_run *run, const char *ctf_dir, const char *json_path,
                     const char *chrome_path);
/* `profdb show`'s trace section: printed as text when out is NULL, else
 * *out is the trace object (docs/json.md), left alone when the run has
 * no trace. */
void cli_trace_show(struct store *s, const struct store_run *run, json_t **out);

#endif
