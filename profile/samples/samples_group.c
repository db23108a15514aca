/*
 * samples_group.c - what every export of the stack samples starts from
 * (samples_int.h): frames grouped into functions, their names, every
 * sample's stack counted.
 *
 * Names are the guest's, shown as spelled: in the text formats (folded,
 * perf script, pprof's strings) controls, bidi controls and bytes that
 * are not UTF-8 are \xNN or \uNNNN and a backslash stays one backslash
 * (util/safe_text: safe_text_spelled); ';' is \x3b in folded stacks (the
 * frame separator, as flame.c writes it).
 *
 * May call: util/grow.h, util/id_index, util/safe_text.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "samples_int.h"
#include "util/grow.h"
#include "util/id_index.h"
#include "util/safe_text.h"

/* ---- functions: frames grouped by (kind, name, module) ------------------------ */

static uint64_t func_key_hash(const struct samples_frame *f)
{
	static const unsigned char sep = 0xff;
	uint8_t k = (uint8_t)f->kind;
	uint64_t addr = f->name[0] ? 0 : f->addr;
	uint64_t h = id_index_hash(id_index_hash(ID_INDEX_SEED, &k, 1), &addr, sizeof(addr));
	h = id_index_hash(id_index_hash(h, f->name, strlen(f->name)), &sep, 1);
	return id_index_hash(h, f->module, strlen(f->module));
}

static uint64_t func_hash_of(const void *ctx, uint32_t id)
{
	const struct samples_funcs *fs = ctx;
	return func_key_hash(&fs->p->frames[fs->first[id - 1]]);
}

struct func_key {
	const struct samples_funcs *fs;
	const struct samples_frame *f;
};

static int func_is(const void *ctx, uint32_t id)
{
	const struct func_key *k = ctx;
	const struct samples_frame *a = &k->fs->p->frames[k->fs->first[id - 1]], *b = k->f;
	return a->kind == b->kind && !strcmp(a->name, b->name) && !strcmp(a->module, b->module) &&
	       (a->name[0] || a->addr == b->addr);
}

void samples_funcs_free(struct samples_funcs *fs)
{
	free(fs->of_frame);
	free(fs->first);
	free(fs->lined);
	id_index_free(&fs->idx);
}

int samples_funcs_build(struct samples_funcs *fs, const struct samples_profile *p)
{
	size_t n = p->nframes ? p->nframes : 1;
	memset(fs, 0, sizeof(*fs));
	fs->p = p;
	fs->of_frame = malloc(n * sizeof(uint32_t));
	fs->first = malloc(n * sizeof(uint32_t));
	fs->lined = malloc(n * sizeof(uint32_t));
	if (!fs->of_frame || !fs->first || !fs->lined)
		return samples_funcs_free(fs), -1;
	for (size_t i = 0; i < p->nframes; i++) {
		const struct samples_frame *f = &p->frames[i];
		struct func_key key = {fs, f};
		size_t at;
		if (id_index_reserve(&fs->idx, func_hash_of, fs) != 0)
			return samples_funcs_free(fs), -1;
		uint32_t id = id_index_find(&fs->idx, func_key_hash(f), func_is, &key, &at);
		if (!id) {
			fs->first[fs->n] = (uint32_t)i;
			fs->lined[fs->n] = SAMPLES_NO_FRAME;
			id_index_put(&fs->idx, at, id = (uint32_t)++fs->n);
		}
		fs->of_frame[i] = id - 1;
		if (fs->lined[id - 1] == SAMPLES_NO_FRAME && f->line)
			fs->lined[id - 1] = (uint32_t)i;
	}
	return 0;
}

/* ---- names -------------------------------------------------------------------- */

/* A frame's name as the text formats show it ("Module.name", the name, or
 * its address when it has none); each byte of also as \xNN. */
