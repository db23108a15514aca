/*
 * test_pagetable.c - platform/guest_pagetable: translations through
 * 4-level page tables built in memory (4 KiB, 2 MiB and 1 GiB mappings,
 * the higher half), the errors (entries not present, tables beyond the
 * guest's memory, reserved layouts, non-canonical addresses), tables that
 * point at themselves, entries whose ignored bits are set, and the
 * translation cache: per address space, kept until invalidated, and a
 * changed table seen after gpt_invalidate.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "platform/guest_pagetable.h"
#include "testutil.h"

/* The guest's memory: frames 0..MEM_FRAMES-1; anything above is beyond it. */
#define MEM_FRAMES 32
static uint8_t mem[MEM_FRAMES][GPT_PAGE_SIZE];
static unsigned reads;         /* read_frame calls */
static int give_null;          /* read_frame says yes and gives no page */

static int read_frame(void *ctx, uint64_t gfn, const uint8_t **page)
{
	(void)ctx;
	reads++;
	if (give_null) {
		*page = NULL;
		return 0;
	}
	if (gfn >= MEM_FRAMES) {
		errno = ENXIO;
		return -1;
	}
	*page = mem[gfn];
	return 0;
}

#define P UINT64_C(0x1)
#define RW UINT64_C(0x2)
#define PS UINT64_C(0x80)

/* Entry index of the table in frame table, little-endian as the guest's. */
static void set_pte(uint64_t table, unsigned index, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		mem[table][index * 8 + (unsigned)i] = (uint8_t)(v >> (8 * i));
}

static uint64_t entry(uint64_t frame, uint64_t flags)
{
	return frame << 12 | flags;
}

static unsigned idx(uint64_t va, int level)
{
	return (unsigned)(va >> (12 + 9 * (level - 1))) & 511u;
}

/* va mapped 4 KiB by tables in frames l4, l3, l2, l1 to frame data. */
static void map_4k(uint64_t l4, uint64_t l3, uint64_t l2, uint64_t l1, uint64_t va, uint64_t data)
{
	set_pte(l4, idx(va, 4), entry(l3, P | RW));
	set_pte(l3, idx(va, 3), entry(l2, P | RW));
	set_pte(l2, idx(va, 2), entry(l1, P | RW));
	set_pte(l1, idx(va, 1), entry(data, P | RW));
}

/* translate; returns the frame, or UINT64_MAX with *err the errno */
static uint64_t tr(struct gpt *g, uint64_t cr3, uint64_t va, int *err)
{
	uint64_t f = 0;
	errno = 0;
	int rc = gpt_translate(g, cr3, va, &f);
	*err = rc == 0 ? 0 : errno;
	return rc == 0 ? f : UINT64_MAX;
}

static void test_4k(void)
{
	struct gpt g;
	int err;
	uint64_t va = UINT64_C(0x00007f1234567abc);

	memset(mem, 0, sizeof(mem));
	gpt_init(&g, read_frame, NULL);
	map_4k(1, 2, 3, 4, va, 10);
	reads = 0;
	uint64_t f = tr(&g, entry(1, 0), va, &err);
	CHECK(f == 10 && err == 0, "4 KiB: frame %llu errno %d", (unsigned long long)f, err);
	CHECK(reads == 4, "4 KiB walk read %u frames, not 4", reads);
	/* the higher half, through index 256 and up */
	uint64_t kva = UINT64_C(0xffff888000201000);
	map_4k(1, 5, 6, 7, kva, 11);
	f = tr(&g, entry(1, 0), kva, &err);
	CHECK(f == 11 && err == 0, "higher half: frame %llu errno %d", (unsigned long long)f, err);
	/* PCID bits and bit 63 of cr3 are not the table's address */
	gpt_invalidate(&g);
	f = tr(&g, entry(1, 0) | 0xabc | UINT64_C(1) << 63, va, &err);
	CHECK(f == 10, "cr3 with PCID and no-flush bits: frame %llu errno %d", (unsigned long long)f, err);
	/* NX, protection keys and software bits do not leak into the frame */
	gpt_invalidate(&g);
	set_pte(4, idx(va, 1), entry(10, P) | UINT64_C(0xfff0000000000000));
	f = tr(&g, entry(1, 0), va, &err);
	CHECK(f == 10, "entry with bits 63..52 set: frame %llx errno %d", (unsigned long long)f, err);
}

