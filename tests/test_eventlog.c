/*
 * test_eventlog.c - the GHC eventlog decoder (profile/eventlog/ghc_eventlog.h) and
 * its views (profile/eventlog/eventlog_summary.h) on logs built here byte by byte:
 * every field read back; pieces of any size give the same events; a log
 * cut at every byte yields exactly the whole events before the cut and
 * the right whole prefix; types the decoder does not know are skipped by
 * their declared size; hostile headers and events (65,535 types, lengths
 * to 4 GiB, undeclared types, times going backwards, a flood of empty
 * events) stop with a message or read in bounded memory; GC figures,
 * heap samples in the .hp model and ghc-events-style lines exact; the
 * real logs of tests/data/eventlog cut every 61 bytes (TOP_SRCDIR, as
 * make check sets it, names the source tree); the report's timeline
 * (profile/eventlog/eventlog_timeline.h): a bar per pause of its generation, lanes,
 * markers escaped, and its bounds.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/eventlog_timeline.h"
#include "profile/eventlog/ghc_eventlog.h"
#include "testutil.h"

/* ---- building logs ---------------------------------------------------------- */

struct lb {
	uint8_t *d;
	size_t n, cap;
};

static void lb_bytes(struct lb *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->d = realloc(b->d, b->cap);
		REQUIRE(b->d, "out of memory");
	}
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void lb_u8(struct lb *b, uint8_t v)
{
	lb_bytes(b, &v, 1);
}

static void lb_u16(struct lb *b, uint16_t v)
{
	uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	lb_bytes(b, x, 2);
}

static void lb_u32(struct lb *b, uint32_t v)
{
	lb_u16(b, (uint16_t)(v >> 16));
	lb_u16(b, (uint16_t)v);
}

static void lb_u64(struct lb *b, uint64_t v)
{
	lb_u32(b, (uint32_t)(v >> 32));
	lb_u32(b, (uint32_t)v);
}

static void lb_type(struct lb *b, uint16_t num, uint16_t size, const char *desc)
{
	lb_bytes(b, "etb\0", 4);
	lb_u16(b, num);
	lb_u16(b, size);
	lb_u32(b, (uint32_t)strlen(desc));
	lb_bytes(b, desc, strlen(desc));
	lb_u32(b, 0);
	lb_bytes(b, "ete\0", 4);
}

/* A fixed-size event's head; the caller adds the payload. */
static void lb_ev(struct lb *b, uint16_t type, uint64_t t)
{
	lb_u16(b, type);
	lb_u64(b, t);
}

static void lb_var(struct lb *b, uint16_t type, uint64_t t, const void *payload, uint16_t n)
{
	lb_ev(b, type, t);
	lb_u16(b, n);
	lb_bytes(b, payload, n);
}

enum { UNKNOWN_FIXED = 300, UNKNOWN_VAR = 301 };

static void std_header(struct lb *b)
{
	lb_bytes(b, "hdrbhetb", 8);
	lb_type(b, GEL_STOP_THREAD, 10, "Stop thread");
	lb_type(b, GEL_GC_START, 0, "Starting GC");
	lb_type(b, GEL_GC_END, 0, "Finished GC");
	lb_type(b, GEL_BLOCK_MARKER, 14, "Block marker");
	lb_type(b, GEL_USER_MSG, GEL_VARIABLE, "User message");
	lb_type(b, GEL_HEAP_SIZE, 12, "Current heap size");
	lb_type(b, GEL_HEAP_LIVE, 12, "Current heap live data");
	lb_type(b, GEL_GC_STATS_GHC, 58, "GC statistics");
	lb_type(b, GEL_HEAP_PROF_BEGIN, GEL_VARIABLE, "Start of heap profile");
	lb_type(b, GEL_HEAP_PROF_SAMPLE_BEGIN, 8, "Start of heap profile sample");
	lb_type(b, GEL_HEAP_PROF_SAMPLE_STRING, GEL_VARIABLE, "Heap profile string sample");
	lb_type(b, GEL_HEAP_PROF_SAMPLE_END, 8, "End of heap profile sample");
	lb_type(b, UNKNOWN_FIXED, 5, "A newer GHC's event");
	lb_type(b, UNKNOWN_VAR, GEL_VARIABLE, "Another one");
	lb_bytes(b, "hetehdredatb", 12);
}

static void gc_stats(struct lb *b, uint64_t t, uint16_t gen, uint64_t copied)
{
	lb_ev(b, GEL_GC_STATS_GHC, t);
	lb_u32(b, 0);
	lb_u16(b, gen);
	lb_u64(b, copied);
	lb_u64(b, 8);    /* slop */
	lb_u64(b, 16);   /* frag */
	lb_u32(b, 1);    /* par threads */
	lb_u64(b, 0);
	lb_u64(b, 0);
	lb_u64(b, 0);
}

static void string_sample(struct lb *b, uint64_t t, const char *label, uint64_t bytes)
{
	struct lb p = {0};
	lb_u8(&p, 0);
	lb_u64(&p, bytes);
	lb_bytes(&p, label, strlen(label) + 1);
	lb_var(b, GEL_HEAP_PROF_SAMPLE_STRING, t, p.d, (uint16_t)p.n);
	free(p.d);
}

static size_t block_at;
static uint64_t rng;

/* The standard log: a block for cap 0 of most events, then a block with
 * no capability; two collections, a heap sample, unknown types. */
