/*
 * speedscope.c - writing speedscope's JSON file format (speedscope.h).
 *
 * A profile is speedscope's "evented" type: each call-tree node opened and
 * closed around its children, so the file grows with the tree, not with
 * the sum of its stacks' depths (speedscope's "sampled" type writes every
 * stack whole).  Strings go through safe_text_json_inert: the names
 * exactly as the profile spells them (one backslash is one; a byte that is
 * not UTF-8 is U+DC00 + byte), and the file itself valid JSON with every
 * control written as a \u escape.
 *
 * May call: flame.c (flame_values), time_profile.h's types, util/safe_text
 * (inert JSON).
 */
#include "config.h"

#include "speedscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "util/safe_text.h"

/* Children lists from the parent links (in the tree's own order): the
 * nodes come parents first but not depth-first in every reader. */
static int child_lists(const struct time_profile *p, uint32_t **first, uint32_t **next, uint32_t *roots)
{
	size_t n = p->nnodes ? p->nnodes : 1;
	*first = malloc(n * sizeof(**first));
	*next = malloc(n * sizeof(**next));
	if (!*first || !*next) {
		free(*first), free(*next);
		return -1;
	}
	*roots = TP_NONE;
	for (size_t i = 0; i < p->nnodes; i++)
		(*first)[i] = TP_NONE;
	for (size_t i = p->nnodes; i-- > 0;) {
		uint32_t up = p->nodes[i].parent;
		uint32_t *head = up == TP_NONE || up >= p->nnodes ? roots : &(*first)[up];
		(*next)[i] = *head;
		*head = (uint32_t)i;
	}
	return 0;
}

#define CLOSE_BIT 0x80000000u

/* One profile as speedscope's "evented" type: each call-tree node opened
 * at its start and closed at its end, depth first, its own value spent
 * after its children's.  Linear in the tree: a 20,000-deep chain written
 * as "sampled" stacks (each node's whole stack) took 457 MB. */
static int profile(FILE *f, const struct time_profile *p, enum flame_by by, const char *name)
{
	uint64_t *self, *total, sum = 0;
	uint32_t *first, *next, roots, *stack;
	if (p->nnodes >= CLOSE_BIT || flame_values(p, by, &self, &total) != 0)
		return -1;
	if (child_lists(p, &first, &next, &roots) != 0 ||
	    !(stack = malloc(2 * (p->nnodes ? p->nnodes : 1) * sizeof(*stack)))) {
		free(self), free(total);
		return -1;
	}
	/* Time in milliseconds when the tick length is known. */
	double unit = by == FLAME_TIME && p->tick_us > 0 ? p->tick_us / 1000.0 : 1;
	const char *units = by == FLAME_ALLOC ? "bytes" : p->tick_us > 0 ? "milliseconds" : "none";
	for (size_t i = 0; i < p->nnodes; i++)
		sum += self[i];
	fputs("{\"type\":\"evented\",\"name\":", f);
	safe_text_json_inert(f, name);
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.17g,\"events\":[", units,
	        (double)sum * unit);
	/* depth first with a stack of our own: a chain 100,000 deep is no
	 * recursion; each node is pushed once to open and once to close */
	size_t sp = 0;
	uint64_t at = 0;
	int first_event = 1;
	for (uint32_t r = roots; r != TP_NONE; r = next[r])
		stack[sp++] = r;
	/* roots in order: reverse what was pushed */
	for (size_t i = 0; i < sp / 2; i++) {
		uint32_t t = stack[i];
		stack[i] = stack[sp - 1 - i];
		stack[sp - 1 - i] = t;
	}
	while (sp > 0) {
		uint32_t e = stack[--sp], i = e & ~CLOSE_BIT;
		if (e & CLOSE_BIT) {
			at += self[i];
			fprintf(f, ",{\"type\":\"C\",\"frame\":%u,\"at\":%.17g}", p->nodes[i].cc, (double)at * unit);
			continue;
		}
		if (!total[i])
			continue;
		fprintf(f, "%s{\"type\":\"O\",\"frame\":%u,\"at\":%.17g}", first_event ? "" : ",", p->nodes[i].cc,
		        (double)at * unit);
		first_event = 0;
		stack[sp++] = i | CLOSE_BIT;
		size_t from = sp;
		for (uint32_t c = first[i]; c != TP_NONE; c = next[c])
			stack[sp++] = c;
		for (size_t k = 0; k < (sp - from) / 2; k++) {
			uint32_t t = stack[from + k];
			stack[from + k] = stack[sp - 1 - k];
			stack[sp - 1 - k] = t;
		}
	}
	fputs("]}", f);
	free(stack);
	free(first);
	free(next);
	free(self);
	free(total);
	return 0;
}

int speedscope_write(FILE *f, const struct time_profile *p, const char *name)
{
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"profdb (profsvc " PACKAGE_VERSION ")\",\"name\":",
	      f);
	safe_text_json_inert(f, name);
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < p->nccs; i++) {
		const struct tp_cc *c = &p->ccs[i];
		char *full = malloc(strlen(c->module) + strlen(c->name) + 2);
		if (!full)
			return -1;
		sprintf(full, "%s%s%s", c->module, c->module[0] ? "." : "", c->name);
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		safe_text_json_inert(f, full);
		free(full);
		if (c->src[0]) {
			fputs(",\"file\":", f);
			safe_text_json_inert(f, c->src);
		}
		fputc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	char label[600];
	snprintf(label, sizeof(label), "%s: time", name);
	int rc = profile(f, p, FLAME_TIME, label);
	fputc(',', f);
	snprintf(label, sizeof(label), "%s: allocation", name);
	rc |= profile(f, p, FLAME_ALLOC, label);
	fputs("]}\n", f);
	return rc || ferror(f) ? -1 : 0;
}
