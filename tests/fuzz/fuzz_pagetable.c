/*
 * tests/fuzz/fuzz_pagetable.c - libFuzzer target for platform/guest_pagetable.c:
 * the input is a guest, [cr3 u64][4 virtual addresses u64] and then page-table
 * entries, 11 bytes each: [frame u8][index u16][entry u64], little-endian,
 * written into its memory of 8 frames (frame mod 8, index mod 512; the
 * rest is zeros; frames 8 and up are beyond its memory).  Entries rather
 * than whole frames: a walk through four tables then takes 84 bytes, not
 * 16 KiB.  Every address is translated, then again (from the cache), then
 * again after gpt_invalidate; the invariants checked: at most four frames
 * read by a walk, no frame read outside memory, the three answers the
 * same, an errno from the documented set, a frame below 2^40,
 * non-canonical addresses refused without a read.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/guest_pagetable.h"

#define FRAMES 8
#define HEADER 40
#define ENTRY 11

struct guest {
	uint8_t mem[FRAMES][GPT_PAGE_SIZE];
	size_t nframes;
	unsigned reads;
};

static int read_frame(void *ctx, uint64_t gfn, const uint8_t **page)
{
	struct guest *g = ctx;
	g->reads++;
	if (gfn >= g->nframes) {
		errno = ENXIO;
		return -1;
	}
	*page = g->mem[gfn];
	return 0;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* One translation: rc, frame (0 on failure), errno (0 on success). */
struct answer {
	int rc;
	uint64_t frame;
	int err;
};

static struct answer translate(struct gpt *w, struct guest *g, uint64_t cr3, uint64_t va)
{
	struct answer a = {0, 0, 0};
	g->reads = 0;
	errno = 0;
	a.rc = gpt_translate(w, cr3, va, &a.frame);
	a.err = a.rc == 0 ? 0 : errno;
	if (a.rc != 0)
		a.frame = 0;
	if (g->reads > GPT_LEVELS)
		abort(); /* the walk is bounded */
	if (a.rc != 0 && a.rc != -1)
		abort();
	if (a.rc == 0 && a.frame >> 40)
		abort(); /* 52-bit physical addresses: 40-bit frames */
	if (a.rc != 0 && a.err != EINVAL && a.err != EFAULT && a.err != ENXIO)
		abort();
	if (!gpt_canonical(va) && (a.rc == 0 || a.err != EINVAL || g->reads != 0))
		abort();
	return a;
}

static int same(struct answer a, struct answer b)
{
	return a.rc == b.rc && a.frame == b.frame && a.err == b.err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct guest g;
	struct gpt w;

	if (size < HEADER)
		return 0;
	uint64_t cr3 = le64(data);
	memset(g.mem, 0, sizeof(g.mem));
	g.nframes = FRAMES;
	for (size_t at = HEADER; at + ENTRY <= size; at += ENTRY) {
		unsigned frame = data[at] % FRAMES;
		unsigned index = (unsigned)(data[at + 1] | data[at + 2] << 8) % 512u;
		memcpy(&g.mem[frame][index * 8], data + at + 3, 8);
	}

	gpt_init(&w, read_frame, &g);
	for (int i = 0; i < 4; i++) {
		uint64_t va = le64(data + 8 + 8 * i);
		struct answer first = translate(&w, &g, cr3, va);
		struct answer cached = translate(&w, &g, cr3, va);
		if (!same(first, cached) || (first.rc == 0 && g.reads != 0))
			abort(); /* a success is answered from the cache */
		gpt_invalidate(&w);
		struct answer again = translate(&w, &g, cr3, va);
		if (!same(first, again))
			abort();
	}
	return 0;
}
