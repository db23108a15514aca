/*
 * report_samples.c - a sampled run's Samples section (report_parts.h): how
 * the samples were taken (the view's sentence), the controls (a vCPU, focus
 * and ignore expressions), the places samples.js draws in (a strip of the
 * samples over time whose brushed range drives the rest, the flame graph
 * and the functions of the samples kept, the sandwich of a clicked
 * function), and the samples themselves as the script reads them: the
 * functions [name, bare name, module, source], the distinct stacks (leaf
 * first, as function indexes) and per sample its time (us since the first
 * BEGIN), vCPU, the time it stands for (ns) and its stack.  Guest text
 * goes in as inert JSON (safe_text_json_inert) or escaped markup.
 *
 * May call: report_parts.h, profile/samples/samples.h,
 * profile/samples/samples_int.h (the functions, as the exports group
 * them), util/id_index, util/grow.h, util/safe_text.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "profile/samples/samples.h"
#include "profile/samples/samples_int.h"
#include "report_parts.h"
#include "util/grow.h"
#include "util/id_index.h"
#include "util/safe_text.h"

/* ---- distinct stacks of functions, each sample's found ----------------------------- */

struct stacks {
	uint32_t *ids; /* every stack's functions, back to back */
	size_t nids, ids_cap;
	struct { size_t at; uint32_t depth; } *s;
	size_t n, cap;
	struct id_index idx;
};

static uint64_t seq_hash(const uint32_t *ids, uint32_t depth)
{
	return id_index_hash(ID_INDEX_SEED, ids, depth * sizeof(*ids));
}

static uint64_t stack_hash_of(const void *ctx, uint32_t id)
{
	const struct stacks *st = ctx;
	return seq_hash(st->ids + st->s[id - 1].at, st->s[id - 1].depth);
}

struct seq_key {
	const struct stacks *st;
	const uint32_t *ids;
	uint32_t depth;
};

static int stack_is(const void *ctx, uint32_t id)
{
	const struct seq_key *k = ctx;
	const struct stacks *st = k->st;
	return st->s[id - 1].depth == k->depth &&
	       !memcmp(st->ids + st->s[id - 1].at, k->ids, k->depth * sizeof(*k->ids));
}

/* The stack's index (added when new), or UINT32_MAX when out of memory. */
static uint32_t stack_of(struct stacks *st, const uint32_t *ids, uint32_t depth)
{
	struct seq_key key = {st, ids, depth};
	size_t at;
	if (id_index_reserve(&st->idx, stack_hash_of, st) != 0)
		return UINT32_MAX;
	uint32_t id = id_index_find(&st->idx, seq_hash(ids, depth), stack_is, &key, &at);
	if (id)
		return id - 1;
	if (st->n >= UINT32_MAX - 1 || GROW(st->s, st->cap, st->n + 1) || GROW(st->ids, st->ids_cap, st->nids + depth))
		return UINT32_MAX;
	memcpy(st->ids + st->nids, ids, depth * sizeof(*ids));
	st->s[st->n].at = st->nids;
	st->s[st->n].depth = depth;
	st->nids += depth;
	id_index_put(&st->idx, at, (uint32_t)++st->n);
	return (uint32_t)st->n - 1;
}

static void stacks_free(struct stacks *st)
{
	free(st->ids);
	free(st->s);
	id_index_free(&st->idx);
}

/* ---- the data -------------------------------------------------------------------- */

static void json_fns(FILE *f, const struct samples_funcs *fs)
{
	const struct samples_profile *p = fs->p;
	fputs("\"fns\":[", f);
	for (size_t i = 0; i < fs->n; i++) {
		const struct samples_frame *fr = &p->frames[fs->first[i]];
		char *label = samples_raw_label(fr), *src = NULL;
		if (fs->lined[i] != SAMPLES_NO_FRAME) {
			const struct samples_frame *l = &p->frames[fs->lined[i]];
			size_t n = strlen(l->file) + 16;
			if ((src = malloc(n)) != NULL)
				snprintf(src, n, "%s:%u", l->file, l->line);
		}
		fputs(i ? ",[" : "[", f);
		safe_text_json_inert(f, label ? label : "");
		fputc(',', f);
		safe_text_json_inert(f, fr->name[0] ? fr->name : label ? label : "");
		fputc(',', f);
		safe_text_json_inert(f, fr->module);
		fputc(',', f);
		safe_text_json_inert(f, src ? src : "");
		fputc(']', f);
		free(label);
		free(src);
	}
	fputc(']', f);
}

