/*
 * trace.h - MirageOS trace buffers.  be_trace_init watches @introduceDomain
 * and each domain's data/mprof/ring-ref; be_trace_note_event takes watch
 * events (1: act this round); be_trace_round acts on them (pipeline
 * quiesced); be_trace_poll snapshots the buffers and returns the ms until the
 * next poll (-1: none mapped); be_trace_domains_changed takes the last
 * packets of dead domains.  xenbus.c hands it its events through the
 * listener the daemon wires.  trace.c calls runs.c, domains.c,
 * xs_values.c, the data path's be_worker_quiesce, quota.c, log.c and the store.
 */
#ifndef PROFSVC_BE_TRACE_H
#define PROFSVC_BE_TRACE_H

#include <stdio.h>

struct be_backend;
struct be_run;

int be_trace_init(struct be_backend *b);
int be_trace_note_event(struct be_backend *b, const char *path, const char *token);
void be_trace_round(struct be_backend *b);
int be_trace_poll(struct be_backend *b);
void be_trace_domains_changed(struct be_backend *b);
/* Run r is being deleted: a trace kept in it ends (what it has is kept,
 * then deleted with it) and its node is ignored. */
void be_trace_run_closed(struct be_backend *b, struct be_run *r);
void be_trace_shutdown(struct be_backend *b);
void be_trace_status(struct be_backend *b, FILE *f);
/* The same as a JSON array (the control socket's status --json).
 * jansson's own typedef, repeated so that this header needs no jansson
 * flags. */
typedef struct json_t json_t;
json_t *be_trace_status_json(struct be_backend *b);

#endif
