/*
 * eventlog_gc.c - GC figures from an eventlog's events (eventlog_summary.h).
 *
 * Every capability taking part in a collection writes a GC start and a GC
 * end (one capability in the non-threaded RTS, each of them in the
 * threaded one); the leader also writes GC_STATS_GHC, one a collection,
 * which gives the generation.  A span is a start and the next end on the
 * same capability.  The program is stopped while any capability is in a
 * collection, so a pause is a window of overlapping spans: the spans are
 * sorted by start once the log is read and merged.  They have to wait for
 * the end because capabilities' blocks are not in time order.  Spans and
 * pauses are kept (16 and 8 bytes a collection, linear in the log), so
 * the percentiles are exact.
 *
 * May call: ghc_eventlog.h's types, util/grow.h, libc.
 */
#include "config.h"

#include "eventlog_summary.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

void el_gc_init(struct el_gc *g)
{
	memset(g, 0, sizeof(*g));
}

void el_gc_free(struct el_gc *g)
{
	free(g->spans);
	free(g->pauses);
	memset(g, 0, sizeof(*g));
}

static int keep_span(struct el_gc *g, uint64_t start, uint64_t end)
{
	if (g->nspans == g->spans_cap && GROW_FROM(g->spans, g->spans_cap, g->nspans + 1, 256) != 0) {
		g->failed = 1;
		return -1;
	}
	/* out of order (a hostile log): a span never ends before it starts */
	g->spans[g->nspans++] = (struct el_gc_span){start, end > start ? end : start};
	return 0;
}

/* The open-start slot of an event's capability, or NULL past EL_MAX_CAPS. */
static uint64_t *open_slot(struct el_gc *g, const struct gel_event *ev)
{
	size_t i = (size_t)(ev->cap + 1);
	return i <= EL_MAX_CAPS ? &g->open_start[i] : NULL;
}

static int on_gc_edge(struct el_gc *g, const struct gel_event *ev)
{
	uint64_t *slot = open_slot(g, ev);
	if (ev->type == GEL_GC_START) {
		g->starts++;
		if (slot && *slot)
			g->unmatched++;  /* a start whose end never came */
		if (slot)
			*slot = ev->time_ns + 1; /* + 1: 0 means none */
		return 0;
	}
	if (!slot || !*slot) {
		g->unmatched++;
		return 0;
	}
	uint64_t start = *slot - 1;
	*slot = 0;
	return keep_span(g, start, ev->time_ns);
}

static void max_in(uint64_t *m, uint64_t v)
{
	if (v > *m)
		*m = v;
}

int el_gc_add(struct el_gc *g, const struct gel_event *ev)
{
	if (g->failed)
		return -1;
	max_in(&g->elapsed_ns, ev->time_ns);
	if (!ev->decoded)
		return 0;
	switch (ev->type) {
	case GEL_GC_START:
	case GEL_GC_END:
		return on_gc_edge(g, ev);
	case GEL_GC_STATS_GHC:
		g->stats_seen++;
		g->by_gen[ev->gc.gen < EL_GENS ? ev->gc.gen : EL_GENS - 1]++;
		g->copied += ev->gc.copied;
		break;
	case GEL_HEAP_LIVE:
		max_in(&g->peak_live, ev->value);
		break;
	case GEL_HEAP_SIZE:
		max_in(&g->peak_heap, ev->value);
		break;
	case GEL_BLOCKS_SIZE:
		max_in(&g->peak_blocks, ev->value);
		break;
	case GEL_HEAP_ALLOCATED:
		max_in(&g->allocated, ev->value);
		break;
	}
	return 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct el_gc_span *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest rank: the smallest pause with at least pct% of pauses <= it. */
static uint64_t percentile(const uint64_t *sorted, size_t n, unsigned pct)
{
	if (!n)
		return 0;
	size_t rank = (n * pct + 99) / 100;
	return sorted[rank ? rank - 1 : 0];
}

/* Overlapping spans into windows: pauses[] their lengths. */
static int merge_spans(struct el_gc *g)
{
	free(g->pauses);
	g->pauses = NULL;
	g->pauses_n = g->total_pause_ns = g->longest_pause_ns = 0;
	if (!g->nspans)
		return 0;
	if (!(g->pauses = malloc(g->nspans * sizeof(*g->pauses)))) {
		g->failed = 1;
		return -1;
	}
	qsort(g->spans, g->nspans, sizeof(*g->spans), cmp_span);
	struct el_gc_span w = g->spans[0];
	for (size_t i = 1; i <= g->nspans; i++) {
		if (i < g->nspans && g->spans[i].start <= w.end) {
			if (g->spans[i].end > w.end)
				w.end = g->spans[i].end;
			continue;
		}
		uint64_t ns = w.end - w.start;
		g->pauses[g->pauses_n++] = ns;
		g->total_pause_ns += ns;
		max_in(&g->longest_pause_ns, ns);
		if (i < g->nspans)
			w = g->spans[i];
	}
	qsort(g->pauses, g->pauses_n, sizeof(*g->pauses), cmp_u64);
	return 0;
}

int el_gc_finish(struct el_gc *g)
{
	if (g->failed || merge_spans(g) != 0)
		return -1;
	g->collections = g->stats_seen ? g->stats_seen : g->starts;
	g->p50_ns = percentile(g->pauses, g->pauses_n, 50);
	g->p90_ns = percentile(g->pauses, g->pauses_n, 90);
	g->p99_ns = percentile(g->pauses, g->pauses_n, 99);
	g->gc_share = g->elapsed_ns ? (double)g->total_pause_ns / (double)g->elapsed_ns : 0.0;
	if (g->gc_share > 1.0)
		g->gc_share = 1.0;  /* a hostile log's times */
	return 0;
}
