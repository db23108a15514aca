/*
 * guest_pagetable.h - translating a guest virtual address to a frame
 * number by walking the guest's own x86-64 page tables (4 levels, from
 * cr3), and a small cache of those translations.  Owns the walk and the
 * cache; calls nothing but the read_frame callback it is given, so it
 * needs no Xen header and is tested on tables built in memory
 * (tests/test_pagetable.c, tests/fuzz/fuzz_pagetable.c).
 *
 * What a "frame" is depends on the caller.  On a PV guest the entries
 * (and cr3) hold machine frame numbers (MFNs), which is also what
 * xenforeignmemory_map takes for a PV domain; on HVM/PVH they would hold
 * guest frame numbers (GFNs), which foreignmemory maps for those.  The
 * walker does not care: it hands each number to read_frame unchanged.
 *
 * Every entry read is the guest's, hence hostile: the walk reads at most
 * four frames per translation whatever the tables say (a table that
 * points at itself ends the walk like any other), keeps only the 40
 * address bits of an entry (bits 51..12), refuses reserved large-page
 * layouts and non-canonical addresses, and never reads outside the
 * 4096-byte frame read_frame returned.
 */
#ifndef PROFSVC_GUEST_PAGETABLE_H
#define PROFSVC_GUEST_PAGETABLE_H

#include <stdint.h>

#define GPT_PAGE_SIZE 4096u
#define GPT_LEVELS 4
/* Entries of the translation cache: a stack walk touches a few stack
 * pages and the code around each return address; 64 covers that for a
 * few vCPUs without the lookup showing. */
#define GPT_CACHE_ENTRIES 64

/* Reads the 4096-byte frame gfn of the guest: 0 and *page, or -1 and
 * errno (the frame cannot be had: beyond the guest's memory, not its own).
 * *page stays valid until read_frame is called again. */
typedef int (*gpt_read_frame_fn)(void *ctx, uint64_t gfn, const uint8_t **page);

struct gpt_cache_entry {
	uint64_t cr3_frame; /* the address space: cr3's top-level table */
	uint64_t vpn;       /* va >> 12 */
	uint64_t frame;     /* what it translated to */
	uint8_t valid;
};

struct gpt_stats {
	uint64_t hits, misses;  /* translations answered from the cache, or walked */
	uint64_t frames_read;   /* read_frame calls made by walks */
};

struct gpt {
	gpt_read_frame_fn read_frame;
	void *ctx;
	struct gpt_cache_entry cache[GPT_CACHE_ENTRIES];
	struct gpt_stats stats;
};

void gpt_init(struct gpt *g, gpt_read_frame_fn read_frame, void *ctx);

/* The frame that holds guest virtual address va in the address space of
 * cr3 (its bits 51..12 are the top-level table's frame; the low 12, PCID
 * or cache-control bits, and bit 63 are ignored).  0 and *frame, or -1
 * and errno:
 *   EINVAL  va is not canonical (bits 63..47 not all equal)
 *   EFAULT  an entry on the way is not present, or has a reserved layout
 *           (PS set in a top-level entry, a large page's reserved bits)
 *   other   read_frame's errno for a table it could not read
 * Answers from the cache when it can: call gpt_invalidate whenever the
 * guest may have run since the last translation. */
int gpt_translate(struct gpt *g, uint64_t cr3, uint64_t va, uint64_t *frame);

/* Forgets every cached translation.  The caller calls it at each pause:
 * while the guest runs it changes its page tables (a process exits, its
 * frames are reused; the kernel maps a new stack), so a translation is
 * only true for the stop it was made in.  uniprof keeps its map of
 * virtual pages for the whole run and never drops it, so once a guest
 * remaps an address it reads the old frame for ever; here the cache
 * lives for one pause only. */
void gpt_invalidate(struct gpt *g);

/* 1 when va is canonical for 48-bit (4-level) virtual addresses. */
int gpt_canonical(uint64_t va);

#endif