static void std_log(struct lb *b)
{
	std_header(b);
	block_at = b->n;
	lb_ev(b, GEL_BLOCK_MARKER, 50);
	size_t size_at = b->n;
	lb_u32(b, 0); /* patched below */
	lb_u64(b, 2000);
	lb_u16(b, 0);
	lb_ev(b, GEL_STOP_THREAD, 90);
	lb_u32(b, 1);
	lb_u16(b, 1); /* heap overflow */
	lb_u32(b, 0);
	lb_ev(b, GEL_GC_START, 100);
	lb_ev(b, GEL_GC_END, 300);
	gc_stats(b, 301, 1, 4096);
	lb_ev(b, GEL_HEAP_SIZE, 302);
	lb_u32(b, 0);
	lb_u64(b, 1 << 20);
	lb_ev(b, GEL_HEAP_LIVE, 303);
	lb_u32(b, 0);
	lb_u64(b, 300000);
	lb_var(b, GEL_USER_MSG, 400, "hello", 5);
	lb_ev(b, UNKNOWN_FIXED, 410);
	lb_bytes(b, "\x01\x02\x03\x04\x05", 5);
	lb_var(b, UNKNOWN_VAR, 420, "abc", 3);
	lb_ev(b, GEL_GC_START, 1000);
	lb_ev(b, GEL_GC_END, 1100);
	gc_stats(b, 1101, 0, 1024);
	uint32_t bsize = (uint32_t)(b->n - block_at);
	for (int i = 0; i < 4; i++)
		b->d[size_at + (size_t)i] = (uint8_t)(bsize >> (24 - 8 * i));
	/* the global block: heap profile events */
	lb_ev(b, GEL_BLOCK_MARKER, 1200);
	lb_u32(b, 200);
	lb_u64(b, 1500);
	lb_u16(b, 0xffff);
	{
		struct lb p = {0};
		lb_u8(&p, 0);
		lb_u64(&p, 50000000);
		lb_u32(&p, 7);
		lb_bytes(&p, "\0\0\0\0\0", 5);
		lb_var(b, GEL_HEAP_PROF_BEGIN, 1201, p.d, (uint16_t)p.n);
		free(p.d);
	}
	lb_ev(b, GEL_HEAP_PROF_SAMPLE_BEGIN, 1300);
	lb_u64(b, 1);
	string_sample(b, 1301, "ARR_WORDS", 1000);
	string_sample(b, 1302, "THUNK", 500);
	string_sample(b, 1303, "ARR_WORDS", 24); /* twice: added, as hp2ps does */
	lb_ev(b, GEL_HEAP_PROF_SAMPLE_END, 1304);
	lb_u64(b, 1);
	lb_u16(b, 0xffff);
}

/* ---- decoding --------------------------------------------------------------- */

#define MAXEV 64
struct seen {
	size_t n;
	struct gel_event ev[MAXEV];
	uint64_t end[MAXEV];       /* offset just past the event */
	uint64_t hash;             /* over every event, for floods */
	uint64_t count;
	struct el_gc gc;
	struct el_heap heap;
	struct hp_profile hp;
	int views;
};

/* The standard log's variable-size types. */
static int is_var(uint16_t type)
{
	return type == GEL_USER_MSG || type == UNKNOWN_VAR || type == GEL_HEAP_PROF_BEGIN ||
	       type == GEL_HEAP_PROF_SAMPLE_STRING;
}

static int collect(void *ctx, const struct gel_event *ev)
{
	struct seen *s = ctx;
	s->count++;
	for (unsigned i = 0; i < ev->nstrs; i++)
		CHECK(ev->strs[i].s[ev->strs[i].len] == 0, "type %u: string %u not NUL-ended", ev->type, i);
	s->hash = s->hash * 31 + ev->type * 7 + ev->time_ns + (uint64_t)ev->cap * 13 + ev->offset;
	if (s->n < MAXEV) {
		s->ev[s->n] = *ev;
		s->end[s->n] = ev->offset + 10u + (is_var(ev->type) ? 2u : 0u) + ev->size;
		s->n++;
	}
	if (s->views) {
		CHECK(el_gc_add(&s->gc, ev) == 0, "gc");
		CHECK(el_heap_add(&s->heap, ev) == 0, "heap: %s", hp_error(&s->hp));
	}
	return 0;
}

/* Decodes d[0..n) in pieces of the given size (0: random sizes). */
static int decode(const uint8_t *d, size_t n, size_t piece, struct seen *s, struct gel_decoder *g)
{
	memset(s, 0, sizeof(*s));
	gel_init(g, collect, s);
	int rc = 0;
	for (size_t at = 0; at < n && rc == 0;) {
		size_t k = piece ? piece : 1 + tu_rand_below(&rng, 97);
		if (k > n - at)
			k = n - at;
		rc = gel_feed(g, d + at, k);
		at += k;
	}
	return rc;
}

