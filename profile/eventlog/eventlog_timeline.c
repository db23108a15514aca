/*
 * eventlog_timeline.c - a GHC eventlog's timeline: gathered event by event
 * and drawn as the report's SVG section (eventlog_timeline.h).
 *
 * The pauses are eventlog_gc.c's: its spans, sorted once finished, merged
 * into windows the same way, so the bars are as many as `profdb gc` counts
 * pauses.  A collection's generation (GC_STATS_GHC, written by its leader
 * near the end of the collection) belongs to the last window that started
 * at or before it.  Lines and lanes are thinned to what a pixel can show
 * (the largest value of a column; spans closer than a quarter pixel
 * joined), so a long log draws as a page of bounded size.
 *
 * No SQLite, no Xen.  May call: ghc_eventlog.h's types, eventlog_summary.h,
 * heap_svg.h (heap_fmt_bytes), util/safe_text (markup), util/grow.h,
 * libc.
 */
#include "config.h"

#include "eventlog_timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/heap/heap_svg.h"
#include "util/grow.h"
#include "util/safe_text.h"

/* The drawing's geometry (SVG user units). */
#define W 1000.0
#define L 96.0               /* lane labels left of the plot */
#define PW (W - L - 16.0)    /* the plot's width */
#define MK_H 32.0            /* marker labels, two rows */
#define GC_TOP (MK_H + 4.0)
#define GC_H 34.0
#define HEAP_TOP (GC_TOP + GC_H + 8.0)
#define HEAP_H 110.0
#define LANES_TOP (HEAP_TOP + HEAP_H + 10.0)
#define LANE_H 16.0
#define AXIS_H 30.0

void el_timeline_init(struct el_timeline *t)
{
	memset(t, 0, sizeof(*t));
}

void el_timeline_free(struct el_timeline *t)
{
	free(t->heap);
	free(t->live);
	free(t->gens);
	for (size_t i = 0; i < EL_TL_MAX_LANES; i++)
		free(t->lanes[i].runs);
	for (size_t i = 0; i < t->nmarkers; i++)
		free(t->markers[i].label);
	free(t->markers);
	memset(t, 0, sizeof(*t));
}

/* Room for one more element in arr (n used of cap); 0, or -1. */
#define ROOM(arr, cap, n) GROW_FROM(arr, cap, (n) + 1, 64)

static int add_point(struct el_timeline *t, struct el_tl_point **pts, size_t *n, size_t *cap,
                     const struct gel_event *ev)
{
	if (*n >= EL_TL_MAX_POINTS) {
		t->dropped++;
		return 0;
	}
	if (ROOM(*pts, *cap, *n) != 0)
		return -1;
	(*pts)[(*n)++] = (struct el_tl_point){ev->time_ns, ev->value};
	return 0;
}

static int on_thread(struct el_timeline *t, const struct gel_event *ev)
{
	if (ev->cap < 0)
		return 0;
	if ((size_t)ev->cap >= EL_TL_MAX_LANES) {
		t->other_caps++;
		return 0;
	}
	struct el_tl_lane *ln = &t->lanes[ev->cap];
	ln->seen = 1;
	if ((size_t)ev->cap + 1 > t->nlanes)
		t->nlanes = (size_t)ev->cap + 1;
	if (ev->type == GEL_RUN_THREAD) {
		ln->open = ev->time_ns + 1;
		return 0;
	}
	if (!ln->open)
		return 0; /* a stop without its run (the log began mid-run) */
	uint64_t start = ln->open - 1;
	ln->open = 0;
	if (t->nruns >= EL_TL_MAX_RUNS) {
		t->dropped++;
		return 0;
	}
	if (ROOM(ln->runs, ln->cap, ln->n) != 0)
		return -1;
	ln->runs[ln->n++] = (struct el_tl_span){start, ev->time_ns > start ? ev->time_ns : start};
	t->nruns++;
	return 0;
}

