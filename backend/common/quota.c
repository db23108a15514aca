/*
 * quota.c - what a run's writes cost in dom0's disk, for --max-run-bytes.
 *
 * The store keeps a device's data in 64 KiB chunks: the first write that
 * touches a chunk takes 64 KiB, whatever its size, and rewrites of it cost
 * nothing more.  Counting written bytes instead let one-sector writes
 * 64 KiB apart grow the store 128 times past the limit (8 MiB of writes
 * under --max-run-bytes 1M held 1 GiB).  So a run is charged 64 KiB per
 * chunk it has touched: a set of (device, chunk) per run, filled as writes
 * are admitted and, when a backend restarts or a disk comes back, from
 * what the store already holds.
 *
 * May call: only the C library (and the store's chunk size, store/store.h).
 */
#include "config.h"

#include <stdlib.h>

#include "quota.h"
#include "store/store.h"

#define CHUNK_SECTORS (STORE_CHUNK_BYTES / STORE_SECTOR_SIZE)

/* Keys are (devid << 32 | chunk) + 1, so that 0 marks a free slot. */
static uint64_t key_of(uint32_t devid, uint64_t chunk)
{
	return ((uint64_t)devid << 32 | (chunk & 0xffffffffu)) + 1;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int set_has(const struct be_chunk_set *cs, uint64_t key)
{
	if (!cs->cap)
		return 0;
	for (size_t i = slot_of(key, cs->cap);; i = (i + 1) & (cs->cap - 1)) {
		if (cs->keys[i] == key)
			return 1;
		if (!cs->keys[i])
			return 0;
	}
}

static int set_grow(struct be_chunk_set *cs)
{
	size_t cap = cs->cap ? cs->cap * 2 : 64;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	if (!keys)
		return -1;
	for (size_t i = 0; i < cs->cap; i++) {
		if (!cs->keys[i])
			continue;
		size_t j = slot_of(cs->keys[i], cap);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = cs->keys[i];
	}
	free(cs->keys);
	cs->keys = keys;
	cs->cap = cap;
	return 0;
}

/* 1 added, 0 already there, -1 out of memory. */
static int set_add(struct be_chunk_set *cs, uint64_t key)
{
	if (set_has(cs, key))
		return 0;
	if ((cs->n + 1) * 2 > cs->cap && set_grow(cs) != 0)
		return -1;
	size_t i = slot_of(key, cs->cap);
	while (cs->keys[i])
		i = (i + 1) & (cs->cap - 1);
	cs->keys[i] = key;
	cs->n++;
	return 1;
}

/* Removal with backward shift (keeps every probe chain whole). */
static void set_remove(struct be_chunk_set *cs, uint64_t key)
{
	if (!cs->cap)
		return;
	size_t i = slot_of(key, cs->cap);
	while (cs->keys[i] != key) {
		if (!cs->keys[i])
			return;
		i = (i + 1) & (cs->cap - 1);
	}
	cs->keys[i] = 0;
	cs->n--;
	for (size_t j = (i + 1) & (cs->cap - 1); cs->keys[j]; j = (j + 1) & (cs->cap - 1)) {
		size_t home = slot_of(cs->keys[j], cs->cap);
		/* Move it back if i lies on its probe path from home to j. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			cs->keys[i] = cs->keys[j];
			cs->keys[j] = 0;
			i = j;
		}
	}
}

void be_quota_free(struct be_chunk_set *cs)
{
	free(cs->keys);
	cs->keys = NULL;
	cs->n = cs->cap = 0;
}

uint64_t be_quota_charged(const struct be_chunk_set *cs)
{
	return (uint64_t)cs->n * STORE_CHUNK_BYTES;
}

int be_quota_note_stored(struct be_chunk_set *cs, uint32_t devid, uint64_t chunk)
{
	return set_add(cs, key_of(devid, chunk)) < 0 ? -1 : 0;
}

uint64_t be_quota_fresh(const struct be_chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect)
{
	uint64_t fresh = 0;
	for (uint64_t c = sector / CHUNK_SECTORS; c <= (sector + nsect - 1) / CHUNK_SECTORS; c++)
		fresh += !set_has(cs, key_of(devid, c));
	return fresh * STORE_CHUNK_BYTES;
}

int be_quota_admit(struct be_chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect, uint64_t limit,
                uint64_t *added)
{
	uint64_t first = sector / CHUNK_SECTORS, last = (sector + nsect - 1) / CHUNK_SECTORS;
	uint64_t fresh = 0;

	*added = 0;
	if (last - first >= 64)
		return -1; /* no request is that large (1 MiB indirect: 17 chunks) */
	fresh = be_quota_fresh(cs, devid, sector, nsect);
	if (be_quota_charged(cs) + fresh > limit)
		return -1;
	for (uint64_t c = first; c <= last; c++) {
		int r = set_add(cs, key_of(devid, c));
		if (r < 0) {
			be_quota_release(cs, devid, sector, *added);
			*added = 0;
			return -1;
		}
		if (r)
			*added |= 1ull << (c - first);
	}
	return 0;
}

void be_quota_release(struct be_chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t added)
{
	uint64_t first = sector / CHUNK_SECTORS;
	for (unsigned i = 0; i < 64; i++)
		if (added >> i & 1)
			set_remove(cs, key_of(devid, first + i));
}
