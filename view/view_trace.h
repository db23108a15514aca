/*
 * view_trace.h - a run's MirageOS trace read from the store into memory
 * (its packets in sequence order), for reports, export and show.
 *
 * May call: store/store.h, profile/trace/trace_render.h.
 */
#ifndef PROFSVC_VIEW_TRACE_H
#define PROFSVC_VIEW_TRACE_H

#include "../profile/trace/trace_render.h"
#include "../store/store.h"

struct view_trace {
	struct mprof_trace t;
	struct mprof_trace_packet *packets;
	uint8_t *bytes;
	size_t nbytes;
};

/* Inside a read transaction.  0, STORE_ENOTFOUND when the run has no
 * trace, or another STORE_E* code (store_errmsg says why). */
int view_trace_load(struct store *s, const struct store_run *run, struct view_trace *out);
void view_trace_free(struct view_trace *ct);

#endif
