/*
 * test_samples.c - the samples stream and its exports (profile/samples/samples.h):
 * every record written and read back; a stream cut at every byte offset
 * gives every whole record before the cut and says it was cut; hostile
 * records (huge lengths, undefined frame ids, too deep, out of order, NUL
 * in a name) refused with a message naming them and with memory bounded;
 * two segments' frames merged; folded stacks exact on a small case; a
 * backslash stays one in folded and speedscope output; the time profile's
 * top function is the most-sampled leaf; a sample's CPU time (TIME) weighs
 * it in the time profile and perf script's periods; pprof's bytes inflate.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/render/flame.h"
#include "profile/samples/samples.h"
#include "profile/prof/time_profile.h"
#include "testutil.h"

static uint64_t rng;

/* Feeds len bytes in random pieces (one piece when !pieces), then finishes. */
static int parse(struct samples_profile *p, const void *data, size_t len, int pieces)
{
	const uint8_t *d = data;
	samples_init(p);
	for (size_t at = 0; at < len;) {
		size_t n = pieces ? 1 + tu_rand_below(&rng, tu_rand_below(&rng, 3) ? 16 : 3000) : len - at;
		n = n > len - at ? len - at : n;
		if (samples_feed(p, d + at, n) != 0)
			return -1;
		at += n;
	}
	return samples_finish(p);
}

static struct samples_frame frame(enum samples_kind kind, const char *name, const char *module,
                                  const char *file, uint32_t line, uint64_t addr)
{
	return (struct samples_frame){kind, addr, line, (char *)name, (char *)module, (char *)file, 0};
}

/* The text f writes, NUL-terminated (the caller frees it). */
static char *capture(int (*write)(FILE *, const struct samples_profile *), const struct samples_profile *p)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	REQUIRE(m, "open_memstream");
	CHECK(write(m, p) == 0, "an export failed");
	fclose(m);
	return buf;
}

static int speedscope(FILE *f, const struct samples_profile *p) { return samples_write_speedscope(f, p, "t"); }
static int perf(FILE *f, const struct samples_profile *p) { return samples_write_perf_script(f, p, "guest"); }

/* ---- every record ---------------------------------------------------------- */

/* n raw bytes appended (a record the writer would not write). */
static void put_raw(struct samples_buf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = b->len + n + 4096;
		REQUIRE((b->data = realloc(b->data, b->cap)), "realloc");
	}
	memcpy(b->data + b->len, d, n);
	b->len += n;
}

/* Every record type once (and a newer writer's), ends[k] where record k ends. */
static void one_of_each(struct samples_buf *b, size_t *ends, size_t *nends)
{
	struct samples_frame f1 = frame(SAMPLES_KIND_HASKELL, "go", "Main", "Main.hs", 12, 0x1000);
	struct samples_frame f2 = frame(SAMPLES_KIND_C, "memcpy", "libc", "", 0, 0x2000);
	struct samples_frame f3 = frame(SAMPLES_KIND_ROOT, "[GC]", "", "", 0, 0);
	struct samples_frame f4 = frame(SAMPLES_KIND_KERNEL, "", "", "", 0, 0xffff800000001234ull);
	uint32_t ids[3] = {2, 1, 3};
	static const uint8_t unknown[] = {99, 0, 0, 0, 3, 0, 0, 0, 'x', 'y', 'z'};
	*nends = 0;
#define REC(call)                                   \
	do {                                        \
		REQUIRE((call) == 0, #call);        \
		ends[(*nends)++] = b->len;          \
	} while (0)
	REC(samples_put_begin(b, 997, 1700000000000000000ull, 4, "leak +RTS"));
	REC(samples_put_frame(b, 1, &f1));
	REC(samples_put_frame(b, 2, &f2));
	REC(samples_put_frame(b, 3, &f3));
	REC(samples_put_frame(b, 4, &f4));
	REC(samples_put_sample(b, 5000, 3, 1, ids, 3, 2));
	put_raw(b, unknown, sizeof(unknown));
	ends[(*nends)++] = b->len;
	REC(samples_put_lost(b, 6000, 7, SAMPLES_LOST_BUDGET));
	REC(samples_put_rate(b, 7000, 250));
	REC(samples_put_sample(b, 8000, 0, 2, ids + 1, 1, 0));
	REC(samples_put_end(b, 9000, SAMPLES_END_STOPPED));
#undef REC
}

static void test_round_trip(void)
{
	struct samples_buf b = {0};
	size_t ends[32], n;
	one_of_each(&b, ends, &n);
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "parse: %s", samples_error(&p));
	CHECK(p.hz == 997 && p.start_unix_ns == 1700000000000000000ull && p.vcpus == 4, "BEGIN's fields");
	CHECK(p.program && !strcmp(p.program, "leak +RTS"), "program");
	REQUIRE(p.nframes == 4 && p.nsamples == 2, "%zu frames, %zu samples", p.nframes, p.nsamples);
	const struct samples_frame *f = p.frames;
	CHECK(f[0].kind == SAMPLES_KIND_HASKELL && !strcmp(f[0].name, "go") && !strcmp(f[0].module, "Main") &&
	          !strcmp(f[0].file, "Main.hs") && f[0].line == 12 && f[0].addr == 0x1000, "FRAME 1");
	CHECK(f[1].kind == SAMPLES_KIND_C && !strcmp(f[1].name, "memcpy") && !strcmp(f[1].module, "libc") &&
	          !strcmp(f[1].file, "") && f[1].line == 0 && f[1].addr == 0x2000, "FRAME 2");
	CHECK(f[2].kind == SAMPLES_KIND_ROOT && !strcmp(f[2].name, "[GC]"), "FRAME 3");
	CHECK(f[3].kind == SAMPLES_KIND_KERNEL && f[3].addr == 0xffff800000001234ull, "FRAME 4");
	const struct samples_sample *s = p.samples;
	CHECK(s[0].t_ns == 5000 && s[0].vcpu == 3 && s[0].weight == 1 && s[0].depth == 3 && s[0].stop == 2 &&
	          s[0].hz == 997, "SAMPLE 1");
	CHECK(p.pool[s[0].at] == 1 && p.pool[s[0].at + 1] == 0 && p.pool[s[0].at + 2] == 2, "SAMPLE 1's frames");
	CHECK(s[1].t_ns == 8000 && s[1].weight == 2 && s[1].depth == 1 && p.pool[s[1].at] == 0 && s[1].hz == 250,
	      "SAMPLE 2 (after RATE 250)");
	CHECK(p.lost == 7 && p.ended && !p.cut && p.segments == 1, "LOST, END");
	CHECK(p.fed == b.len, "fed");
	samples_free(&p);
	samples_buf_free(&b);
}

