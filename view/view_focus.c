/*
 * view_focus.c - focus and ignore over function names (view_focus.h):
 * the expressions compiled, a name tested, a time profile's call tree cut
 * to the stacks kept.
 *
 * May call: profile/prof/time_profile.h, view_focus.h, libc.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/prof/time_profile.h"
#include "view_focus.h"

void view_focus_init(struct view_focus *f)
{
	memset(f, 0, sizeof(*f));
}

void view_focus_free(struct view_focus *f)
{
	for (size_t i = 0; i < f->nfocus; i++)
		regfree(&f->focus[i]);
	for (size_t i = 0; i < f->nignore; i++)
		regfree(&f->ignore[i]);
	view_focus_init(f);
}

int view_focus_add(struct view_focus *f, int ignore, const char *re, char *err, size_t errlen)
{
	size_t *n = ignore ? &f->nignore : &f->nfocus;
	regex_t *r = ignore ? &f->ignore[*n] : &f->focus[*n];
	if (*n >= VIEW_FOCUS_MAX) {
		snprintf(err, errlen, "more than %d %s expressions", VIEW_FOCUS_MAX, ignore ? "ignore" : "focus");
		return -1;
	}
	int rc = regcomp(r, re, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, r, err, errlen);
		return -1;
	}
	(ignore ? f->ignore_src : f->focus_src)[(*n)++] = re;
	return 0;
}

int view_focus_any(const struct view_focus *f)
{
	return f && (f->nfocus || f->nignore);
}

int view_focus_match(const struct view_focus *f, int ignore, const char *name, const char *module)
{
	size_t n = ignore ? f->nignore : f->nfocus;
	const regex_t *rs = ignore ? f->ignore : f->focus;
	char both[1024], *full = NULL;
	if (module && module[0]) {
		size_t len = strlen(module) + strlen(name) + 2;
		full = len <= sizeof(both) ? both : malloc(len);
		if (full) {
			size_t m = strlen(module);
			memcpy(full, module, m);
			full[m] = '.';
			memcpy(full + m + 1, name, strlen(name) + 1);
		}
	}
	int hit = 0;
	for (size_t i = 0; i < n && !hit; i++)
		hit = regexec(&rs[i], name, 0, NULL, 0) == 0 || (full && regexec(&rs[i], full, 0, NULL, 0) == 0);
	if (full != both)
		free(full);
	return hit;
}

/* Which nodes keep their own figures: their stack has a focus match (or
 * there is no focus) and no ignore match.  Parents come before children. */
static void mark_kept(const struct view_focus *f, const struct time_profile *p, uint8_t *kept)
{
	uint8_t *cc = calloc(p->nccs ? p->nccs : 1, 1); /* bit 1: focus match, 2: ignore match */
	for (size_t i = 0; cc && i < p->nccs; i++)
		cc[i] = (uint8_t)((f->nfocus && view_focus_match(f, 0, p->ccs[i].name, p->ccs[i].module) ? 1 : 0) |
		                  (view_focus_match(f, 1, p->ccs[i].name, p->ccs[i].module) ? 2 : 0));
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct tp_node *nd = &p->nodes[i];
		uint8_t up = nd->parent == TP_NONE ? (f->nfocus ? 0 : 1) : kept[nd->parent] & 3;
		/* bits: 1 a focus match on the stack (or no focus), 2 an ignore match */
		kept[i] = (uint8_t)(up | (cc ? cc[nd->cc] : 0));
	}
	free(cc);
}

int view_focus_profile(const struct view_focus *f, struct time_profile *p, double *kept_pct)
{
	size_t n = p->nnodes;
	uint8_t *mark = calloc(n ? n : 1, 1);
	uint32_t *to = malloc((n ? n : 1) * sizeof(*to));
	if (!mark || !to) {
		free(mark);
		free(to);
		return -1;
	}
	mark_kept(f, p, mark);
	int ticks = p->has_ticks || p->format == TP_JSON;
	double all = 0, kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct tp_node *nd = &p->nodes[i];
		double v = ticks ? (double)nd->ticks : nd->time;
		all += v;
		if ((mark[i] & 3) == 1) {
			kept += v;
			mark[i] = 4; /* kept, and so needed */
		} else {
			mark[i] = 0;
			nd->ticks = nd->bytes = nd->entries = 0;
			nd->time = nd->alloc = 0;
		}
	}
	for (size_t i = n; i-- > 0;) /* a node is needed when a kept one is at or under it */
		if (mark[i] && p->nodes[i].parent != TP_NONE)
			mark[p->nodes[i].parent] |= 8;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!mark[i])
			continue;
		struct tp_node nd = p->nodes[i];
		nd.parent = nd.parent == TP_NONE ? TP_NONE : to[nd.parent];
		to[i] = (uint32_t)k;
		p->nodes[k++] = nd;
	}
	p->nnodes = k;
	for (size_t i = 0; i < k; i++) {
		struct tp_node *nd = &p->nodes[i];
		nd->inh_ticks = nd->ticks;
		nd->inh_bytes = nd->bytes;
		nd->inh_time = nd->time;
		nd->inh_alloc = nd->alloc;
	}
	for (size_t i = k; i-- > 0;) {
		struct tp_node *nd = &p->nodes[i];
		if (nd->parent == TP_NONE)
			continue;
		struct tp_node *up = &p->nodes[nd->parent];
		up->inh_ticks += nd->inh_ticks;
		up->inh_bytes += nd->inh_bytes;
		up->inh_time += nd->inh_time;
		up->inh_alloc += nd->inh_alloc;
	}
	p->table = TP_TABLE_NONE;
	p->nlisted = 0;
	for (size_t i = 0; i < p->nccs; i++)
		p->ccs[i].listed = 0;
	*kept_pct = all > 0 ? 100.0 * kept / all : 0;
	free(mark);
	free(to);
	return 0;
}
