/*
 * view.h - the view library: what profdb (cli/) and profdb serve (web/)
 * both show, built once for both.  A front end opens a view of a store or
 * a fleet catalogue once per command or request, resolves runs in it and
 * reads everything of the request in one snapshot (a live run's page
 * never mixes two moments of the guest).  Errors come back as a value
 * (view_err.h), never printed here.
 *
 * The library's files, from the bottom up (each may call only those
 * above it in this list, and store/, fleet/, profile/, util/):
 *   view_err.c      the error value
 *   view_backend.c  asking the running profile-backend (its control socket), and
 *                   where its read service listens (read.sock)
 *   view_format.c   times, durations (the one rule), numbers and what a run
 *                   holds, as shown and taken
 *   view_json.c     the documented JSON objects (docs/json.md)
 *   view_fleet.c    a fleet catalogue read through a private store
 *   view.c          a view: open, resolve a run, one snapshot, close
 *   view_trace.c    a run's MirageOS trace loaded in sequence order
 *   view_profile.c  a run's .prof and .hp read and parsed, a live heap followed;
 *                   its eventlog decoded, its heap samples the .hp of a run without one
 *   view_eventlog.c a run's eventlog as ghc-events show's events, and its GC figures
 *   view_samples.c  a run's stack samples read, as samples or a time profile
 *   view_diff.c     one side of a comparison: both profiles of a run
 *   view_report.c   a run's report, and a second run to compare with
 */
#ifndef PROFSVC_VIEW_H
#define PROFSVC_VIEW_H

#include <stdint.h>

#include "../store/store.h"
#include "view_err.h"

struct view {
	struct store *s;       /* read-only; over a catalogue, its private copy */
	int snapshot;          /* a read transaction is open */
};

/* Opens db (a store's path, or a fleet catalogue's postgresql:// URL)
 * for reading.  0, or -1 with the reason in e. */
int view_open(struct view *v, const char *db, struct view_err *e);
void view_close(struct view *v);
/* Begins the view's one snapshot (a read transaction) if not begun:
 * everything read after it is of the same moment.  0, or -1. */
int view_snapshot(struct view *v, struct view_err *e);
/* Ends the view's snapshot, if begun (a reply that reads in pieces holds
 * none between them); the next view_snapshot begins another. */
void view_snapshot_end(struct view *v);
/* "12", "latest" (and over a catalogue HOST:N, HOST:latest): a run id.
 * 0, or -1 with the reason in e. */
int view_resolve(struct view *v, const char *arg, int64_t *run_id, struct view_err *e);
/* The same on a store opened by view_store_open (no snapshot kept). */
int view_resolve_run(struct store *s, const char *arg, int64_t *run_id, struct view_err *e);
/* A run already resolved, as an argument view_resolve gives back as that
 * same run (over a catalogue, its id in the private copy: "@N"). */
void view_run_ref(int64_t id, char *buf, size_t len);

/* Opens a store at path in mode (a catalogue: read only, through its
 * private copy), as view_open does; for the front ends' own store work
 * (listing, importing).  0, or -1 with the reason in e. */
int view_store_open(struct store **s, const char *path, enum store_open_mode mode,
                    struct view_err *e);

#endif