/* ---- a stream cut anywhere --------------------------------------------------- */

static void test_cut_everywhere(void)
{
	struct samples_buf b = {0};
	size_t ends[32], n;
	one_of_each(&b, ends, &n);
	/* what each whole prefix holds: frames and samples after record k */
	static const size_t frames_after[] = {0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4};
	static const size_t samples_after[] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2};
	REQUIRE(n == 11, "%zu records", n);
	int bad = 0;
	for (size_t cut = 0; cut <= b.len; cut++) {
		size_t whole = 0;
		while (whole < n && ends[whole] <= cut)
			whole++;
		struct samples_profile p;
		int rc = parse(&p, b.data, cut, 1);
		int at_boundary = cut == 0 || ends[whole ? whole - 1 : 0] == cut;
		size_t fr = whole ? frames_after[whole - 1] : 0, sa = whole ? samples_after[whole - 1] : 0;
		if (rc != 0 || p.cut != !at_boundary || p.nframes != fr || p.nsamples != sa ||
		    p.ended != (whole == n)) {
			if (!bad++)
				CHECK(0, "cut at %zu: rc %d cut %d frames %zu samples %zu (%s)", cut, rc, p.cut,
				      p.nframes, p.nsamples, samples_error(&p));
		}
		samples_free(&p);
		/* the same in random pieces */
		rc = parse(&p, b.data, cut, 1);
		if (rc != 0 || p.cut != !at_boundary || p.nsamples != sa)
			if (!bad++)
				CHECK(0, "cut at %zu, in pieces", cut);
		samples_free(&p);
	}
	CHECK(!bad, "%d offsets wrong of %zu", bad, b.len + 1);
	/* the writer's zero padding: a whole sector, or a few bytes */
	for (size_t pad = 1; pad <= 600; pad += pad < 10 ? 1 : 97) {
		size_t len = b.len + pad;
		uint8_t *d = calloc(1, len);
		memcpy(d, b.data, b.len);
		struct samples_profile p;
		CHECK(parse(&p, d, len, 1) == 0 && !p.cut && p.nsamples == 2 && p.ended,
		      "%zu bytes of padding read as a cut", pad);
		samples_free(&p);
		free(d);
	}
	samples_buf_free(&b);
}

/* ---- hostile records ---------------------------------------------------------------- */

