/*
 * trace_timeline_model.h - the model behind the thread timeline
 * (trace_timeline.h), for trace_timeline.c, which writes it as JSON:
 * threads (an open-addressing map id -> index), counters and the counts
 * of what falls in the window, from a first walk of the trace; arrows,
 * run slices, GC marks and counters' points, thinned to the bounds, from a
 * second.
 */
#ifndef PROFSVC_TRACE_TIMELINE_MODEL_H
#define PROFSVC_TRACE_TIMELINE_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "trace_render.h"
#include "trace_timeline_bounds.h"

#define TT_NONE UINT64_MAX

struct tt_thread {
	uint64_t id, start, last, end;
	uint64_t parent;        /* TT_NONE: not created in the trace */
	uint64_t nevents;
	char *label;            /* the latest label, or NULL */
	int ended, created;
	int type;               /* a creates' thread type, -1 none */
};

struct tt_counter {
	char *name;
	int64_t value;
	uint64_t updates, in_window;
	int64_t lo, hi;
	int any;
	/* the second walk: the bucket being filled */
	size_t bucket;
	int have;
	uint64_t bt;
	int64_t bmin, bmax, blast;
	FILE *out;
	char *buf;
	size_t len;
	int first;
};

struct tt_model {
	const struct tt_window *w;
	uint64_t from, to;
	/* threads: an open-addressing map id -> index */
	struct tt_thread *th;
	size_t nth, capth;
	uint32_t *map;          /* index + 1, 0 empty */
	size_t capmap;
	uint64_t dropped;
	int oom;
	/* counts in the window (first walk) */
	uint64_t arrows, switches, gcs, events, labels;
	/* the run slice open */
	int running;
	uint64_t run_thread, run_since;
	/* counters */
	struct tt_counter c[TT_MAX_COUNTERS];
	size_t nc;
	uint64_t counters_more;
	/* the second walk */
	int pass;
	uint64_t bfrom, bto;           /* the window's first and last ns, for the counters' columns */
	unsigned cols;
	uint64_t k_arrow, k_switch;    /* seen so far in the window */
	uint64_t s_arrow, s_switch;    /* strides */
	FILE *fa, *fs, *fg;
	int first_a, first_s, first_g;
	uint64_t g_bucket_w;           /* ns per GC mark when aggregated; 0: every pause */
	uint64_t g_b, g_start, g_end, g_n, g_pause;
	int g_have;
	uint64_t last_ts;
};

/* The second walk's streams: arrows, run slices, GC marks. */
struct tt_streams {
	char *ba, *bs, *bg;
	size_t la, ls, lg;
};

/* The first walk: m->w, m->from and m->to set, pass 1.  0, or -1 when out
 * of memory (tt_model_free either way). */
int tt_model_first(struct tt_model *m, const struct mprof_trace *t);
/* The second walk, over [from, to] (st: the trace's stats), written to b's
 * streams and each counter's.  0, or -1 when out of memory
 * (tt_streams_free either way). */
int tt_model_second(struct tt_model *m, const struct mprof_trace *t, const struct mprof_stats *st, uint64_t from,
                    uint64_t to, struct tt_streams *b);
void tt_streams_free(struct tt_model *m, struct tt_streams *b);
void tt_model_free(struct tt_model *m);

/* What a live trace holds so far: trace_timeline_live's answer.  0, or -1
 * when out of memory. */
int tt_model_live(const struct mprof_trace *t, struct tt_live *out);

/* Whether [a, b] meets the window. */
int tt_in_window(const struct tt_model *m, uint64_t a, uint64_t b);
/* The other thread an event names (an arrow's), or TT_NONE. */
uint64_t tt_other_of(const struct mprof_event *e);
/* Where a thread's line ends: its end, or its last event. */
uint64_t tt_thread_end(const struct tt_thread *t);

#endif
