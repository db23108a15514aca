/*
 * trace_timeline.h - a MirageOS trace as mirage-trace-viewer shows it: the
 * model of its thread timeline, written as JSON for trace_timeline.js
 * (inlined in the report, served as /api/runs/N/trace-timeline).
 *
 * Each Lwt thread a line from its creation (or its first event) to its
 * end (resolved: fulfills, fails; or becomes another), arrows between
 * threads (creates, read, try_read, signal, fulfills, fails, becomes),
 * which thread runs (switch to switch), GC pauses, and each counter over
 * time.  Bounded whatever the trace: a window of time is asked for and at
 * most TT_MAX_* of each kind come back (thinned evenly, GC pauses and
 * counter updates aggregated), with the totals, so a reader can say what
 * was left out and ask for a narrower window.  Threads come grouped by
 * their label (the TT_MAX_GROUPS most common labels, and the rest as one),
 * each group thinned on its own and keeping at least TT_GROUP_MIN of its
 * threads, so a rare label is never thinned away by a common one.
 * No SQLite, no Xen.
 */
#ifndef PROFSVC_TRACE_TIMELINE_H
#define PROFSVC_TRACE_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "profile/trace/trace_render.h"

#define TT_MAX_THREADS 2000   /* threads listed in one answer */
#define TT_MAX_ARROWS 4000
#define TT_MAX_SWITCHES 4000
#define TT_MAX_GC 1500        /* more: aggregated into this many marks */
#define TT_MAX_POINTS 600     /* per counter unless asked (cols): min, max, last per column */
#define TT_MAX_COLS 4000      /* the most columns a window may ask for */
#define TT_MAX_GROUPS 64      /* labels listed as groups; the rest are one */
#define TT_GROUP_MIN 8        /* threads shown of every group that has them */
#define TT_MAX_COUNTERS 16
#define TT_MAX_THREAD_EVENTS 2000 /* one thread's events */
#define TT_TRACKED_THREADS (1u << 20) /* threads modelled; more are counted */

struct tt_window {
	int whole;              /* the whole trace (from, to ignored) */
	uint64_t from, to;      /* ns of the guest's clock, inclusive */
	unsigned cols;          /* the columns a counter is drawn in (1..TT_MAX_COLS; 0:
	                         * TT_MAX_POINTS): more updates than that are thinned to
	                         * each column's min, max and last, so a spike survives */
};

/* The model of the window as one JSON document (docs/json.md
 * "trace-timeline"); guest text the exact text, < > & as \u escapes (it is
 * inlined in a script element).  0, or -1 when out of memory or writing
 * failed. */
int trace_timeline_json(FILE *f, const struct mprof_trace *t, const struct tt_window *w);

/* One thread's events, in order: {"thread": id, "events": [...], "more": n}
 * (at most TT_MAX_THREAD_EVENTS; none for UINT64_MAX, mirage-profile's "no
 * thread").  0, or -1. */
int trace_timeline_thread_json(FILE *f, const struct mprof_trace *t, uint64_t thread);

/* What a live trace holds so far, for profdb watch. */
struct tt_live {
	uint64_t threads, alive;     /* threads seen; not yet resolved */
	uint64_t threads_dropped;    /* past TT_TRACKED_THREADS */
};
int trace_timeline_live(const struct mprof_trace *t, struct tt_live *out);

/* The script that draws it (profile/trace/trace_timeline.js). */
extern const char trace_timeline_js[];

#endif