static void put_head(struct samples_buf *b, uint16_t type, uint32_t len)
{
	uint8_t h[8] = {(uint8_t)type, (uint8_t)(type >> 8), 0, 0, (uint8_t)len, (uint8_t)(len >> 8),
	                (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
	put_raw(b, h, sizeof(h));
}

/* The stream fails with a message holding want. */
static void refused(const char *what, const struct samples_buf *b, const char *want)
{
	struct samples_profile p;
	int rc = parse(&p, b->data, b->len, 1);
	CHECK(rc != 0 && strstr(samples_error(&p), want), "%s: rc %d, error \"%s\", wanted \"%s\"", what, rc,
	      samples_error(&p), want);
	samples_free(&p);
}

static void begin_and_frames(struct samples_buf *b, int nframes)
{
	char name[16];
	b->len = 0;
	REQUIRE(samples_put_begin(b, 100, 0, 2, "p") == 0, "begin");
	for (int i = 1; i <= nframes; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		struct samples_frame f = frame(SAMPLES_KIND_C, name, "", "", 0, (uint64_t)i);
		REQUIRE(samples_put_frame(b, (uint32_t)i, &f) == 0, "frame");
	}
}

static size_t heap_in_use(void)
{
	return mallinfo2().uordblks;
}

static void test_hostile_lengths(void)
{
	struct samples_buf b = {0};
	begin_and_frames(&b, 1);
	put_head(&b, SAMPLES_REC_SAMPLE, 0xffffffffu);
	refused("a record of 4 GiB", &b, "claims 4294967295 bytes");
	begin_and_frames(&b, 1);
	put_head(&b, 77, SAMPLES_MAX_RECORD + 1);
	refused("an unknown record too long", &b, "claims 65537 bytes");

	/* memory: a record claiming the most, fed a byte at a time, holds its
	 * bytes only; a stream of every allowed size never holds two */
	begin_and_frames(&b, 1);
	size_t before = heap_in_use();
	struct samples_profile p;
	samples_init(&p);
	CHECK(samples_feed(&p, b.data, b.len) == 0, "feed");
	uint8_t head[8] = {50, 0, 0, 0, 0, 0, 1, 0}; /* type 50, 65536 bytes */
	CHECK(samples_feed(&p, head, 8) == 0, "an unknown record's head");
	static uint8_t zeros[4096];
	for (int i = 0; i < 15; i++)
		CHECK(samples_feed(&p, zeros, sizeof(zeros)) == 0, "its payload");
	CHECK(heap_in_use() - before < 200 * 1024, "%zu bytes held for a 64 KiB record", heap_in_use() - before);
	CHECK(samples_feed(&p, zeros, sizeof(zeros)) == 0 && samples_finish(&p) == 0 && !p.cut,
	      "an unknown record is skipped");
	samples_free(&p);
	samples_buf_free(&b);
}

static void test_hostile_fields(void)
{
	struct samples_buf b = {0};
	uint32_t ids[SAMPLES_MAX_DEPTH + 1];
	for (size_t i = 0; i <= SAMPLES_MAX_DEPTH; i++)
		ids[i] = 1;

	begin_and_frames(&b, 3);
	uint32_t bad[3] = {1, 7, 2};
	REQUIRE(samples_put_sample(&b, 0, 0, 1, bad, 3, 0) == 0, "sample");
	refused("an undefined frame id", &b, "names frame 7, not defined in this segment (frames 1 to 3)");
	begin_and_frames(&b, 3);
	bad[1] = 0;
	REQUIRE(samples_put_sample(&b, 0, 0, 1, bad, 3, 0) == 0, "sample");
	refused("frame id 0", &b, "names frame 0");

	CHECK(samples_put_sample(&b, 0, 0, 1, ids, SAMPLES_MAX_DEPTH + 1, 0) != 0, "the writer wrote depth 1025");
	begin_and_frames(&b, 1);
	size_t at = b.len;
	REQUIRE(samples_put_sample(&b, 0, 0, 1, ids, SAMPLES_MAX_DEPTH, 0) == 0, "deepest sample");
	b.data[at + 8 + 16] = (uint8_t)((SAMPLES_MAX_DEPTH + 1) & 0xff); /* depth 1025 */
	b.data[at + 8 + 17] = (uint8_t)((SAMPLES_MAX_DEPTH + 1) >> 8);
	refused("depth 1025", &b, "SAMPLE of depth 1025 (1 to 1024)");

	begin_and_frames(&b, 2);
	struct samples_frame f = frame(SAMPLES_KIND_C, "x", "", "", 0, 0);
	REQUIRE(samples_put_frame(&b, 5, &f) == 0, "frame");
	refused("a frame id out of order", &b, "FRAME id 5 where 3 was next");
	begin_and_frames(&b, 0);
	at = b.len;
	REQUIRE(samples_put_frame(&b, 1, &(struct samples_frame){SAMPLES_KIND_C, 0, 0, "abc", "", "", 0}) == 0, "f");
	b.data[at + 8 + 22 + 1] = 0; /* "a\0c" */
	refused("a NUL in a name", &b, "FRAME's name holds a NUL byte");
	begin_and_frames(&b, 0);
	at = b.len;
	REQUIRE(samples_put_frame(&b, 1, &(struct samples_frame){SAMPLES_KIND_C, 0, 0, "abc", "", "", 0}) == 0, "f");
	b.data[at + 8 + 4] = 9;
	refused("an unknown kind", &b, "kind 9");
	begin_and_frames(&b, 1);
	b.data[4 + 8] = 0, b.data[5 + 8] = 0, b.data[6 + 8] = 0, b.data[7 + 8] = 0; /* hz 0 */
	refused("0 Hz", &b, "BEGIN at 0 Hz");
	begin_and_frames(&b, 1);
	b.data[8] = 2;
	refused("format 2", &b, "BEGIN of format 2");
	begin_and_frames(&b, 1);
	b.data[4]--; /* BEGIN a byte short */
	refused("a short BEGIN", &b, "BEGIN record");
	b.len = 0;
	REQUIRE(samples_put_sample(&b, 0, 0, 1, ids, 1, 0) == 0, "s");
	refused("a sample before BEGIN", &b, "before any BEGIN");
	begin_and_frames(&b, 1);
	REQUIRE(samples_put_sample(&b, 0, 2, 1, ids, 1, 0) == 0, "s");
	refused("vCPU 2 of 2", &b, "SAMPLE of vCPU 2, of a domain of 2");
	begin_and_frames(&b, 1);
	REQUIRE(samples_put_rate(&b, 0, 0) == 0, "rate");
	refused("RATE 0", &b, "RATE of 0 Hz");
	samples_buf_free(&b);
}

/* Names past 65535 bytes, and a FRAME whose strings would pass 64 KiB, are cut to fit. */
static void test_long_strings(void)
{
	struct samples_buf b = {0};
	char *big = malloc(70001);
	memset(big, 'n', 70000);
	big[70000] = '\0';
	big[65534] = (char)0xc3, big[65535] = (char)0xa9; /* an é across the cut */
	REQUIRE(samples_put_begin(&b, 100, 0, 1, big) == 0, "begin");
	struct samples_frame f = {SAMPLES_KIND_C, 0, 0, big, big, big, 0};
	REQUIRE(samples_put_frame(&b, 1, &f) == 0, "frame");
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "%s", samples_error(&p));
	size_t n = strlen(p.frames[0].name) + strlen(p.frames[0].module) + strlen(p.frames[0].file);
	CHECK(strlen(p.program) <= SAMPLES_MAX_RECORD - 22 && strlen(p.program) > 60000, "program cut to %zu",
	      strlen(p.program));
	CHECK(n == SAMPLES_MAX_RECORD - 26, "frame strings cut to %zu", n);
	CHECK((p.program[strlen(p.program) - 1] & 0xc0) != 0xc0, "cut inside a UTF-8 sequence");
	samples_free(&p);
	samples_buf_free(&b);
	free(big);
}

/* ---- segments ------------------------------------------------------------------------ */

static void test_segments(void)
{
	struct samples_buf b = {0};
	struct samples_frame a = frame(SAMPLES_KIND_HASKELL, "a", "M", "M.hs", 1, 0x10);
	struct samples_frame bb = frame(SAMPLES_KIND_HASKELL, "b", "M", "M.hs", 2, 0x20);
	struct samples_frame c = frame(SAMPLES_KIND_HASKELL, "c", "M", "M.hs", 3, 0x30);
	uint32_t s1[2] = {2, 1}, s2[2] = {1, 2};
	REQUIRE(samples_put_begin(&b, 100, 1000000000, 1, "first") == 0 && samples_put_frame(&b, 1, &a) == 0 &&
	            samples_put_frame(&b, 2, &bb) == 0 && samples_put_sample(&b, 10, 0, 1, s1, 2, 0) == 0 &&
	            samples_put_end(&b, 20, SAMPLES_END_STOPPED) == 0,
	        "segment 1");
	/* the sampler restarted: ids from 1 again, b is 1 now */
	REQUIRE(samples_put_begin(&b, 50, 3000000000, 2, "second") == 0 && samples_put_frame(&b, 1, &bb) == 0 &&
	            samples_put_frame(&b, 2, &c) == 0 && samples_put_sample(&b, 10, 1, 1, s2, 2, 0) == 0,
	        "segment 2");
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "%s", samples_error(&p));
	REQUIRE(p.nframes == 3 && p.nsamples == 2 && p.segments == 2, "%zu frames, %u segments", p.nframes,
	        p.segments);
	CHECK(p.hz == 100 && !strcmp(p.program, "first") && p.vcpus == 2, "the first BEGIN's header");
	const struct samples_sample *s = p.samples;
	CHECK(!strcmp(p.frames[p.pool[s[0].at]].name, "b") && !strcmp(p.frames[p.pool[s[0].at + 1]].name, "a"),
	      "segment 1's sample");
	CHECK(!strcmp(p.frames[p.pool[s[1].at]].name, "b") && !strcmp(p.frames[p.pool[s[1].at + 1]].name, "c"),
	      "segment 2's sample names b and c");
	CHECK(p.pool[s[0].at] == p.pool[s[1].at], "b is one frame");
	CHECK(s[1].t_ns == 2000000010ull && s[1].hz == 50, "segment 2's time from the first start: %llu",
	      (unsigned long long)s[1].t_ns);
	samples_free(&p);
	samples_buf_free(&b);
}

