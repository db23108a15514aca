/*
 * fuzz_eventlog.c - libFuzzer target for the GHC eventlog decoder and its
 * views (profile/eventlog/ghc_eventlog.h, profile/eventlog/eventlog_summary.h): any bytes,
 * fed whole and in pieces of sizes the input picks, give the same events
 * (type, time, capability, offset, size, fields) and the same error; the
 * whole prefix never passes what was fed and, read alone, gives the same
 * events; every event goes through the GC figures, the heap samples (the
 * .hp model must accept what they write) and the show lines, in the
 * log's order and sorted by time (the same bytes, reordered), and the
 * report's timeline (profile/eventlog/eventlog_timeline.h): drawn in bounds, one
 * bar per pause while there are few enough.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/eventlog_timeline.h"
#include "profile/eventlog/ghc_eventlog.h"

struct run {
	uint64_t hash, count;
	int views;
	struct el_gc gc;
	struct el_heap heap;
	struct hp_profile hp;
	FILE *show;
	struct el_sorted sorted;
	struct el_timeline tl;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ull;
}

static int on_event(void *ctx, const struct gel_event *ev)
{
	struct run *r = ctx;
	r->count++;
	uint64_t h = mix(r->hash, ev->type);
	h = mix(h, ev->time_ns);
	h = mix(h, (uint64_t)(int64_t)ev->cap);
	h = mix(h, ev->offset);
	h = mix(h, ev->size);
	h = mix(h, (uint64_t)ev->decoded << 1 | (uint64_t)ev->known);
	h = mix(h, ev->value ^ ev->value2 ^ ev->thread ^ ev->capset ^ ev->arg16);
	for (unsigned i = 0; i < ev->nstrs; i++) {
		assert(ev->strs[i].s && ev->strs[i].s[ev->strs[i].len] == 0);
		h = mix(h, ev->strs[i].len);
	}
	if (ev->type == GEL_HEAP_PROF_SAMPLE_COST_CENTRE && ev->decoded)
		assert(ev->stack && ev->stack + 4u * ev->depth <= ev->payload + ev->size);
	r->hash = h;
	if (r->views) {
		assert(el_gc_add(&r->gc, ev) == 0);
		/* the .hp parser must take every line the converter writes */
		assert(el_heap_add(&r->heap, ev) == 0);
		assert(el_show_event(r->show, ev) >= 0);
		assert(el_sorted_add(&r->sorted, ev) == 0);
		assert(el_timeline_add(&r->tl, ev) == 0);
	}
	return 0;
}

static int parse(struct run *r, struct gel_decoder *g, const uint8_t *d, size_t n, const uint8_t *sizes,
                 size_t nsizes)
{
	gel_init(g, on_event, r);
	int rc = 0;
	for (size_t at = 0, k = 0; at < n && rc == 0; k++) {
		size_t piece = nsizes ? 1 + sizes[k % nsizes] % 37 + (sizes[k % nsizes] & 0x80 ? 3000 : 0) : n;
		piece = piece > n - at ? n - at : piece;
		rc = gel_feed(g, d + at, piece);
		at += piece;
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t nsizes = data[0] % 8;
	if (size < 1 + nsizes)
		return 0;
	const uint8_t *sizes = data + 1;
	data += 1 + nsizes;
	size -= 1 + nsizes;

	struct run a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	char *text = NULL;
	size_t text_len = 0;
	a.views = 1;
	a.show = open_memstream(&text, &text_len);
	assert(a.show);
	el_gc_init(&a.gc);
	assert(el_sorted_init(&a.sorted, (size_t)1 << 30) == 0);
	hp_init(&a.hp);
	el_heap_init(&a.heap, &a.hp);
	el_timeline_init(&a.tl);

	struct gel_decoder ga, gb;
	int ra = parse(&a, &ga, data, size, NULL, 0);
	int rb = parse(&b, &gb, data, size, sizes, nsizes);
	assert(ra == rb && a.hash == b.hash && a.count == b.count);
	assert(!strcmp(gel_error(&ga), gel_error(&gb)));
	assert(gel_whole_prefix(&ga) == gel_whole_prefix(&gb) && gel_whole_prefix(&ga) <= size);
	assert(ga.ntypes <= GEL_MAX_TYPES && ga.pend_cap <= 2 * (65535 + 12 + GEL_MAX_EXTRA + GEL_MAX_DESC));
	struct gel_tail t;
	int fa = gel_finish(&ga, &t);
	assert(fa == (ra < 0 ? -1 : t.ended ? 0 : 1));

	if (ra == 0) {
		/* the whole prefix alone reads the same events */
		struct run c;
		struct gel_decoder gc;
		memset(&c, 0, sizeof(c));
		uint64_t prefix = gel_whole_prefix(&ga);
		assert(parse(&c, &gc, data, (size_t)prefix, NULL, 0) == 0);
		assert(c.count == a.count && c.hash == a.hash);
		gel_free(&gc);
	}

	assert(el_gc_finish(&a.gc) == 0);
	assert(a.gc.pauses_n <= a.gc.nspans && a.gc.nspans <= a.gc.starts);
	assert(a.gc.p50_ns <= a.gc.p90_ns && a.gc.p90_ns <= a.gc.p99_ns && a.gc.p99_ns <= a.gc.longest_pause_ns);
	assert(a.gc.gc_share >= 0.0 && a.gc.gc_share <= 1.0);
	/* the timeline: bounded, a bar per pause while they are few enough */
	el_timeline_finish(&a.tl);
	assert(a.tl.nmarkers <= EL_TL_MAX_MARKERS && a.tl.nruns <= EL_TL_MAX_RUNS && a.tl.nlanes <= EL_TL_MAX_LANES);
	char *html = NULL;
	size_t html_len = 0;
	FILE *hf = open_memstream(&html, &html_len);
	assert(hf && el_timeline_html(hf, &a.tl, &a.gc, NULL, NULL) == 0);
	fclose(hf);
	size_t bars = 0;
	for (const char *p = html; (p = strstr(p, "<rect class=\"gc\"")); p++)
		bars++;
	assert(a.gc.pauses_n > EL_TL_MAX_BARS ? bars <= EL_TL_MAX_BARS : bars == a.gc.pauses_n);
	assert(!strstr(html, "<script"));
	free(html);
	el_timeline_free(&a.tl);
	struct hp_tail ht;
	assert(el_heap_finish(&a.heap, &ga, &ht) == 0);
	fclose(a.show);
	/* the same lines, in time order: as many bytes */
	char *sorted = NULL;
	size_t sorted_len = 0;
	FILE *m = open_memstream(&sorted, &sorted_len);
	assert(m && el_sorted_write(&a.sorted, m) == 0);
	fclose(m);
	assert(sorted_len == text_len);
	free(sorted);
	el_sorted_free(&a.sorted);
	free(text);
	el_gc_free(&a.gc);
	el_heap_free(&a.heap);
	hp_free(&a.hp);
	gel_free(&ga);
	gel_free(&gb);
	return 0;
}
