/*
 * fuzz_walk_cfi.c - libFuzzer target for backend/sampling's walk by call
 * frame information (modules.c, through elfutils' libdwfl) over a hostile
 * guest's stack.  The modules are this process's own (its maps read
 * once): real .eh_frame of real code, the fuzzer's and libc's, so that the
 * walk runs libdwfl's CFI interpreter over stack words the input chooses.
 * Asserted, beyond "no crash":
 *   - a walk makes no more reads than its budget, and appends at most
 *     WALK_MAX_FRAMES, the pc first;
 *   - the same memory walks the same way twice;
 *   - it says the budget only when it is spent.
 *
 * Input: [pc choice u8][pc offset u16][sp offset u16][budget u16]
 * [flags: 1 reads short by a byte] then the region, mapped at REGION_VA
 * (the stack: rsp points into it, rbp is its first word).
 */
#define _GNU_SOURCE
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sampling/modules.h"

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
		n--;
	memcpy(buf, im->data + off, n);
	return (long)n;
}

static struct be_mods *mods(void)
{
	static struct be_mods *ms;
	static int tried;
	if (tried)
		return ms;
	tried = 1;
	char err[256], *text = NULL;
	size_t len = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	assert(f);
	FILE *m = open_memstream(&text, &len);
	assert(m);
	for (int c; (c = fgetc(f)) != EOF;)
		fputc(c, m);
	fclose(f);
	fclose(m);
	ms = be_mods_new(err, sizeof(err));
	assert(ms && be_mods_report_maps(ms, text, len, err, sizeof(err)) == 0);
	free(text);
	return ms;
}

static void walk_once(struct image *im, const struct plat_vcpu_regs *r, uint32_t budget, struct be_walk_out *out)
{
	struct be_walk_mem m = {image_read, im, budget};
	im->reads = 0;
	memset(out, 0, sizeof(*out));
	uint32_t n = be_mods_unwind(mods(), &m, r, out);
	assert(n == out->n && n <= WALK_MAX_FRAMES);
	assert(n == 0 || out->pc[0] == r->rip);
	assert(im->reads <= budget);
	assert(out->stop <= WALK_STOP_BAD_FRAME);
	if (out->stop == WALK_STOP_BUDGET)
		assert(m.budget == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 16)
		return 0;
	/* code with call frame information: ours, libc's */
	const uint64_t code[] = {(uint64_t)(uintptr_t)&walk_once, (uint64_t)(uintptr_t)&image_read,
	                         (uint64_t)(uintptr_t)&qsort, (uint64_t)(uintptr_t)&memcpy,
	                         (uint64_t)(uintptr_t)&fopen, (uint64_t)(uintptr_t)&LLVMFuzzerTestOneInput};
	uint64_t pc = code[data[0] % (sizeof(code) / sizeof(code[0]))] + (uint16_t)(data[1] | data[2] << 8) % 512;
	uint32_t sp_off = (uint32_t)(data[3] | data[4] << 8), budget = (uint32_t)(data[5] | data[6] << 8);
	struct image im = {data + 8, size - 8, data[7] & 1, 0};
	uint64_t w[4] = {0};
	memcpy(w, data + 8, size - 8 < sizeof(w) ? size - 8 : sizeof(w));
	struct plat_vcpu_regs r = {.rip = pc, .rsp = REGION_VA + sp_off, .rbp = w[0], .rbx = w[1], .r12 = w[2],
	                           .r13 = w[3], .online = 1, .width = 8};
	static struct be_walk_out a, b;

	walk_once(&im, &r, budget, &a);
	walk_once(&im, &r, budget, &b);
	assert(a.n == b.n && a.stop == b.stop && memcmp(a.pc, b.pc, a.n * sizeof(a.pc[0])) == 0);
	return 0;
}