/* ---- exports ---------------------------------------------------------------------------- */

/* main -> go -> {work x3, memcpy x1}, main -> [GC] x2 (C frame under Haskell) */
static void small_profile(struct samples_buf *b, const char *odd_name)
{
	struct samples_frame fr[] = {
		frame(SAMPLES_KIND_HASKELL, "main", "Main", "Main.hs", 5, 0x100),
		frame(SAMPLES_KIND_HASKELL, "go", "Main", "Main.hs", 9, 0x200),
		frame(SAMPLES_KIND_HASKELL, "work", "Data.Work", "Data/Work.hs", 40, 0x300),
		frame(SAMPLES_KIND_C, "memcpy", "libc.a", "", 0, 0x400),
		frame(SAMPLES_KIND_ROOT, "[GC]", "", "", 0, 0),
		frame(SAMPLES_KIND_HASKELL, "work", "Data.Work", "Data/Work.hs", 41, 0x308), /* same function */
		frame(SAMPLES_KIND_C, odd_name, "weird dso", "", 0, 0x500),
	};
	uint32_t work[] = {3, 2, 1}, work2[] = {6, 2, 1}, mc[] = {4, 2, 1}, gc[] = {5}, odd[] = {7, 1};
	REQUIRE(samples_put_begin(b, 1000, 0, 2, "prog") == 0, "begin");
	for (uint32_t i = 0; i < 7; i++)
		REQUIRE(samples_put_frame(b, i + 1, &fr[i]) == 0, "frame");
	REQUIRE(samples_put_sample(b, 1000000, 0, 1, work, 3, 0) == 0, "s");
	REQUIRE(samples_put_sample(b, 2000000, 1, 1, gc, 1, 0) == 0, "s");
	REQUIRE(samples_put_sample(b, 3000000, 0, 1, work2, 3, 0) == 0, "s");
	REQUIRE(samples_put_sample(b, 4000000, 0, 1, mc, 3, 0) == 0, "s");
	REQUIRE(samples_put_sample(b, 5000000, 1, 1, work, 3, 0) == 0, "s");
	REQUIRE(samples_put_sample(b, 6000000, 1, 1, gc, 1, 0) == 0, "s");
	REQUIRE(samples_put_sample(b, 7000000, 0, 1, odd, 2, 0) == 0, "s");
	REQUIRE(samples_put_end(b, 8000000, SAMPLES_END_DOMAIN) == 0, "end");
}

