/*
 * prof_model.c - the time-profile model (time_profile.h): the cost-centre
 * table, the call tree, feeding bytes to the text or JSON reader (chosen
 * by the first byte that is not white space), and the inherited totals.
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

void tp_init(struct time_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->line_no = 1;
}

void tp_free(struct time_profile *p)
{
	tp_json_free(p);
	free(p->title);
	free(p->command);
	for (size_t i = 0; i < p->nccs; i++) {
		free(p->ccs[i].name);
		free(p->ccs[i].module);
		free(p->ccs[i].src);
	}
	free(p->ccs);
	free(p->nodes);
	free(p->lines.buf);
	free(p->stack);
	free(p->cc_hash);
	memset(p, 0, sizeof(*p));
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

/* ---- feeding ------------------------------------------------------------------ */

static int line_done(void *ctx, char *line, size_t len)
{
	struct time_profile *p = ctx;
	if (tp_text_line(p, line, len) != 0)
		return -1;
	p->line_no++;
	return 0;
}

static int feed_known(struct time_profile *p, const char *d, size_t len)
{
	if (p->format == TP_JSON)
		return tp_json_feed(p, d, len);
	int rc = pf_lines_feed(&p->lines, &p->fed, TP_MAX_LINE, d, len, line_done, p);
	if (rc == PF_TOO_LONG)
		return tp_fail(p, "a line longer than %u bytes", TP_MAX_LINE);
	if (rc == PF_NO_MEMORY)
		return tp_fail(p, "out of memory");
	return rc ? -1 : 0;
}

int tp_feed(struct time_profile *p, const void *data, size_t len)
{
	const char *d = data;
	if (p->failed)
		return -1;
	if (p->format != TP_UNKNOWN)
		return feed_known(p, d, len);
	/* The format is told by the first byte that is not white space; until
	 * it comes, white space waits in the line buffer, to be read as the
	 * format reads it (so pieces of any size parse alike). */
	size_t i = 0;
	while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r' ||
	                   d[i] == '\v' || d[i] == '\f'))
		i++;
	if (p->lines.len + i > TP_MAX_LINE)
		return tp_fail(p, "more than %u bytes of white space", TP_MAX_LINE);
	if (pf_grow((void **)&p->lines.buf, &p->lines.cap, p->lines.len + i + 1, 1) != 0)
		return tp_fail(p, "out of memory");
	memcpy(p->lines.buf + p->lines.len, d, i);
	p->lines.len += i;
	if (i == len)
		return 0;
	p->format = d[i] == '{' ? TP_JSON : TP_TEXT;
	char *held = p->lines.buf;
	size_t nheld = p->lines.len;
	p->lines = (struct pf_lines){0};
	int rc = feed_known(p, held, nheld);
	free(held);
	return rc ? rc : feed_known(p, d + i, len - i);
}

int tp_finish(struct time_profile *p)
{
	if (p->failed || p->finished)
		return p->failed ? -1 : 0;
	if (p->format == TP_TEXT && p->lines.len) {
		p->lines.buf[p->lines.len] = '\0';
		if (tp_text_line(p, p->lines.buf, p->lines.len) != 0)
			return -1;
		p->lines.len = 0;
	}
	if (p->format == TP_JSON && tp_json_finish(p) != 0)
		return -1;
	p->finished = 1;
	if (p->nnodes == 0)
		return tp_fail(p, p->format == TP_UNKNOWN ? "the time profile is empty"
		                                          : "not a GHC time profile (.prof): no call tree");
	/* Inherited ticks and bytes: children come after their parent. */
	for (size_t i = 0; i < p->nnodes; i++) {
		p->nodes[i].inh_ticks = p->nodes[i].ticks;
		p->nodes[i].inh_bytes = p->nodes[i].bytes;
	}
	for (size_t i = p->nnodes; i-- > 0;) {
		struct tp_node *n = &p->nodes[i];
		if (n->parent == TP_NONE)
			continue;
		struct tp_node *up = &p->nodes[n->parent];
		up->inh_ticks = up->inh_ticks > UINT64_MAX - n->inh_ticks ? UINT64_MAX
		                                                          : up->inh_ticks + n->inh_ticks;
		up->inh_bytes = up->inh_bytes > UINT64_MAX - n->inh_bytes ? UINT64_MAX
		                                                          : up->inh_bytes + n->inh_bytes;
	}
	/* JSON gives ticks and bytes only: percentages from the totals. */
	if (p->format == TP_JSON)
		for (size_t i = 0; i < p->nnodes; i++) {
			struct tp_node *n = &p->nodes[i];
			double tt = p->total_ticks ? (double)p->total_ticks : 1;
			double ta = p->total_alloc ? (double)p->total_alloc : 1;
			n->time = 100.0 * (double)n->ticks / tt;
			n->alloc = 100.0 * (double)n->bytes / ta;
			n->inh_time = 100.0 * (double)n->inh_ticks / tt;
			n->inh_alloc = 100.0 * (double)n->inh_bytes / ta;
		}
	return 0;
}
