/*
 * trace_view.c - a MirageOS trace as a section of the HTML report (and so
 * of profdb serve's run page): its facts (packets kept and lost, events,
 * time span), events by kind, GC pauses over time, each counter over time
 * (`increase` summed, `counter` as set), and its labels.  Drawn on the
 * server as inline SVG: no script, nothing fetched.  Every name comes from
 * the guest and goes through markup.c.
 *
 * May call: trace_render.c (the walk, the stats), mprof.c (event names),
 * markup.c.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "markup.h"
#include "trace_render.h"
#include "trace_view.h"

#define CHART_W 900.0
#define CHART_H 120.0
#define MAX_SERIES 8
#define MAX_POINTS 600  /* per series: one point per pixel and a half */
#define MAX_LABELS 20

struct series {
	char name[64];
	int64_t value;       /* running value */
	int64_t lo, hi;
	uint64_t n;
	/* one point per time bucket: the value at its end */
	int64_t pts[MAX_POINTS];
	int have[MAX_POINTS];
};

struct label_count {
	char name[80];
	uint64_t n;
};

struct view {
	uint64_t t0, t1;
	struct series s[MAX_SERIES];
	size_t ns;
	uint64_t more_counters;
	struct label_count labels[256];
	size_t nlabels;
	uint64_t more_labels;
	FILE *f;             /* the GC marks, written as they come */
	uint64_t gc_drawn;
};

static size_t bucket(const struct view *v, uint64_t ts)
{
	if (v->t1 <= v->t0)
		return 0;
	double x = (double)(ts - v->t0) / (double)(v->t1 - v->t0);
	size_t b = (size_t)(x * (MAX_POINTS - 1));
	return b >= MAX_POINTS ? MAX_POINTS - 1 : b;
}

static int collect(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct view *v = ctx;
	(void)pk;
	if (e->id == MPROF_INCREASE || e->id == MPROF_COUNTER) {
		struct series *s = NULL;
		for (size_t i = 0; i < v->ns; i++)
			if (strcmp(v->s[i].name, e->text) == 0)
				s = &v->s[i];
		if (!s && strlen(e->text) < sizeof(v->s[0].name) && v->ns < MAX_SERIES) {
			s = &v->s[v->ns++];
			snprintf(s->name, sizeof(s->name), "%s", e->text);
		}
		if (!s) {
			v->more_counters++;
			return 0;
		}
		s->value = e->id == MPROF_COUNTER ? (int64_t)e->value : (int64_t)((uint64_t)s->value + e->value);
		if (!s->n || s->value < s->lo)
			s->lo = s->value;
		if (!s->n || s->value > s->hi)
			s->hi = s->value;
		s->n++;
		size_t b = bucket(v, e->ts);
		s->pts[b] = s->value;
		s->have[b] = 1;
	} else if (e->id == MPROF_LABEL) {
		for (size_t i = 0; i < v->nlabels; i++)
			if (strcmp(v->labels[i].name, e->text) == 0) {
				v->labels[i].n++;
				return 0;
			}
		if (v->nlabels < sizeof(v->labels) / sizeof(v->labels[0]) && strlen(e->text) < sizeof(v->labels[0].name)) {
			snprintf(v->labels[v->nlabels].name, sizeof(v->labels[0].name), "%s", e->text);
			v->labels[v->nlabels++].n = 1;
		} else {
			v->more_labels++;
		}
	} else if (e->id == MPROF_GC && v->f && v->gc_drawn < 5000) {
		/* a mark per pause: where it ended, as tall as it was long (log) */
		double x = v->t1 > v->t0 ? (double)(e->ts - v->t0) / (double)(v->t1 - v->t0) * CHART_W : 0;
		double us = (double)e->value / 1000.0, h = 8;
		for (double d = us; d > 1 && h < CHART_H - 10; d /= 10)
			h += 14;
		fprintf(v->f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x, x, CHART_H, CHART_H - h);
		v->gc_drawn++;
	}
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct label_count *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->name, y->name);
}