static void test_fields(void)
{
	struct lb b = {0};
	std_log(&b);
	struct seen s;
	struct gel_decoder g;
	CHECK(decode(b.d, b.n, b.n, &s, &g) == 0, "decode: %s", gel_error(&g));
	struct gel_tail t;
	CHECK(gel_finish(&g, &t) == 0 && t.ended && t.cut_bytes == 0, "a whole log");
	CHECK(gel_whole_prefix(&g) == b.n, "prefix %" PRIu64 " of %zu", gel_whole_prefix(&g), b.n);
	REQUIRE(s.n == 20, "%zu events", s.n);
	CHECK(g.ntypes == 14 && gel_type_of(&g, UNKNOWN_FIXED)->size == 5, "types");
	CHECK(!strcmp(gel_type_of(&g, GEL_GC_START)->desc, "Starting GC"), "description");
	const struct gel_event *e = s.ev;
	CHECK(e[0].type == GEL_BLOCK_MARKER && e[0].cap == 0 && e[0].value2 == 2000, "block");
	CHECK(e[1].type == GEL_STOP_THREAD && e[1].thread == 1 && e[1].status == 1 && e[1].cap == 0, "stop");
	CHECK(!strcmp(gel_stop_status(e[1].status), "heap overflow") && !strcmp(gel_stop_status(999), "unknown status"),
	      "status words");
	CHECK(!strcmp(gel_type_name(GEL_GC_STATS_GHC), "GC_STATS_GHC") && !gel_type_name(UNKNOWN_FIXED), "type names");
	CHECK(e[4].type == GEL_GC_STATS_GHC && e[4].decoded && e[4].gc.gen == 1 && e[4].gc.copied == 4096 &&
	      e[4].gc.slop == 8 && e[4].gc.frag == 16 && e[4].gc.par_n_threads == 1 && e[4].gc.has_balanced,
	      "gc stats");
	CHECK(e[5].value == 1 << 20 && e[6].value == 300000, "heap size, live");
	CHECK(e[7].type == GEL_USER_MSG && e[7].strs[0].len == 5 && !strcmp(e[7].strs[0].s, "hello") == 0,
	      "the message's pointer is gone after the callback; its length stays");
	CHECK(e[8].type == UNKNOWN_FIXED && !e[8].known && e[8].size == 5 && e[8].cap == 0, "unknown fixed skipped");
	CHECK(e[9].type == UNKNOWN_VAR && !e[9].known && e[9].size == 3, "unknown variable skipped");
	CHECK(e[10].type == GEL_GC_START && e[10].time_ns == 1000, "after the unknown ones");
	CHECK(e[13].type == GEL_BLOCK_MARKER && e[13].cap == -1, "a block of no capability");
	CHECK(e[14].type == GEL_HEAP_PROF_BEGIN && e[14].cap == -1 && e[14].value == 50000000 && e[14].arg32 == 7,
	      "heap prof begin");
	CHECK(e[16].type == GEL_HEAP_PROF_SAMPLE_STRING && e[16].value == 1000, "string sample");
	CHECK(e[19].type == GEL_HEAP_PROF_SAMPLE_END && e[19].value == 1, "sample end");
	CHECK(g.events == 20 && g.unknown_events == 2 && g.blocks == 2 && g.backwards == 0, "counts");
	gel_free(&g);
	free(b.d);
}

/* Every piece size gives the same events. */
static int stop_third(void *ctx, const struct gel_event *ev)
{
	(void)ev;
	return ++*(int *)ctx == 3;
}

static int stop_negative(void *ctx, const struct gel_event *ev)
{
	(void)ev;
	++*(int *)ctx;
	return -1;
}

/* The callback stops the decoder for good after the event it says so of. */
static void test_stop(void)
{
	struct lb b = {0};
	std_log(&b);
	int n = 0;
	struct gel_decoder g;
	gel_init(&g, stop_third, &n);
	CHECK(gel_feed(&g, b.d, b.n) == 1 && n == 3, "stopped at the third event (%d)", n);
	CHECK(gel_feed(&g, b.d, 1) == 1 && n == 3, "and stays stopped");
	CHECK(g.events == 3 && gel_whole_prefix(&g) == g.consumed, "the prefix ends with the third event");
	gel_free(&g);
	n = 0;
	gel_init(&g, stop_negative, &n);
	CHECK(gel_feed(&g, b.d, b.n) == 1 && n == 1 && !g.failed, "a negative answer stops too, with no error");
	gel_free(&g);
	free(b.d);
}

static void test_pieces(void)
{
	struct lb b = {0};
	std_log(&b);
	struct seen whole, s;
	struct gel_decoder g;
	CHECK(decode(b.d, b.n, b.n, &whole, &g) == 0, "whole");
	gel_free(&g);
	for (size_t piece = 0; piece <= 13; piece++) {
		CHECK(decode(b.d, b.n, piece, &s, &g) == 0, "pieces of %zu: %s", piece, gel_error(&g));
		CHECK(s.hash == whole.hash && s.count == whole.count, "pieces of %zu: other events", piece);
		CHECK(gel_whole_prefix(&g) == b.n, "pieces of %zu: prefix", piece);
		gel_free(&g);
	}
	free(b.d);
}

/* Cut at every byte: exactly the events that end by the cut; the prefix
 * is the end of the last one (or of the header); the prefix alone reads
 * the same events. */
