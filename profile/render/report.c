/*
 * report.c - writing the HTML report (report.h): the page of one run, and
 * report_write, which writes it or the page of two runs compared
 * (report_compare.c).  The report's files are mapped in report_parts.h.
 *
 * The page is static markup plus JSON documents in
 * <script type="application/json"> elements, which report.js draws from.
 * JSON inside a script element ends at the first "</script", so every
 * '<', '>' and '&' in a string is written as a \u escape (util/safe_text's
 * inert JSON): the JSON is the same, and no name can end the element or
 * open markup.
 *
 * May call: report_compare.c (two runs; the movers), report_page.c (the
 * head, links, inline flame graph), report_data.c (the JSON, sizes),
 * prof_rank.c (the top table: profdb top's rows), trace_view.c,
 * eventlog_timeline.c (GHC's eventlog), the models it draws (profile/heap/,
 * profile/prof/, profile/eventlog/, profile/trace/), util/safe_text (markup).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "profile/eventlog/eventlog_timeline.h"
#include "report.h"
#include "report_parts.h"
#include "profile/trace/trace_view.h"
#include "util/safe_text.h"

/* The run's facts, links, live marker and warnings. */
static void facts_section(FILE *f, const struct report_input *in)
{
	fputs("<section id=\"facts\"><h2>Run</h2><table class=\"facts\">\n", f);
	for (size_t i = 0; i < in->nfacts; i++) {
		fputs("<tr><td>", f);
		markup_text(f, in->facts[2 * i]);
		fputs("</td><td>", f);
		markup_text(f, in->facts[2 * i + 1]);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	report_links_line(f, in);
	if (in->live_events) {
		fputs("<p id=\"live\" class=\"live\" data-events=\"", f);
		markup_text(f, in->live_events);
		if (in->refresh_ms)
			fprintf(f, "\" data-refresh=\"%u", in->refresh_ms);
		fputs("\">live: waiting for the guest</p>\n", f);
	}
	for (size_t i = 0; i < in->nwarnings; i++) {
		fputs("<div class=\"warn\">", f);
		markup_text(f, in->warnings[i]);
		fputs("</div>\n", f);
	}
	fputs("</section>\n", f);
}

/* A heap profile of one sample (a program that ended before its second;
 * an eventlog's -hT heap of a short run): no chart, which would be an
 * empty 0-1 s frame, but what the one sample holds, band by band, top
 * first. */
static void heap_one_sample(FILE *f, const struct hp_chart *c)
{
	char b[64];
	fprintf(f, "<section id=\"heap\"><h2>Heap</h2>\n<p class=\"note\" id=\"heap-note\" data-samples=\"1\">"
	           "The heap profile has one sample only, at %.3f s: a chart needs two (the program ended "
	           "before its second; a shorter interval, <code>-i</code>, gives more). What it held, by "
	           "band (hp2ps's rules: %zu trace bands dropped, %zu summed into OTHER):</p>\n"
	           "<div class=\"scroll\"><table class=\"heap-one\"><thead><tr><th>band</th><th>bytes</th></tr>"
	           "</thead><tbody>\n",
	        c->times[0], c->dropped_trace, c->merged_other);
	for (size_t r = 0; r < c->nbands; r++) {
		const struct hp_chart_band *band = &c->bands[c->nbands - 1 - r];
		fputs("<tr><td>", f);
		markup_text(f, band->name);
		report_fmt_size((uint64_t)(band->values[0] > 0 ? band->values[0] : 0), b, sizeof(b));
		fprintf(f, "</td><td class=\"num\">%s</td></tr>\n", b);
	}
	fputs("</tbody></table></div></section>\n", f);
}

/* The heap chart's section and its data (an empty chart for a live run
 * with no heap profile yet). */
static void heap_section(FILE *f, const struct report_input *in)
{
	static const struct hp_chart none;
	const struct hp_chart *chart = in->hp && in->chart ? in->chart : &none;
	if (chart->nsamples == 1 && !in->live_events)
		return heap_one_sample(f, chart);
	fputs("<section id=\"heap\"><h2>Heap</h2>\n<div id=\"heap-modes\">"
	      "<button data-mode=\"stacked\">stacked</button><button data-mode=\"line\">line"
	      "</button><button data-mode=\"normalised\">normalised</button></div>\n"
	      "<p class=\"note\" id=\"heap-note\">",
	      f);
	fprintf(f, "%zu samples; %zu bands shown (hp2ps's rules: %zu trace bands dropped, %zu "
	           "summed into OTHER). Click a band in the key to hide it.</p>\n",
	        chart->nsamples, chart->nbands, chart->dropped_trace, chart->merged_other);
	fputs("<div class=\"chart\"><svg id=\"heap-svg\" xmlns=\"http://www.w3.org/2000/svg\" "
	      "viewBox=\"0 0 900 360\"></svg><div id=\"heap-key\"></div></div>\n"
	      "<div id=\"heap-tip\"></div></section>\n"
	      "<script type=\"application/json\" id=\"heap-data\">{",
	      f);
	report_heap_json(f, in->hp ? in->hp->sample_unit : NULL, chart);
	fputs("}</script>\n", f);
}

/* The top cost centres, flat: profdb top's rows (GHC's own table where
 * the profile has one, in its order, then the rest), so the hot spot is
 * the first row whatever the call tree's shape. */
#define TOP_ROWS 20
static int top_section(FILE *f, const struct report_input *in)
{
	const struct time_profile *p = in->tp;
	size_t n = 0;
	struct tp_row *rows = tp_rank(p, TP_BY_TIME, NULL, &n);
	if (!rows && p->nccs)
		return -1;
	char ticks[32], alloc[64], c[32];
	report_fmt_count(p->total_ticks, ticks, sizeof(ticks));
	report_fmt_size(p->total_alloc, alloc, sizeof(alloc));
	fprintf(f, "<section id=\"top\"><h2>Top cost centres</h2>\n<p class=\"note\">total time "
	           "%.2f s (%s ticks), total alloc %s; the cost centres' own time and allocation, "
	           "the largest first, as <code>profdb top</code> lists them",
	        p->total_secs, ticks, alloc);
	if (p->table == TP_TABLE_USED)
		fprintf(f, " (GHC's own table for the %zu it lists)", p->nlisted);
	fputs(".</p>\n<div class=\"scroll\"><table id=\"top-table\" class=\"top\"><thead><tr>"
	      "<th>cost centre</th><th>module</th><th class=\"num\">%time</th><th class=\"num\">"
	      "%alloc</th><th class=\"num\">entries</th><th>source</th></tr></thead><tbody>\n",
	      f);
	for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
		const struct tp_row *r = &rows[i];
		const struct tp_cc *cc = &p->ccs[r->cc];
		if (i && rows[i - 1].listed && !r->listed)
			fputs("<tr class=\"sep\"><td colspan=\"6\">not in GHC's table (under 1% of the "
			      "time and of the allocation)</td></tr>\n",
			      f);
		fputs("<tr><td class=\"name\">", f);
		markup_text(f, cc->name);
		fputs("</td><td>", f);
		markup_text(f, cc->module);
		report_fmt_count(r->entries, c, sizeof(c));
		fprintf(f, "</td><td class=\"num\" style=\"background:linear-gradient(90deg,#f3c6a0 "
		           "%.1f%%,transparent 0)\">%.1f</td><td class=\"num\">%.1f</td><td class=\"num\" "
		           "data-entries=\"%llu\">%s</td><td class=\"src\">",
		        r->time > 100 ? 100 : r->time, r->time, r->alloc, (unsigned long long)r->entries, c);
		markup_text(f, cc->src);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	if (n > TOP_ROWS)
		fprintf(f, "<p class=\"note\">The %d largest of %zu cost centres; every one is in the "
		           "call tree below.</p>\n",
		        TOP_ROWS, n);
	fputs("</section>\n", f);
	free(rows);
	return 0;
}

/* The cost-centre tree and the flame graphs of a time profile. */
static int cost_centres_section(FILE *f, const struct report_input *in)
{
	fputs("<section id=\"cost-centres\"><h2>Call tree</h2>\n<div class=\"tools\">"
	      "<input id=\"tree-search\" type=\"search\" placeholder=\"search names\">"
	      "<button id=\"tree-open\">open all</button><span id=\"tree-count\" "
	      "class=\"note\"></span></div>\n<div class=\"scroll\"><table id=\"tree\"><thead><tr>"
	      "</tr></thead><tbody></tbody></table></div></section>\n"
	      "<script type=\"application/json\" id=\"tree-data\">{",
	      f);
	report_tree_json(f, in->tp);
	fputs("}</script>\n<script>profsvcReport.tree();</script>\n"
	      "<section class=\"flame\" id=\"flame\"><h2>Flame graph (time)</h2>\n",
	      f);
	if (report_flame_inline(f, NULL, in->tp, in->title, NULL) != 0)
		return -1;
	fputs("</section>\n", f);
	if (in->against_tp) {
		fputs("<section class=\"flame\" id=\"flame-diff\"><h2>Differential flame graph "
		      "(time)</h2>\n",
		      f);
		if (report_flame_inline(f, in->against_tp, in->tp, in->title, in->against_title) != 0)
			return -1;
		fputs("</section>\n", f);
	}
	return 0;
}

int report_write(FILE *f, const struct report_input *in)
{
	if (in->sides)
		return report_compare_write(f, in);
	report_head(f, in);
	/* the hot spot first: the flat table of the top cost centres */
	if (in->samples ? report_samples_html(f, in) != 0 : in->tp && top_section(f, in) != 0)
		return -1;
	facts_section(f, in);
	if ((in->hp && in->chart) || (in->live_events && !in->refresh_ms && !in->no_heap))
		heap_section(f, in);
	if (in->timeline_shown &&
	    el_timeline_html(f, in->timeline, in->timeline_gc, in->timeline_follow, in->timeline_note) != 0)
		return -1;
	if (in->trace && trace_view_html(f, in->trace, in->trace_api) != 0)
		return -1;
	/* the script right after the chart's data: the chart is drawn before
	 * the browser has read the tree and the flame graph below */
	fprintf(f, "<script>\n%s</script>\n", report_js);
	if (in->samples)
		fprintf(f, "<script>\n%s</script>\n", samples_js);
	if (in->tp && cost_centres_section(f, in) != 0)
		return -1;
	if (in->against_title && report_changes_html(f, in) != 0)
		return -1;
	return report_page_end(f, in);
}
