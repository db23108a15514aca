/*
 * sync_push.h - --sync URL: runs pushed to the fleet catalogue as they
 * end, from a thread of its own (never in a guest's way).  sync_push.c
 * calls the fleet/ library, log.c and util/.
 */
#ifndef PROFSVC_BE_SYNC_PUSH_H
#define PROFSVC_BE_SYNC_PUSH_H

#include <stdint.h>
#include <stdio.h>

struct be_backend;

int be_sync_push_start(struct be_backend *b);
void be_sync_push_run_ended(struct be_backend *b, int64_t run_id);
void be_sync_push_stop(struct be_backend *b);
void be_sync_push_status(struct be_backend *b, FILE *f);
/* Its part of status --json (null without --sync).  jansson's own
 * typedef, repeated so that this header needs no jansson flags. */
typedef struct json_t json_t;
json_t *be_sync_push_status_json(struct be_backend *b);

#endif
