/*
 * eventlog_heap.c - an eventlog's heap profile samples into the .hp model
 * (eventlog_summary.h, heap_profile.h).
 *
 * Why through the .hp parser's text: the model's rules (a sample counts
 * once it ends, times never decrease, a band seen twice in a sample is
 * added, names keep any byte) live in hp_parse.c; writing the samples as
 * the .hp lines GHC would have written keeps one reader of that model, and
 * the hp2ps views draw the result as they draw a .hp.
 *
 *   HEAP_PROF_SAMPLE_BEGIN era    ->  BEGIN_SAMPLE t   (t: the event's time)
 *   HEAP_PROF_SAMPLE_STRING       ->  label<TAB>bytes
 *   HEAP_PROF_SAMPLE_COST_CENTRE  ->  cc/cc/...<TAB>bytes  (innermost first;
 *                                     a CAF as Module.CAF, the empty stack MAIN)
 *
 * A -hc .hp names a band "(ccs id)cc/cc/..." cut to -L's length; the
 * eventlog does not carry the stack's id, so a band here is the .hp's
 * name without its "(id)" and whole.
 *   HEAP_PROF_SAMPLE_END          ->  END_SAMPLE t
 *
 * A new BEGIN while a sample is open ends it (GHCs before 8.10 wrote no
 * END, so when the header declares none the last sample ends with the
 * log); otherwise a sample open at the end is dropped, as a cut .hp's is.  Times are
 * kept from going backwards (a hostile log), so the parser never refuses.
 *
 * May call: hp_parse.c (hp_feed, hp_finish), ghc_eventlog.c (gel_type_of),
 * util/id_index, util/grow.h, libc.
 */
#include "config.h"

#include "eventlog_summary.h"
#include "util/grow.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void el_heap_init(struct el_heap *h, struct hp_profile *hp)
{
	memset(h, 0, sizeof(*h));
	h->hp = hp;
}

void el_heap_free(struct el_heap *h)
{
	for (size_t i = 0; i < h->nccs; i++)
		free(h->ccs[i].label);
	free(h->ccs);
	id_index_free(&h->cc_index);
	free(h->job);
	free(h->line);
	memset(h, 0, sizeof(*h));
}

/* Appends n bytes to the line at *len; in a name (is_name) newlines
 * become spaces (a .hp line each), nothing else changes. */