static void fmt_ns(char *out, size_t len, uint64_t ns)
{
	if (ns >= 1000000000u)
		snprintf(out, len, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000u)
		snprintf(out, len, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(out, len, "%.1f \xc2\xb5s", (double)ns / 1e3);
}

/* The trace's facts: packets kept and lost, events, whether it ended,
 * events by kind. */
static void trace_facts(FILE *f, const struct mprof_trace *t, const struct mprof_stats *st)
{
	char lost[512], a[32];

	trace_render_lost_ranges(t, lost, sizeof(lost));
	fputs("<section id=\"trace\"><h2>MirageOS trace (mirage-profile)</h2>\n<table class=\"facts\">\n", f);
	fmt_ns(a, sizeof(a), st->events ? st->last_ts - st->first_ts : 0);
	fprintf(f, "<tr><td>packets</td><td>%" PRIu64 " kept, %" PRIu64 " lost", st->kept, st->lost);
	if (st->lost) {
		fputs(" (", f);
		markup_text(f, lost);
		fputs(")", f);
	}
	fprintf(f, "</td></tr>\n<tr><td>events</td><td>%" PRIu64 " over %s of the guest's clock</td></tr>\n"
	           "<tr><td>ended</td><td>%s</td></tr>\n",
	        st->events, a, st->final ? "yes: its last packet was taken" : "no: still being captured, or lost with its domain");
	if (st->cut)
		fprintf(f, "<tr><td>torn</td><td>%" PRIu64 " packets end in an event being overwritten</td></tr>\n", st->cut);
	fputs("<tr><td>by kind</td><td>", f);
	for (unsigned k = 0, first = 1; k < MPROF_EVENT_KINDS; k++)
		if (st->per_kind[k]) {
			fprintf(f, "%s%s %" PRIu64, first ? "" : " \xc2\xb7 ", mprof_event_name(k), st->per_kind[k]);
			first = 0;
		}
	fputs("</td></tr>\n</table>\n", f);
}

/* GC pauses: marks over the trace's time, drawn while the walk collects
 * the counters and labels into v. */
static void gc_chart(FILE *f, const struct mprof_trace *t, struct view *v, const struct mprof_stats *st)
{
	char a[32], b[32], c[32];

	fmt_ns(a, sizeof(a), st->gc_total_ns);
	fmt_ns(b, sizeof(b), st->gc_max_ns);
	fmt_ns(c, sizeof(c), st->gc_count ? st->gc_total_ns / st->gc_count : 0);
	fprintf(f, "<h3>GC pauses</h3>\n<p class=\"note\">%" PRIu64 " pauses, %s in all, mean %s, longest %s; a "
	           "mark per pause where it ended, taller for longer (1 \xc2\xb5s, 10, 100, ...)</p>\n",
	        st->gc_count, a, c, b);
	fprintf(f, "<svg class=\"trace-chart\" id=\"trace-gc\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
	           "width=\"100%%\"><g stroke=\"#b03a2e\" stroke-width=\"1\">",
	        CHART_W, CHART_H);
	v->f = f;
	trace_render_walk(t, collect, v);
	v->f = NULL;
	fprintf(f, "</g><line x1=\"0\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#999\"/></svg>\n", CHART_W, CHART_H,
	        CHART_H);
}

/* Counters, one line each, each on its own scale, and their key. */
static void counters(FILE *f, const struct view *v)
{
	static const char *const colours[MAX_SERIES] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
	                                                 "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};
	fputs("<h3>Counters</h3>\n<p class=\"note\">each on its own scale, from its lowest to its highest "
	      "value; <code>increase</code> events summed, <code>counter</code> events as set</p>\n",
	      f);
	fprintf(f, "<svg class=\"trace-chart\" id=\"trace-counters\" xmlns=\"http://www.w3.org/2000/svg\" "
	           "viewBox=\"0 0 %.0f %.0f\" width=\"100%%\">",
	        CHART_W, CHART_H);
	for (size_t i = 0; i < v->ns; i++) {
		const struct series *s = &v->s[i];
		/* in double: a guest's values may span all of int64 (the
		 * difference overflowed; fuzz_mprof) */
		double span = s->hi > s->lo ? (double)s->hi - (double)s->lo : 1;
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colours[i]);
		for (size_t p = 0; p < MAX_POINTS; p++)
			if (s->have[p])
				fprintf(f, "%.1f,%.1f ", (double)p * CHART_W / (MAX_POINTS - 1),
				        CHART_H - 4 - (((double)s->pts[p] - (double)s->lo) / span) * (CHART_H - 8));
		fputs("\"/>", f);
	}
	fputs("</svg>\n<table class=\"facts\" id=\"trace-counter-key\">", f);
	for (size_t i = 0; i < v->ns; i++) {
		const struct series *s = &v->s[i];
		fprintf(f, "<tr><td><span style=\"color:%s\">\xe2\x96\xa0</span> ", colours[i]);
		markup_text(f, s->name);
		fprintf(f, "</td><td>%" PRId64 " at the end, %" PRId64 " to %" PRId64 ", %" PRIu64 " updates</td></tr>\n",
		        s->value, s->lo, s->hi, s->n);
	}
	fputs("</table>\n", f);
	if (v->more_counters)
		fprintf(f, "<p class=\"note\">%" PRIu64 " updates of further counters not drawn</p>\n", v->more_counters);
}

/* Labels, most used first. */
static void labels(FILE *f, struct view *v, uint64_t nlabel_events)
{
	qsort(v->labels, v->nlabels, sizeof(v->labels[0]), by_count);
	fprintf(f, "<h3>Labels</h3>\n<p class=\"note\">%" PRIu64 " label events naming Lwt threads; the most used:</p>\n"
	           "<table class=\"facts\" id=\"trace-labels\">",
	        nlabel_events);
	for (size_t i = 0; i < v->nlabels && i < MAX_LABELS; i++) {
		fputs("<tr><td>", f);
		markup_text(f, v->labels[i].name);
		fprintf(f, "</td><td>%" PRIu64 "</td></tr>\n", v->labels[i].n);
	}
	fputs("</table>\n", f);
}

int trace_view_html(FILE *f, const struct mprof_trace *t)
{
	struct mprof_stats st;
	struct view *v = calloc(1, sizeof(*v));

	if (!v)
		return -1;
	trace_render_stats(t, &st);
	v->t0 = st.first_ts;
	v->t1 = st.last_ts;
	trace_facts(f, t, &st);
	gc_chart(f, t, v, &st);
	if (v->ns)
		counters(f, v);
	if (v->nlabels)
		labels(f, v, st.labels);
	fputs("</section>\n", f);
	free(v);
	return ferror(f) ? -1 : 0;
}
