/*
 * view_fleet.h - the views over a fleet catalogue (--db postgresql://...):
 * a run that is read gets copied from PostgreSQL into a private store of
 * this process (removed when it exits), and is read there with the code
 * that reads a host's own store.  One catalogue per process.
 *
 * May call: fleet/fleet.h, store/store.h, view_err.h.
 */
#ifndef PROFSVC_VIEW_FLEET_H
#define PROFSVC_VIEW_FLEET_H

#include <stdint.h>

#include "../fleet/fleet.h"
#include "view_err.h"

/* The profdb commands that work over a catalogue; 1 for them. */
int view_fleet_command_ok(const char *cmd);
/* A reader of the catalogue at url, connected once per process; NULL
 * with the reason in e. */
struct fleet *view_fleet(const char *url, struct view_err *e);
/* The private store runs are copied into (created on first use); NULL
 * with the reason in e. */
const char *view_fleet_store(const char *url, struct view_err *e);
/* A run argument (N, HOST:N, latest, HOST:latest) copied into the private
 * store once: the host it is of, its id there and its id in the private
 * store.  0, or -1 with the reason in e. */
int view_fleet_resolve(const char *arg, char host_id[33], int64_t *host_run_id, int64_t *local_id,
                       struct view_err *e);
/* 1 while this process reads a catalogue (set by view_fleet_store). */
int view_fleet_active(void);

#endif
