/*
 * id_index.h - the one hash table of the tree: an open-addressing index
 * from a key to a 1-based id.  The caller keeps its entries in an array of
 * its own (entry id-1), and says how an entry hashes and whether it has a
 * key; the index holds only ids, so growing it never moves an entry.
 * Used for heap bands by name, cost centres, stacks compared, a fleet
 * mirror's runs.
 *
 * May call: libc.
 */
#ifndef PROFSVC_ID_INDEX_H
#define PROFSVC_ID_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct id_index {
	uint32_t *slot;   /* 0: empty, else an id */
	size_t cap;       /* a power of two, or 0 */
	size_t n;         /* ids held */
};

/* FNV-1a over n bytes, continuing from h (start with ID_INDEX_SEED). */
#define ID_INDEX_SEED 1469598103934665603ull
static inline uint64_t id_index_hash(uint64_t h, const void *bytes, size_t n)
{
	const unsigned char *p = bytes;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* Room for one more id: doubles the table (from 64) when it would be
 * over half full, placing every id again by hash_of(ctx, id).  0, or -1
 * when out of memory (the index is unchanged). */
int id_index_reserve(struct id_index *x, uint64_t (*hash_of)(const void *ctx, uint32_t id),
                     const void *ctx);
/* The id whose entry has the key (eq(ctx, id) says so) among those of
 * hash h; 0 when none.  *at, when not NULL, is its place, or where such
 * an id goes.
 * Inline: a parser asks once a line, and eq is then inlined too. */
static inline uint32_t id_index_find(const struct id_index *x, uint64_t h,
                                     int (*eq)(const void *ctx, uint32_t id), const void *ctx,
                                     size_t *at)
{
	size_t i = x->cap ? (size_t)h & (x->cap - 1) : 0;
	for (; x->cap && x->slot[i] && !eq(ctx, x->slot[i]); i = (i + 1) & (x->cap - 1))
		;
	if (at)
		*at = i;
	return x->cap ? x->slot[i] : 0;
}
/* Puts id at the place id_index_find gave (after id_index_reserve). */
void id_index_put(struct id_index *x, size_t at, uint32_t id);
void id_index_free(struct id_index *x);

#endif
