/*
 * trace_timeline_bounds.h - what the thread timeline (trace_timeline.h)
 * and its model (trace_timeline_model.h) share: the bounds of one answer,
 * the window asked for, and what a live trace holds so far.  Types and
 * constants only, so that the model need not include the timeline that
 * calls it.
 */
#ifndef PROFSVC_TRACE_TIMELINE_BOUNDS_H
#define PROFSVC_TRACE_TIMELINE_BOUNDS_H

#include <stdint.h>

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

/* What a live trace holds so far, for profdb watch (trace_timeline_live). */
struct tt_live {
	uint64_t threads, alive;     /* threads seen; not yet resolved */
	uint64_t threads_dropped;    /* past TT_TRACKED_THREADS */
};

#endif