/* The stacks, then each sample's time, vCPU, ns and stack.  0 or -1. */
static int json_samples(FILE *f, const struct samples_profile *p, const struct samples_funcs *fs)
{
	struct stacks st = {0};
	uint32_t seq[SAMPLES_MAX_DEPTH];
	uint32_t *of = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*of));
	int rc = of ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		uint32_t d = s->depth <= SAMPLES_MAX_DEPTH ? s->depth : SAMPLES_MAX_DEPTH;
		for (uint32_t k = 0; k < d; k++)
			seq[k] = fs->of_frame[p->pool[s->at + k]];
		if ((of[i] = stack_of(&st, seq, d)) == UINT32_MAX)
			rc = -1;
	}
	if (rc == 0) {
		fputs(",\"stacks\":[", f);
		for (size_t i = 0; i < st.n; i++) {
			fputs(i ? ",[" : "[", f);
			for (uint32_t k = 0; k < st.s[i].depth; k++)
				fprintf(f, k ? ",%u" : "%u", st.ids[st.s[i].at + k]);
			fputc(']', f);
		}
		static const char *const keys[] = {"t", "v", "w", "k"};
		for (int c = 0; c < 4; c++) {
			fprintf(f, "],\"%s\":[", keys[c]);
			for (size_t i = 0; i < p->nsamples; i++) {
				const struct samples_sample *s = &p->samples[i];
				unsigned long long v = c == 0 ? s->t_ns / 1000 : c == 1 ? s->vcpu : c == 2 ? s->ns : of[i];
				fprintf(f, i ? ",%llu" : "%llu", v);
			}
		}
		fputc(']', f);
	}
	free(of);
	stacks_free(&st);
	return rc;
}

int report_samples_html(FILE *f, const struct report_input *in)
{
	const struct samples_profile *p = in->samples;
	struct samples_funcs fs;
	if (samples_funcs_build(&fs, p) != 0)
		return -1;
	fputs("<section id=\"samples\"><h2>Samples</h2>\n<p class=\"note\" id=\"samples-how\">", f);
	markup_text(f, in->samples_how ? in->samples_how : "");
	fputs("</p>\n<div class=\"tools\" id=\"samples-tools\"><label>vCPU <select id=\"samples-vcpu\">"
	      "<option value=\"-1\">all</option>",
	      f);
	for (uint32_t i = 0; i < p->vcpus && i < 256; i++)
		fprintf(f, "<option value=\"%u\">%u</option>", i, i);
	fputs("</select></label> <input id=\"samples-focus\" type=\"search\" placeholder=\"focus: regex\" "
	      "aria-label=\"focus\"> <input id=\"samples-ignore\" type=\"search\" placeholder=\"ignore: regex\" "
	      "aria-label=\"ignore\"> <button id=\"samples-all\">whole run</button></div>\n"
	      "<p class=\"note\" id=\"samples-status\"></p>\n"
	      "<div id=\"samples-strip\" title=\"drag to choose a time range\"></div>\n"
	      "<h3>Flame graph of the samples kept</h3><div id=\"samples-flame\"></div>\n"
	      "<h3>Functions</h3><div class=\"scroll\"><table id=\"samples-table\" class=\"top\"><thead><tr>"
	      "<th>function</th><th>module</th><th class=\"num\">self</th><th class=\"num\">total</th>"
	      "<th class=\"num\">self%</th><th class=\"num\">total%</th><th>source</th></tr></thead>"
	      "<tbody></tbody></table></div>\n"
	      "<div id=\"samples-sandwich\"></div></section>\n"
	      "<script type=\"application/json\" id=\"samples-data\">{",
	      f);
	fprintf(f, "\"hz\":%u,\"vcpus\":%u,", p->hz, p->vcpus);
	json_fns(f, &fs);
	int rc = json_samples(f, p, &fs);
	fputs("}</script>\n", f);
	samples_funcs_free(&fs);
	return rc;
}
