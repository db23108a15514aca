/*
 * trace_timeline.c - the thread timeline of a MirageOS trace as JSON
 * (trace_timeline.h): the model's two walks (trace_timeline_model.c),
 * then the window's threads grouped by label and thinned group by group,
 * arrows, run slices, GC pauses and counters; and one thread's events;
 * what a live trace holds so far, as the model counts it.
 * Guest text (labels, counter names, exceptions) is written by
 * safe_text_json_inert: the exact text, JSON escapes, a byte that is not
 * UTF-8 as \udcNN (docs/json.md), < > & as \u escapes.
 *
 * May call: trace_timeline_model.c (the model), trace_render.c (the walk,
 * stats), mprof.c (names), util/safe_text (inert JSON).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace_timeline.h"
#include "trace_timeline_model.h"
#include "util/safe_text.h"

static void u64_or_null(FILE *f, uint64_t v)
{
	if (v == TT_NONE)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, v);
}

/* ---- threads, grouped by label ---------------------------------------------------- */

struct entry {
	const char *label;   /* NULL: none */
	uint64_t start, id;
	uint32_t idx;        /* into the model's threads */
	uint32_t group;      /* its group, or TT_MAX_GROUPS: the rest */
};

static int by_label(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->label != y->label) {
		if (!x->label || !y->label)
			return x->label ? -1 : 1; /* no label last */
		int c = strcmp(x->label, y->label);
		if (c)
			return c;
	}
	return x->start < y->start ? -1 : x->start > y->start ? 1 : x->id < y->id ? -1 : x->id > y->id;
}

