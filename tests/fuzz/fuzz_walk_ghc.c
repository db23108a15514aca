/*
 * fuzz_walk_ghc.c - libFuzzer target for backend/sampling's GHC stack
 * walker (walk_ghc.c, walk_mem.c) over a hostile guest's memory, and for
 * GHC's names (ghc_names.c) from a hostile guest's symbol table.  The
 * memory is three regions the input fills: the stack (where Sp points),
 * the info tables, and the RTS's structures (MainCapability, a TSO, stack
 * chunks).  Asserted, beyond "no crash":
 *   - a walk reads no more than its budget, and never more than a fixed
 *     bound whatever the budget (4 reads a frame, 6 a chunk);
 *   - it appends at most WALK_MAX_FRAMES, says why it stopped, and each
 *     return point it appends has a return frame's closure type;
 *   - the same memory walks the same way twice;
 *   - a saved Sp, when found, is word-aligned;
 *   - be_ghc_demangle's output is NUL-terminated within its buffer and, cut
 *     to a smaller buffer, is the prefix of the whole one.
 *
 * Input: [flags: 1 GHC 8.0, 2 a capability, 4 thread and chunk headers
 * checked][budget u16][sp offset u16][outlen][name len u16][stack len u16]
 * [info len u16], then the name, the stack region, the info region, and
 * the rest as the RTS region.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sampling/ghc_rts.h"

#define STACK_VA 0x10000u
#define INFO_VA 0x20000u
#define RTS_VA 0x30000u
#define REGION 4096u
/* the most reads one walk may make whatever the budget: 4 per frame,
 * 6 per chunk, the first chunk's 6, the last frame's 4 */
#define MAX_READS (WALK_MAX_FRAMES * 4 + 64 * 6 + 6 + 4)

struct image {
	const uint8_t *part[3];
	size_t len[3];
	uint32_t reads;
};

static long image_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	struct image *im = ctx;
	static const uint64_t base[3] = {STACK_VA, INFO_VA, RTS_VA};
	im->reads++;
	for (int i = 0; i < 3; i++)
		if (va >= base[i] && va - base[i] < im->len[i]) {
			size_t off = (size_t)(va - base[i]), n = im->len[i] - off;
			n = n < len ? n : len;
			memcpy(buf, im->part[i] + off, n);
			return (long)n;
		}
	return -1;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static int lookup_900(void *ctx, const char *name, uint64_t *addr)
{
	static const char *const have[] = {"stg_stop_thread_info", "stg_paniczh",
	                                   "stg_MUT_ARR_PTRS_FROZEN_CLEAN_info", "MainCapability"};
	const int *cap = ctx;
	for (size_t i = 0; i < sizeof have / sizeof have[0]; i++)
		if (strcmp(name, have[i]) == 0 && (i < 3 || *cap)) {
			*addr = i == 3 ? RTS_VA : INFO_VA + 0x100 * (i + 1);
			return 0;
		}
	return -1;
}

static int lookup_800(void *ctx, const char *name, uint64_t *addr)
{
	static const char *const have[] = {"stg_stop_thread_info", "stg_MUT_ARR_PTRS_FROZEN0_info",
	                                   "getGCStats", "stg_restore_cccs_info", "MainCapability"};
	const int *cap = ctx;
	for (size_t i = 0; i < sizeof have / sizeof have[0]; i++)
		if (strcmp(name, have[i]) == 0 && (i < 4 || *cap)) {
			*addr = i == 4 ? RTS_VA : INFO_VA + 0x100 * (i + 1);
			return 0;
		}
	return -1;
}

/* The closure type at pc - 8 as the image holds it. */
static uint32_t type_at(struct image *im, uint64_t pc)
{
	uint8_t b[4] = {0};
	long got = image_read(im, pc - 8, b, 4);
	assert(got == 4); /* the walker read it */
	return (uint32_t)(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24);
}

