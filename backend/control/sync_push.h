/*
 * sync_push.h - --sync URL: runs pushed to the fleet catalogue as they
 * end, from a thread of its own (never in a guest's way).  sync_push.c
 * calls the fleet/ library, log.c and util/.
 */
#ifndef PROFSVC_BE_SYNC_PUSH_H
#define PROFSVC_BE_SYNC_PUSH_H

#include <stdint.h>
#include <stdio.h>

struct backend;

int sync_push_start(struct backend *b);
void sync_push_run_ended(struct backend *b, int64_t run_id);
void sync_push_stop(struct backend *b);
void sync_push_status(struct backend *b, FILE *f);
/* Its part of status --json (null without --sync).  jansson's own
 * typedef, repeated so that this header needs no jansson flags. */
typedef struct json_t json_t;
json_t *sync_push_status_json(struct backend *b);

#endif
