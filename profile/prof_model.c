/*
 * prof_model.c - the time-profile model (time_profile.h) as its readers
 * build it: the cost-centre table (one entry per name, module and source,
 * found by hash), the call tree's nodes, a stack walked up to its root,
 * and a parse's failure with the line it names.
 *
 * May call: parse_util.c.  Below both readers (prof_text.c, prof_json.c)
 * and prof_feed.c, which calls them: it calls none of them.
 */
#include "config.h"

#include "parse_util.h"
#include "time_profile.h"

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
	uint64_t h = 1469598103934665603ull;
	for (const char *s[3] = {a, b, c}, **q = s; q < s + 3; q++) {
		for (const char *x = *q; *x; x++)
			h = (h ^ (unsigned char)*x) * 1099511628211ull;
		h = (h ^ 0xff) * 1099511628211ull;
	}
	return h;
}

static int cc_rehash(struct time_profile *p)
{
	size_t cap = p->cc_hash_cap ? p->cc_hash_cap * 2 : 64;
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -1;
	for (size_t i = 0; i < p->nccs; i++) {
		const struct tp_cc *c = &p->ccs[i];
		size_t at = hash3(c->name, c->module, c->src) & (cap - 1);
		while (h[at])
			at = (at + 1) & (cap - 1);
		h[at] = (uint32_t)i + 1;
	}
	free(p->cc_hash);
	p->cc_hash = h;
	p->cc_hash_cap = cap;
	return 0;
}

uint32_t tp_cc_get(struct time_profile *p, const char *name, const char *module, const char *src,
                   int is_caf, int64_t id)
{
	(void)id;
	if (p->nccs + 1 > p->cc_hash_cap / 2 && cc_rehash(p) != 0)
		return TP_NONE;
	size_t at = hash3(name, module, src) & (p->cc_hash_cap - 1);
	for (; p->cc_hash[at]; at = (at + 1) & (p->cc_hash_cap - 1)) {
		struct tp_cc *c = &p->ccs[p->cc_hash[at] - 1];
		if (!strcmp(c->name, name) && !strcmp(c->module, module) && !strcmp(c->src, src))
			return p->cc_hash[at] - 1;
	}
	if (p->nccs >= TP_NONE - 1 || pf_grow((void **)&p->ccs, &p->ccs_cap, p->nccs + 1, sizeof(*p->ccs)))
		return TP_NONE;
	struct tp_cc *c = &p->ccs[p->nccs];
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
	p->cc_hash[at] = (uint32_t)++p->nccs;
	return (uint32_t)(p->nccs - 1);
}

int tp_node_add(struct time_profile *p, uint32_t cc, uint32_t parent, struct tp_node *n)
{
	if (p->nnodes >= TP_NONE - 1 ||
	    pf_grow((void **)&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*p->nodes)) != 0)
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
