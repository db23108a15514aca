/*
 * view_sampled.c - a run's stack samples shown as samples (view_sampled.h):
 * how they were taken, the functions of a selection of them, one
 * function's sandwich, and their JSON.
 *
 * May call: profile/samples/samples.h, profile/samples/samples_int.h,
 * view_focus.h, view_json.h, jansson.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/samples/samples.h"
#include "profile/samples/samples_int.h"
#include "view_focus.h"
#include "view_json.h"
#include "view_sampled.h"

void view_sampling_of(const struct samples_profile *p, struct view_sampling *out)
{
	memset(out, 0, sizeof(*out));
	out->hz_asked = out->hz_kept = p->hz;
	out->samples = p->nsamples;
	out->lost = p->lost;
	out->vcpus = p->vcpus;
	out->segments = p->segments;
	size_t cpu = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		if (s->hz && s->hz < out->hz_kept)
			out->hz_kept = s->hz;
		if (s->t_ns > out->span_ns)
			out->span_ns = s->t_ns;
		out->total_ns += s->ns;
		cpu += s->cpu_time != 0;
	}
	out->cpu_time = p->nsamples && cpu == p->nsamples;
	out->some_cpu_time = cpu > 0;
}

void view_sampled_free(struct view_sampled *s)
{
	for (size_t i = 0; s->fns && i < s->nfns; i++) {
		free(s->fns[i].name);
		free(s->fns[i].bare);
		free(s->fns[i].src);
	}
	free(s->fns);
	free(s->fn_of_frame);
	free(s->rows);
	free(s->kept);
	memset(s, 0, sizeof(*s));
}

/* The functions, as the exports group frames into them. */
static int functions(struct view_sampled *s, const struct samples_profile *p)
{
	struct samples_funcs fs;
	if (samples_funcs_build(&fs, p) != 0)
		return -1;
	s->fns = calloc(fs.n ? fs.n : 1, sizeof(*s->fns));
	s->fn_of_frame = malloc((p->nframes ? p->nframes : 1) * sizeof(uint32_t));
	int rc = s->fns && s->fn_of_frame ? 0 : -1;
	if (rc == 0)
		memcpy(s->fn_of_frame, fs.of_frame, p->nframes * sizeof(uint32_t));
	for (size_t i = 0; rc == 0 && i < fs.n; i++) {
		const struct samples_frame *fr = &p->frames[fs.first[i]];
		struct view_fn *f = &s->fns[i];
		s->nfns = i + 1;
		f->name = samples_raw_label(fr);
		f->bare = strdup(fr->name[0] ? fr->name : "");
		f->module = fr->module;
		size_t n = fs.lined[i] == SAMPLES_NO_FRAME ? 1 : strlen(p->frames[fs.lined[i]].file) + 16;
		if (!f->name || !f->bare || !(f->src = malloc(n))) {
			rc = -1;
			break;
		}
		f->src[0] = '\0';
		if (fs.lined[i] != SAMPLES_NO_FRAME)
			snprintf(f->src, n, "%s:%u", p->frames[fs.lined[i]].file, p->frames[fs.lined[i]].line);
		if (!f->bare[0]) {
			free(f->bare);
			f->bare = strdup(f->name);
			if (!f->bare)
				rc = -1;
		}
	}
	samples_funcs_free(&fs);
	return rc;
}

static int row_cmp(const void *a, const void *b)
{
	const struct view_fn_row *x = a, *y = b;
	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->total_n != y->total_n)
		return x->total_n > y->total_n ? -1 : 1;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static uint32_t fn_at(const struct view_sampled *s, const struct samples_sample *sm, uint32_t k)
{
	return s->fn_of_frame[s->p->pool[sm->at + k]];
}

/* Does the selection keep sample sm?  match: per function, bit 1 a focus
 * match, bit 2 an ignore match. */
static int keeps(const struct view_sampled *s, const struct samples_sample *sm, const struct view_sample_sel *sel,
                 const uint8_t *match)
{
	if (!match)
		return 1;
	int focus = !sel->focus->nfocus, ignore = 0;
	for (uint32_t k = 0; k < sm->depth; k++) {
		uint8_t m = match[fn_at(s, sm, k)];
		focus |= m & 1;
		ignore |= m & 2;
	}
	return focus && !ignore;
}

static uint8_t *match_functions(const struct view_sampled *s, const struct view_focus *f)
{
	if (!view_focus_any(f))
		return NULL;
	uint8_t *m = calloc(s->nfns ? s->nfns : 1, 1);
	for (size_t i = 0; m && i < s->nfns; i++) {
		m[i] = (uint8_t)((f->nfocus && (view_focus_match(f, 0, s->fns[i].name, NULL) ||
		                                view_focus_match(f, 0, s->fns[i].bare, NULL)) ? 1 : 0) |
		                 ((view_focus_match(f, 1, s->fns[i].name, NULL) ||
		                   view_focus_match(f, 1, s->fns[i].bare, NULL)) ? 2 : 0));
	}
	return m;
}

