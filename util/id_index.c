/*
 * id_index.c - the one hash table (id_index.h): linear probing over a
 * power-of-two array of ids, kept at most half full.
 *
 * May call: libc.
 */
#include "config.h"

#include <stdlib.h>

#include "id_index.h"

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