static void test_cut_everywhere(void)
{
	struct lb b = {0};
	std_log(&b);
	struct seen whole, s, again;
	struct gel_decoder g;
	CHECK(decode(b.d, b.n, b.n, &whole, &g) == 0, "whole");
	uint64_t header_end = whole.ev[0].offset;
	gel_free(&g);
	int bad = 0;
	for (size_t cut = 0; cut <= b.n && bad < 5; cut++) {
		size_t want = 0;
		uint64_t prefix = cut >= header_end ? header_end : 0;
		for (size_t i = 0; i < whole.n; i++)
			if (whole.end[i] <= cut) {
				want = i + 1;
				prefix = whole.end[i];
			}
		if (cut == b.n)
			prefix = b.n;
		CHECK(decode(b.d, cut, 1 + cut % 7, &s, &g) == 0, "cut %zu: %s", cut, gel_error(&g));
		struct gel_tail t;
		int fin = gel_finish(&g, &t);
		if (s.n != want || gel_whole_prefix(&g) != prefix || fin != (cut == b.n ? 0 : 1) ||
		    t.cut_bytes != (cut == b.n ? 0 : cut - prefix) || t.header_done != (cut >= header_end)) {
			bad++;
			CHECK(0, "cut %zu: %zu events (want %zu), prefix %" PRIu64 " (want %" PRIu64 "), finish %d", cut,
			      s.n, want, gel_whole_prefix(&g), prefix, fin);
		}
		gel_free(&g);
		CHECK(decode(b.d, prefix, prefix ? prefix : 1, &again, &g) == 0 && again.n == want,
		      "cut %zu: the prefix alone reads %zu events", cut, again.n);
		gel_free(&g);
	}
	free(b.d);
}

static int expect_error(const struct lb *b, const char *words, const char *what)
{
	struct seen s;
	struct gel_decoder g;
	int rc = decode(b->d, b->n, 4096, &s, &g);
	int ok = rc < 0 && strstr(gel_error(&g), words) != NULL;
	CHECK(ok, "%s: rc %d, '%s' (want '%s')", what, rc, gel_error(&g), words);
	CHECK(gel_feed(&g, "x", 1) < 0, "%s: the error stays", what);
	CHECK(g.pend_cap <= 65536 * 2 && g.ntypes <= GEL_MAX_TYPES, "%s: memory bounded", what);
	gel_free(&g);
	return ok;
}

static void test_hostile_headers(void)
{
	struct lb b = {0};
	lb_bytes(&b, "not an eventlog", 15);
	expect_error(&b, "not a GHC eventlog", "text");

	/* 65,535 event types */
	b.n = 0;
	lb_bytes(&b, "hdrbhetb", 8);
	for (uint32_t i = 0; i < 65535; i++)
		lb_type(&b, (uint16_t)i, 0, "x");
	lb_bytes(&b, "hetehdredatb", 12);
	expect_error(&b, "more than 4096 event types", "65,535 types");

	/* descriptions and extra information claiming 4 GiB: refused at once,
	 * without waiting for the bytes */
	b.n = 0;
	lb_bytes(&b, "hdrbhetbetb\0", 12);
	lb_u16(&b, 1);
	lb_u16(&b, 4);
	lb_u32(&b, 0xffffffffu);
	expect_error(&b, "a description of 4294967295 bytes", "description of 4 GiB");
	b.n = 0;
	lb_bytes(&b, "hdrbhetbetb\0", 12);
	lb_u16(&b, 1);
	lb_u16(&b, 4);
	lb_u32(&b, 1);
	lb_u8(&b, 'd');
	lb_u32(&b, 0xffffffffu);
	expect_error(&b, "bytes of extra information", "extra of 4 GiB");

	/* the same type twice; a missing end marker; an undeclared type */
	b.n = 0;
	lb_bytes(&b, "hdrbhetb", 8);
	lb_type(&b, 9, 0, "a");
	lb_type(&b, 9, 0, "b");
	expect_error(&b, "declared twice", "duplicate");
	b.n = 0;
	lb_bytes(&b, "hdrbhetb", 8);
	lb_type(&b, 9, 0, "a");
	b.d[b.n - 2] = 'X';
	expect_error(&b, "no end marker", "ete");
	b.n = 0;
	std_header(&b);
	lb_ev(&b, 77, 5);
	expect_error(&b, "event type 77 is not declared", "undeclared");
	free(b.d);
}

/* A variable event claiming 65,535 bytes with few of them here: waits,
 * holding at most one unit; the cut is reported. */
