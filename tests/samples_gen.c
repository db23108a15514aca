/*
 * samples_gen.c - a deterministic samples stream and its exports, for
 * test_samples_peers.sh (the real consumers: go tool pprof, speedscope's
 * schema, a collapse of perf script text):
 *
 *   samples_gen stream FILE       a stream as the sampler writes it: two
 *                                 segments (a restarted sampler, frame ids
 *                                 defined again in another order) of a
 *                                 HaLVM guest's Haskell and C frames
 *   samples_gen export FILE DIR   FILE read in pieces, then DIR/samples.folded,
 *                                 .perf, .pb.gz, .speedscope.json, and
 *                                 .top (the time profile's cost centres by
 *                                 time: "module<TAB>name<TAB>ticks" a line)
 *   samples_gen store DB KIND NAME  a run named NAME in the store DB whose
 *                                 samples device holds a stream, as the
 *                                 backend's sampler leaves it, then complete;
 *                                 prints its id.  KIND: wordfreq (the stream
 *                                 above) or known (known_stream: stacks
 *                                 whose every figure the tests know)
 *
 * known_stream: 1000 samples at 100 Hz, t = i x 10 ms, vCPU i % 2, 2
 * vCPUs, each with a TIME record; by i % 10, leaf first:
 *   0-3  memmove <- msort <- msort <- msort <- main   (10 ms each)
 *   4-5  by_key <- msort <- msort <- main             (10 ms)
 *   6-8  work <- main                                 (20 ms)
 *   9    [idle]                                       (10 ms)
 * so 400/200/300/100 samples of 4/2/6/1 s, 13 s in all; a RATE of 50 Hz
 * at 5 s (the rate kept), 7 samples LOST at 3 s, an END at 10 s.  The C
 * functions' module (their ELF file) is hostile text.
 *
 * May call: profile/samples/samples.h, profile/prof/time_profile.h (tp_rank),
 * store/store.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/samples/samples.h"
#include "profile/prof/time_profile.h"
#include "store/store.h"

static const struct samples_frame frames[] = {
	{SAMPLES_KIND_ROOT, 0, 0, "[GC]", "", "", 0},
	{SAMPLES_KIND_C, 0x405000, 0, "hs_main", "rts", "", 0},
	{SAMPLES_KIND_HASKELL, 0x401000, 10, "main", "Main", "Main.hs", 0},
	{SAMPLES_KIND_HASKELL, 0x401200, 22, "countWords", "Main", "Main.hs", 0},
	{SAMPLES_KIND_HASKELL, 0x402000, 600, "insert", "Data.Map.Internal", "Data/Map/Internal.hs", 0},
	{SAMPLES_KIND_HASKELL, 0x403000, 1500, "words", "Data.Text", "Data/Text.hs", 0},
	{SAMPLES_KIND_C, 0x404000, 0, "memcpy", "libc", "", 0},
	{SAMPLES_KIND_C, 0x406000, 0, "we\"ird\\name \xff", "rts", "", 0},
};
enum { GC, HS_MAIN, MAIN, COUNT, INSERT, WORDS, MEMCPY, WEIRD, NFRAMES };

/* Stacks leaf first (indexes into frames, -1 ends) and their share in 100. */
static const struct {
	int frames[6];
	int share;
} stacks[] = {
	{{INSERT, COUNT, MAIN, HS_MAIN, -1}, 40}, {{WORDS, COUNT, MAIN, HS_MAIN, -1}, 25},
	{{MEMCPY, WORDS, COUNT, MAIN, HS_MAIN, -1}, 15}, {{GC, -1}, 12},
	{{COUNT, MAIN, HS_MAIN, -1}, 6}, {{WEIRD, MAIN, HS_MAIN, -1}, 2},
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* One segment: frames defined in the order `order` gives, then n samples. */
static int segment(struct samples_buf *b, const int *order, uint32_t hz, uint64_t start, int n, uint64_t *rng)
{
	uint32_t id_of[NFRAMES];
	int rc = samples_put_begin(b, hz, start, 2, "halvm-wordfreq");
	for (uint32_t i = 0; i < NFRAMES; i++) {
		rc |= samples_put_frame(b, i + 1, &frames[order[i]]);
		id_of[order[i]] = i + 1;
	}
	for (int i = 0; i < n; i++) {
		int pick = (int)(lcg(rng) % 100), k = 0;
		while (pick >= stacks[k].share)
			pick -= stacks[k++].share;
		uint32_t ids[6], d = 0;
		for (; stacks[k].frames[d] >= 0; d++)
			ids[d] = id_of[stacks[k].frames[d]];
		rc |= samples_put_sample(b, (uint64_t)i * 1000000000ull / hz, (uint32_t)(lcg(rng) & 1), 1, ids, d, 0);
		if (i == n / 2)
			rc |= samples_put_lost(b, (uint64_t)i * 1000000, 5, SAMPLES_LOST_BUDGET);
	}
	return rc;
}

static int write_stream(const char *path)
{
	static const int first[NFRAMES] = {GC, HS_MAIN, MAIN, COUNT, INSERT, WORDS, MEMCPY, WEIRD};
	static const int again[NFRAMES] = {WORDS, MEMCPY, HS_MAIN, WEIRD, MAIN, INSERT, GC, COUNT};
	struct samples_buf b = {0};
	uint64_t rng = 42;
	int rc = segment(&b, first, 1000, 1700000000000000000ull, 2000, &rng);
	rc |= samples_put_end(&b, 2000000000ull, SAMPLES_END_STOPPED);
	rc |= segment(&b, again, 1000, 1700000005000000000ull, 1000, &rng);
	rc |= samples_put_rate(&b, 1000000000ull, 500);
	rc |= samples_put_end(&b, 1500000000ull, SAMPLES_END_DOMAIN);
	FILE *f = fopen(path, "wb");
	if (rc || !f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
		fprintf(stderr, "samples_gen: cannot write %s\n", path);
		return 1;
	}
	samples_buf_free(&b);
	return 0;
}

#define KNOWN_MODULE "/srv/known<b>&\x1b[1m"
static const struct samples_frame known_frames[] = {
	{SAMPLES_KIND_C, 0x401000, 10, "main", KNOWN_MODULE, "known.c", 0},
	{SAMPLES_KIND_C, 0x401100, 20, "work", KNOWN_MODULE, "known.c", 0},
	{SAMPLES_KIND_C, 0x401200, 30, "msort", KNOWN_MODULE, "known.c", 0},
	{SAMPLES_KIND_C, 0x7f0000001000, 0, "memmove", "/lib/x86_64-linux-gnu/libc.so.6", "", 0},
	{SAMPLES_KIND_C, 0x401300, 40, "by_key", KNOWN_MODULE, "known.c", 0},
	{SAMPLES_KIND_ROOT, 0, 0, "[idle]", "", "", 0},
};

static int known_stream(struct samples_buf *b)
{
	static const uint32_t st[4][6] = {{4, 3, 3, 3, 1, 0}, {5, 3, 3, 1, 0}, {2, 1, 0}, {6, 0}};
	static const uint32_t depth[4] = {5, 4, 2, 1};
	int rc = samples_put_begin(b, 100, 1700000000000000000ull, 2, "known");
	for (uint32_t i = 0; i < sizeof(known_frames) / sizeof(known_frames[0]); i++)
		rc |= samples_put_frame(b, i + 1, &known_frames[i]);
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t c = i % 10, k = c < 4 ? 0 : c < 6 ? 1 : c < 9 ? 2 : 3;
		uint64_t t = (uint64_t)i * 10000000ull;
		if (i == 300)
			rc |= samples_put_lost(b, t, 7, SAMPLES_LOST_BUDGET);
		if (i == 500)
			rc |= samples_put_rate(b, t, 50);
		rc |= samples_put_time(b, k == 2 ? 20000000ull : 10000000ull);
		rc |= samples_put_sample(b, t, i % 2, 1, st[k], depth[k], 0);
	}
	return rc | samples_put_end(b, 10000000000ull, SAMPLES_END_STOPPED);
}