static void test_folded_and_names(void)
{
	struct samples_buf b = {0};
	small_profile(&b, "a\\b;c\x1b\xff");
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "%s", samples_error(&p));
	char *folded = capture(samples_write_folded, &p);
	const char *want = "Main.main;Main.go;Data.Work.work 3\n"
	                   "[GC] 2\n"
	                   "Main.main;Main.go;memcpy 1\n"
	                   "Main.main;a\\b\\x3bc\\x1b\\xff 1\n";
	CHECK(!strcmp(folded, want), "folded:\n%s\nwanted:\n%s", folded, want);
	char *json = capture(speedscope, &p);
	CHECK(strstr(json, "{\"name\":\"a\\\\b;c\\u001b\\udcff\"}"), "speedscope's name of a\\b;c ESC 0xff: %s",
	      json);
	CHECK(strstr(json, "{\"name\":\"Data.Work.work\",\"file\":\"Data/Work.hs\",\"line\":40}"),
	      "a function's first line");
	CHECK(strstr(json, "\"name\":\"vCPU 0\",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":4000000,"
	                   "\"samples\":[[0,1,2],[0,1,2],[0,1,3],[0,5]],\"weights\":[1000000,1000000,1000000,1000000]"),
	      "vCPU 0's profile: %s", json);
	CHECK(strstr(json, "\"name\":\"vCPU 1\""), "vCPU 1's profile");
	char *script = capture(perf, &p);
	const char *first = "guest 0 [000] 0.001000: 1000000 cpu-clock:\n"
	                    "\t300 Data.Work.work+0x0 (prog)\n\t200 Main.go+0x0 (prog)\n\t100 Main.main+0x0 (prog)\n\n"
	                    "guest 1 [001] 0.002000: 1000000 cpu-clock:\n\t0 [GC]+0x0 ([unknown])\n\n";
	CHECK(!strncmp(script, first, strlen(first)), "perf script:\n%.300s", script);
	CHECK(strstr(script, "\t400 memcpy+0x0 (libc.a)\n") && strstr(script, "\t500 a\\b;c\\x1b\\xff+0x0 (weird\\x20dso)\n"),
	      "perf script's C frames: %s", script);
	free(folded);
	free(json);
	free(script);
	samples_free(&p);
	samples_buf_free(&b);
}

