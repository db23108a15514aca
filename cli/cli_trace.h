/*
 * cli_trace.h - a run's MirageOS trace read from the store into memory
 * (its packets in sequence order) for export and show.
 */
#ifndef PROFSVC_CLI_TRACE_H
#define PROFSVC_CLI_TRACE_H

#include <jansson.h>
#include "../profile/trace_render.h"
#include "../store/store.h"

struct cli_trace {
	struct mprof_trace t;
	struct mprof_trace_packet *packets;
	uint8_t *bytes;
	size_t nbytes;
};

/* Inside a read transaction.  0, STORE_ENOTFOUND when the run has no
 * trace, or another STORE_E* code (store_errmsg says why). */
int cli_trace_load(struct store *s, const struct store_run *run, struct cli_trace *out);
void cli_trace_free(struct cli_trace *ct);

/* `profdb export RUN --ctf DIR --trace-json FILE --chrome-trace FILE`
 * (any of them; NULL: not asked).  0, or 1 (reported). */
int cli_trace_export(const char *db, const char *run_arg, const char *ctf_dir, const char *json_path,
                     const char *chrome_path);
/* `profdb show`'s trace section: printed as text when out is NULL, else
 * *out is the trace object (docs/json.md), left alone when the run has
 * no trace. */
void cli_trace_show(struct store *s, const struct store_run *run, json_t **out);

#endif
