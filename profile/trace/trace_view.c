/*
 * trace_view.c - a MirageOS trace as a section of the HTML report (and so
 * of profdb serve's run page): its facts (packets kept and lost, events,
 * time span), events by kind, GC figures, the thread timeline (threads,
 * arrows, switches, GC pauses, each counter on its own axis: the model
 * trace_timeline.c writes, inlined, drawn by trace_timeline.js, which a
 * served page lets ask the server for a window's detail), each counter's
 * figures (`increase` summed, `counter` as set), and its labels.  Every
 * name comes from the guest and goes through util/safe_text's markup_text
 * (or, in the model, safe_text_json_inert).
 *
 * May call: trace_render.c (the walk, the stats), trace_timeline.c, mprof.c
 * (event names), util/safe_text (markup).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace_render.h"
#include "trace_timeline.h"
#include "trace_view.h"
#include "util/safe_text.h"

#define MAX_SERIES 8
#define MAX_LABELS 20

struct series {
	char name[64];
	int64_t value;       /* running value */
	int64_t lo, hi;
	uint64_t n;
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
};

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

/* GC figures, and the thread timeline: its model inlined (the whole
 * run, bounded), drawn by trace_timeline.js; api: where a served page
 * asks for a window's detail, a thread's events and a live run's model
 * (NULL in a saved report). */
static int timeline(FILE *f, const struct mprof_trace *t, const struct mprof_stats *st, const char *api)
{
	char a[32], b[32], c[32];

	fmt_ns(a, sizeof(a), st->gc_total_ns);
	fmt_ns(b, sizeof(b), st->gc_max_ns);
	fmt_ns(c, sizeof(c), st->gc_count ? st->gc_total_ns / st->gc_count : 0);
	fprintf(f, "<p class=\"note\" id=\"trace-gc\">GC: %" PRIu64 " pauses, %s in all, mean %s, longest %s</p>\n",
	        st->gc_count, a, c, b);
	fputs("<h3>Thread timeline</h3>\n<div id=\"trace-tl\"", f);
	if (api) {
		fputs(" data-api=\"", f);
		markup_text(f, api);
		fputc('"', f);
	}
	fputs("><p class=\"note\">Each Lwt thread a line from its creation to its end (darker: resolved), "
	      "arrows for <span class=\"tt-k creates\">creates</span>, <span class=\"tt-k read\">read</span>, "
	      "<span class=\"tt-k signal\">signal</span>, <span class=\"tt-k fulfills\">fulfills</span>, "
	      "<span class=\"tt-k fails\">fails</span>, <span class=\"tt-k becomes\">becomes</span>; which thread "
	      "runs and GC pauses on top, counters below. Threads are grouped by label: click a group's "
	      "header to fold it to one lane. Wheel or + / \xe2\x88\x92 to zoom, drag or \xe2\x86\x90 "
	      "\xe2\x86\x92 to pan, Shift+wheel or \xe2\x86\x91 \xe2\x86\x93 to scroll the lanes, [ ] for "
	      "shorter or taller rows, click a thread for its events.</p>\n"
	      "<div class=\"tt-buttons\"><button data-tt=\"in\">zoom in</button><button data-tt=\"out\">zoom out"
	      "</button><button data-tt=\"left\">\xe2\x97\x80</button><button data-tt=\"right\">\xe2\x96\xb6</button>"
	      "<button data-tt=\"all\">whole run</button> <button data-tt=\"taller\">taller rows</button>"
	      "<button data-tt=\"shorter\">shorter rows</button><button data-tt=\"fold\">fold all</button>"
	      "<button data-tt=\"unfold\">unfold all</button></div>\n"
	      "<p class=\"note\" id=\"trace-tl-note\"></p>\n"
	      "<div class=\"tt-scroll\" tabindex=\"-1\"><svg class=\"trace-tl\" tabindex=\"0\" "
	      "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 900 60\"></svg>\n"
	      "<div class=\"tt-lanes\"><svg class=\"tt-threads\" xmlns=\"http://www.w3.org/2000/svg\" "
	      "viewBox=\"0 0 900 100\"></svg></div>\n"
	      "<svg class=\"tt-counters\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 900 40\"></svg></div>\n"
	      "<div id=\"trace-tl-tip\" class=\"note\"></div>\n"
	      "<div id=\"trace-tl-events\"></div></div>\n"
	      "<script type=\"application/json\" id=\"trace-tl-data\">", f);
	if (trace_timeline_json(f, t, &(struct tt_window){.whole = 1}) != 0)
		return -1;
	fprintf(f, "</script>\n<script>\n%s</script>\n", trace_timeline_js);
	return 0;
}

/* Each counter's figures (drawn on its own axis in the timeline). */
static void counters(FILE *f, const struct view *v)
{
	fputs("<h3>Counters</h3>\n<p class=\"note\"><code>increase</code> events summed, <code>counter</code> "
	      "events as set</p>\n<table class=\"facts\" id=\"trace-counter-key\">", f);
	for (size_t i = 0; i < v->ns; i++) {
		const struct series *s = &v->s[i];
		fputs("<tr><td>", f);
		markup_text(f, s->name);
		fprintf(f, "</td><td>%" PRId64 " at the end, %" PRId64 " to %" PRId64 ", %" PRIu64 " updates</td></tr>\n",
		        s->value, s->lo, s->hi, s->n);
	}
	fputs("</table>\n", f);
	if (v->more_counters)
		fprintf(f, "<p class=\"note\">%" PRIu64 " updates of further counters not listed</p>\n", v->more_counters);
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

int trace_view_html(FILE *f, const struct mprof_trace *t, const char *api)
{
	struct mprof_stats st;
	struct view *v = calloc(1, sizeof(*v));

	if (!v)
		return -1;
	trace_render_stats(t, &st);
	v->t0 = st.first_ts;
	v->t1 = st.last_ts;
	trace_render_walk(t, collect, v);
	trace_facts(f, t, &st);
	if (timeline(f, t, &st, api) != 0) {
		free(v);
		return -1;
	}
	if (v->ns)
		counters(f, v);
	if (v->nlabels)
		labels(f, v, st.labels);
	fputs("</section>\n", f);
	free(v);
	return ferror(f) ? -1 : 0;
}
