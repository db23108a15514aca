/*
 * id_index.c - the one hash table (id_index.h): linear probing over a
 * power-of-two array of ids, kept at most half full.
 *
 * May call: libc.
 */
#include "config.h"

#include <stdlib.h>

#include "id_index.h"

uint64_t id_index_hash(uint64_t h, const void *bytes, size_t n)
{
	const unsigned char *p = bytes;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

int id_index_reserve(struct id_index *x, uint64_t (*hash_of)(const void *ctx, uint32_t id),
                     const void *ctx)
{
	if ((x->n + 1) * 2 <= x->cap)
		return 0;
	size_t cap = x->cap ? x->cap * 2 : 64;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < x->cap; i++) {
		if (!x->slot[i])
			continue;
		size_t at = (size_t)hash_of(ctx, x->slot[i]) & (cap - 1);
		while (slot[at])
			at = (at + 1) & (cap - 1);
		slot[at] = x->slot[i];
	}
	free(x->slot);
	x->slot = slot;
	x->cap = cap;
	return 0;
}

uint32_t id_index_find(const struct id_index *x, uint64_t h,
                       int (*eq)(const void *ctx, uint32_t id), const void *ctx, size_t *at)
{
	if (!x->cap) {
		if (at)
			*at = 0;
		return 0;
	}
	size_t i = (size_t)h & (x->cap - 1);
	for (; x->slot[i]; i = (i + 1) & (x->cap - 1))
		if (eq(ctx, x->slot[i]))
			return x->slot[i];
	if (at)
		*at = i;
	return 0;
}

void id_index_put(struct id_index *x, size_t at, uint32_t id)
{
	x->slot[at] = id;
	x->n++;
}

void id_index_free(struct id_index *x)
{
	free(x->slot);
	x->slot = NULL;
	x->cap = x->n = 0;
}
