/*
 * fuzz_walk_fp.c - libFuzzer target for backend/sampling's frame-pointer
 * walker (walk_fp.c, walk_mem.c) over a hostile guest's memory: one
 * region the input fills (a stack of frames, or anything), read at any
 * address through a reader that may also return short.  Asserted, beyond
 * "no crash":
 *   - a walk makes no more reads than its budget, and appends at most
 *     WALK_MAX_FRAMES, the pc first;
 *   - every frame pointer it followed rose (no loop is walked twice);
 *   - the same memory walks the same way twice;
 *   - it says why it stopped, and says the budget only when it is spent.
 *
 * Input: [fp offset u16][budget u16][flags: 1 reads short by a byte]
 * then the region, mapped at REGION_VA.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "backend/sampling/walk.h"

#define REGION_VA 0x7ff000000000ull

struct image {
	const uint8_t *data;
	size_t len;
	int short_reads;
	uint32_t reads;
};

static long image_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	struct image *im = ctx;
	im->reads++;
	if (va < REGION_VA || va - REGION_VA >= im->len)
		return -1;
	size_t off = (size_t)(va - REGION_VA), n = im->len - off;
	n = n < len ? n : len;
	if (im->short_reads && n > 1 && (off & 7) == 7)
		n--; /* a page boundary the reader could not cross */
	memcpy(buf, im->data + off, n);
	return (long)n;
}

static void walk_once(struct image *im, uint64_t fp, uint32_t budget, struct be_walk_out *out)
{
	struct be_walk_mem m = {image_read, im, budget};
	im->reads = 0;
	memset(out, 0, sizeof(*out));
	uint32_t n = be_walk_fp(&m, 0x401000, fp, out);
	assert(n == out->n && n >= 1 && n <= WALK_MAX_FRAMES);
	assert(out->pc[0] == 0x401000);
	assert(im->reads <= budget);
	assert(out->stop <= WALK_STOP_BAD_FRAME);
	if (out->stop == WALK_STOP_BUDGET)
		assert(m.budget == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	uint16_t fp_off = (uint16_t)(data[0] | data[1] << 8);
	uint32_t budget = (uint32_t)(data[2] | data[3] << 8);
	struct image im = {data + 5, size - 5, data[4] & 1, 0};
	uint64_t fp = (data[4] & 2) ? (uint64_t)fp_off << 32 : REGION_VA + fp_off;
	static struct be_walk_out a, b;

	walk_once(&im, fp, budget, &a);
	walk_once(&im, fp, budget, &b);
	assert(a.n == b.n && a.stop == b.stop && memcmp(a.pc, b.pc, a.n * sizeof(a.pc[0])) == 0);
	/* each frame read costs two reads: the walk's frames are bounded by
	 * its budget too */
	assert(a.n <= 1 + budget / 2 + 1);
	return 0;
}
