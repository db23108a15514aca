/*
 * prof_table.c - GHC's table of top cost centres, the one at the head of
 * a text .prof (time_profile.h): its rows as prof_text.c reads them, and
 * at the end (tp_finish) the table checked against the call tree, then
 * taken or set aside.
 *
 * Why it matters: GHC writes each call stack's %time and %alloc rounded
 * to 0.1, so a cost centre's sum over its stacks drifts by up to 0.05 a
 * stack (2.7 points over the 28,057 stacks of one real profile), while
 * the table's figures are GHC's own sums of exact ticks and words,
 * rounded once.  GHC 9.0 (rts/ProfilerReport.c) lists a cost centre when
 * its ticks are over total_ticks / 100 or its words over total_words /
 * 100 (integer division), everything with -pa/-Pa (even cost centres no
 * call reached, which are in no stack), sorted by ticks, ties in its own
 * order; without -a it leaves out its own GC, OVERHEAD_of, SYSTEM, IDLE
 * and DONT_CARE, which the tree then leaves out too.
 *
 * What wins: the table is taken only when it is the tree's.  It is set
 * aside, and every figure comes from the tree, when a row is malformed,
 * it lists a cost centre twice, it lists one with some time or
 * allocation that no stack has, a row's figures are not its stacks' (the
 * ticks and bytes exactly, with -P; the percentages within the rounding
 * of the stacks: 0.05 each, and 0.05 for the row), or a cost centre it
 * leaves out is over GHC's threshold by the tree (the table was cut).
 * A profile with no table, or an empty one, ranks by the tree as before.
 * None of this is an error: the parse goes on, and table_note says why.
 *
 * May call: the model (prof_model.c), util/grow.h.  Called by prof_text.c
 * (the rows), prof_feed.c (tp_finish, tp_free).
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time_profile.h"
#include "util/grow.h"

void tp_table_free_rows(struct time_profile *p)
{
	for (size_t i = 0; i < p->ntrows; i++) {
		free(p->trows[i].name);
		free(p->trows[i].module);
		free(p->trows[i].src);
	}
	free(p->trows);
	p->trows = NULL;
	p->ntrows = p->trows_cap = 0;
}

void tp_table_set_aside(struct time_profile *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->table_note, sizeof(p->table_note), fmt, ap);
	va_end(ap);
	p->table = TP_TABLE_IGNORED;
	p->nlisted = 0;
	for (size_t i = 0; i < p->nccs; i++)
		p->ccs[i].listed = 0;
	tp_table_free_rows(p);
}

int tp_table_add(struct time_profile *p, const char *name, const char *module, const char *src,
                 const struct tp_table_row *figures)
{
	if (p->ntrows >= TP_NONE - 1 ||
	    GROW(p->trows, p->trows_cap, p->ntrows + 1) != 0)
		return -1;
	struct tp_table_row *r = &p->trows[p->ntrows];
	*r = *figures;
	r->name = strdup(name);
	r->module = strdup(module);
	r->src = strdup(src);
	if (!r->name || !r->module || !r->src) {
		free(r->name);
		free(r->module);
		free(r->src);
		return -1;
	}
	p->ntrows++;
	return 0;
}

/* A cost centre's figures by the tree: its stacks' sums. */
struct tree_sum {
	double time, alloc;
	uint64_t ticks, bytes;
	size_t stacks;
	uint32_t row; /* 1 + the table's row that lists it, or 0 */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Within the rounding of n stacks and of the table's own figure. */
static int near(double table, double tree, size_t n)
{
	return fabs(table - tree) <= 0.05 * (double)(n + 1) + 0.001;
}

/* The table's row r against the stacks of the cost centre it names (s,
 * or NULL when no stack has it): 0 when they agree, else -1 with the
 * table set aside. */
static int row_agrees(struct time_profile *p, const struct tp_table_row *r, const struct tree_sum *s,
                      int ticks)
{
	unsigned long long line = (unsigned long long)r->line_no;
	if (!s) {
		if (r->time == 0 && r->alloc == 0 && r->ticks == 0 && r->bytes == 0)
			return 0; /* -pa: a cost centre no call reached */
		tp_table_set_aside(p, "GHC's table of top cost centres lists a cost centre no call stack "
		                      "has (line %llu)", line);
		return -1;
	}
	if (s->row) {
		tp_table_set_aside(p, "GHC's table of top cost centres lists a cost centre twice (line %llu)",
		                   line);
		return -1;
	}
	int ok = near(r->time, s->time, s->stacks) && near(r->alloc, s->alloc, s->stacks);
	if (ticks) {
		ok = ok && r->ticks == s->ticks && r->bytes == s->bytes;
		if (p->total_ticks)
			ok = ok && near(r->time, 100.0 * (double)s->ticks / (double)p->total_ticks, 0);
		if (p->total_alloc)
			ok = ok && near(r->alloc, 100.0 * (double)s->bytes / (double)p->total_alloc, 0);
	}
	if (!ok)
		tp_table_set_aside(p, "GHC's table of top cost centres is not what the call tree sums to "
		                      "(line %llu)", line);
	return ok ? 0 : -1;
}

/* A cost centre the table leaves out must be under GHC's threshold. */
static int left_out_fits(const struct time_profile *p, const struct tree_sum *s)
{
	if (p->has_ticks)
		return (!p->total_ticks || s->ticks <= p->total_ticks / 100) &&
		       (!p->total_alloc || s->bytes <= p->total_alloc / 100);
	return s->time <= 1.0 + 0.05 * (double)s->stacks + 0.001 &&
	       s->alloc <= 1.0 + 0.05 * (double)s->stacks + 0.001;
}

/* The table checked against the tree, and taken (the listed cost centres
 * marked) or set aside.  Its rows are freed. */
static int check_and_take(struct time_profile *p)
{
	struct tree_sum *sum = calloc(p->nccs ? p->nccs : 1, sizeof(*sum));
	uint32_t *cc = malloc(p->ntrows * sizeof(*cc));
	int rc = 0;
	if (!sum || !cc) {
		rc = tp_fail(p, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct tp_node *n = &p->nodes[i];
		struct tree_sum *s = &sum[n->cc];
		s->time += n->time;
		s->alloc += n->alloc;
		s->ticks = sat_add(s->ticks, n->ticks);
		s->bytes = sat_add(s->bytes, n->bytes);
		s->stacks++;
	}
	int ticks = p->has_ticks && p->table_numbers == 4;
	for (size_t i = 0; i < p->ntrows; i++) {
		const struct tp_table_row *r = &p->trows[i];
		cc[i] = tp_cc_find(p, r->name, r->module, r->src);
		struct tree_sum *s = cc[i] != TP_NONE && sum[cc[i]].stacks ? &sum[cc[i]] : NULL;
		if (row_agrees(p, r, s, ticks) != 0)
			goto out;
		if (s)
			s->row = (uint32_t)i + 1;
	}
	for (size_t i = 0; i < p->nccs; i++)
		if (sum[i].stacks && !sum[i].row && !left_out_fits(p, &sum[i])) {
			tp_table_set_aside(p, "GHC's table of top cost centres leaves out a cost centre over "
			                      "1%% of the time or of the allocation: it was cut or edited");
			goto out;
		}
	/* Taken: the cost centres no call reached are made now, after the
	 * tree's; a name listed twice among those is found here. */
	for (size_t i = 0; i < p->ntrows; i++) {
		const struct tp_table_row *r = &p->trows[i];
		uint32_t c = cc[i];
		if (c == TP_NONE || !sum[c].stacks) {
			c = tp_cc_get(p, r->name, r->module, r->src, !strcmp(r->name, "CAF"), -1);
			if (c == TP_NONE) {
				rc = tp_fail(p, "out of memory");
				goto out;
			}
			if (p->ccs[c].listed) {
				tp_table_set_aside(p, "GHC's table of top cost centres lists a cost centre "
				                      "twice (line %llu)",
				                   (unsigned long long)r->line_no);
				goto out;
			}
		}
		p->ccs[c].listed = (uint32_t)i + 1;
		p->ccs[c].listed_time = r->time;
		p->ccs[c].listed_alloc = r->alloc;
	}
	p->table = TP_TABLE_USED;
	p->nlisted = p->ntrows;
out:
	free(sum);
	free(cc);
	tp_table_free_rows(p);
	return rc;
}

int tp_table_finish(struct time_profile *p)
{
	if (p->format != TP_TEXT || p->table == TP_TABLE_IGNORED || p->ntrows == 0) {
		tp_table_free_rows(p);
		return 0;
	}
	return check_and_take(p);
}
