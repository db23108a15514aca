/*
 * eventlog_summary.h - what the views make of a decoded GHC eventlog
 * (ghc_eventlog.h), each fed the decoder's events one by one:
 *
 *   eventlog_gc.c    GC figures: collections (count, by generation), total
 *                    and longest pause, pause percentiles, GC's share of
 *                    the run's time, peak live data and heap size;
 *   eventlog_heap.c  the heap profile samples (-hT, or a profiled build's
 *                    -hc/-hy...) put into the .hp model (heap_profile.h), so
 *                    hp2ps's rules (heap_chart.c) draw them as for a .hp;
 *   eventlog_show.c  one text line per event, as `ghc-events show` words it,
 *                    and all of them in its order (by time).
 *
 * No SQLite, no Xen.  May call: ghc_eventlog.c, hp_parse.c (heap_profile.h),
 * util/id_index, libc.
 */
#ifndef PROFSVC_EVENTLOG_SUMMARY_H
#define PROFSVC_EVENTLOG_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "util/id_index.h"

#include "ghc_eventlog.h"
#include "profile/heap/heap_profile.h"

/* ---- GC ----------------------------------------------------------------------- */

#define EL_GENS 8u          /* generations counted apart; older ones in the last */
#define EL_MAX_CAPS 1024u   /* capabilities whose open GC is tracked */

struct el_gc_span {
	uint64_t start, end;
};

struct el_gc {
	uint64_t starts;             /* GC_START events (ghc-events' count) */
	uint64_t collections;        /* GC_STATS_GHC events (one a collection), or
	                                starts when the log has none */
	uint64_t by_gen[EL_GENS];    /* GC_STATS_GHC events by generation */
	uint64_t pauses_n;           /* stop-the-world windows, once finished */
	uint64_t total_pause_ns, longest_pause_ns;
	uint64_t p50_ns, p90_ns, p99_ns; /* nearest rank, once finished */
	uint64_t elapsed_ns;         /* the latest event time */
	double gc_share;             /* total pause / elapsed, once finished */
	uint64_t peak_live, peak_heap, peak_blocks, allocated;
	uint64_t copied;             /* summed over GC_STATS_GHC */
	uint64_t unmatched;          /* a GC end without its start, or the reverse */
	uint64_t stats_seen;
	/* state */
	struct el_gc_span *spans;    /* one per start matched by its end: linear in the log */
	size_t nspans, spans_cap;
	uint64_t *pauses;            /* the windows' lengths, sorted, once finished */
	uint64_t open_start[EL_MAX_CAPS + 1]; /* by cap + 1 (slot 0: no cap); 0 none */
	int failed;
};

void el_gc_init(struct el_gc *g);
/* 0, or -1 when out of memory. */
int el_gc_add(struct el_gc *g, const struct gel_event *ev);
/* Pauses, percentiles and share; 0, or -1 when out of memory. */
int el_gc_finish(struct el_gc *g);
void el_gc_free(struct el_gc *g);

/* ---- heap samples ---------------------------------------------------------- */

#define EL_MAX_CCS (1u << 20)  /* cost centres remembered */
#define EL_MAX_NAME 4096u      /* a band name built from a stack, at most */

struct el_cc {
	uint32_t id;
	char *label;
};

struct el_heap {
	struct hp_profile *hp;       /* the caller's, hp_init()ed */
	int header_done, in_sample;
	double sample_t, last_t;
	uint64_t samples, stray;     /* samples written; bands outside one */
	char *job;                   /* from PROGRAM_ARGS, else "eventlog" */
	struct el_cc *ccs;
	size_t nccs, ccs_cap;
	struct id_index cc_index;
	uint32_t want_cc;            /* the id being looked up */
	char *line;                  /* a line being written */
	size_t line_cap;
};

void el_heap_init(struct el_heap *h, struct hp_profile *hp);
/* 0, or -1 with hp_error(h->hp) or "out of memory" there. */
int el_heap_add(struct el_heap *h, const struct gel_event *ev);
/* The end: a sample without its end is dropped, as in a .hp (unless d's
 * header declares no sample end: an older GHC's, whose last sample is
 * whole); hp_finish() is called.  d may be NULL.  0 or -1. */
int el_heap_finish(struct el_heap *h, const struct gel_decoder *d, struct hp_tail *tail);
void el_heap_free(struct el_heap *h);

/* ---- text --------------------------------------------------------------------- */

/* "9053820: cap 0: starting GC\n": the time in nanoseconds, the cap
 * when the event has one.  Block markers print nothing (ghc-events hides
 * them); returns 1 when a line was written, 0 if not, -1 on a write error. */
int el_show_event(FILE *f, const struct gel_event *ev);
/* The header's table: "Event Types:" then "N: description (size S)". */
int el_show_types(FILE *f, const struct gel_decoder *d);

/*
 * The lines in time order, as ghc-events show prints them: capabilities'
 * blocks interleave, so the lines are kept (in one memory stream, with
 * each one's time and place) and written stably sorted by time once the
 * log is read.  At most max_bytes of text are kept; past that, add fails.
 */
struct el_line {
	uint64_t time_ns;
	size_t at, len;
};
struct el_sorted {
	FILE *mem;
	char *text;
	size_t text_len;
	struct el_line *lines;
	size_t nlines, lines_cap;
	size_t max_bytes;
	int failed;
};
/* 0, or -1 when out of memory. */
int el_sorted_init(struct el_sorted *s, size_t max_bytes);
/* 0, or -1 (out of memory, a write error, or past max_bytes). */
int el_sorted_add(struct el_sorted *s, const struct gel_event *ev);
/* Writes the lines; 0 or -1. */
int el_sorted_write(struct el_sorted *s, FILE *f);
void el_sorted_free(struct el_sorted *s);
#endif