static void test_large_pages(void)
{
	struct gpt g;
	int err;

	memset(mem, 0, sizeof(mem));
	gpt_init(&g, read_frame, NULL);
	/* 2 MiB: PD entry with PS at 0x40000000 (frame 0x40000, 2 MiB aligned) */
	uint64_t va2 = UINT64_C(0x0000000040323456);
	set_pte(1, idx(va2, 4), entry(2, P));
	set_pte(2, idx(va2, 3), entry(3, P));
	set_pte(3, idx(va2, 2), entry(0x40000, P | PS));
	reads = 0;
	uint64_t f = tr(&g, entry(1, 0), va2, &err);
	CHECK(f == 0x40000 + 0x123 && err == 0, "2 MiB: frame %llx errno %d", (unsigned long long)f, err);
	CHECK(reads == 3, "2 MiB walk read %u frames, not 3", reads);
	/* PAT (bit 12) in a large entry is not an address bit */
	gpt_invalidate(&g);
	set_pte(3, idx(va2, 2), entry(0x40000, P | PS) | UINT64_C(0x1000));
	f = tr(&g, entry(1, 0), va2, &err);
	CHECK(f == 0x40123, "2 MiB with PAT: frame %llx errno %d", (unsigned long long)f, err);
	/* bits 20..13 of a 2 MiB entry are reserved */
	gpt_invalidate(&g);
	set_pte(3, idx(va2, 2), entry(0x40002, P | PS));
	f = tr(&g, entry(1, 0), va2, &err);
	CHECK(err == EFAULT, "2 MiB with a reserved bit: frame %llx errno %d", (unsigned long long)f, err);

	/* 1 GiB: PDPT entry with PS, 1 GiB aligned at 0x80000000 */
	uint64_t va1 = UINT64_C(0x00007fc0abcdef12);
	set_pte(1, idx(va1, 4), entry(4, P));
	set_pte(4, idx(va1, 3), entry(0x80000, P | PS));
	reads = 0;
	f = tr(&g, entry(1, 0), va1, &err);
	CHECK(f == 0x80000 + (0x2bcdef12 >> 12) && err == 0, "1 GiB: frame %llx errno %d",
	      (unsigned long long)f, err);
	CHECK(reads == 2, "1 GiB walk read %u frames, not 2", reads);
	gpt_invalidate(&g);
	set_pte(4, idx(va1, 3), entry(0x80000 + 0x200, P | PS)); /* bit 21: reserved */
	f = tr(&g, entry(1, 0), va1, &err);
	CHECK(err == EFAULT, "1 GiB with a reserved bit: frame %llx errno %d", (unsigned long long)f, err);
	/* PS in a PML4 entry is reserved */
	set_pte(1, idx(va1, 4), entry(4, P | PS));
	f = tr(&g, entry(1, 0), va1, &err);
	CHECK(err == EFAULT, "PS in the PML4: frame %llx errno %d", (unsigned long long)f, err);
	/* bit 7 of a level-1 entry is PAT, not PS: still a 4 KiB page */
	uint64_t va = UINT64_C(0x0000100000005000);
	map_4k(1, 5, 6, 7, va, 12);
	set_pte(7, idx(va, 1), entry(12, P | PS));
	f = tr(&g, entry(1, 0), va, &err);
	CHECK(f == 12, "PAT in a PT entry: frame %llx errno %d", (unsigned long long)f, err);
}

