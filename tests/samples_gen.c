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
 *
 * May call: profile/samples/samples.h, profile/prof/time_profile.h (tp_rank).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/samples/samples.h"
#include "profile/prof/time_profile.h"

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
	if (argc != 4 || strcmp(argv[1], "export") != 0) {
		fprintf(stderr, "usage: samples_gen stream FILE | samples_gen export FILE DIR\n");
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
