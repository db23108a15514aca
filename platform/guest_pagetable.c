/*
 * guest_pagetable.c - the x86-64 4-level page-table walk and its
 * translation cache (see guest_pagetable.h).  Owns nothing but the
 * struct gpt it is handed; calls only the caller's read_frame and libc.
 *
 * The layout walked is the one in AMD's APM vol. 2 ("Long-Mode Page
 * Translation") and Intel's SDM vol. 3 ("4-Level Paging"): PML4, PDPT,
 * PD, PT, 512 eight-byte entries each, indexed by va bits 47..39, 38..30,
 * 29..21, 20..12; PS in a PDPT entry maps 1 GiB, in a PD entry 2 MiB.
 *
 * May call: libc only; the inspectors give it a way to read guest memory.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "guest_pagetable.h"

#define PTE_PRESENT UINT64_C(0x1)
#define PTE_PS UINT64_C(0x80)
/* Bits 51..12: the frame an entry points at.  Bits 63..52 (NX, protection
 * keys, software bits) and 11..0 (flags) are not part of it: a hostile
 * entry with them set still names a frame below 2^40. */
#define PTE_ADDR_MASK UINT64_C(0x000ffffffffff000)
/* In a large-page entry bit 12 is PAT, not address; the bits between it
 * and the page's alignment are reserved (the CPU faults on them). */
#define PTE_LARGE_PAT UINT64_C(0x1000)

_Static_assert((GPT_CACHE_ENTRIES & (GPT_CACHE_ENTRIES - 1)) == 0,
               "the cache is indexed by masking: a power of two");

void gpt_init(struct gpt *g, gpt_read_frame_fn read_frame, void *ctx)
{
	memset(g, 0, sizeof(*g));
	g->read_frame = read_frame;
	g->ctx = ctx;
}

void gpt_invalidate(struct gpt *g)
{
	for (size_t i = 0; i < GPT_CACHE_ENTRIES; i++)
		g->cache[i].valid = 0;
}

int gpt_canonical(uint64_t va)
{
	/* bits 63..47 are copies of bit 47 */
	uint64_t top = va >> 47;
	return top == 0 || top == (UINT64_C(1) << 17) - 1;
}

/* Entry index of table (little-endian, as the guest wrote it: the host's
 * byte order does not enter). */
static int read_entry(struct gpt *g, uint64_t table_frame, unsigned index, uint64_t *pte)
{
	const uint8_t *page = NULL;

	if (g->read_frame(g->ctx, table_frame, &page) != 0)
		return -1;
	g->stats.frames_read++;
	if (!page) {
		errno = EIO; /* a callback that says yes and gives nothing */
		return -1;
	}
	const uint8_t *p = page + (size_t)index * 8;
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	*pte = v;
	return 0;
}

/* The frame of va inside the large page (1 GiB or 2 MiB: 1 << shift
 * bytes) that pte maps. */
static int large_page_frame(uint64_t pte, unsigned shift, uint64_t va, uint64_t *frame)
{
	uint64_t size_mask = (UINT64_C(1) << shift) - 1;
	uint64_t reserved = PTE_ADDR_MASK & size_mask & ~PTE_LARGE_PAT;

	if (pte & reserved) {
		errno = EFAULT;
		return -1;
	}
	uint64_t base = pte & PTE_ADDR_MASK & ~size_mask;
	*frame = (base | (va & size_mask)) >> 12;
	return 0;
}

/* Four reads at most: the loop counts levels, not entries followed, so
 * tables that point at themselves or at each other end like any walk. */
static int walk(struct gpt *g, uint64_t root_frame, uint64_t va, uint64_t *frame)
{
	uint64_t table = root_frame;

	for (int level = GPT_LEVELS; level >= 1; level--) {
		unsigned shift = 12 + 9 * (unsigned)(level - 1);
		uint64_t pte;
		if (read_entry(g, table, (unsigned)(va >> shift) & 511u, &pte) != 0)
			return -1;
		if (!(pte & PTE_PRESENT)) {
			errno = EFAULT;
			return -1;
		}
		if ((pte & PTE_PS) && level == 4) {
			errno = EFAULT; /* reserved in a PML4 entry */
			return -1;
		}
		if ((pte & PTE_PS) && (level == 3 || level == 2))
			return large_page_frame(pte, shift, va, frame);
		/* level 1: bit 7 is PAT, not PS */
		table = (pte & PTE_ADDR_MASK) >> 12;
	}
	*frame = table;
	return 0;
}

static struct gpt_cache_entry *cache_slot(struct gpt *g, uint64_t root_frame, uint64_t vpn)
{
	/* Fibonacci hashing: neighbouring pages and address spaces spread */
	uint64_t h = (vpn ^ (root_frame * UINT64_C(0x9e3779b97f4a7c15))) * UINT64_C(0x9e3779b97f4a7c15);
	return &g->cache[(h >> 40) & (GPT_CACHE_ENTRIES - 1)];
}

int gpt_translate(struct gpt *g, uint64_t cr3, uint64_t va, uint64_t *frame)
{
	if (!gpt_canonical(va)) {
		errno = EINVAL;
		return -1;
	}
	uint64_t root = (cr3 & PTE_ADDR_MASK) >> 12;
	uint64_t vpn = va >> 12;
	struct gpt_cache_entry *e = cache_slot(g, root, vpn);

	if (e->valid && e->cr3_frame == root && e->vpn == vpn) {
		g->stats.hits++;
		*frame = e->frame;
		return 0;
	}
	g->stats.misses++;
	uint64_t f;
	if (walk(g, root, va, &f) != 0)
		return -1; /* failures are not cached: the next pause may map it */
	*e = (struct gpt_cache_entry){.cr3_frame = root, .vpn = vpn, .frame = f, .valid = 1};
	*frame = f;
	return 0;
}