static void test_not_present(void)
{
	struct gpt g;
	int err;
	uint64_t va = UINT64_C(0x0000555555554000);

	for (int level = 4; level >= 1; level--) {
		memset(mem, 0, sizeof(mem));
		gpt_init(&g, read_frame, NULL);
		map_4k(1, 2, 3, 4, va, 10);
		uint64_t table = (uint64_t)(5 - level); /* l4 in 1 ... l1 in 4 */
		set_pte(table, idx(va, level), entry(level == 1 ? 10 : table + 1, RW)); /* P clear */
		uint64_t f = tr(&g, entry(1, 0), va, &err);
		CHECK(err == EFAULT, "not present at level %d: frame %llx errno %d", level,
		      (unsigned long long)f, err);
		/* a failure is not cached: once present it translates */
		set_pte(table, idx(va, level), entry(level == 1 ? 10 : table + 1, P));
		f = tr(&g, entry(1, 0), va, &err);
		CHECK(f == 10, "level %d made present: frame %llx errno %d", level, (unsigned long long)f, err);
	}
	/* all-zero tables: nothing mapped anywhere */
	memset(mem, 0, sizeof(mem));
	gpt_init(&g, read_frame, NULL);
	CHECK(tr(&g, entry(1, 0), 0, &err) == UINT64_MAX && err == EFAULT, "empty PML4: errno %d", err);
}

static void test_beyond_memory(void)
{
	struct gpt g;
	int err;
	uint64_t va = UINT64_C(0x0000000000403000);

	memset(mem, 0, sizeof(mem));
	gpt_init(&g, read_frame, NULL);
	/* cr3 itself beyond the guest's memory */
	CHECK(tr(&g, entry(MEM_FRAMES, 0), va, &err) == UINT64_MAX && err == ENXIO,
	      "cr3 beyond memory: errno %d", err);
	/* a PDPT beyond memory; then the largest frame an entry can name */
	set_pte(1, idx(va, 4), entry(MEM_FRAMES + 7, P));
	CHECK(tr(&g, entry(1, 0), va, &err) == UINT64_MAX && err == ENXIO,
	      "table beyond memory: errno %d", err);
	set_pte(1, idx(va, 4), UINT64_C(0xffffffffffffffff));
	CHECK(tr(&g, entry(1, 0), va, &err) == UINT64_MAX && err == EFAULT,
	      "all-ones PML4 entry (PS set: reserved): errno %d", err);
	set_pte(1, idx(va, 4), UINT64_C(0xffffffffffffff7f));
	reads = 0;
	CHECK(tr(&g, entry(1, 0), va, &err) == UINT64_MAX && err == ENXIO && reads == 2,
	      "all-ones but PS: errno %d, %u reads", err, reads);
	/* a data frame beyond memory is the caller's to refuse: the walk does
	 * not read it */
	map_4k(1, 2, 3, 4, va, UINT64_C(0xffffffffff));
	uint64_t f = tr(&g, entry(1, 0), va, &err);
	CHECK(f == UINT64_C(0xffffffffff), "data frame beyond memory: frame %llx errno %d",
	      (unsigned long long)f, err);
	/* a callback that succeeds without a page */
	gpt_invalidate(&g);
	give_null = 1;
	CHECK(tr(&g, entry(1, 0), va, &err) == UINT64_MAX && err == EIO, "NULL page: errno %d", err);
	give_null = 0;
}

static void test_loops(void)
{
	struct gpt g;
	int err;

	/* PML4 entry 0 points at the PML4 itself: each level reads the same
	 * table, and the walk ends after four reads at the table's frame (the
	 * "recursive mapping" some kernels use on purpose) */
	memset(mem, 0, sizeof(mem));
	gpt_init(&g, read_frame, NULL);
	set_pte(1, 0, entry(1, P | RW));
	reads = 0;
	uint64_t f = tr(&g, entry(1, 0), 0x123, &err);
	CHECK(f == 1 && reads == 4, "self-loop: frame %llx errno %d, %u reads", (unsigned long long)f, err,
	      reads);
	/* two tables pointing at each other, every entry present */
	for (unsigned i = 0; i < 512; i++) {
		set_pte(2, i, entry(3, P));
		set_pte(3, i, entry(2, P));
	}
	for (uint64_t k = 0; k < 100; k++) {
		uint64_t va = k * UINT64_C(0x0000012345678000) & UINT64_C(0x00007ffffffff000);
		reads = 0;
		f = tr(&g, entry(2, 0), va, &err);
		CHECK(f == 2 && reads == 4, "two-table loop at %llx: frame %llx errno %d, %u reads",
		      (unsigned long long)va, (unsigned long long)f, err, reads);
		gpt_invalidate(&g);
	}
}