static int is_return_frame(const struct be_ghc_rts *g, uint32_t t)
{
	return t == g->ct_ret_small || t == g->ct_ret_big || t == g->ct_ret_fun ||
	       t == g->ct_update_frame || t == g->ct_catch_frame || t == g->ct_atomically_frame ||
	       t == g->ct_catch_retry_frame || t == g->ct_catch_stm_frame;
}

static void check_walk(struct image *im, const struct be_ghc_rts *g, uint64_t sp, uint32_t budget)
{
	static struct be_walk_out out, again;
	memset(&out, 0, sizeof out);
	memset(&again, 0, sizeof again);
	struct be_walk_mem m = {image_read, im, budget};
	im->reads = 0;
	uint32_t n = be_walk_ghc(&m, g, sp, &out);
	assert(im->reads <= budget && im->reads <= MAX_READS);
	assert(m.budget == budget - im->reads);
	assert(n == out.n && out.n <= WALK_MAX_FRAMES);
	assert(out.stop <= WALK_STOP_BAD_FRAME);
	assert(out.stop != WALK_STOP_DEPTH || out.n == WALK_MAX_FRAMES);
	for (uint32_t i = 0; i < out.n; i++) {
		assert(out.kind[i] == WALK_FRAME_HASKELL && out.pc[i] % 8 == 0);
		assert(is_return_frame(g, type_at(im, out.pc[i])));
	}
	struct be_walk_mem m2 = {image_read, im, budget};
	be_walk_ghc(&m2, g, sp, &again);
	assert(again.n == out.n && again.stop == out.stop);
	assert(memcmp(again.pc, out.pc, out.n * sizeof out.pc[0]) == 0);

	uint64_t saved = 1;
	struct be_walk_mem m3 = {image_read, im, budget};
	if (be_walk_ghc_saved_sp(&m3, g, &saved) == 0)
		assert(saved % 8 == 0 && saved != 0);
}

static void check_names(const uint8_t *p, size_t len, size_t small)
{
	char name[257], whole[1100], cut[65];
	memcpy(name, p, len);
	name[len] = '\0';
	be_ghc_demangle(name, whole, sizeof whole);
	assert(memchr(whole, '\0', sizeof whole));
	be_ghc_demangle(name, cut, small);
	size_t wl = strlen(whole), cl = strlen(cut);
	assert(cl == (wl < small - 1 ? wl : small - 1));
	assert(memcmp(cut, whole, cl) == 0);
	int h = be_ghc_symbol_is_haskell(name);
	assert(h == 0 || h == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 12)
		return 0;
	uint8_t data0 = data[0];
	int v800 = data0 & 1, cap = (data0 >> 1) & 1;
	uint32_t budget = get16(data + 1);
	uint64_t sp = STACK_VA + get16(data + 3);
	size_t small = 1 + data[5] % 64;
	size_t lens[3] = {get16(data + 6) % 257u, get16(data + 8) % (REGION + 1),
	                  get16(data + 10) % (REGION + 1)};
	data += 12;
	size -= 12;

	size_t name_len = lens[0] < size ? lens[0] : size;
	check_names(data, name_len, small);
	data += name_len;
	size -= name_len;

	struct image im = {0};
	for (int i = 0; i < 3; i++) {
		size_t want = i < 2 ? lens[i + 1] : REGION;
		im.len[i] = want < size ? want : size;
		im.part[i] = data;
		data += im.len[i];
		size -= im.len[i];
	}
	struct be_ghc_rts g;
	int rc = be_ghc_rts_from_symbols(&g, v800 ? lookup_800 : lookup_900, &cap, NULL, 0);
	assert(rc == 0 && g.found && g.version == (v800 ? 800 : 900));
	if (data0 & 4) { /* the headers a thread and a chunk must have */
		g.tso_info = INFO_VA + 0x10;
		g.stack_info = INFO_VA + 0x20;
	}
	check_walk(&im, &g, sp, budget);
	check_walk(&im, &g, sp, UINT32_MAX);
	return 0;
}
