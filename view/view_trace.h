/*
 * view_trace.h - a run's MirageOS trace read from the store into memory
 * (its packets in sequence order), for reports, export and show.
 *
 * May call: store/store.h, profile/trace/trace_render.h, view_err.h.
 */
#ifndef PROFSVC_VIEW_TRACE_H
#define PROFSVC_VIEW_TRACE_H

#include "profile/trace/trace_render.h"
#include "store/store.h"
#include "view_err.h"

struct view_trace {
	struct mprof_trace t;
	struct mprof_trace_packet *packets;
	uint8_t *bytes;
	size_t nbytes;
};

/* run's trace, inside the caller's read transaction.  0; VIEW_TRACE_NONE
 * when the run has no trace ("run N has no MirageOS trace" in e); or -1
 * with the store's words in e (a packet failing its checksum: damage,
 * view_err.h). */
#define VIEW_TRACE_NONE (-2)
int view_trace_load(struct store *s, const struct store_run *run, struct view_trace *out, struct view_err *e);
void view_trace_free(struct view_trace *ct);

#endif