static int same_label(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

struct group {
	size_t first, n;     /* its entries */
	uint64_t quota, shown;
};

static int by_size(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return x->n > y->n ? -1 : x->n < y->n ? 1 : x->first < y->first ? -1 : x->first > y->first;
}

static void write_thread(FILE *f, const struct tt_thread *th, int first)
{
	fprintf(f, "%s{\"id\":%" PRIu64 ",\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"ended\":%s,\"parent\":",
	        first ? "" : ",", th->id, th->start, tt_thread_end(th), th->ended ? "true" : "false");
	u64_or_null(f, th->parent);
	fputs(",\"label\":", f);
	if (th->label)
		safe_text_json_inert(f, th->label);
	else
		fputs("null", f);
	fputs(",\"type\":", f);
	const char *tn = th->type >= 0 ? mprof_thread_type_name((unsigned)th->type) : NULL;
	if (tn)
		fprintf(f, "\"%s\"", tn);
	else if (th->type >= 0)
		fprintf(f, "%d", th->type);
	else
		fputs("null", f);
	fprintf(f, ",\"events\":%" PRIu64 "}", th->nevents);
}

/* Each group's quota of the n threads (g[0..listed), then rest):
 * everything when it fits, else a floor for each and the rest by size. */
static void quotas(struct group *g, size_t listed, struct group *rest, size_t n)
{
	uint64_t base = 0, spare = 0;
	for (size_t k = 0; k <= listed; k++) {
		struct group *x = k < listed ? &g[k] : rest;
		x->quota = n <= TT_MAX_THREADS ? x->n : x->n < TT_GROUP_MIN ? x->n : TT_GROUP_MIN;
		base += x->quota;
	}
	if (n > TT_MAX_THREADS && base < TT_MAX_THREADS) {
		spare = TT_MAX_THREADS - base;
		for (size_t k = 0; k <= listed; k++) {
			struct group *x = k < listed ? &g[k] : rest;
			x->quota += (uint64_t)((double)spare * (double)(x->n - x->quota) / (double)(n - base));
		}
	}
}

/* "threads": the window's threads by label, then start; "groups": the
 * TT_MAX_GROUPS most common labels (null: no label), each with its
 * threads in the window and those shown.  Past TT_MAX_THREADS, each
 * group (the rest of the labels counting as one) keeps TT_GROUP_MIN of
 * its threads or all it has, and the rest of the bound is shared out by
 * size, each group evenly thinned in its start order.  0, or -1 when out
 * of memory. */
static int write_threads(FILE *f, const struct tt_model *m, uint64_t *nin, uint64_t *more_labels, uint64_t *more_n,
                         uint64_t *more_shown)
{
	struct entry *e = malloc((m->nth ? m->nth : 1) * sizeof(*e));
	struct group *g = NULL;
	size_t n = 0, ng = 0;
	if (!e)
		return -1;
	for (size_t i = 0; i < m->nth; i++)
		if (tt_in_window(m, m->th[i].start, tt_thread_end(&m->th[i])))
			e[n++] = (struct entry){m->th[i].label, m->th[i].start, m->th[i].id, (uint32_t)i, TT_MAX_GROUPS};
	qsort(e, n, sizeof(*e), by_label);
	for (size_t i = 0; i < n; i++)
		ng += i == 0 || !same_label(e[i - 1].label, e[i].label);
	if (!(g = calloc(ng ? ng : 1, sizeof(*g)))) {
		free(e);
		return -1;
	}
	ng = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || !same_label(e[i - 1].label, e[i].label))
			g[ng++] = (struct group){.first = i};
		g[ng - 1].n++;
	}
	qsort(g, ng, sizeof(*g), by_size);
	size_t listed = ng < TT_MAX_GROUPS ? ng : TT_MAX_GROUPS;
	/* the rest of the labels: one group, its entries gathered (in label order) */
	struct group rest = {0};
	for (size_t k = 0; k < ng; k++)
		for (size_t i = g[k].first; i < g[k].first + g[k].n; i++)
			e[i].group = k < listed ? (uint32_t)k : TT_MAX_GROUPS;
	for (size_t k = listed; k < ng; k++)
		rest.n += g[k].n;
	quotas(g, listed, &rest, n);
	/* written in label order, each group evenly thinned to exactly its
	 * quota: its k-th thread is taken when k * quota / n steps up */
	uint64_t seen[TT_MAX_GROUPS + 1] = {0};
	int first = 1;
	fputs(",\"threads\":[", f);
	for (size_t i = 0; i < n; i++) {
		struct group *x = e[i].group < listed ? &g[e[i].group] : &rest;
		uint64_t k = seen[e[i].group < listed ? e[i].group : TT_MAX_GROUPS]++;
		if (k * x->quota / x->n == (k + 1) * x->quota / x->n)
			continue;
		write_thread(f, &m->th[e[i].idx], first);
		first = 0;
		x->shown++;
	}
	fputs("],\"groups\":[", f);
	for (size_t k = 0; k < listed; k++) {
		fputs(k ? ",{\"label\":" : "{\"label\":", f);
		const char *l = e[g[k].first].label;
		if (l)
			safe_text_json_inert(f, l);
		else
			fputs("null", f);
		fprintf(f, ",\"threads\":%" PRIu64 ",\"shown\":%" PRIu64 "}", (uint64_t)g[k].n, g[k].shown);
	}
	fputc(']', f);
	*nin = n;
	*more_labels = ng - listed;
	*more_n = rest.n;
	*more_shown = rest.shown;
	free(g);
	free(e);
	return 0;
}

/* "counters": each counter's figures and its points. */
static void write_counters(FILE *f, const struct tt_model *m)
{
	for (size_t i = 0; i < m->nc; i++) {
		const struct tt_counter *c = &m->c[i];
		fflush(c->out);
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		safe_text_json_inert(f, c->name);
		fprintf(f, ",\"lo\":%" PRId64 ",\"hi\":%" PRId64 ",\"last\":%" PRId64 ",\"updates\":%" PRIu64
		           ",\"in_window\":%" PRIu64 ",\"points\":[",
		        c->lo, c->hi, c->value, c->updates, c->in_window);
		fwrite(c->buf, 1, c->len, f);
		fputs("]}", f);
	}
}