/* A run in the store at db holding the stream of kind as its samples. */
static int store_stream(const char *db, const char *kind, const char *name)
{
	struct samples_buf b = {0};
	uint64_t rng = 42;
	static const int first[NFRAMES] = {GC, HS_MAIN, MAIN, COUNT, INSERT, WORDS, MEMCPY, WEIRD};
	int rc = !strcmp(kind, "known") ? known_stream(&b) : segment(&b, first, 1000, 1700000000000000000ull, 2000, &rng);
	struct store_open_opts o = {.mode = STORE_WRITE};
	struct store *s = NULL;
	struct store_device *d = NULL;
	char err[256];
	struct store_run run = {.domid = -1, .started_us = 1700000000000000};
	snprintf(run.name, sizeof(run.name), "%s", name);
	snprintf(run.source, sizeof(run.source), "capture");
	size_t len = (b.len + SAMPLES_SECTOR - 1) / SAMPLES_SECTOR * SAMPLES_SECTOR; /* zeros: padding */
	uint8_t *bytes = calloc(1, len ? len : 1);
	if (bytes)
		memcpy(bytes, b.data, b.len);
	rc |= !bytes;
	if (rc || store_open(&s, db, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "samples_gen: %s\n", rc ? "cannot make the stream" : err);
		free(bytes);
		return 1;
	}
	struct store_segment seg = {0, (uint32_t)(len / STORE_SECTOR_SIZE), bytes};
	rc = store_run_begin(s, &run) || store_device_create(s, run.run_id, STORE_SAMPLES_VDEV, 0x5a, store_max_capacity(), &d) ||
	     store_batch_begin(s) || store_write(d, &seg, 1) || store_batch_commit(s) ||
	     store_run_end(s, run.run_id, STORE_RUN_COMPLETE, run.started_us + 10000000);
	if (rc)
		fprintf(stderr, "samples_gen: %s: %s\n", db, store_errmsg(s));
	else
		printf("%lld\n", (long long)run.run_id);
	if (d)
		store_device_release(d);
	store_close(s);
	samples_buf_free(&b);
	free(bytes);
	return rc ? 1 : 0;
}