static int on_marker(struct el_timeline *t, const struct gel_event *ev)
{
	if (t->nmarkers >= EL_TL_MAX_MARKERS) {
		t->dropped++;
		return 0;
	}
	if (ROOM(t->markers, t->markers_cap, t->nmarkers) != 0)
		return -1;
	char *s = strdup(ev->nstrs && ev->strs[0].s ? ev->strs[0].s : "");
	if (!s)
		return -1;
	t->markers[t->nmarkers++] = (struct el_tl_marker){ev->time_ns, s};
	return 0;
}

int el_timeline_add(struct el_timeline *t, const struct gel_event *ev)
{
	if (t->failed)
		return -1;
	if (ev->time_ns > t->end_ns)
		t->end_ns = ev->time_ns;
	if (!ev->decoded)
		return 0;
	int rc = 0;
	switch (ev->type) {
	case GEL_HEAP_SIZE:
		rc = add_point(t, &t->heap, &t->nheap, &t->heap_cap, ev);
		break;
	case GEL_HEAP_LIVE:
		rc = add_point(t, &t->live, &t->nlive, &t->live_cap, ev);
		break;
	case GEL_GC_STATS_GHC:
		if (t->ngens >= EL_TL_MAX_POINTS) {
			t->dropped++;
			break;
		}
		if ((rc = ROOM(t->gens, t->gens_cap, t->ngens)) == 0)
			t->gens[t->ngens++] = (struct el_tl_gen){ev->time_ns, ev->gc.gen};
		break;
	case GEL_RUN_THREAD:
	case GEL_STOP_THREAD:
		rc = on_thread(t, ev);
		break;
	case GEL_USER_MARKER:
		rc = on_marker(t, ev);
		break;
	}
	if (rc != 0)
		t->failed = 1;
	return rc;
}