int trace_timeline_json(FILE *f, const struct mprof_trace *t, const struct tt_window *w)
{
	struct tt_model m = {.w = w, .pass = 1};
	struct mprof_stats st;
	struct tt_streams b = {0};
	int rc = -1;

	trace_render_stats(t, &st);
	m.from = w->whole ? 0 : w->from;
	m.to = w->whole ? UINT64_MAX : w->to;
	if (tt_model_first(&m, t) != 0)
		goto out;
	uint64_t from = w->whole ? st.first_ts : m.from, to = w->whole ? st.last_ts : m.to;
	if (tt_model_second(&m, t, &st, from, to, &b) != 0)
		goto out;

	fprintf(f, "{\"run\":%lld,\"guest\":", t->run_id);
	safe_text_json_inert(f, t->name ? t->name : "");
	fprintf(f, ",\"t0\":%" PRIu64 ",\"t1\":%" PRIu64 ",\"from\":%" PRIu64 ",\"to\":%" PRIu64
	           ",\"events\":%" PRIu64 ",\"ended\":%s,\"packets\":{\"kept\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
	        st.first_ts, st.last_ts, from, to, st.events, st.final ? "true" : "false", st.kept, st.lost);
	/* threads in the window, by label, each group thinned on its own */
	uint64_t nin = 0, more_labels = 0, more_n = 0, more_shown = 0;
	if (write_threads(f, &m, &nin, &more_labels, &more_n, &more_shown) != 0)
		goto out;
	fprintf(f, ",\"groups_more\":{\"labels\":%" PRIu64 ",\"threads\":%" PRIu64 ",\"shown\":%" PRIu64 "}",
	        more_labels, more_n, more_shown);
	fprintf(f, ",\"threads_total\":%" PRIu64 ",\"threads_dropped\":%" PRIu64 ",\"arrows\":[", nin, m.dropped);
	fwrite(b.ba, 1, b.la, f);
	fprintf(f, "],\"arrows_total\":%" PRIu64 ",\"switches\":[", m.arrows);
	fwrite(b.bs, 1, b.ls, f);
	fprintf(f, "],\"switches_total\":%" PRIu64 ",\"gc\":[", m.switches);
	fwrite(b.bg, 1, b.lg, f);
	fprintf(f, "],\"gc_total\":%" PRIu64 ",\"counters\":[", m.gcs);
	write_counters(f, &m);
	fprintf(f, "],\"counters_more\":%" PRIu64 ",\"labels\":%" PRIu64 "}\n", m.counters_more, m.labels);
	rc = ferror(f) ? -1 : 0;
out:
	tt_streams_free(&m, &b);
	tt_model_free(&m);
	return rc;
}

/* ---- one thread's events ------------------------------------------------------- */

struct one {
	FILE *f;
	uint64_t id, n, more;
};

static int one_event(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct one *o = ctx;
	(void)pk;
	int mine = e->has_thread && e->thread == o->id && e->id != MPROF_GC;
	uint64_t other = tt_other_of(e);
	if (!mine && other != o->id)
		return 0;
	if (o->n == TT_MAX_THREAD_EVENTS) {
		o->more++;
		return 0;
	}
	fprintf(o->f, "%s{\"ts\":%" PRIu64 ",\"event\":\"%s\",\"thread\":%" PRIu64, o->n++ ? "," : "", e->ts,
	        mprof_event_name(e->id), e->thread);
	if (other != TT_NONE)
		fprintf(o->f, ",\"other\":%" PRIu64, other);
	if (e->id == MPROF_CREATES) {
		const char *tn = mprof_thread_type_name(e->thread_type);
		if (tn)
			fprintf(o->f, ",\"type\":\"%s\"", tn);
	}
	if (e->text && (e->id == MPROF_LABEL || e->id == MPROF_FAILS)) {
		fputs(",\"text\":", o->f);
		safe_text_json_inert(o->f, e->text);
	}
	fputc('}', o->f);
	return 0;
}

int trace_timeline_thread_json(FILE *f, const struct mprof_trace *t, uint64_t thread)
{
	struct one o = {f, thread, 0, 0};
	fprintf(f, "{\"thread\":%" PRIu64 ",\"events\":[", thread);
	if (thread != TT_NONE) /* "no thread" is none: it would match every event without one */
		trace_render_walk(t, one_event, &o);
	fprintf(f, "],\"more\":%" PRIu64 "}\n", o.more);
	return ferror(f) ? -1 : 0;
}

int trace_timeline_live(const struct mprof_trace *t, struct tt_live *out)
{
	return tt_model_live(t, out);
}
