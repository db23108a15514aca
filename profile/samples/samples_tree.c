/*
 * samples_tree.c - the stack samples (samples.h) as a time profile
 * (time_profile.h) for top, flame, diff and the report: a cost centre per
 * function of samples_group.c, each sample's path from its root a branch
 * of the call tree, a tick a sample on its leaf.
 *
 * May call: samples_group.c (functions), prof_model.c (tp_cc_get,
 * tp_node_add, tp_fail), prof_feed.c (tp_init, tp_finish), time_profile.h,
 * util/id_index.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "profile/prof/time_profile.h"
#include "samples.h"
#include "samples_int.h"
#include "util/id_index.h"

/* ---- the time profile -------------------------------------------------------------- */

struct tree {
	struct time_profile *tp;
	struct id_index idx; /* nodes by (parent, cost centre); ids: index + 1 */
};

static uint64_t node_key_hash(uint32_t parent, uint32_t cc)
{
	uint32_t k[2] = {parent, cc};
	return id_index_hash(ID_INDEX_SEED, k, sizeof(k));
}

static uint64_t node_hash_of(const void *ctx, uint32_t id)
{
	const struct tp_node *n = &((const struct tree *)ctx)->tp->nodes[id - 1];
	return node_key_hash(n->parent, n->cc);
}

struct node_key {
	const struct tree *t;
	uint32_t parent, cc;
};

static int node_is(const void *ctx, uint32_t id)
{
	const struct node_key *k = ctx;
	const struct tp_node *n = &k->t->tp->nodes[id - 1];
	return n->parent == k->parent && n->cc == k->cc;
}

/* The node of cc under parent, added when new; TP_NONE when out of memory. */
static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t cc)
{
	struct node_key key = {t, parent, cc};
	size_t at;
	if (id_index_reserve(&t->idx, node_hash_of, t) != 0)
		return TP_NONE;
	uint32_t id = id_index_find(&t->idx, node_key_hash(parent, cc), node_is, &key, &at);
	if (id)
		return id - 1;
	struct tp_node n = {0};
	n.no = (int64_t)t->tp->nnodes + 1;
	if (tp_node_add(t->tp, cc, parent, &n) != 0)
		return TP_NONE;
	id_index_put(&t->idx, at, (uint32_t)t->tp->nnodes);
	return (uint32_t)t->tp->nnodes - 1;
}

/* A cost centre per function: name and module as the frame has them (a
 * nameless frame named by its address), src "file:line" of its first
 * frame with a line.  ccs[i] for function i. */
static int cost_centres(struct time_profile *tp, const struct samples_funcs *fs, uint32_t *ccs)
{
	const struct samples_profile *p = fs->p;
	for (size_t i = 0; i < fs->n; i++) {
		const struct samples_frame *fr = &p->frames[fs->first[i]];
		char addr[24], *src = NULL;
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)fr->addr);
		if (fs->lined[i] != SAMPLES_NO_FRAME) {
			const struct samples_frame *l = &p->frames[fs->lined[i]];
			size_t n = strlen(l->file) + 16;
			if (!(src = malloc(n)))
				return -1;
			snprintf(src, n, "%s:%u", l->file, l->line);
		}
		/* A C function's module would be its file (perf's dso), which
		 * flame and diff would print as "hot.main": Haskell's only. */
		const char *module = fr->kind == SAMPLES_KIND_HASKELL ? fr->module : "";
		ccs[i] = tp_cc_get(tp, fr->name[0] ? fr->name : addr, module, src ? src : "", 0, (int64_t)i);
		free(src);
		if (ccs[i] == TP_NONE)
			return -1;
	}
	return 0;
}

/* Whether any sample carries its vCPU's CPU time (a TIME record): then a
 * tick is a microsecond of it, else a sample (weight ticks of 1/hz s). */
static int by_cpu_time(const struct samples_profile *p)
{
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].cpu_time)
			return 1;
	return 0;
}

/* Each sample's path from its root, its ticks on its leaf. */
static int grow_tree(struct tree *t, const struct samples_profile *p, const struct samples_funcs *fs,
                     const uint32_t *ccs)
{
	int us = by_cpu_time(p);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		uint32_t node = TP_NONE;
		for (uint32_t k = s->depth; k-- > 0;)
			if ((node = tree_child(t, node, ccs[fs->of_frame[p->pool[s->at + k]]])) == TP_NONE)
				return -1;
		uint64_t ticks = us ? (s->ns + 500) / 1000 : s->weight;
		t->tp->nodes[node].ticks += ticks;
		t->tp->total_ticks += ticks;
	}
	return 0;
}

static int describe(struct time_profile *tp, const struct samples_profile *p)
{
	const char *prog = p->program ? p->program : "";
	size_t n = strlen(prog) + 64;
	tp->format = TP_TEXT;
	tp->has_ticks = 1;
	tp->tick_us = by_cpu_time(p) ? 1 : p->hz ? 1e6 / p->hz : 0;
	tp->total_secs = (double)tp->total_ticks * tp->tick_us / 1e6;
	tp->command = strdup(prog);
	tp->title = malloc(n);
	if (!tp->command || !tp->title)
		return -1;
	snprintf(tp->title, n, "%s: stack samples at %u Hz", prog, p->hz);
	for (size_t i = 0; i < tp->nccs; i++)
		tp->has_src |= tp->ccs[i].src[0] != '\0';
	return 0;
}

int samples_to_time_profile(const struct samples_profile *p, struct time_profile *out)
{
	struct samples_funcs fs;
	struct tree t = {out, {0}};
	tp_init(out);
	if (samples_funcs_build(&fs, p) != 0)
		return tp_fail(out, "out of memory");
	uint32_t *ccs = malloc((fs.n ? fs.n : 1) * sizeof(*ccs));
	int rc = !ccs || cost_centres(out, &fs, ccs) || grow_tree(&t, p, &fs, ccs) || describe(out, p)
	                 ? tp_fail(out, "out of memory")
	                 : 0;
	free(ccs);
	samples_funcs_free(&fs);
	id_index_free(&t.idx);
	if (rc == 0 && out->nnodes == 0)
		rc = tp_fail(out, "no stack samples");
	if (rc == 0)
		rc = tp_finish(out);
	/* the percentages, from ticks (tp_finish computed the inherited ticks) */
	double total = out->total_ticks ? (double)out->total_ticks : 1;
	for (size_t i = 0; rc == 0 && i < out->nnodes; i++) {
		out->nodes[i].time = 100.0 * (double)out->nodes[i].ticks / total;
		out->nodes[i].inh_time = 100.0 * (double)out->nodes[i].inh_ticks / total;
	}
	return rc;
}
