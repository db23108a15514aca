/*
 * prof_model.c - the time-profile model (time_profile.h) as its readers
 * build it: the cost-centre table (one entry per name, module and source,
 * found by hash, or only looked up), the call tree's nodes, a stack
 * walked up to its root, and a parse's failure with the line it names.
 *
 * May call: parse_util.c, util/id_index, util/grow.h.  Below both readers (prof_text.c, prof_json.c)
 * and prof_feed.c, which calls them: it calls none of them.
 */
#include "config.h"

#include "profile/common/parse_util.h"
#include "time_profile.h"
#include "util/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tp_fail(struct time_profile *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pf_error(p->err, sizeof(p->err), p->line_no, fmt, ap);
	va_end(ap);
	p->failed = 1;
	return -1;
}

const char *tp_error(const struct time_profile *p)
{
	return p->failed ? p->err : "";
}

/* ---- the cost-centre table -------------------------------------------------- */

static uint64_t hash3(const char *a, const char *b, const char *c)
{
	static const unsigned char sep = 0xff;
	uint64_t h = ID_INDEX_SEED;
	for (const char *s[3] = {a, b, c}, **q = s; q < s + 3; q++)
		h = id_index_hash(id_index_hash(h, *q, strlen(*q)), &sep, 1);
	return h;
}

static uint64_t cc_hash(const void *ctx, uint32_t id)
{
	const struct tp_cc *c = &((const struct time_profile *)ctx)->ccs[id - 1];
	return hash3(c->name, c->module, c->src);
}

struct cc_key {
	const struct time_profile *p;
	const char *name, *module, *src;
};

static int cc_is(const void *ctx, uint32_t id)
{
	const struct cc_key *k = ctx;
	const struct tp_cc *c = &k->p->ccs[id - 1];
	return !strcmp(c->name, k->name) && !strcmp(c->module, k->module) && !strcmp(c->src, k->src);
}

uint32_t tp_cc_find(const struct time_profile *p, const char *name, const char *module, const char *src)
{
	struct cc_key key = {p, name, module, src};
	uint32_t found = id_index_find(&p->cc_index, hash3(name, module, src), cc_is, &key, NULL);
	return found ? found - 1 : TP_NONE;
}

uint32_t tp_cc_get(struct time_profile *p, const char *name, const char *module, const char *src,
                   int is_caf, int64_t id)
{
	size_t at;
	struct cc_key key = {p, name, module, src};
	(void)id;
	if (id_index_reserve(&p->cc_index, cc_hash, p) != 0)
		return TP_NONE;
	uint32_t found = id_index_find(&p->cc_index, hash3(name, module, src), cc_is, &key, &at);
	if (found)
		return found - 1;
	if (p->nccs >= TP_NONE - 1 || GROW(p->ccs, p->ccs_cap, p->nccs + 1))
		return TP_NONE;
	struct tp_cc *c = &p->ccs[p->nccs];
	*c = (struct tp_cc){0};
	c->name = strdup(name);
	c->module = strdup(module);
	c->src = strdup(src);
	c->is_caf = is_caf;
	if (!c->name || !c->module || !c->src) {
		free(c->name);
		free(c->module);
		free(c->src);
		return TP_NONE;
	}
	id_index_put(&p->cc_index, at, (uint32_t)++p->nccs);
	return (uint32_t)(p->nccs - 1);
}

int tp_node_add(struct time_profile *p, uint32_t cc, uint32_t parent, struct tp_node *n)
{
	if (p->nnodes >= TP_NONE - 1 ||
	    GROW(p->nodes, p->nodes_cap, p->nnodes + 1) != 0)
		return tp_fail(p, "out of memory");
	n->cc = cc;
	n->parent = parent;
	n->depth = parent == TP_NONE ? 0 : p->nodes[parent].depth + 1;
	p->nodes[p->nnodes++] = *n;
	return 0;
}

size_t tp_stack(const struct time_profile *p, uint32_t node, uint32_t *path)
{
	size_t d = 0;
	for (uint32_t at = node; at != TP_NONE; at = p->nodes[at].parent)
		path[d++] = at;
	return d;
}