static int put(struct el_heap *h, size_t *len, const char *s, size_t n, int is_name)
{
	if (GROW_FROM(h->line, h->line_cap, *len + n + 1, 256) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		h->line[(*len)++] = is_name && (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i];
	h->line[*len] = 0;
	return 0;
}

static int put_name(struct el_heap *h, size_t *len, const char *s, size_t n)
{
	return put(h, len, s, n, 1);
}

static int feed_fmt(struct el_heap *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int feed_fmt(struct el_heap *h, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return hp_feed(h->hp, buf, (size_t)n);
}

/* JOB's argument, a '"' doubled as GHC writes it. */
static int feed_header(struct el_heap *h)
{
	const char *job = h->job ? h->job : "eventlog";
	size_t len = 0;
	if (put_name(h, &len, "JOB \"", 5) != 0)
		return -1;
	for (const char *c = job; *c; c++)
		if (put_name(h, &len, c, 1) != 0 || (*c == '"' && put_name(h, &len, "\"", 1) != 0))
			return -1;
	if (put(h, &len, "\"\n", 2, 0) != 0 || hp_feed(h->hp, h->line, len) != 0)
		return -1;
	h->header_done = 1;
	return feed_fmt(h, "DATE \"\"\nSAMPLE_UNIT \"seconds\"\nVALUE_UNIT \"bytes\"\n");
}

static void set_job(struct el_heap *h, const struct gel_event *ev)
{
	if (h->job || h->header_done || !ev->nstrs)
		return;
	size_t n = 0;
	for (unsigned i = 0; i < ev->nstrs; i++)
		n += ev->strs[i].len + 1;
	if (!(h->job = malloc(n + 1)))
		return; /* the job name is only a label: "eventlog" does */
	/* the arguments (the first GEL_MAX_STRS) with a space between; the
	 * strings hold no NUL, and a newline would end the JOB line */
	size_t at = 0;
	for (unsigned i = 0; i < ev->nstrs; i++) {
		if (i)
			h->job[at++] = ' ';
		memcpy(h->job + at, ev->strs[i].s, ev->strs[i].len);
		at += ev->strs[i].len;
	}
	h->job[at] = 0;
	for (size_t i = 0; i < at; i++)
		if (h->job[i] == '\n' || h->job[i] == '\r')
			h->job[i] = ' ';
}

/* ---- cost centres ------------------------------------------------------------ */

static uint64_t cc_hash(const void *ctx, uint32_t id)
{
	const struct el_heap *h = ctx;
	uint32_t k = h->ccs[id - 1].id;
	return id_index_hash(ID_INDEX_SEED, &k, sizeof(k));
}

static int cc_eq(const void *ctx, uint32_t id)
{
	const struct el_heap *h = ctx;
	return h->ccs[id - 1].id == h->want_cc;
}

static const char *cc_label(struct el_heap *h, uint32_t cc)
{
	h->want_cc = cc; /* the key cc_eq compares with */
	uint32_t id = id_index_find(&h->cc_index, id_index_hash(ID_INDEX_SEED, &cc, sizeof(cc)), cc_eq, h, NULL);
	return id ? h->ccs[id - 1].label : NULL;
}

/* A later definition of the same id replaces the label. */
static int add_cc(struct el_heap *h, const struct gel_event *ev)
{
	if (!ev->nstrs || h->nccs >= EL_MAX_CCS)
		return 0;
	/* a CAF is named by its module, as the .hp names it ("Main.CAF") */
	const struct gel_str *l = &ev->strs[0], *mod = ev->nstrs > 1 ? &ev->strs[1] : NULL;
	int caf = l->len == 3 && !memcmp(l->s, "CAF", 3) && mod && mod->len;
	char *label = malloc((caf ? mod->len + 1 : 0) + l->len + 1);
	if (!label)
		return -1;
	if (caf)
		snprintf(label, mod->len + 5, "%s.CAF", mod->s);
	else
		memcpy(label, l->s, l->len + 1);
	uint32_t cc = ev->arg32;
	size_t at = 0;
	h->want_cc = cc;
	if (id_index_reserve(&h->cc_index, cc_hash, h) != 0)
		goto oom;
	uint32_t id = id_index_find(&h->cc_index, id_index_hash(ID_INDEX_SEED, &cc, sizeof(cc)), cc_eq, h, &at);
	if (id) {
		free(h->ccs[id - 1].label);
		h->ccs[id - 1].label = label;
		return 0;
	}
	if (GROW_FROM(h->ccs, h->ccs_cap, h->nccs + 1, 64) != 0)
		goto oom;
	h->ccs[h->nccs++] = (struct el_cc){cc, label};
	id_index_put(&h->cc_index, at, (uint32_t)h->nccs);
	return 0;
oom:
	free(label);
	return -1;
}

/* ---- samples ------------------------------------------------------------------ */

/* A name the .hp reader would take for a keyword inside a sample gets a
 * leading space (hostile labels only: GHC's never start so). */
static int guard_keyword(struct el_heap *h, size_t *len, const char *s, size_t n)
{
	static const char *const kw[] = {"BEGIN_SAMPLE", "END_SAMPLE"};
	for (size_t i = 0; i < 2; i++) {
		size_t k = strlen(kw[i]);
		if (n >= k && !memcmp(s, kw[i], k) && (n == k || s[k] == ' ' || s[k] == '\t'))
			return put(h, len, " ", 1, 0);
	}
	return 0;
}

static int band_line(struct el_heap *h, const struct gel_event *ev)
{
	if (!h->in_sample) {
		h->stray++;
		return 0;
	}
	size_t len = 0;
	if (ev->type == GEL_HEAP_PROF_SAMPLE_STRING) {
		const char *s = ev->nstrs ? ev->strs[0].s : "";
		size_t n = ev->nstrs ? ev->strs[0].len : 0;
		if (guard_keyword(h, &len, s, n) != 0 || put_name(h, &len, n ? s : "(empty)", n ? n : 7) != 0)
			return -1;
	} else {
		for (unsigned i = 0; i < ev->depth && len < EL_MAX_NAME; i++) {
			char num[24];
			uint32_t cc = (uint32_t)ev->stack[4 * i] << 24 | (uint32_t)ev->stack[4 * i + 1] << 16 |
			              (uint32_t)ev->stack[4 * i + 2] << 8 | ev->stack[4 * i + 3];
			const char *l = cc_label(h, cc);
			if (!l) {
				snprintf(num, sizeof(num), "(cc %" PRIu32 ")", cc);
				l = num;
			}
			if ((!i && guard_keyword(h, &len, l, strlen(l)) != 0) || (i && put_name(h, &len, "/", 1) != 0) ||
			    put_name(h, &len, l, strlen(l)) != 0)
				return -1;
		}
		/* the empty stack is the root, which the .hp calls MAIN */
		if (!len && put_name(h, &len, "MAIN", 4) != 0)
			return -1;
	}
	char val[32];
	int n = snprintf(val, sizeof(val), "\t%" PRIu64 "\n", ev->value);
	if (put(h, &len, val, (size_t)n, 0) != 0)
		return -1;
	return hp_feed(h->hp, h->line, len);
}

static int end_sample(struct el_heap *h)
{
	h->in_sample = 0;
	h->samples++;
	return feed_fmt(h, "END_SAMPLE %.6f\n", h->sample_t);
}

static int begin_sample(struct el_heap *h, const struct gel_event *ev)
{
	if (!h->header_done && feed_header(h) != 0)
		return -1;
	if (h->in_sample && end_sample(h) != 0)
		return -1;
	double t = (double)ev->time_ns / 1e9;
	h->sample_t = t < h->last_t ? h->last_t : t;
	h->last_t = h->sample_t;
	h->in_sample = 1;
	return feed_fmt(h, "BEGIN_SAMPLE %.6f\n", h->sample_t);
}

int el_heap_add(struct el_heap *h, const struct gel_event *ev)
{
	if (!ev->decoded)
		return 0;
	switch (ev->type) {
	case GEL_PROGRAM_ARGS:
		set_job(h, ev);
		return 0;
	case GEL_HEAP_PROF_BEGIN:
		return h->header_done ? 0 : feed_header(h);
	case GEL_HEAP_PROF_COST_CENTRE:
		return add_cc(h, ev);
	case GEL_HEAP_PROF_SAMPLE_BEGIN:
		return begin_sample(h, ev);
	case GEL_HEAP_PROF_SAMPLE_STRING:
	case GEL_HEAP_PROF_SAMPLE_COST_CENTRE:
		return band_line(h, ev);
	case GEL_HEAP_PROF_SAMPLE_END:
		return h->in_sample ? end_sample(h) : 0;
	}
	return 0;
}

int el_heap_finish(struct el_heap *h, const struct gel_decoder *d, struct hp_tail *tail)
{
	/* a log whose header has no sample end is from a GHC that wrote none:
	 * its last sample is whole */
	if (h->in_sample && d && !gel_type_of(d, GEL_HEAP_PROF_SAMPLE_END) && end_sample(h) != 0)
		return -1;
	return hp_finish(h->hp, tail);
}