/* Each kept sample added to its functions' rows: self to its leaf's,
 * total once to each function on its stack. */
static void count(struct view_sampled *s, struct view_fn_row *rows, uint32_t *stamp)
{
	const struct samples_profile *p = s->p;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *sm = &p->samples[i];
		if (!s->kept[i])
			continue;
		struct view_fn_row *leaf = &rows[fn_at(s, sm, 0)];
		leaf->self_n += sm->weight;
		leaf->self_ns += sm->ns;
		for (uint32_t k = 0; k < sm->depth; k++) {
			uint32_t fn = fn_at(s, sm, k);
			if (stamp[fn] == (uint32_t)i + 1)
				continue;
			stamp[fn] = (uint32_t)i + 1;
			rows[fn].total_n += sm->weight;
			rows[fn].total_ns += sm->ns;
		}
	}
}

int view_sampled_make(struct view_sampled *s, const struct samples_profile *p, const struct view_sample_sel *sel)
{
	memset(s, 0, sizeof(*s));
	s->p = p;
	view_sampling_of(p, &s->how);
	if (functions(s, p) != 0)
		return -1;
	uint8_t *match = match_functions(s, sel->focus);
	struct view_fn_row *rows = calloc(s->nfns ? s->nfns : 1, sizeof(*rows));
	uint32_t *stamp = calloc(s->nfns ? s->nfns : 1, sizeof(*stamp));
	s->kept = calloc(p->nsamples ? p->nsamples : 1, 1);
	if ((view_focus_any(sel->focus) && !match) || !rows || !stamp || !s->kept) {
		free(match);
		free(rows);
		free(stamp);
		return -1;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *sm = &p->samples[i];
		if (sm->t_ns < sel->from_ns || (sel->to_ns && sm->t_ns >= sel->to_ns) ||
		    (sel->vcpu >= 0 && sm->vcpu != (uint64_t)sel->vcpu))
			continue;
		s->scope_n += sm->weight;
		s->scope_ns += sm->ns;
		if (!keeps(s, sm, sel, match))
			continue;
		s->kept[i] = 1;
		s->kept_n += sm->weight;
		s->kept_ns += sm->ns;
	}
	for (size_t i = 0; i < s->nfns; i++)
		rows[i].fn = (uint32_t)i;
	count(s, rows, stamp);
	size_t k = 0;
	for (size_t i = 0; i < s->nfns; i++)
		if (rows[i].total_n)
			rows[k++] = rows[i];
	qsort(rows, k, sizeof(*rows), row_cmp);
	s->rows = rows;
	s->nrows = k;
	free(match);
	free(stamp);
	return 0;
}

size_t view_sampled_find(const struct view_sampled *s, const char *name, uint8_t *mask)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nfns; i++) {
		mask[i] = !strcmp(s->fns[i].name, name) || !strcmp(s->fns[i].bare, name);
		n += mask[i];
	}
	return n;
}

void view_sandwich_free(struct view_sandwich *w)
{
	free(w->callers);
	free(w->callees);
	memset(w, 0, sizeof(*w));
}

/* The rows with samples, most time first; slot nfns is "(root)" or "(self)". */
static struct view_fn_row *compact(struct view_fn_row *r, size_t nfns, size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i <= nfns; i++) {
		r[i].fn = i == nfns ? VIEW_FN_NONE : (uint32_t)i;
		r[i].self_n = r[i].total_n;
		r[i].self_ns = r[i].total_ns;
	}
	for (size_t i = 0; i <= nfns; i++)
		if (r[i].total_n)
			r[k++] = r[i];
	qsort(r, k, sizeof(*r), row_cmp);
	*n = k;
	return r;
}

static void add(struct view_fn_row *r, uint32_t *stamp, uint32_t at, uint32_t i, const struct samples_sample *sm)
{
	if (stamp[at] == i + 1)
		return;
	stamp[at] = i + 1;
	r[at].total_n += sm->weight;
	r[at].total_ns += sm->ns;
}