static int read_stream(const char *path, struct samples_profile *p)
{
	char buf[997]; /* pieces that split records */
	size_t n;
	FILE *f = fopen(path, "rb");
	samples_init(p);
	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (samples_feed(p, buf, n) != 0)
			break;
	fclose(f);
	return p->failed ? -1 : samples_finish(p);
}

static int top_rows(FILE *f, const struct samples_profile *p)
{
	struct time_profile tp;
	size_t n;
	struct tp_row *rows = NULL;
	int rc = samples_to_time_profile(p, &tp);
	if (rc == 0 && (rows = tp_rank(&tp, TP_BY_TIME, NULL, &n)) != NULL)
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s\t%s\t%llu\n", tp.ccs[rows[i].cc].module, tp.ccs[rows[i].cc].name,
			        (unsigned long long)rows[i].ticks);
	free(rows);
	tp_free(&tp);
	return rc;
}

static int export_one(const char *dir, const char *name, const struct samples_profile *p, int which)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/samples.%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int rc = which == 0   ? samples_write_folded(f, p)
	         : which == 1 ? samples_write_perf_script(f, p, NULL)
	         : which == 2 ? samples_write_pprof(f, p)
	         : which == 3 ? samples_write_speedscope(f, p, "halvm-wordfreq")
	                      : top_rows(f, p);
	return fclose(f) != 0 ? -1 : rc;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"folded", "perf", "pb.gz", "speedscope.json", "top"};
	if (argc == 3 && !strcmp(argv[1], "stream"))
		return write_stream(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "store"))
		return store_stream(argv[2], argv[3], argv[4]);
	if (argc != 4 || strcmp(argv[1], "export") != 0) {
		fprintf(stderr, "usage: samples_gen stream FILE | samples_gen export FILE DIR | samples_gen store DB KIND NAME\n");
		return 2;
	}
	struct samples_profile p;
	if (read_stream(argv[2], &p) != 0) {
		fprintf(stderr, "samples_gen: %s: %s\n", argv[2], samples_error(&p));
		return 1;
	}
	int rc = 0;
	for (int i = 0; i < 5; i++)
		if (export_one(argv[3], names[i], &p, i) != 0) {
			fprintf(stderr, "samples_gen: cannot write samples.%s\n", names[i]);
			rc = 1;
		}
	samples_free(&p);
	return rc;
}