static void test_hostile_events(void)
{
	struct lb b = {0};
	std_header(&b);
	size_t header = b.n;
	lb_ev(&b, GEL_USER_MSG, 1);
	lb_u16(&b, 0xffff);
	lb_bytes(&b, "short", 5);
	struct seen s;
	struct gel_decoder g;
	CHECK(decode(b.d, b.n, 3, &s, &g) == 0 && s.n == 0, "waits");
	CHECK(g.pend_cap <= 2 * (65535 + 12), "one unit held: %zu", g.pend_cap);
	struct gel_tail t;
	CHECK(gel_finish(&g, &t) == 1 && t.whole_prefix == header && t.cut_bytes == 17, "cut reported");
	gel_free(&g);

	/* a known type declared shorter than its fields: delivered, not read */
	b.n = 0;
	lb_bytes(&b, "hdrbhetb", 8);
	lb_type(&b, GEL_HEAP_SIZE, 4, "short heap size");
	lb_bytes(&b, "hetehdredatb", 12);
	lb_ev(&b, GEL_HEAP_SIZE, 9);
	lb_u32(&b, 77);
	lb_u16(&b, 0xffff);
	CHECK(decode(b.d, b.n, 5, &s, &g) == 0 && s.n == 1 && s.ev[0].known && !s.ev[0].decoded &&
	      s.ev[0].value == 0 && s.ev[0].size == 4, "short payload");
	gel_free(&g);

	/* a message type declared fixed-size: its string still ends in a NUL
	 * (the fuzzer's first finding) */
	b.n = 0;
	lb_bytes(&b, "hdrbhetb", 8);
	lb_type(&b, GEL_USER_MSG, 5, "fixed message");
	lb_bytes(&b, "hetehdredatb", 12);
	lb_ev(&b, GEL_USER_MSG, 9);
	lb_bytes(&b, "abcde", 5);
	lb_u16(&b, 0xffff);
	CHECK(decode(b.d, b.n, 64, &s, &g) == 0 && s.n == 1 && s.ev[0].decoded && s.ev[0].strs[0].len == 5,
	      "fixed-size message");
	gel_free(&g);

	/* times going backwards; GC ends before their starts */
	b.n = 0;
	std_header(&b);
	lb_ev(&b, GEL_GC_START, 1000);
	lb_ev(&b, GEL_GC_END, 10);
	lb_ev(&b, GEL_GC_END, 5);
	lb_ev(&b, GEL_GC_START, 3);
	lb_u16(&b, 0xffff);
	CHECK(decode(b.d, b.n, 4, &s, &g) == 0 && g.backwards == 3, "backwards %" PRIu64, g.backwards);
	gel_free(&g);
	struct el_gc gc;
	el_gc_init(&gc);
	for (size_t i = 0; i < s.n; i++)
		el_gc_add(&gc, &s.ev[i]);
	CHECK(el_gc_finish(&gc) == 0, "finish");
	CHECK(gc.collections == 2 && gc.pauses_n == 1 && gc.total_pause_ns == 0 && gc.unmatched == 1 &&
	      gc.gc_share <= 1.0, "out of order GC");
	el_gc_free(&gc);

	/* a flood of empty events: a million, no memory kept per event */
	b.n = 0;
	std_header(&b);
	for (uint32_t i = 0; i < 1000000; i++)
		lb_ev(&b, GEL_GC_START, i);
	lb_u16(&b, 0xffff);
	CHECK(decode(b.d, b.n, 65536, &s, &g) == 0 && s.count == 1000000 && g.pend_cap <= 256,
	      "flood: %" PRIu64 " events, %zu bytes held", s.count, g.pend_cap);
	gel_free(&g);
	free(b.d);
}

static void block(struct lb *b, uint64_t t, uint32_t size, uint16_t cap)
{
	lb_ev(b, GEL_BLOCK_MARKER, t);
	lb_u32(b, size);
	lb_u64(b, t + 1000);
	lb_u16(b, cap);
}

/* Two capabilities' blocks interleaved: each event has its block's cap,
 * pauses pair on their own capability; a block claiming 4 GiB only says
 * that the events after it are its own. */
static void test_caps(void)
{
	struct lb b = {0};
	std_header(&b);
	block(&b, 10, 24 + 10 + 10, 1);
	lb_ev(&b, GEL_GC_START, 100);     /* cap 1 */
	lb_ev(&b, GEL_GC_END, 400);       /* cap 1: 300 */
	block(&b, 20, 24 + 10 + 10, 0);
	lb_ev(&b, GEL_GC_START, 150);     /* cap 0, earlier than cap 1's end */
	lb_ev(&b, GEL_GC_END, 200);       /* cap 0: 50 */
	lb_ev(&b, GEL_GC_START, 500);     /* past the block: no cap */
	block(&b, 30, 0xffffffffu, 2);
	lb_ev(&b, GEL_GC_END, 600);       /* cap 2, no start there */
	lb_u16(&b, 0xffff);
	struct seen s;
	struct gel_decoder g;
	CHECK(decode(b.d, b.n, 7, &s, &g) == 0 && s.n == 9, "%zu events: %s", s.n, gel_error(&g));
	static const int caps[] = {1, 1, 1, 0, 0, 0, -1, 2, 2};
	for (size_t i = 0; i < s.n && i < 9; i++)
		CHECK(s.ev[i].cap == caps[i], "event %zu: cap %d, not %d", i, (int)s.ev[i].cap, caps[i]);
	struct el_gc gc;
	el_gc_init(&gc);
	for (size_t i = 0; i < s.n; i++)
		el_gc_add(&gc, &s.ev[i]);
	CHECK(el_gc_finish(&gc) == 0, "finish");
	/* cap 1's 100-400 holds cap 0's 150-200: one stop of 300 ns */
	CHECK(gc.starts == 3 && gc.collections == 3 && gc.pauses_n == 1 && gc.total_pause_ns == 300 &&
	      gc.longest_pause_ns == 300 && gc.unmatched == 1,
	      "pauses by capability: %" PRIu64 " ns in %" PRIu64, gc.total_pause_ns, gc.pauses_n);
	el_gc_free(&gc);

	/* the lines in time order, ties in the log's order */
	struct el_sorted so;
	REQUIRE(el_sorted_init(&so, 1 << 20) == 0, "sorted");
	for (size_t i = 0; i < s.n; i++)
		CHECK(el_sorted_add(&so, &s.ev[i]) == 0, "add");
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	REQUIRE(f, "memstream");
	CHECK(el_sorted_write(&so, f) == 0, "write");
	fclose(f);
	CHECK(text && !strcmp(text, "100: cap 1: starting GC\n150: cap 0: starting GC\n200: cap 0: finished GC\n"
	                            "400: cap 1: finished GC\n500: starting GC\n600: cap 2: finished GC\n"),
	      "sorted:\n%s", text);
	free(text);
	el_sorted_free(&so);
	/* past its bound, the text is refused */
	REQUIRE(el_sorted_init(&so, 40) == 0, "sorted");
	int rc = 0;
	for (size_t i = 0; i < s.n; i++)
		rc |= el_sorted_add(&so, &s.ev[i]);
	CHECK(rc == -1 && so.failed, "max_bytes");
	el_sorted_free(&so);
	gel_free(&g);
	free(b.d);
}

