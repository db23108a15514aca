/*
 * view.h - the view library: what profdb (cli/) and profdb serve (web/)
 * both show, built once for both.  A front end opens a view of a store or
 * a fleet catalogue once per command or request, resolves runs in it and
 * reads everything of the request in one snapshot (a live run's page
 * never mixes two moments of the guest).  Errors come back as a value
 * (view_err.h), never printed here.
 *
 * ERRORS.  The library's one return convention (SQLite's model: a code,
 * and the message kept for the caller to get):
 *   - A function that can fail returns an int: 0 when it did what it
 *     says, -1 when it did not, or a negative code of its own that its
 *     header names (VIEW_TRACE_NONE, VIEW_SAMPLES_REFUSED,
 *     VIEW_BACKEND_NONE, VIEW_BACKEND_FAILED), with the reason in the
 *     struct view_err *e it was given, its last argument (NULL: nobody
 *     listens).  view_err_first(e) is the message getter, e->damaged
 *     says the cause is the stored data's damage.  A sink or callback of
 *     the caller's that stopped the work fails it too; its owner knows why.
 *   - A function that can fail for one reason only, which its header
 *     names (out of memory, a write error on the caller's FILE, text
 *     that does not parse: view_parse_*, view_events_*), takes no e and
 *     returns 0 or -1: its caller words the reason.
 *   - A question returns 1 or 0 (view_eventlog_heap_fallback,
 *     view_backend_turned_away); a maker or a getter what it makes or
 *     gets (NULL when its header says so); a callback given to another
 *     library answers as that library asks (view_events_add).
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
 *   view_focus.c    focus and ignore: regular expressions over function names,
 *                   a time profile's call tree cut to the stacks kept
 *   view_samples.c  a run's stack samples read, as samples or a time profile
 *   view_symbols.c  sampled addresses named when read, from symbol files by build-id
 *   view_sampled.c  stack samples shown as samples: how they were taken, a
 *                   selection's functions (self, total), a sandwich, their JSON
 *   view_diff.c     one side of a comparison: both profiles of a run
 *   view_report.c   a run's report, and a second run to compare with
 *
 * May call: store/store.h, view_err.h (view.c: view_fleet.h, view_format.h,
 * view_backend.h, fleet/fleet.h).
 */
#ifndef PROFSVC_VIEW_H
#define PROFSVC_VIEW_H

#include <stdint.h>

#include "store/store.h"
#include "view_err.h"

struct view_fleet;
struct view {
	struct store *s;       /* read-only; over a catalogue, its private copy */
	int snapshot;          /* a read transaction is open */
	struct view_fleet *fleet; /* over a catalogue: its reader and the private copy
	                           * (view_fleet.h), closed with the view; else NULL */
	char symbols[4096];    /* where symbol files are kept by build-id ("": none;
	                          view_symbols.h) */
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
/*
 * A run, resolved once at the front end: from what the user typed
 * (view_resolve: "12", "latest", over a catalogue HOST:N and
 * HOST:latest), or from an id a page's path holds (view_run_at).  Every
 * view_read_* takes it and reads that run, never a run argument's text:
 * over a catalogue the run was copied into the view's private store when
 * it was resolved, and id is its id there.  The run's row is not kept
 * here: it is read in the snapshot that reads the run's data (a live
 * run's row changes between the two).
 */
struct view_run {
	int64_t id;            /* in the view's store (over a catalogue: its private copy) */
	char host_id[33];      /* over a catalogue: the host that captured it; "" on a host's store */
	int64_t host_run_id;   /* over a catalogue: its id on that host; id on a host's store */
};

/* Resolves arg in v into *run.  0, or -1 with the reason in e.  Over a
 * catalogue the run is copied into the view's private store (once per
 * view), and a snapshot begun before is ended (the copy is newer). */
int view_resolve(struct view *v, const char *arg, struct view_run *run, struct view_err *e);
/* The same on a host's store that is no view (watch follows a store of
 * its own): "12" or "latest". */
int view_resolve_host(struct store *s, const char *arg, struct view_run *run, struct view_err *e);
/* The run whose id in the view's store is id (serve's pages: a run id of
 * the path, in the store or the mirror of a catalogue it serves). */
void view_run_at(struct view_run *run, int64_t id);

/* Opens a host's store at path in mode, with the options view_open's
 * store has; for the front ends' own store work (listing, importing,
 * deleting).  A catalogue is read through a view, never opened here.  0,
 * or -1 with the reason in e. */
int view_store_open(struct store **s, const char *path, enum store_open_mode mode,
                    struct view_err *e);

#endif