static int cmp_point(const void *a, const void *b)
{
	const struct el_tl_point *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

static int cmp_gen(const void *a, const void *b)
{
	const struct el_tl_gen *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

static int cmp_span(const void *a, const void *b)
{
	const struct el_tl_span *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_marker(const void *a, const void *b)
{
	const struct el_tl_marker *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

void el_timeline_finish(struct el_timeline *t)
{
	/* capabilities' blocks are not in time order: everything sorted once */
	for (size_t i = 0; i < t->nlanes; i++) {
		struct el_tl_lane *ln = &t->lanes[i];
		if (ln->open && t->nruns < EL_TL_MAX_RUNS &&
		    ROOM(ln->runs, ln->cap, ln->n) == 0) {
			ln->runs[ln->n++] = (struct el_tl_span){ln->open - 1, t->end_ns};
			t->nruns++;
		}
		ln->open = 0;
		if (ln->n)
			qsort(ln->runs, ln->n, sizeof(*ln->runs), cmp_span);
	}
	if (t->nheap)
		qsort(t->heap, t->nheap, sizeof(*t->heap), cmp_point);
	if (t->nlive)
		qsort(t->live, t->nlive, sizeof(*t->live), cmp_point);
	if (t->ngens)
		qsort(t->gens, t->ngens, sizeof(*t->gens), cmp_gen);
	if (t->nmarkers)
		qsort(t->markers, t->nmarkers, sizeof(*t->markers), cmp_marker);
}

/* ---- drawing ------------------------------------------------------------------- */

/* "812 us", "2.31 ms", "1.204 s" */
static void fmt_dur(uint64_t ns, char *out, size_t len)
{
	if (ns < 1000000)
		snprintf(out, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(out, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(out, len, "%.3f s", (double)ns / 1e9);
}

/* A size as the report's pages write it (report.c's report_fmt_bytes,
 * report.js's fmtBytes): "512 B", "28 MB". */
static void fmt_bytes(uint64_t v, char *out, size_t len)
{
	char n[32];
	heap_fmt_bytes((double)v, n, sizeof(n));
	size_t k = strlen(n);
	char unit = k && (n[k - 1] < '0' || n[k - 1] > '9') ? n[k - 1] : 0;
	if (unit)
		n[k - 1] = '\0';
	char u[3] = {unit ? unit : 'B', unit ? 'B' : '\0', '\0'};
	snprintf(out, len, "%s %s", n, u);
}

struct window {
	uint64_t start, end;
	int gen;                      /* -1: no GC_STATS_GHC in it */
	size_t n;                     /* pauses merged into one bar */
};

/* The GC windows from g's spans (sorted by el_gc_finish), merged as
 * eventlog_gc.c merges them; each with its generation.  NULL and *n 0
 * when none (or out of memory: *failed). */
static struct window *windows_of(const struct el_timeline *t, const struct el_gc *g, size_t *n, int *failed)
{
	*n = 0;
	if (!g || !g->nspans)
		return NULL;
	struct window *w = malloc(g->nspans * sizeof(*w));
	if (!w) {
		*failed = 1;
		return NULL;
	}
	struct window cur = {g->spans[0].start, g->spans[0].end, -1, 1};
	for (size_t i = 1; i <= g->nspans; i++) {
		if (i < g->nspans && g->spans[i].start <= cur.end) {
			if (g->spans[i].end > cur.end)
				cur.end = g->spans[i].end;
			continue;
		}
		w[(*n)++] = cur;
		if (i < g->nspans)
			cur = (struct window){g->spans[i].start, g->spans[i].end, -1, 1};
	}
	/* generations: the last window starting at or before each stats event */
	size_t k = 0;
	for (size_t i = 0; t && i < t->ngens; i++) {
		while (k + 1 < *n && w[k + 1].start <= t->gens[i].t)
			k++;
		if ((int)t->gens[i].gen > w[k].gen)
			w[k].gen = t->gens[i].gen;
	}
	return w;
}

/* More windows than EL_TL_MAX_BARS: neighbours closer than min_gap ns
 * drawn as one bar (its n says how many). */
static void merge_bars(struct window *w, size_t *n, uint64_t min_gap)
{
	if (*n <= EL_TL_MAX_BARS || !*n)
		return;
	size_t out = 0;
	for (size_t i = 1; i < *n; i++) {
		if (w[i].start - w[out].end < min_gap) {
			w[out].end = w[i].end > w[out].end ? w[i].end : w[out].end;
			w[out].n += w[i].n;
			if (w[i].gen > w[out].gen)
				w[out].gen = w[i].gen;
		} else {
			w[++out] = w[i];
		}
	}
	*n = out + 1;
}

static const char *gen_colour(int gen)
{
	static const char *const c[] = {"#f4a582", "#d6604d", "#b2182b", "#67001f"};
	if (gen < 0)
		return "#999";
	return c[gen < 3 ? gen : 3];
}

/* A step of 1, 2 or 5 times a power of ten giving about 8 ticks over span s. */
static double tick_step(double span)
{
	double raw = span / 8, p = pow(10, floor(log10(raw > 0 ? raw : 1e-9)));
	double m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void figures_table(FILE *f, const struct el_gc *g)
{
	char a[64], b[64], c[64];
	fputs("<table class=\"facts gc-figures\">\n", f);
	fprintf(f, "<tr><td>collections</td><td id=\"tl-collections\">%llu", (unsigned long long)g->collections);
	unsigned last = 0;
	for (unsigned i = 0; i < EL_GENS; i++)
		if (g->by_gen[i])
			last = i + 1;
	for (unsigned i = 0; i < last; i++)
		fprintf(f, "%sgen %u: %llu", i ? ", " : " (", i, (unsigned long long)g->by_gen[i]);
	fputs(last ? ")</td></tr>\n" : "</td></tr>\n", f);
	fmt_dur(g->total_pause_ns, a, sizeof(a));
	fmt_dur(g->longest_pause_ns, b, sizeof(b));
	fprintf(f, "<tr><td>pauses</td><td id=\"tl-pauses\">%llu</td></tr>\n<tr><td>total pause</td><td>%s"
	           "</td></tr>\n<tr><td>longest pause</td><td>%s</td></tr>\n",
	        (unsigned long long)g->pauses_n, a, b);
	fmt_dur(g->p50_ns, a, sizeof(a));
	fmt_dur(g->p90_ns, b, sizeof(b));
	fmt_dur(g->p99_ns, c, sizeof(c));
	fprintf(f, "<tr><td>pause p50 / p90 / p99</td><td>%s / %s / %s</td></tr>\n", a, b, c);
	fmt_dur(g->elapsed_ns, a, sizeof(a));
	fprintf(f, "<tr><td>GC share</td><td>%.1f%% of %s</td></tr>\n", g->gc_share * 100, a);
	fmt_bytes(g->peak_live, a, sizeof(a));
	fmt_bytes(g->peak_heap, b, sizeof(b));
	fprintf(f, "<tr><td>peak live data</td><td>%s</td></tr>\n<tr><td>peak heap size</td><td>%s</td></tr>\n", a,
	        b);
	fmt_bytes(g->allocated, a, sizeof(a));
	fmt_bytes(g->copied, b, sizeof(b));
	fprintf(f, "<tr><td>allocated</td><td>%s</td></tr>\n<tr><td>copied</td><td>%s</td></tr>\n", a, b);
	if (g->unmatched)
		fprintf(f, "<tr><td>unmatched GC edges</td><td>%llu</td></tr>\n", (unsigned long long)g->unmatched);
	fputs("</table>\n", f);
}

/* Plot x of time ns (0 .. PW). */
static double px(uint64_t ns, double end)
{
	return (double)ns / end * PW;
}

static void axis(FILE *f, double end_ns, double y)
{
	double span = end_ns / 1e9, step = tick_step(span);
	fprintf(f, "<g class=\"tl-axis\" data-y=\"%.1f\">", y);
	for (int i = 0; i <= 40; i++) {
		double s = step * i;
		if (s > span * 1.0001)
			break;
		double x = L + s / span * PW;
		fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
		           "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.6g</text>",
		        x, x, y, y + 4, x, y + 16, s);
	}
	fprintf(f, "</g><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666\">s</text>\n", L - 6, y + 16);
}

static void heap_point(FILE *f, const struct el_tl_point *p, double end, double vmax)
{
	fprintf(f, "%.2f,%.2f ", px(p->t, end), HEAP_TOP + HEAP_H - (double)p->v / vmax * HEAP_H);
}

/* A line of points thinned to the largest value per half pixel. */
static void heap_line(FILE *f, const struct el_tl_point *p, size_t n, double end, double vmax,
                      const char *colour, const char *cls, const char *what)
{
	if (!n)
		return;
	/* data-*: what the hover turns a point's y back into bytes with */
	fprintf(f, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
	           "vector-effect=\"non-scaling-stroke\" data-what=\"%s\" data-vmax=\"%.0f\" data-base=\"%.1f\" "
	           "data-h=\"%.1f\" points=\"",
	        cls, colour, what, vmax, HEAP_TOP + HEAP_H, HEAP_H);
	long col = -1;
	size_t best = 0;
	int have = 0;
	for (size_t i = 0; i < n; i++) {
		long c = (long)(px(p[i].t, end) * 2);
		if (have && c == col) {
			if (p[i].v > p[best].v)
				best = i;
			continue;
		}
		if (have)
			heap_point(f, &p[best], end, vmax);
		col = c;
		best = i;
		have = 1;
	}
	if (have)
		heap_point(f, &p[best], end, vmax);
	fprintf(f, "\"><title>%s</title></polyline>\n", what);
}

static void lanes(FILE *f, const struct el_timeline *t, double end)
{
	uint64_t gap = (uint64_t)(end / (PW * 4)); /* a quarter pixel */
	for (size_t c = 0; c < t->nlanes; c++) {
		const struct el_tl_lane *ln = &t->lanes[c];
		double y = LANES_TOP + (double)c * LANE_H;
		fprintf(f, "<g class=\"lane\" data-cap=\"%zu\" data-spans=\"%zu\" fill=\"#4c9a2a\">", c, ln->n);
		for (size_t i = 0; i < ln->n;) {
			uint64_t s = ln->runs[i].start, e = ln->runs[i].end;
			size_t j = i + 1;
			for (; j < ln->n && ln->runs[j].start <= e + gap; j++)
				if (ln->runs[j].end > e)
					e = ln->runs[j].end;
			double w = px(e, end) - px(s, end);
			fprintf(f, "<rect class=\"run\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>", px(s, end),
			        y + 2, w > 0.3 ? w : 0.3, LANE_H - 4);
			i = j;
		}
		fputs("</g>\n", f);
	}
}

static void gc_bars(FILE *f, const struct window *w, size_t n, double end)
{
	char d[64], at[64];
	fputs("<g class=\"gc-bars\">", f);
	for (size_t i = 0; i < n; i++) {
		double x = px(w[i].start, end), wd = px(w[i].end, end) - x;
		fmt_dur(w[i].end - w[i].start, d, sizeof(d));
		snprintf(at, sizeof(at), "%.6f s", (double)w[i].start / 1e9);
		fprintf(f, "<rect class=\"gc\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
		           "data-gen=\"%d\" data-start-ns=\"%llu\" data-ns=\"%llu\" data-n=\"%zu\"><title>",
		        x, GC_TOP, wd > 0.8 ? wd : 0.8, GC_H, gen_colour(w[i].gen), w[i].gen,
		        (unsigned long long)w[i].start, (unsigned long long)(w[i].end - w[i].start), w[i].n);
		if (w[i].n > 1)
			fprintf(f, "%zu GC pauses from %s, %s", w[i].n, at, d);
		else if (w[i].gen >= 0)
			fprintf(f, "GC generation %d: %s at %s", w[i].gen, d, at);
		else
			fprintf(f, "GC: %s at %s", d, at);
		fputs("</title></rect>", f);
	}
	fputs("</g>\n", f);
}

static void markers(FILE *f, const struct el_timeline *t, double end, double bottom, int labels)
{
	for (size_t i = 0; i < t->nmarkers; i++) {
		double x = px(t->markers[i].t, end);
		if (!labels) {
			fprintf(f, "<line class=\"marker\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" "
			           "stroke=\"#5e35b1\" stroke-dasharray=\"4 3\" vector-effect=\"non-scaling-stroke\"><title>",
			        x, x, MK_H, bottom);
			markup_text_cut(f, t->markers[i].label, 200);
			fputs("</title></line>", f);
			continue;
		}
		int right = x > PW * 0.75; /* near the end: the label left of its line */
		fprintf(f, "<text class=\"tl-mlabel\" data-x=\"%.2f\" x=\"%.2f\" y=\"%.1f\" fill=\"#5e35b1\"%s>", x,
		        L + x + (right ? -2 : 2), i % 2 ? 27.0 : 12.0, right ? " text-anchor=\"end\"" : "");
		markup_text_cut(f, t->markers[i].label, 28);
		fputs("<title>", f);
		markup_text_cut(f, t->markers[i].label, 200);
		fputs("</title></text>", f);
	}
	fputc('\n', f);
}

static int drawing(FILE *f, const struct el_timeline *t, const struct el_gc *g)
{
	int failed = 0;
	size_t nw;
	struct window *w = windows_of(t, g, &nw, &failed);
	if (failed)
		return -1;
	double end = (double)(t->end_ns > g->elapsed_ns ? t->end_ns : g->elapsed_ns);
	if (end <= 0)
		end = 1;
	merge_bars(w, &nw, (uint64_t)(end / (PW * 4)));
	size_t nl = t->nlanes;
	double bottom = LANES_TOP + (double)nl * LANE_H, H = bottom + AXIS_H;
	uint64_t vmax = 1;
	for (size_t i = 0; i < t->nheap; i++)
		if (t->heap[i].v > vmax)
			vmax = t->heap[i].v;
	for (size_t i = 0; i < t->nlive; i++)
		if (t->live[i].v > vmax)
			vmax = t->live[i].v;
	char vb[32];
	fmt_bytes(vmax, vb, sizeof(vb));
	fprintf(f, "<svg id=\"tl-svg\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
	           "font-size=\"11\" data-end-ns=\"%.0f\" data-plot-x=\"%.0f\" data-plot-w=\"%.0f\" data-bars=\"%zu\">\n",
	        W, H, end, L, PW, nw);
	/* lane labels and frames (outside the zoomed plot) */
	fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">GC pauses</text>", L - 6, GC_TOP + GC_H / 2 + 4);
	fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">heap</text>"
	           "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666\">%s</text>"
	           "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666\">0</text>",
	        L - 6, HEAP_TOP + HEAP_H / 2 + 4, L - 6, HEAP_TOP + 10, vb, L - 6, HEAP_TOP + HEAP_H);
	for (size_t c = 0; c < nl; c++)
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">cap %zu</text>", L - 6,
		        LANES_TOP + (double)c * LANE_H + LANE_H - 4, c);
	fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#ccc\"/>"
	           "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
	        L, GC_TOP, PW, GC_H, L, HEAP_TOP, PW, HEAP_H);
	if (nl)
		fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
		        L, LANES_TOP, PW, (double)nl * LANE_H);
	/* the plot: zoomed by its viewBox (report.js) */
	fprintf(f, "<svg class=\"tl-plot\" x=\"%.0f\" y=\"0\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	           "preserveAspectRatio=\"none\">\n",
	        L, PW, bottom, PW, bottom);
	gc_bars(f, w, nw, end);
	heap_line(f, t->heap, t->nheap, end, (double)vmax, "#1565c0", "heap-size", "heap size");
	heap_line(f, t->live, t->nlive, end, (double)vmax, "#ef6c00", "heap-live", "live data");
	lanes(f, t, end);
	markers(f, t, end, bottom, 0);
	fputs("</svg>\n", f);
	markers(f, t, end, bottom, 1);
	axis(f, end, bottom + 2);
	fputs("</svg>\n", f);
	free(w);
	return 0;
}

int el_timeline_html(FILE *f, const struct el_timeline *t, const struct el_gc *g, const char *follow_url,
                     const char *note)
{
	fputs("<section id=\"timeline\"", f);
	if (follow_url) {
		fputs(" data-follow=\"", f);
		markup_text(f, follow_url);
		fputc('"', f);
	}
	if (g)
		fprintf(f, " data-pauses=\"%llu\" data-markers=\"%zu\"", (unsigned long long)g->pauses_n,
		        t ? t->nmarkers : 0);
	fputs("><h2>Timeline (GHC eventlog)</h2>\n", f);
	if (note) {
		fputs("<div class=\"warn\">", f);
		markup_text(f, note);
		fputs("</div>\n", f);
	}
	if (!t || !g) {
		fputs("<p class=\"note\" id=\"tl-empty\">no whole event yet</p></section>\n", f);
		return ferror(f) ? -1 : 0;
	}
	fputs("<div class=\"tl-wrap\">", f);
	figures_table(f, g);
	fputs("<div class=\"tl-main\"><div class=\"tools\"><button data-zoom=\"in\">zoom in</button>"
	      "<button data-zoom=\"out\">zoom out</button><button data-zoom=\"reset\">whole run</button>"
	      "<span class=\"note\">wheel: zoom at the pointer; drag: move</span></div>\n",
	      f);
	if (drawing(f, t, g) != 0)
		return -1;
	fputs("<div id=\"tl-tip\"></div>\n<p class=\"note\"><span class=\"sw\" style=\"background:#f4a582\"></span>"
	      "gen 0 <span class=\"sw\" style=\"background:#d6604d\"></span>gen 1 "
	      "<span class=\"sw\" style=\"background:#b2182b\"></span>gen 2+ pauses; "
	      "<span class=\"sw\" style=\"background:#1565c0\"></span>heap size "
	      "<span class=\"sw\" style=\"background:#ef6c00\"></span>live data; "
	      "<span class=\"sw\" style=\"background:#4c9a2a\"></span>a thread running; "
	      "<span class=\"sw\" style=\"background:#5e35b1\"></span>user markers.",
	      f);
	if (t->dropped)
		fprintf(f, " %llu points, spans or markers past this page's bounds are not drawn.",
		        (unsigned long long)t->dropped);
	if (t->other_caps)
		fprintf(f, " Capabilities past %u are not drawn.", EL_TL_MAX_LANES);
	fputs("</p></div></div></section>\n", f);
	return ferror(f) ? -1 : 0;
}