static void test_time_profile(void)
{
	struct samples_buf b = {0};
	small_profile(&b, "odd");
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "%s", samples_error(&p));
	struct time_profile tp;
	REQUIRE(samples_to_time_profile(&p, &tp) == 0, "%s", tp_error(&tp));
	size_t n;
	struct tp_row *rows = tp_rank(&tp, TP_BY_TIME, NULL, &n);
	REQUIRE(rows && n == 6, "%zu cost centres", n);
	const struct tp_cc *top = &tp.ccs[rows[0].cc];
	CHECK(!strcmp(top->name, "work") && !strcmp(top->module, "Data.Work") && rows[0].ticks == 3,
	      "top: %s.%s %llu ticks", top->module, top->name, (unsigned long long)rows[0].ticks);
	CHECK(!strcmp(top->src, "Data/Work.hs:40"), "src %s", top->src);
	CHECK(tp.total_ticks == 7 && tp.has_ticks && tp.tick_us == 1000 && tp.nnodes == 6, "totals: %llu ticks, %zu nodes",
	      (unsigned long long)tp.total_ticks, tp.nnodes);
	CHECK(tp.nodes[0].inh_ticks == 5 && tp.nodes[0].parent == TP_NONE, "Main.main's inherited ticks");
	CHECK(rows[0].time > 42.8 && rows[0].time < 42.9, "time %%: %g", rows[0].time);
	/* flame (and so the report) reads it as a .prof's tree */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	REQUIRE(m, "open_memstream");
	CHECK(flame_folded(m, &tp, FLAME_TIME) == 0, "flame_folded");
	fclose(m);
	CHECK(strstr(buf, "Main.main;Main.go;Data.Work.work 3\n") && strstr(buf, "Main.main;Main.go;memcpy 1\n"),
	      "flame's folded stacks of the time profile:\n%s", buf);
	free(buf);
	free(rows);
	tp_free(&tp);
	samples_free(&p);
	samples_buf_free(&b);
}

/* p's pprof export, which must be one gzip member, inflated into out:
 * how many bytes. */
static size_t pprof_inflated(const struct samples_profile *p, uint8_t *out, size_t cap)
{
	char *gz = NULL;
	size_t gzlen = 0;
	FILE *m = open_memstream(&gz, &gzlen);
	REQUIRE(m && samples_write_pprof(m, p) == 0, "pprof");
	fclose(m);
	CHECK(gzlen > 18 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b, "not gzip");
	z_stream z = {0};
	REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK, "inflate");
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END, "inflate: %s", z.msg ? z.msg : "");
	size_t n = cap - z.avail_out;
	inflateEnd(&z);
	free(gz);
	return n;
}

/* TIME records: the next SAMPLE stands for their time (its vCPU's CPU
 * time), the time profile weighs by it in microseconds, perf script's
 * period is it; a SAMPLE without one stands for 1/hz; a TIME the wrong
 * size is refused; one not followed by a SAMPLE is dropped by the next. */
