/*
 * trace.h - MirageOS trace buffers.  be_trace_init watches @introduceDomain
 * and each domain's data/mprof/ring-ref; be_trace_note_event takes watch
 * events (1: act this round); be_trace_round acts on them (pipeline
 * quiesced); be_trace_poll snapshots the buffers and returns the ms until the
 * next poll (-1: none mapped); be_trace_domains_changed takes the last
 * packets of dead domains.  xenbus.c hands it its events through the
 * listener the daemon wires.  struct be_traces is its state.  trace.c may
 * call runs.c, domains.c, xs_values.c, the data path's be_worker_quiesce,
 * quota.c, log.c, the store and the platform.
 */
#ifndef PROFSVC_BE_TRACE_H
#define PROFSVC_BE_TRACE_H

#include <stdio.h>

struct be_backend;
struct be_run;
struct be_trace;

/* Its state, trace.c's alone (the daemon holds it for the daemon's life,
 * zeroed at first): every domain's trace node, and whether
 * @introduceDomain fired since the last round. */
struct be_traces {
	struct be_trace *list;
	int scan_due;
};

int be_trace_init(struct be_backend *b);
int be_trace_note_event(struct be_backend *b, const char *path, const char *token);
/* 1 when @introduceDomain had fired: new domains were looked for. */
int be_trace_round(struct be_backend *b);
int be_trace_poll(struct be_backend *b);
void be_trace_domains_changed(struct be_backend *b);
/* Run r is being deleted: a trace kept in it ends (what it has is kept,
 * then deleted with it) and its node is ignored. */
void be_trace_run_closed(struct be_backend *b, struct be_run *r);
void be_trace_shutdown(struct be_backend *b);
void be_trace_status(const struct be_traces *tr, FILE *f);
/* The same as a JSON array (the control socket's status --json).
 * jansson's own typedef, repeated so that this header needs no jansson
 * flags. */
typedef struct json_t json_t;
json_t *be_trace_status_json(const struct be_traces *tr);

#endif
