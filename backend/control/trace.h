/*
 * trace.h - MirageOS trace buffers.  trace_init watches @introduceDomain
 * and each domain's data/mprof/ring-ref; trace_note_event takes watch
 * events (1: act this round); trace_round acts on them (pipeline
 * quiesced); trace_poll snapshots the buffers and returns the ms until the
 * next poll (-1: none mapped); trace_domains_changed takes the last
 * packets of dead domains.  xenbus.c hands it its events through the
 * listener the daemon wires.  trace.c calls runs.c, domains.c,
 * xs_values.c, the data path's io_quiesce, quota.c, log.c and the store.
 */
#ifndef PROFSVC_BE_TRACE_H
#define PROFSVC_BE_TRACE_H

#include <stdio.h>

struct backend;
struct run;

int trace_init(struct backend *b);
int trace_note_event(struct backend *b, const char *path, const char *token);
void trace_round(struct backend *b);
int trace_poll(struct backend *b);
void trace_domains_changed(struct backend *b);
/* Run r is being deleted: a trace kept in it ends (what it has is kept,
 * then deleted with it) and its node is ignored. */
void trace_run_closed(struct backend *b, struct run *r);
void trace_shutdown(struct backend *b);
void trace_status(struct backend *b, FILE *f);
/* The same as a JSON array (the control socket's status --json).
 * jansson's own typedef, repeated so that this header needs no jansson
 * flags. */
typedef struct json_t json_t;
json_t *trace_status_json(struct backend *b);

#endif
