/*
 * eventlog_timeline.h - a GHC eventlog on one time axis, for the report's
 * timeline section: GC pauses (the windows eventlog_gc.c merges, each with
 * its generation), heap size and live data as lines, each capability's
 * running threads (run/stop thread events) as a lane, user markers as
 * labelled lines, and the GC figures beside it.  Drawn as inline SVG
 * markup on the server; report.js only adds hover and zoom.
 *
 * Memory is bounded whatever the log: at most EL_TL_MAX_POINTS heap
 * points of each kind, EL_TL_MAX_RUNS thread spans, EL_TL_MAX_MARKERS
 * markers and EL_TL_MAX_LANES capabilities are kept; what is past a bound
 * is counted (and the section says so), never kept.
 *
 * No SQLite, no Xen.  May call: ghc_eventlog.h's types, eventlog_summary.h
 * (a finished struct el_gc), heap_svg.h (bytes written shortly),
 * util/safe_text (markup), libc.
 */
#ifndef PROFSVC_EVENTLOG_TIMELINE_H
#define PROFSVC_EVENTLOG_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eventlog_summary.h"
#include "ghc_eventlog.h"

#define EL_TL_MAX_POINTS (1u << 20)  /* heap size / live data points, each */
#define EL_TL_MAX_RUNS (1u << 21)    /* thread running spans, all lanes */
#define EL_TL_MAX_MARKERS 4096u
#define EL_TL_MAX_LANES 64u          /* capabilities drawn */
#define EL_TL_MAX_BARS 50000u        /* GC bars drawn one by one; more are merged */

struct el_tl_point {
	uint64_t t, v;
};

struct el_tl_span {
	uint64_t start, end;
};

struct el_tl_lane {
	struct el_tl_span *runs;
	size_t n, cap;
	uint64_t open;                /* + 1: 0 none */
	int seen;
};

struct el_tl_gen {
	uint64_t t;
	uint16_t gen;
};

struct el_tl_marker {
	uint64_t t;
	char *label;                  /* the guest's text, raw */
};

struct el_timeline {
	struct el_tl_point *heap, *live;
	size_t nheap, heap_cap, nlive, live_cap;
	struct el_tl_gen *gens;       /* GC_STATS_GHC: a collection's generation */
	size_t ngens, gens_cap;
	struct el_tl_lane lanes[EL_TL_MAX_LANES];
	size_t nlanes;                /* 1 + the highest capability seen */
	size_t nruns;                 /* over all lanes */
	struct el_tl_marker *markers;
	size_t nmarkers, markers_cap;
	uint64_t end_ns;              /* the latest event time */
	uint64_t dropped;             /* points, spans or markers past a bound */
	uint64_t other_caps;          /* thread events of capabilities past the lanes */
	int failed;
};

void el_timeline_init(struct el_timeline *t);
/* 0, or -1 when out of memory. */
int el_timeline_add(struct el_timeline *t, const struct gel_event *ev);
/* The end of the log: threads still running end at its last event. */
void el_timeline_finish(struct el_timeline *t);
void el_timeline_free(struct el_timeline *t);

/*
 * The section: <section id="timeline"> with the GC figures (g, finished)
 * and the SVG.  t and g may be NULL (a live run whose log has no whole
 * header yet: the section waits).  follow_url, when not NULL, is where
 * the page fetches the section again while the run lasts (the server's
 * own path).  note: a line said under the title (a warning), or NULL.
 * 0, or -1 when writing failed.
 */
int el_timeline_html(FILE *f, const struct el_timeline *t, const struct el_gc *g, const char *follow_url,
                     const char *note);

#endif
