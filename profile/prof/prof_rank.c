/*
 * prof_rank.c - cost centres ranked over all their call stacks
 * (time_profile.h, tp_rank): what `profdb top` shows.
 *
 * Self %time and %alloc are the best the profile has: GHC's table of top
 * cost centres where it lists one (prof_table.c: GHC's own sums, rounded
 * once), else the ticks and bytes over the totals where the profile has
 * them (-P, -pj), else the sum of the stacks' percentages (-p: each
 * rounded to 0.1, so off by up to 0.05 a stack).  By time or alloc the
 * listed cost centres come first, in GHC's order, then the others: GHC
 * left those out as under 1% of both, so a listed 0.2% that allocates
 * 4% stays above an unlisted 0.9% (whose 0.9 is a sum of roundings).
 *
 * Inherited figures are taken from the outermost stacks of a cost centre
 * only: a recursive function's inner stacks are already inside its outer
 * ones, and summing both would give more than 100%.  They are the tree's
 * (GHC's table has none).
 *
 * May call: the model's types (time_profile.h), libc.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "time_profile.h"

static enum tp_by sort_by;
static const struct time_profile *sort_p;

static double key(const struct tp_row *r)
{
	switch (sort_by) {
	case TP_BY_ALLOC: return r->alloc;
	case TP_BY_ENTRIES: return (double)r->entries;
	case TP_BY_INH_TIME: return r->inh_time;
	case TP_BY_INH_ALLOC: return r->inh_alloc;
	case TP_BY_TIME: break;
	}
	return r->time;
}

/* The exact figure behind time or alloc, where the profile has one. */
static uint64_t exact(const struct tp_row *r)
{
	return sort_by == TP_BY_ALLOC ? r->bytes : r->ticks;
}

static int by_key(const void *a, const void *b)
{
	const struct tp_row *x = a, *y = b;
	int self = sort_by == TP_BY_TIME || sort_by == TP_BY_ALLOC;
	if (self && !x->listed != !y->listed)
		return x->listed ? -1 : 1;
	double kx = key(x), ky = key(y);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	/* ties: the ticks or bytes, GHC's order, the other figure, then the
	 * name, so the order is stable */
	if (self && exact(x) != exact(y))
		return exact(x) > exact(y) ? -1 : 1;
	if (self && x->listed != y->listed)
		return x->listed < y->listed ? -1 : 1;
	double ox = sort_by == TP_BY_ALLOC ? x->time : x->alloc, oy = sort_by == TP_BY_ALLOC ? y->time : y->alloc;
	if (ox != oy)
		return ox > oy ? -1 : 1;
	const struct tp_cc *cx = &sort_p->ccs[x->cc], *cy = &sort_p->ccs[y->cc];
	int c = strcmp(cx->name, cy->name);
	if (!c)
		c = strcmp(cx->module, cy->module);
	return c ? c : strcmp(cx->src, cy->src);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct tp_row *tp_rank(const struct time_profile *p, enum tp_by by, const char *module, size_t *n)
{
	struct tp_row *rows = calloc(p->nccs ? p->nccs : 1, sizeof(*rows));
	uint32_t *open = calloc(p->nccs ? p->nccs : 1, sizeof(*open));
	uint32_t *stack = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*stack));
	size_t depth = 0;

	*n = 0;
	if (!rows || !open || !stack) {
		free(rows);
		free(open);
		free(stack);
		return NULL;
	}
	for (size_t i = 0; i < p->nccs; i++)
		rows[i].cc = (uint32_t)i;
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct tp_node *nd = &p->nodes[i];
		/* leave the stacks this node is not inside */
		while (depth && p->nodes[stack[depth - 1]].depth >= nd->depth)
			open[p->nodes[stack[--depth]].cc]--;
		struct tp_row *r = &rows[nd->cc];
		r->entries = sat_add(r->entries, nd->entries);
		r->ticks = sat_add(r->ticks, nd->ticks);
		r->bytes = sat_add(r->bytes, nd->bytes);
		r->time += nd->time;
		r->alloc += nd->alloc;
		r->stacks++;
		if (open[nd->cc] == 0) {
			r->inh_time += nd->inh_time;
			r->inh_alloc += nd->inh_alloc;
			r->inh_ticks = sat_add(r->inh_ticks, nd->inh_ticks);
			r->inh_bytes = sat_add(r->inh_bytes, nd->inh_bytes);
		}
		open[nd->cc]++;
		stack[depth++] = (uint32_t)i;
	}
	/* the self figures: GHC's table's, else from ticks and bytes */
	int ticks = p->has_ticks || p->format == TP_JSON;
	for (size_t i = 0; i < p->nccs; i++) {
		struct tp_row *r = &rows[i];
		const struct tp_cc *c = &p->ccs[i];
		if (p->table == TP_TABLE_USED && c->listed) {
			r->listed = c->listed;
			r->time = c->listed_time;
			r->alloc = c->listed_alloc;
			continue;
		}
		if (ticks && p->total_ticks)
			r->time = 100.0 * (double)r->ticks / (double)p->total_ticks;
		if (ticks && p->total_alloc)
			r->alloc = 100.0 * (double)r->bytes / (double)p->total_alloc;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nccs; i++)
		if ((rows[i].stacks || rows[i].listed) && (!module || !strcmp(p->ccs[i].module, module)))
			rows[k++] = rows[i];
	sort_by = by;
	sort_p = p;
	qsort(rows, k, sizeof(*rows), by_key);
	free(open);
	free(stack);
	*n = k;
	return rows;
}
