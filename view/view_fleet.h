/*
 * view_fleet.h - the views over a fleet catalogue (--db postgresql://...):
 * a view of a catalogue holds its reader and a private store of this
 * process (made on first use, removed when the view is closed); a run
 * that is read gets copied from PostgreSQL into it, and is read there with
 * the code that reads a host's own store.  Nothing here is process-wide:
 * the state is the struct view_fleet of the view it belongs to.
 *
 * May call: fleet/fleet.h, store/store.h, view_err.h.
 */
#ifndef PROFSVC_VIEW_FLEET_H
#define PROFSVC_VIEW_FLEET_H

#include <stdint.h>

#include "fleet/fleet.h"
#include "view_err.h"

struct view_fleet;

/* Connects to the catalogue at url.  0, or -1 with the reason in e. */
int view_fleet_open(struct view_fleet **f, const char *url, struct view_err *e);
/* Its reader (the catalogue's own listing: query runs). */
struct fleet *view_fleet_reader(struct view_fleet *f);
/* The private store runs are copied into, made on first use: 0 and its
 * path in *path, or -1 with the reason in e. */
int view_fleet_store(struct view_fleet *f, const char **path, struct view_err *e);
/* A run argument (N, HOST:N, latest, HOST:latest) copied into the private
 * store once: the host it is of, its id there and its id in the private
 * store.  0, or -1 with the reason in e. */
int view_fleet_resolve(struct view_fleet *f, const char *arg, char host_id[33], int64_t *host_run_id,
                       int64_t *local_id, struct view_err *e);
/* Closes the reader and removes the private store (f may be NULL). */
void view_fleet_close(struct view_fleet *f);

#endif