static void test_views(void)
{
	struct lb b = {0};
	std_log(&b);
	struct seen *s = calloc(1, sizeof(*s));
	struct gel_decoder g;
	REQUIRE(s, "oom");
	gel_init(&g, collect, s);
	s->views = 1;
	el_gc_init(&s->gc);
	hp_init(&s->hp);
	el_heap_init(&s->heap, &s->hp);
	CHECK(gel_feed(&g, b.d, b.n) == 0, "feed");
	CHECK(el_gc_finish(&s->gc) == 0, "finish");
	CHECK(s->gc.starts == 2 && s->gc.collections == 2 && s->gc.pauses_n == 2 && s->gc.total_pause_ns == 300 &&
	      s->gc.longest_pause_ns == 200 && s->gc.p50_ns == 100 && s->gc.p90_ns == 200 && s->gc.p99_ns == 200,
	      "pauses");
	CHECK(s->gc.by_gen[0] == 1 && s->gc.by_gen[1] == 1 && s->gc.peak_live == 300000 &&
	      s->gc.peak_heap == 1 << 20 && s->gc.elapsed_ns == 1304, "figures");
	CHECK(s->gc.gc_share > 0.23 && s->gc.gc_share < 0.231, "share %f", s->gc.gc_share);
	struct hp_tail t;
	CHECK(el_heap_finish(&s->heap, &g, &t) == 0, "hp: %s", hp_error(&s->hp));
	REQUIRE(s->hp.nsamples == 1 && s->hp.nbands == 2, "%zu samples, %zu bands", s->hp.nsamples, s->hp.nbands);
	CHECK(!strcmp(s->hp.bands[0].name, "ARR_WORDS") && s->hp.bands[0].total == 1024 &&
	      !strcmp(s->hp.bands[1].name, "THUNK") && s->hp.bands[1].total == 500, "bands");
	CHECK(s->hp.value_unit && !strcmp(s->hp.value_unit, "bytes"), "units");
	CHECK(s->hp.job && !strcmp(s->hp.job, "eventlog"), "job without program arguments: %s", s->hp.job);
	el_gc_free(&s->gc);
	el_heap_free(&s->heap);
	hp_free(&s->hp);
	gel_free(&g);

	/* a sample cut before its end is not in the model */
	memset(s, 0, sizeof(*s));
	gel_init(&g, collect, s);
	s->views = 1;
	el_gc_init(&s->gc);
	hp_init(&s->hp);
	el_heap_init(&s->heap, &s->hp);
	CHECK(gel_feed(&g, b.d, b.n - 14) == 0, "feed");
	CHECK(el_heap_finish(&s->heap, &g, &t) == 0 && s->hp.nsamples == 0 && t.partial_sample, "cut sample dropped");
	el_gc_free(&s->gc);
	el_heap_free(&s->heap);
	hp_free(&s->hp);
	gel_free(&g);

	/* a GHC that wrote no sample ends (none in the header): the last
	 * sample ends with the log */
	memset(s, 0, sizeof(*s));
	gel_init(&g, collect, s);
	s->views = 1;
	el_gc_init(&s->gc);
	hp_init(&s->hp);
	el_heap_init(&s->heap, &s->hp);
	size_t at = 0;
	while (memcmp(b.d + at, "etb\0\0\xa5", 6) != 0) /* type 165's declaration */
		at++;
	b.d[at + 5] = 0xa7; /* now 167: undeclared end, and no 167 event in the log */
	CHECK(gel_feed(&g, b.d, b.n - 20) == 0, "feed: %s", gel_error(&g));
	CHECK(el_heap_finish(&s->heap, &g, &t) == 0 && s->hp.nsamples == 1 && s->hp.nbands == 2, "no ends: kept");
	el_gc_free(&s->gc);
	el_heap_free(&s->heap);
	hp_free(&s->hp);
	gel_free(&g);
	free(s);
	free(b.d);
}

static int show_one(void *ctx, const struct gel_event *ev)
{
	return el_show_event(ctx, ev) < 0;
}

