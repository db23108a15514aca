/*
 * fuzz_prof.c - libFuzzer target for the time-profile readers (text and
 * -pj JSON, profile/prof/time_profile.h) and the ranking: any bytes, fed whole
 * and in pieces of a size the input picks, give the same tree or the same
 * error (and the same decision on GHC's table of top cost centres); a
 * tree's parents come before their children; the ranking counts every
 * node's individual figures exactly once, and by time or alloc puts the
 * cost centres GHC's table lists first, each once, in the table's rows.
 */
#include "config.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/prof/time_profile.h"

static int parse(struct time_profile *p, const uint8_t *d, size_t n, size_t piece)
{
	tp_init(p);
	for (size_t at = 0; at < n; at += piece)
		if (tp_feed(p, d + at, n - at < piece ? n - at : piece) != 0)
			return -1;
	return tp_finish(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t piece = data[0];
	data++;
	size--;
	struct time_profile a, b;
	int ra = parse(&a, data, size, size ? size : 1);
	int rb = parse(&b, data, size, 1 + piece % 97);
	assert(ra == rb);
	assert(strcmp(tp_error(&a), tp_error(&b)) == 0);
	assert(a.nnodes == b.nnodes && a.nccs == b.nccs);
	assert(a.table == b.table && a.nlisted == b.nlisted && !strcmp(a.table_note, b.table_note));
	if (ra == 0) {
		uint64_t entries = 0;
		for (size_t i = 0; i < a.nnodes; i++) {
			const struct tp_node *n = &a.nodes[i];
			assert(n->cc < a.nccs);
			assert(n->parent == TP_NONE || n->parent < i);
			assert(n->parent == TP_NONE ? n->depth == 0 : n->depth == a.nodes[n->parent].depth + 1);
			assert(n->inh_ticks >= n->ticks && n->inh_bytes >= n->bytes);
			entries = entries > UINT64_MAX - n->entries ? UINT64_MAX : entries + n->entries;
		}
		size_t nrows;
		struct tp_row *rows = tp_rank(&a, (enum tp_by)(piece % 5), NULL, &nrows);
		assert(rows || a.nccs == 0);
		uint64_t sum = 0;
		size_t stacks = 0, listed = 0;
		enum tp_by by = (enum tp_by)(piece % 5);
		for (size_t i = 0; i < nrows; i++) {
			sum = sum > UINT64_MAX - rows[i].entries ? UINT64_MAX : sum + rows[i].entries;
			stacks += rows[i].stacks;
			assert(rows[i].stacks || rows[i].listed);
			assert(!rows[i].listed || (a.table == TP_TABLE_USED && rows[i].listed <= a.nlisted));
			if (rows[i].listed)
				listed++;
			if (by == TP_BY_TIME || by == TP_BY_ALLOC) /* GHC's first */
				assert(!rows[i].listed || i == 0 || rows[i - 1].listed);
		}
		assert(stacks == a.nnodes && nrows <= a.nccs);
		assert(listed == a.nlisted);
		assert(a.table == TP_TABLE_USED ? a.nlisted > 0 : a.nlisted == 0);
		assert(sum == entries || entries == UINT64_MAX || sum == UINT64_MAX);
		free(rows);
	}
	tp_free(&a);
	tp_free(&b);
	return 0;
}
