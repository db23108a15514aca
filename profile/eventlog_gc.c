/*
 * eventlog_gc.c - GC figures from an eventlog's events (eventlog_summary.h).
 *
 * A pause is a GC_START and the next GC_END on the same capability (the
 * capability that leads a collection writes both; the others write GC
 * work/idle/done).  The count is the GC_START events, as ghc-events counts
 * them; generations come from GC_STATS_GHC, one per collection.  Pauses
 * are kept (8 bytes each, linear in the log) so percentiles are exact.
 *
 * May call: ghc_eventlog.h's types, libc.
 */
#include "config.h"

#include "eventlog_summary.h"

#include <stdlib.h>
#include <string.h>

void el_gc_init(struct el_gc *g)
{
	memset(g, 0, sizeof(*g));
}

void el_gc_free(struct el_gc *g)
{
	free(g->pauses);
	memset(g, 0, sizeof(*g));
}

static int keep_pause(struct el_gc *g, uint64_t ns)
{
	if (g->pauses_n == g->pauses_cap) {
		size_t c = g->pauses_cap ? g->pauses_cap * 2 : 256;
		uint64_t *p = realloc(g->pauses, c * sizeof(*p));
		if (!p) {
			g->failed = 1;
			return -1;
		}
		g->pauses = p;
		g->pauses_cap = c;
	}
	g->pauses[g->pauses_n++] = ns;
	g->total_pause_ns += ns;
	if (ns > g->longest_pause_ns)
		g->longest_pause_ns = ns;
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
		g->collections++;
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
	/* out of order (a hostile log): a pause never counts negative */
	return keep_pause(g, ev->time_ns > start ? ev->time_ns - start : 0);
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

void el_gc_finish(struct el_gc *g)
{
	if (g->pauses_n)
		qsort(g->pauses, g->pauses_n, sizeof(*g->pauses), cmp_u64);
	g->p50_ns = percentile(g->pauses, g->pauses_n, 50);
	g->p90_ns = percentile(g->pauses, g->pauses_n, 90);
	g->p99_ns = percentile(g->pauses, g->pauses_n, 99);
	g->gc_share = g->elapsed_ns ? (double)g->total_pause_ns / (double)g->elapsed_ns : 0.0;
	if (g->gc_share > 1.0)
		g->gc_share = 1.0;  /* overlapping pauses of a hostile log */
}