static void test_show(void)
{
	struct lb b = {0};
	std_log(&b);
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	REQUIRE(f, "memstream");
	struct gel_decoder g;
	gel_init(&g, show_one, f);
	CHECK(gel_feed(&g, b.d, b.n) == 0, "feed");
	fclose(f);
	static const char *const want[] = {
		"90: cap 0: stopping thread 1 (heap overflow)\n",
		"100: cap 0: starting GC\n",
		"301: cap 0: GC stats for heap capset 0: generation 1, 4096 bytes copied, 8 bytes slop, 16 bytes "
		"fragmentation, 1 par threads, 0 bytes max par copied, 0 bytes total par copied, 0 bytes balanced par "
		"copied\n",
		"302: cap 0: size of heap capset 0: 1048576 bytes\n",
		"400: cap 0: hello\n",
		"410: cap 0: Unknown event type 300\n",
		"1201: start heap profiling 0 at sampling period 50000000 broken down by closure type\n",
		"1300: start heap prof sample 1\n",
		"1301: heap prof sample 0, residency 1000, label ARR_WORDS\n",
		"1304: end prof sample 1\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(text && strstr(text, want[i]), "no line '%s' in:\n%s", want[i], text);
	CHECK(text && !strstr(text, "block"), "block markers are not shown");
	/* a black hole's owner, when the RTS names it */
	struct gel_event bh;
	memset(&bh, 0, sizeof(bh));
	bh.type = GEL_STOP_THREAD, bh.time_ns = 7, bh.cap = 1, bh.known = bh.decoded = 1;
	bh.thread = 5, bh.status = 8, bh.blocked_on = 10;
	char line[128];
	FILE *lf = fmemopen(line, sizeof(line), "w");
	REQUIRE(lf, "fmemopen");
	CHECK(el_show_event(lf, &bh) == 1, "shown");
	fclose(lf);
	CHECK(!strcmp(line, "7: cap 1: stopping thread 5 (blocked on black hole owned by thread 10)\n"), "%s", line);
	free(text);
	gel_free(&g);
	free(b.d);
}

struct ends {
	uint64_t *end;
	size_t n, cap;
	const struct gel_decoder *g;
};

static int note_end(void *ctx, const struct gel_event *ev)
{
	struct ends *e = ctx;
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 4096;
		e->end = realloc(e->end, e->cap * sizeof(*e->end));
		REQUIRE(e->end, "out of memory");
	}
	const struct gel_type *t = gel_type_of(e->g, ev->type);
	e->end[e->n++] = ev->offset + 10u + (t->size == GEL_VARIABLE ? 2u : 0u) + ev->size;
	return 0;
}

/* The real logs of tests/data/eventlog cut at every 61st byte (and the
 * last 70): each cut yields exactly the events that end by it, and the
 * prefix is where the last of them ends. */
static void test_real_cuts(void)
{
	static const char *const logs[] = {"evprog.eventlog", "threaded.eventlog", "evprog-prof-hc.eventlog"};
	for (size_t k = 0; k < sizeof(logs) / sizeof(logs[0]); k++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/tests/data/eventlog/%s", tu_srcdir(), logs[k]);
		size_t len = 0;
		uint8_t *d = tu_read_file(path, &len);
		REQUIRE(d && len > 1000, "cannot read %s (TOP_SRCDIR names the source tree)", path);
		struct ends all = {0};
		struct gel_decoder g;
		gel_init(&g, note_end, &all);
		all.g = &g;
		CHECK(gel_feed(&g, d, len) == 0 && gel_finish(&g, NULL) == 0, "%s: %s", logs[k], gel_error(&g));
		uint64_t header_end = 0;
		for (size_t i = 0; i + 4 <= len; i++)
			if (!memcmp(d + i, "datb", 4)) {
				header_end = i + 4;
				break;
			}
		gel_free(&g);
		int bad = 0;
		for (size_t cut = 0; cut <= len && bad < 3; cut += cut + 70 >= len ? 1 : 61) {
			struct ends got = {0};
			gel_init(&g, note_end, &got);
			got.g = &g;
			CHECK(gel_feed(&g, d, cut) == 0, "%s cut at %zu: %s", logs[k], cut, gel_error(&g));
			size_t want = 0;
			while (want < all.n && all.end[want] <= cut)
				want++;
			uint64_t prefix = want ? all.end[want - 1] : cut >= header_end ? header_end : 0;
			if (cut == len)
				prefix = len;
			if (got.n != want || gel_whole_prefix(&g) != prefix) {
				bad++;
				CHECK(0, "%s cut at %zu: %zu events (want %zu), prefix %" PRIu64 " (want %" PRIu64 ")", logs[k],
				      cut, got.n, want, gel_whole_prefix(&g), prefix);
			}
			free(got.end);
			gel_free(&g);
		}
		free(all.end);
		free(d);
	}
}

/* ---- the timeline ------------------------------------------------------------- */

struct tl_ctx {
	struct el_gc gc;
	struct el_timeline t;
};

static int tl_add(void *ctx, const struct gel_event *ev)
{
	struct tl_ctx *c = ctx;
	return el_gc_add(&c->gc, ev) != 0 || el_timeline_add(&c->t, ev) != 0;
}

/* Decodes d into c (finished) and draws the section: the HTML, malloc'd. */
static char *timeline_of(const uint8_t *d, size_t n, struct tl_ctx *c)
{
	struct gel_decoder g;
	el_gc_init(&c->gc);
	el_timeline_init(&c->t);
	gel_init(&g, tl_add, c);
	CHECK(gel_feed(&g, d, n) == 0, "feed: %s", gel_error(&g));
	gel_free(&g);
	CHECK(el_gc_finish(&c->gc) == 0, "gc finish");
	el_timeline_finish(&c->t);
	char *html = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);
	REQUIRE(f, "memstream");
	CHECK(el_timeline_html(f, &c->t, &c->gc, "/api/runs/1/eventlog", NULL) == 0, "html");
	fclose(f);
	return html;
}

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void tl_free(struct tl_ctx *c)
{
	el_gc_free(&c->gc);
	el_timeline_free(&c->t);
}