static void test_canonical(void)
{
	struct gpt g;
	int err;
	const uint64_t bad[] = {UINT64_C(0x0000800000000000), UINT64_C(0xffff7fffffffffff),
	                        UINT64_C(0x8000000000000000), UINT64_C(0x0001000000000000),
	                        UINT64_C(0xfff0000000000000), UINT64_C(0x7fffffffffffffff)};
	const uint64_t good[] = {0, UINT64_C(0x00007fffffffffff), UINT64_C(0xffff800000000000),
	                         UINT64_C(0xffffffffffffffff)};

	memset(mem, 0, sizeof(mem));
	gpt_init(&g, read_frame, NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reads = 0;
		CHECK(tr(&g, entry(1, 0), bad[i], &err) == UINT64_MAX && err == EINVAL && reads == 0,
		      "non-canonical %llx: errno %d, %u reads", (unsigned long long)bad[i], err, reads);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(gpt_canonical(good[i]), "%llx is canonical", (unsigned long long)good[i]);
}

static void test_cache(void)
{
	struct gpt g;
	int err;
	uint64_t va = UINT64_C(0x00007ffff7a00000);

	memset(mem, 0, sizeof(mem));
	gpt_init(&g, read_frame, NULL);
	map_4k(1, 2, 3, 4, va, 10);
	CHECK(tr(&g, entry(1, 0), va, &err) == 10, "first: errno %d", err);
	/* the guest runs and remaps va: until invalidated, the old answer */
	set_pte(4, idx(va, 1), entry(20, P));
	reads = 0;
	uint64_t f = tr(&g, entry(1, 0), va + 0x10, &err);
	CHECK(f == 10 && reads == 0 && g.stats.hits == 1, "cached: frame %llu, %u reads, %llu hits",
	      (unsigned long long)f, reads, (unsigned long long)g.stats.hits);
	gpt_invalidate(&g);
	f = tr(&g, entry(1, 0), va, &err);
	CHECK(f == 20 && reads == 4, "after invalidate: frame %llu, %u reads", (unsigned long long)f, reads);

	/* another address space (another cr3) maps the same va elsewhere */
	map_4k(5, 6, 7, 8, va, 21);
	f = tr(&g, entry(5, 0), va, &err);
	CHECK(f == 21, "second address space: frame %llu errno %d", (unsigned long long)f, err);
	f = tr(&g, entry(1, 0), va, &err);
	CHECK(f == 20, "first address space again: frame %llu errno %d", (unsigned long long)f, err);

	/* many pages: more than the cache holds, all still right */
	for (unsigned i = 0; i < 512; i++)
		set_pte(4, i, entry(i % MEM_FRAMES, P));
	gpt_invalidate(&g);
	for (int round = 0; round < 2; round++)
		for (unsigned i = 0; i < 512; i++) {
			uint64_t v = (va & ~UINT64_C(0x1fffff)) + (uint64_t)i * GPT_PAGE_SIZE;
			f = tr(&g, entry(1, 0), v, &err);
			CHECK(f == i % MEM_FRAMES, "page %u round %d: frame %llu errno %d", i, round,
			      (unsigned long long)f, err);
		}
	CHECK(g.stats.hits + g.stats.misses > 1024, "stats count every translation");
}

int main(void)
{
	test_4k();
	test_large_pages();
	test_not_present();
	test_beyond_memory();
	test_loops();
	test_canonical();
	test_cache();
	return tu_finish("test_pagetable");
}