int view_sandwich_make(const struct view_sampled *s, const uint8_t *mask, struct view_sandwich *out)
{
	size_t n = s->nfns + 1;
	memset(out, 0, sizeof(*out));
	out->me.fn = VIEW_FN_NONE;
	for (size_t i = 0; i < s->nfns && out->me.fn == VIEW_FN_NONE; i++)
		if (mask[i])
			out->me.fn = (uint32_t)i;
	out->callers = calloc(n, sizeof(struct view_fn_row));
	out->callees = calloc(n, sizeof(struct view_fn_row));
	uint32_t *st = calloc(3 * n, sizeof(uint32_t)), *sc = st + n, *sme = st + 2 * n;
	if (!out->callers || !out->callees || !st) {
		free(st);
		view_sandwich_free(out);
		return -1;
	}
	for (size_t i = 0; i < s->p->nsamples; i++) {
		const struct samples_sample *sm = &s->p->samples[i];
		if (!s->kept[i])
			continue;
		for (uint32_t k = 0; k < sm->depth; k++) {
			if (!mask[fn_at(s, sm, k)])
				continue;
			add(&out->me, sme, 0, (uint32_t)i, sm);
			if (k == 0) {
				out->me.self_n += sm->weight;
				out->me.self_ns += sm->ns;
			}
			/* calls within the function (recursion) are neither callers nor callees */
			uint32_t up = k + 1 < sm->depth ? fn_at(s, sm, k + 1) : (uint32_t)s->nfns;
			uint32_t down = k > 0 ? fn_at(s, sm, k - 1) : (uint32_t)s->nfns;
			if (up == s->nfns || !mask[up])
				add(out->callers, st, up, (uint32_t)i, sm);
			if (down == s->nfns || !mask[down])
				add(out->callees, sc, down, (uint32_t)i, sm);
		}
	}
	free(st);
	compact(out->callers, s->nfns, &out->ncallers);
	compact(out->callees, s->nfns, &out->ncallees);
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------ */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static json_t *row_json(const struct view_sampled *s, const struct view_fn_row *r, const char *none)
{
	const struct view_fn *f = r->fn == VIEW_FN_NONE ? NULL : &s->fns[r->fn];
	return json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:f, s:f}", "name", view_json_guest(f ? f->name : none),
	                 "module", view_json_guest(f ? f->module : ""), "src", view_json_guest(f ? f->src : ""),
	                 "self_samples", (json_int_t)r->self_n, "total_samples", (json_int_t)r->total_n,
	                 "self_ns", (json_int_t)r->self_ns, "total_ns", (json_int_t)r->total_ns,
	                 "self_pct", pct(r->self_ns, s->scope_ns), "total_pct", pct(r->total_ns, s->scope_ns));
}

static json_t *rows_json(const struct view_sampled *s, const struct view_fn_row *r, size_t n, const char *none)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, row_json(s, &r[i], none));
	return a;
}

/* A caller or callee: its samples with the call, their time, its share
 * of all of it and of the function's. */
static json_t *edges_json(const struct view_sampled *s, const struct view_fn_row *r, size_t n, const char *none,
                          uint64_t of)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++) {
		const struct view_fn *f = r[i].fn == VIEW_FN_NONE ? NULL : &s->fns[r[i].fn];
		json_array_append_new(a, json_pack("{s:o, s:o, s:o, s:I, s:I, s:f, s:f}", "name",
		                                   view_json_guest(f ? f->name : none), "module",
		                                   view_json_guest(f ? f->module : ""), "src", view_json_guest(f ? f->src : ""),
		                                   "samples", (json_int_t)r[i].total_n, "ns", (json_int_t)r[i].total_ns,
		                                   "pct", pct(r[i].total_ns, s->scope_ns), "function_pct",
		                                   pct(r[i].total_ns, of)));
	}
	return a;
}

static json_t *strings(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, view_json_guest(v[i]));
	return a;
}

json_t *view_sampled_json(const struct view_sampled *s, const struct view_sample_sel *sel, size_t limit,
                          const struct view_sandwich *w)
{
	const struct view_sampling *h = &s->how;
	const struct view_focus *f = sel->focus;
	json_t *how = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:s}", "hz_asked", (json_int_t)h->hz_asked,
	                        "hz_kept", (json_int_t)h->hz_kept, "samples", (json_int_t)h->samples,
	                        "lost", (json_int_t)h->lost, "vcpus", (json_int_t)h->vcpus,
	                        "segments", (json_int_t)h->segments, "seconds", (double)h->span_ns / 1e9,
	                        "sampled_seconds", (double)h->total_ns / 1e9,
	                        "weighed_by", h->cpu_time ? "cpu_time" : h->some_cpu_time ? "cpu_time_in_part" : "rate");
	json_t *sl = json_pack("{s:f, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I}", "from_seconds", (double)sel->from_ns / 1e9,
	                       "to_seconds", sel->to_ns ? json_real((double)sel->to_ns / 1e9) : json_null(),
	                       "vcpu", sel->vcpu >= 0 ? json_integer(sel->vcpu) : json_null(),
	                       "focus", strings(f ? f->focus_src : NULL, f ? f->nfocus : 0),
	                       "ignore", strings(f ? f->ignore_src : NULL, f ? f->nignore : 0),
	                       "samples", (json_int_t)s->scope_n, "ns", (json_int_t)s->scope_ns,
	                       "kept_samples", (json_int_t)s->kept_n, "kept_ns", (json_int_t)s->kept_ns);
	size_t n = limit && s->nrows > limit ? limit : s->nrows;
	json_t *o = json_pack("{s:o, s:o, s:I, s:o}", "sampling", how, "selection", sl, "nfunctions",
	                      (json_int_t)s->nrows, "functions", rows_json(s, s->rows, n, ""));
	if (o && w)
		json_object_set_new(o, "sandwich", json_pack("{s:o, s:o, s:o}", "function", row_json(s, &w->me, ""),
		                                             "callers", edges_json(s, w->callers, w->ncallers, "(root)", w->me.total_ns),
		                                             "callees", edges_json(s, w->callees, w->ncallees, "(self)", w->me.total_ns)));
	return o;
}