void samples_put_label(FILE *f, const struct samples_frame *fr, const char *also)
{
	if (!fr->name[0]) {
		fprintf(f, "0x%llx", (unsigned long long)fr->addr);
		return;
	}
	if (fr->kind == SAMPLES_KIND_HASKELL && fr->module[0]) {
		safe_text_spelled(f, fr->module, also);
		fputc('.', f);
	}
	safe_text_spelled(f, fr->name, also);
}

/* The same name unescaped (the guest's bytes), malloc'd; NULL when out of memory. */
char *samples_raw_label(const struct samples_frame *fr)
{
	size_t n = strlen(fr->name), m = strlen(fr->module);
	char *s = malloc(n + m + 24);
	if (!s)
		return NULL;
	if (!n)
		snprintf(s, 24, "0x%llx", (unsigned long long)fr->addr);
	else if (fr->kind == SAMPLES_KIND_HASKELL && m)
		snprintf(s, n + m + 2, "%s.%s", fr->module, fr->name);
	else
		memcpy(s, fr->name, n + 1);
	return s;
}

/* ---- stacks counted: identical sequences of ids added up ------------------------- */

static uint64_t seq_hash(const uint32_t *ids, uint32_t depth)
{
	return id_index_hash(ID_INDEX_SEED, ids, depth * sizeof(*ids));
}

static uint64_t stack_hash_of(const void *ctx, uint32_t id)
{
	const struct samples_stacks *st = ctx;
	return seq_hash(st->ids + st->s[id - 1].at, st->s[id - 1].depth);
}

struct seq_key {
	const struct samples_stacks *st;
	const uint32_t *ids;
	uint32_t depth;
};

static int stack_is(const void *ctx, uint32_t id)
{
	const struct seq_key *k = ctx;
	const struct samples_stack *s = &k->st->s[id - 1];
	return s->depth == k->depth && !memcmp(k->st->ids + s->at, k->ids, k->depth * sizeof(*k->ids));
}

void samples_stacks_free(struct samples_stacks *st)
{
	free(st->ids);
	free(st->s);
	id_index_free(&st->idx);
	memset(st, 0, sizeof(*st));
}

static int stacks_add(struct samples_stacks *st, const uint32_t *ids, uint32_t depth, uint32_t weight, uint64_t ns)
{
	struct seq_key key = {st, ids, depth};
	size_t at;
	if (id_index_reserve(&st->idx, stack_hash_of, st) != 0)
		return -1;
	uint32_t id = id_index_find(&st->idx, seq_hash(ids, depth), stack_is, &key, &at);
	if (!id) {
		if (st->n >= UINT32_MAX - 1 || GROW(st->s, st->cap, st->n + 1) ||
		    GROW(st->ids, st->ids_cap, st->nids + depth))
			return -1;
		memcpy(st->ids + st->nids, ids, depth * sizeof(*ids));
		st->s[st->n] = (struct samples_stack){.at = st->nids, .depth = depth};
		st->nids += depth;
		id_index_put(&st->idx, at, id = (uint32_t)++st->n);
	}
	struct samples_stack *s = &st->s[id - 1];
	s->count = s->count > UINT64_MAX - weight ? UINT64_MAX : s->count + weight;
	s->ns = s->ns > UINT64_MAX - ns ? UINT64_MAX : s->ns + ns;
	return 0;
}

/* Every sample's stack (leaf first) counted: as functions (fs given) or frames. */
int samples_stacks_count(struct samples_stacks *st, const struct samples_profile *p, const struct samples_funcs *fs)
{
	uint32_t seq[SAMPLES_MAX_DEPTH];
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		uint32_t d = s->depth <= SAMPLES_MAX_DEPTH ? s->depth : SAMPLES_MAX_DEPTH;
		for (uint32_t k = 0; k < d; k++)
			seq[k] = fs ? fs->of_frame[p->pool[s->at + k]] : p->pool[s->at + k];
		if (stacks_add(st, seq, d, s->weight, s->ns) != 0)
			return samples_stacks_free(st), -1;
	}
	return 0;
}
