/*
 * prof_compare.c - two time profiles' call stacks matched by their path
 * of functions (prof_compare.h).
 *
 * A stack is known by a 64-bit hash of its frames' module and name from
 * the root down, so matching costs one pass over each tree and no path
 * strings; a path is spelled out only for the rows someone prints.
 *
 * May call: the model (prof_model.c's types), util/id_index, libc.
 */
#include "config.h"

#include "prof_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/id_index.h"

static uint64_t mix(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0x1f) * 1099511628211ull;
}

/* Stacks by path key: the index's ids are out[]'s index + 1. */
static uint64_t key_spread(uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull >> 11;
}

static uint64_t stack_hash(const void *ctx, uint32_t id)
{
	return key_spread(((const struct cmp_stack *)ctx)[id - 1].key);
}

struct stack_key {
	const struct cmp_stack *out;
	uint64_t key;
};

static int stack_is(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	return k->out[id - 1].key == k->key;
}

/* The stack of path key in out[], made if new (k counts them); NULL when
 * out of memory. */
static struct cmp_stack *stack_get(struct id_index *x, struct cmp_stack *out, size_t *k, uint64_t key)
{
	size_t at;
	struct stack_key sk = {out, key};
	if (id_index_reserve(x, stack_hash, out) != 0)
		return NULL;
	uint32_t id = id_index_find(x, key_spread(key), stack_is, &sk, &at);
	if (!id) {
		out[*k] = (struct cmp_stack){.key = key, .node = {TP_NONE, TP_NONE}};
		id = (uint32_t)++*k;
		id_index_put(x, at, id);
	}
	return &out[id - 1];
}

void cmp_path_keys(const struct time_profile *p, uint64_t *keys)
{
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct tp_node *nd = &p->nodes[i];
		const struct tp_cc *c = &p->ccs[nd->cc];
		uint64_t h = nd->parent == TP_NONE ? 1469598103934665603ull : keys[nd->parent];
		keys[i] = mix(mix(h, c->module), c->name);
	}
}

static int cmp_movers(const void *x, const void *y)
{
	const struct cmp_stack *a = x, *b = y;
	double da = fabs(a->time[1] - a->time[0]) + fabs(a->alloc[1] - a->alloc[0]);
	double db = fabs(b->time[1] - b->time[0]) + fabs(b->alloc[1] - b->alloc[0]);
	if (da != db)
		return da > db ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

struct cmp_stack *cmp_stacks(const struct time_profile *a, const struct time_profile *b, size_t *n)
{
	const struct time_profile *p[2] = {a, b};
	size_t total = a->nnodes + b->nnodes, k = 0;
	struct id_index m = {0};
	struct cmp_stack *out = calloc(total ? total : 1, sizeof(*out));
	uint64_t *keys = malloc(((a->nnodes > b->nnodes ? a->nnodes : b->nnodes) + 1) * sizeof(*keys));
	*n = 0;
	if (!out || !keys)
		goto oom;
	for (int side = 0; side < 2; side++) {
		cmp_path_keys(p[side], keys);
		for (size_t i = 0; i < p[side]->nnodes; i++) {
			const struct tp_node *nd = &p[side]->nodes[i];
			struct cmp_stack *s = stack_get(&m, out, &k, keys[i]);
			if (!s)
				goto oom;
			if (s->node[side] == TP_NONE)
				s->node[side] = (uint32_t)i;
			/* the same path twice in one profile (two SRCs): summed */
			s->time[side] += nd->time;
			s->alloc[side] += nd->alloc;
			s->entries[side] = s->entries[side] > UINT64_MAX - nd->entries
			                       ? UINT64_MAX : s->entries[side] + nd->entries;
		}
	}
	id_index_free(&m);
	free(keys);
	qsort(out, k, sizeof(*out), cmp_movers);
	*n = k;
	return out;
oom:
	id_index_free(&m);
	free(out);
	free(keys);
	return NULL;
}

char *cmp_stack_path(const struct cmp_stack *s, const struct time_profile *a,
                     const struct time_profile *b)
{
	const struct time_profile *p = s->node[0] != TP_NONE ? a : b;
	uint32_t at = s->node[0] != TP_NONE ? s->node[0] : s->node[1];
	size_t len = 1;
	for (uint32_t i = at; i != TP_NONE; i = p->nodes[i].parent) {
		const struct tp_cc *c = &p->ccs[p->nodes[i].cc];
		len += strlen(c->module) + strlen(c->name) + 2;
	}
	char *out = malloc(len), *end = out + len - 1;
	if (!out)
		return NULL;
	*end = '\0';
	for (uint32_t i = at; i != TP_NONE; i = p->nodes[i].parent) {
		const struct tp_cc *c = &p->ccs[p->nodes[i].cc];
		size_t nm = strlen(c->name), md = strlen(c->module);
		end -= nm;
		memcpy(end, c->name, nm);
		if (md) { /* a sampled C function has no module */
			*--end = '.';
			end -= md;
			memcpy(end, c->module, md);
		}
		if (p->nodes[i].parent != TP_NONE)
			*--end = ';';
	}
	if (end != out)
		memmove(out, end, strlen(end) + 1);
	return out;
}
