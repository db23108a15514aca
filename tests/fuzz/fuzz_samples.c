/*
 * fuzz_samples.c - libFuzzer target for the samples stream's reader and
 * every export (profile/samples/samples.h): any bytes, fed whole and in pieces of
 * sizes the input picks, give the same model or the same error; the model
 * holds only frames that exist; then folded stacks, perf script text,
 * pprof (gzipped), speedscope JSON (checked to be balanced) and the time
 * profile are written into memory streams.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/samples/samples.h"
#include "profile/prof/time_profile.h"

/* Feeds d in pieces whose sizes cycle through sizes[0..nsizes). */
static int parse(struct samples_profile *p, const uint8_t *d, size_t n, const uint8_t *sizes, size_t nsizes)
{
	samples_init(p);
	for (size_t at = 0, k = 0; at < n; k++) {
		size_t piece = nsizes ? 1 + sizes[k % nsizes] % 61 + (sizes[k % nsizes] & 0x80 ? 4000 : 0) : n;
		piece = piece > n - at ? n - at : piece;
		if (samples_feed(p, d + at, piece) != 0)
			return -1;
		at += piece;
	}
	return samples_finish(p);
}

static void same(const struct samples_profile *a, const struct samples_profile *b)
{
	assert(a->nframes == b->nframes && a->nsamples == b->nsamples && a->npool == b->npool);
	assert(a->cut == b->cut && a->ended == b->ended && a->lost == b->lost && a->segments == b->segments);
	assert(!strcmp(samples_error(a), samples_error(b)));
	for (size_t i = 0; i < a->nsamples; i++) {
		const struct samples_sample *x = &a->samples[i], *y = &b->samples[i];
		assert(x->t_ns == y->t_ns && x->vcpu == y->vcpu && x->weight == y->weight && x->depth == y->depth &&
		       x->stop == y->stop && x->hz == y->hz && x->at == y->at);
	}
	assert(!a->npool || !memcmp(a->pool, b->pool, a->npool * sizeof(*a->pool)));
}

static void model_sound(const struct samples_profile *p)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		assert(s->depth >= 1 && s->depth <= SAMPLES_MAX_DEPTH && s->at + s->depth <= p->npool);
		for (uint32_t k = 0; k < s->depth; k++)
			assert(p->pool[s->at + k] < p->nframes);
	}
	for (size_t i = 0; i < p->nframes; i++)
		assert(p->frames[i].name && p->frames[i].module && p->frames[i].file);
}

/* JSON's brackets outside strings balance (a cheap check of the writer). */
static void balanced(const char *s, size_t n)
{
	long depth = 0;
	int in_str = 0;
	for (size_t i = 0; i < n; i++) {
		if (in_str && s[i] == '\\')
			i++;
		else if (s[i] == '"')
			in_str = !in_str;
		else if (!in_str && (s[i] == '{' || s[i] == '['))
			depth++;
		else if (!in_str && (s[i] == '}' || s[i] == ']'))
			assert(--depth >= 0);
		else
			assert(in_str || (unsigned char)s[i] >= 0x20 || s[i] == '\n');
	}
	assert(depth == 0 && !in_str);
}

static void exports(const struct samples_profile *p)
{
	char *buf = NULL;
	size_t n = 0;
	for (int which = 0; which < 4; which++) {
		FILE *m = open_memstream(&buf, &n);
		assert(m);
		int rc = which == 0   ? samples_write_folded(m, p)
		         : which == 1 ? samples_write_perf_script(m, p, NULL)
		         : which == 2 ? samples_write_pprof(m, p)
		                      : samples_write_speedscope(m, p, "fuzz");
		fclose(m);
		assert(rc == 0);
		if (which == 3)
			balanced(buf, n);
		free(buf);
		buf = NULL;
	}
	struct time_profile tp;
	int rc = samples_to_time_profile(p, &tp);
	assert(rc == 0 || p->nsamples == 0);
	if (rc == 0) {
		uint64_t ticks = 0;
		for (size_t i = 0; i < tp.nnodes; i++) {
			assert(tp.nodes[i].parent == TP_NONE || tp.nodes[i].parent < i);
			assert(tp.nodes[i].cc < tp.nccs);
			ticks += tp.nodes[i].ticks;
		}
		assert(ticks == tp.total_ticks);
	}
	tp_free(&tp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* the first byte: how many of the following bytes pick piece sizes */
	size_t nsizes = data[0] % 8;
	if (size < 1 + nsizes)
		return 0;
	const uint8_t *sizes = data + 1;
	data += 1 + nsizes;
	size -= 1 + nsizes;
	struct samples_profile a, b;
	int ra = parse(&a, data, size, NULL, 0);
	int rb = parse(&b, data, size, sizes, nsizes);
	assert(ra == rb);
	same(&a, &b);
	model_sound(&a);
	exports(&a);
	samples_free(&a);
	samples_free(&b);
	return 0;
}