static void test_cpu_time(void)
{
	struct samples_buf b = {0};
	struct samples_frame fr[] = {frame(SAMPLES_KIND_C, "a", "m", "", 0, 0x100),
	                             frame(SAMPLES_KIND_C, "b", "m", "", 0, 0x200)};
	uint32_t a[] = {1}, bb[] = {2};
	REQUIRE(samples_put_begin(&b, 1000, 0, 1, "prog") == 0, "begin");
	REQUIRE(samples_put_frame(&b, 1, &fr[0]) == 0 && samples_put_frame(&b, 2, &fr[1]) == 0, "frames");
	/* a: 3 samples of 1 ms of CPU each; b: 3 samples of 0.25 ms (a host
	 * that ran it a quarter of the time); a last one of b told nothing */
	for (int i = 0; i < 3; i++) {
		REQUIRE(samples_put_time(&b, 1000000) == 0 && samples_put_sample(&b, 1000000u * (uint32_t)i, 0, 1, a, 1, 0) == 0, "a");
		REQUIRE(samples_put_time(&b, 250000) == 0 && samples_put_sample(&b, 1000000u * (uint32_t)i, 0, 1, bb, 1, 0) == 0, "b");
	}
	REQUIRE(samples_put_time(&b, 5) == 0, "a TIME no SAMPLE follows");
	REQUIRE(samples_put_time(&b, 7) == 0 && samples_put_sample(&b, 9000000, 0, 1, bb, 1, 0) == 0, "b told 7 ns");
	REQUIRE(samples_put_sample(&b, 9500000, 0, 1, bb, 1, 0) == 0, "b untold");
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "%s", samples_error(&p));
	REQUIRE(p.nsamples == 8, "%zu samples", p.nsamples);
	CHECK(p.samples[0].ns == 1000000 && p.samples[0].cpu_time && p.samples[1].ns == 250000, "told: %llu %llu",
	      (unsigned long long)p.samples[0].ns, (unsigned long long)p.samples[1].ns);
	CHECK(p.samples[6].ns == 7 && p.samples[7].ns == 1000000 && !p.samples[7].cpu_time,
	      "the last two: %llu, %llu (1/hz)", (unsigned long long)p.samples[6].ns, (unsigned long long)p.samples[7].ns);
	struct time_profile tp;
	REQUIRE(samples_to_time_profile(&p, &tp) == 0, "%s", tp_error(&tp));
	size_t n;
	struct tp_row *rows = tp_rank(&tp, TP_BY_TIME, NULL, &n);
	REQUIRE(rows && n == 2, "%zu cost centres", n);
	/* a: 3000 us; b: 750 + 0 (7 ns) + 1000 us */
	CHECK(tp.tick_us == 1 && tp.total_ticks == 4750 && !strcmp(tp.ccs[rows[0].cc].name, "a") && rows[0].ticks == 3000,
	      "by CPU time: tick %g us, total %llu, top %s %llu", tp.tick_us, (unsigned long long)tp.total_ticks,
	      tp.ccs[rows[0].cc].name, (unsigned long long)rows[0].ticks);
	free(rows);
	tp_free(&tp);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	REQUIRE(m, "open_memstream");
	CHECK(samples_write_perf_script(m, &p, NULL) == 0, "perf script");
	fclose(m);
	CHECK(strstr(buf, ": 250000 cpu-clock:\n") && strstr(buf, ": 7 cpu-clock:\n"), "perf script's periods:\n%.400s", buf);
	free(buf);
	samples_free(&p);
	b.len = 0;
	REQUIRE(samples_put_begin(&b, 1000, 0, 1, "prog") == 0, "begin");
	put_head(&b, SAMPLES_REC_TIME, 4);
	put_raw(&b, "\1\2\3\4", 4);
	refused("a TIME of 4 bytes", &b, "a TIME record shorter than its fields");
	samples_buf_free(&b);
}

/* pprof: a gzip member holding the sample types' strings and the names. */
static void test_pprof(void)
{
	struct samples_buf b = {0};
	small_profile(&b, "odd");
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "%s", samples_error(&p));
	uint8_t out[8192];
	size_t n = pprof_inflated(&p, out, sizeof(out));
	CHECK(memmem(out, n, "\x32\x00", 2), "string_table[0] is \"\"");
	CHECK(memmem(out, n, "\x0bnanoseconds", 12) && memmem(out, n, "\x07samples", 8), "sample types");
	CHECK(memmem(out, n, "\x0e" "Data.Work.work", 15), "a function's name");
	samples_free(&p);
	samples_buf_free(&b);
}

/* MAPPING records: frames in objects, kept once over segments (ids per
 * segment), the object's file named in perf script and pprof's mappings
 * with its build-id; a FRAME naming a mapping its segment did not define,
 * a MAPPING out of order, empty, or with a NUL, refused. */