static void test_timeline(void)
{
	/* the real logs: a bar per pause, each of its collection's generation
	 * (one collection a pause in both), a lane per capability */
	static const struct {
		const char *log;
		size_t lanes, markers;
	} logs[] = {{"evprog.eventlog", 1, 2}, {"threaded.eventlog", 2, 0}};
	for (size_t k = 0; k < 2; k++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/tests/data/eventlog/%s", tu_srcdir(), logs[k].log);
		size_t len = 0;
		uint8_t *d = tu_read_file(path, &len);
		REQUIRE(d, "cannot read %s", path);
		struct tl_ctx c;
		char *html = timeline_of(d, len, &c);
		REQUIRE(html, "no html");
		CHECK(count_of(html, "<rect class=\"gc\"") == c.gc.pauses_n && c.gc.pauses_n == c.gc.collections,
		      "%s: %zu bars, %" PRIu64 " pauses", logs[k].log, count_of(html, "<rect class=\"gc\""), c.gc.pauses_n);
		CHECK(count_of(html, "data-gen=\"0\"") == c.gc.by_gen[0] && count_of(html, "data-gen=\"1\"") == c.gc.by_gen[1],
		      "%s: bars by generation", logs[k].log);
		CHECK(count_of(html, "<g class=\"lane\"") == logs[k].lanes && c.t.nlanes == logs[k].lanes,
		      "%s: %zu lanes", logs[k].log, c.t.nlanes);
		CHECK(c.t.nmarkers == logs[k].markers && count_of(html, "class=\"tl-mlabel\"") == logs[k].markers,
		      "%s: %zu markers", logs[k].log, c.t.nmarkers);
		CHECK(c.t.nheap > 0 && c.t.nlive > 0 && strstr(html, "data-follow=\"/api/runs/1/eventlog\""),
		      "%s: heap lines, follow", logs[k].log);
		free(html);
		tl_free(&c);
		free(d);
	}

	/* built here: markers past the bound, hostile text, more pauses than bars */
	struct lb b = {0};
	lb_bytes(&b, "hdrbhetb", 8);
	lb_type(&b, GEL_RUN_THREAD, 4, "Run thread");
	lb_type(&b, GEL_STOP_THREAD, 10, "Stop thread");
	lb_type(&b, GEL_GC_START, 0, "Starting GC");
	lb_type(&b, GEL_GC_END, 0, "Finished GC");
	lb_type(&b, GEL_USER_MARKER, GEL_VARIABLE, "User marker");
	lb_bytes(&b, "hetehdredatb", 12);
	const char *evil = "</svg><script>x</script>\"'&\x1b[2J";
	for (uint32_t i = 0; i < EL_TL_MAX_MARKERS + 5; i++)
		lb_var(&b, GEL_USER_MARKER, 10 + i, evil, (uint16_t)strlen(evil));
	uint64_t t = 100000;
	for (uint32_t i = 0; i < EL_TL_MAX_BARS + 10000; i++, t += 1000) {
		lb_ev(&b, GEL_GC_START, t);
		lb_ev(&b, GEL_GC_END, t + 400);
	}
	lb_ev(&b, GEL_STOP_THREAD, t); /* a stop without its run: not a span */
	lb_u32(&b, 1);
	lb_u16(&b, 0);
	lb_u32(&b, 0);
	lb_ev(&b, GEL_RUN_THREAD, t + 10); /* still running at the end */
	lb_u32(&b, 1);
	lb_u16(&b, 0xffff);
	struct tl_ctx c;
	char *html = timeline_of(b.d, b.n, &c);
	REQUIRE(html, "no html");
	CHECK(c.t.nmarkers == EL_TL_MAX_MARKERS && c.t.dropped == 5, "markers kept %zu, dropped %" PRIu64,
	      c.t.nmarkers, c.t.dropped);
	CHECK(!strstr(html, "<script>") && !strstr(html, "</svg><") && strstr(html, "&lt;/svg&gt;&lt;script&gt;") &&
	      strstr(html, "\\x1b[2J") && strstr(html, "past this page's bounds"),
	      "hostile markers not escaped");
	size_t bars = count_of(html, "<rect class=\"gc\"");
	CHECK(c.gc.pauses_n == EL_TL_MAX_BARS + 10000 && bars <= EL_TL_MAX_BARS && bars > 0,
	      "%" PRIu64 " pauses drawn as %zu bars", c.gc.pauses_n, bars);
	/* every pause is in one bar: the bars' counts sum to the pauses */
	uint64_t sum = 0;
	for (const char *p = html; (p = strstr(p, " data-n=\"")); p++)
		sum += strtoull(p + 9, NULL, 10);
	CHECK(sum == c.gc.pauses_n, "bars hold %" PRIu64 " pauses, not %" PRIu64, sum, c.gc.pauses_n);
	CHECK(c.t.nlanes == 0, "thread events without a block have no capability: %zu lanes", c.t.nlanes);
	free(html);
	tl_free(&c);
	free(b.d);
}

int main(void)
{
	rng = tu_seed(0x4556);
	test_fields();
	test_pieces();
	test_stop();
	test_cut_everywhere();
	test_hostile_headers();
	test_hostile_events();
	test_caps();
	test_views();
	test_show();
	test_real_cuts();
	test_timeline();
	return tu_finish("test_eventlog");
}
