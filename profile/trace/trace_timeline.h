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

#include "trace_render.h"
#include "trace_timeline_bounds.h"

/* The model of the window as one JSON document (docs/json.md
 * "trace-timeline"); guest text the exact text, < > & as \u escapes (it is
 * inlined in a script element).  0, or -1 when out of memory or writing
 * failed. */
int trace_timeline_json(FILE *f, const struct mprof_trace *t, const struct tt_window *w);

/* One thread's events, in order: {"thread": id, "events": [...], "more": n}
 * (at most TT_MAX_THREAD_EVENTS; none for UINT64_MAX, mirage-profile's "no
 * thread").  0, or -1. */
int trace_timeline_thread_json(FILE *f, const struct mprof_trace *t, uint64_t thread);

/* What a live trace holds so far (struct tt_live), for profdb watch. */
int trace_timeline_live(const struct mprof_trace *t, struct tt_live *out);

/* The script that draws it (profile/trace/trace_timeline.js). */
extern const char trace_timeline_js[];

#endif