static void put_two_mapped(struct samples_buf *b, uint64_t t0)
{
	struct samples_mapping prog = {0x401000, 0x402000, 0x1000, "/usr/bin/prog", "abcdef0123"},
	                       lib = {0x7f0000010000, 0x7f0000020000, 0x26000, "/lib/libc.so.6", ""};
	struct samples_frame f1 = frame(SAMPLES_KIND_C, "main", "prog", "prog.c", 3, 0x401234),
	                     f2 = frame(SAMPLES_KIND_C, "qsort", "libc.so.6", "", 0, 0x7f0000010abc);
	REQUIRE(samples_put_begin(b, 100, t0, 1, "prog") == 0, "begin");
	/* the second segment defines them the other way round */
	int flip = t0 != 0;
	REQUIRE(samples_put_mapping(b, 1, flip ? &lib : &prog) == 0 && samples_put_mapping(b, 2, flip ? &prog : &lib) == 0,
	        "mappings");
	f1.mapping = flip ? 2 : 1;
	f2.mapping = flip ? 1 : 2;
	REQUIRE(samples_put_frame(b, 1, &f1) == 0 && samples_put_frame(b, 2, &f2) == 0, "frames");
	uint32_t st[] = {2, 1};
	REQUIRE(samples_put_sample(b, 1000, 0, 1, st, 2, 0) == 0, "sample");
}

static void test_mappings(void)
{
	struct samples_buf b = {0};
	put_two_mapped(&b, 0);
	put_two_mapped(&b, 1000000);
	struct samples_profile p;
	REQUIRE(parse(&p, b.data, b.len, 1) == 0, "%s", samples_error(&p));
	CHECK(p.nmappings == 2 && p.nframes == 2 && p.nsamples == 2, "%zu mappings, %zu frames, %zu samples",
	      p.nmappings, p.nframes, p.nsamples);
	CHECK(p.nframes == 2 && p.frames[0].mapping && !strcmp(p.mappings[p.frames[0].mapping - 1].file, "/usr/bin/prog") &&
	      !strcmp(p.mappings[p.frames[1].mapping - 1].file, "/lib/libc.so.6") &&
	      p.mappings[p.frames[1].mapping - 1].offset == 0x26000,
	      "frames in their mappings over two segments");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	REQUIRE(m && samples_write_perf_script(m, &p, NULL) == 0, "perf script");
	fclose(m);
	CHECK(strstr(buf, "\t7f0000010abc qsort+0x0 (libc.so.6)\n") && strstr(buf, "\t401234 main+0x0 (prog)\n"),
	      "perf script's addresses and objects:\n%s", buf);
	free(buf);
	uint8_t out[8192];
	size_t n = pprof_inflated(&p, out, sizeof(out));
	CHECK(memmem(out, n, "\x0a" "abcdef0123", 11) && memmem(out, n, "\x0e/lib/libc.so.6", 15), "pprof's mappings");
	samples_free(&p);

	b.len = 0;
	put_two_mapped(&b, 0);
	struct samples_frame f = frame(SAMPLES_KIND_C, "x", "", "", 0, 1);
	f.mapping = 3;
	REQUIRE(samples_put_frame(&b, 3, &f) == 0, "frame");
	refused("a frame in mapping 3 of 2", &b, "in mapping 3, not defined in this segment");
	b.len = 0;
	REQUIRE(samples_put_begin(&b, 100, 0, 1, "p") == 0, "begin");
	REQUIRE(samples_put_mapping(&b, 2, &(struct samples_mapping){1, 2, 0, "f", ""}) == 0, "m");
	refused("a MAPPING id 2 first", &b, "MAPPING id 2 where 1 was next");
	b.len = 0;
	REQUIRE(samples_put_begin(&b, 100, 0, 1, "p") == 0, "begin");
	REQUIRE(samples_put_mapping(&b, 1, &(struct samples_mapping){5, 5, 0, "f", ""}) == 0, "m");
	refused("an empty MAPPING", &b, "MAPPING 1 from 0x5 to 0x5");
	b.len = 0;
	REQUIRE(samples_put_begin(&b, 100, 0, 1, "p") == 0, "begin");
	put_head(&b, SAMPLES_REC_MAPPING, 4 + 4 + 24 + 2 + 3 + 2);
	uint8_t pay[4 + 4 + 24 + 2 + 3 + 2] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9};
	pay[32] = 3;
	memcpy(pay + 34, "a\0b", 3);
	put_raw(&b, pay, sizeof(pay));
	refused("a MAPPING file with a NUL", &b, "MAPPING's file holds a NUL byte");
	samples_buf_free(&b);
}

int main(void)
{
	rng = tu_seed(0x5341);
	test_round_trip();
	test_cut_everywhere();
	test_hostile_lengths();
	test_hostile_fields();
	test_long_strings();
	test_segments();
	test_folded_and_names();
	test_time_profile();
	test_cpu_time();
	test_mappings();
	test_pprof();
	return tu_finish("test_samples");
}
