/*
 * sync_push.h - --sync URL: runs pushed to the fleet catalogue as they
 * end, from a thread of its own (never in a guest's way).  sync_push.c
 * calls the fleet/ library, log.c and util/.
 */
#ifndef PROFSVC_BE_SYNC_PUSH_H
#define PROFSVC_BE_SYNC_PUSH_H

#include <stdint.h>
#include <stdio.h>

/* The pushing thread's state: its queue, connection and counts. */
struct be_sync_push;

/* Starts pushing the runs of the store at db (by their ends, and a
 * catch-up pass) to the fleet catalogue at url, from a thread of its own;
 * NULL when it cannot (errno). */
struct be_sync_push *be_sync_push_start(const char *url, const char *db);
/* A run ended: queued for the thread (p NULL: no --sync, nothing). */
void be_sync_push_run_ended(struct be_sync_push *p, int64_t run_id);
/* Stops the thread (a push under way is cut) and frees p (NULL: nothing). */
void be_sync_push_stop(struct be_sync_push *p);
/* Its line of status (nothing without --sync). */
void be_sync_push_status(struct be_sync_push *p, FILE *f);
/* Its part of status --json (null without --sync).  jansson's own
 * typedef, repeated so that this header needs no jansson flags. */
typedef struct json_t json_t;
json_t *be_sync_push_status_json(struct be_sync_push *p);

#endif
