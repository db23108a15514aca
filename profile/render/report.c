/*
 * report.c - writing the HTML report (report.h).
 *
 * The page is static markup plus JSON documents in
 * <script type="application/json"> elements, which report.js draws from.
 * JSON inside a script element ends at the first "</script", so every
 * '<', '>' and '&' in a string is written as a \u escape: the JSON is the
 * same, and no name can end the element or open markup.
 *
 * May call: prof_compare.c and heap_compare.c (the changes), flame.c, heap_svg.c and
 * heap_colours.c (the band colours), prof_rank.c (the top table: profdb top's rows), trace_view.c,
 * eventlog_timeline.c (GHC's eventlog), util/safe_text (markup, inert JSON).
 */
#include "config.h"

#include "profile/render/report.h"
#include "profile/trace/trace_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/render/flame.h"
#include "profile/heap/heap_colours.h"
#include "profile/heap/heap_compare.h"
#include "profile/heap/heap_svg.h"
#include "profile/prof/prof_compare.h"
#include "util/safe_text.h"

void report_fmt_count(uint64_t v, char *buf, size_t len)
{
	char digits[24];
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v), o = 0;
	for (size_t i = 0; i < n && o + 1 < len; i++) {
		if (i && (n - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (len)
		buf[o < len ? o : len - 1] = '\0';
}

void report_fmt_bytes(double v, char *buf, size_t len)
{
	static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
	int u = 0;
	while (v >= 1000 && u < 6) {
		v /= 1000;
		u++;
	}
	/* as report.js's fmtBytes: 512 B, 8.2 kB, 51 MB (halves up, as
	 * JavaScript's toFixed) */
	if (u && v < 10)
		snprintf(buf, len, "%.1f %s", floor(v * 10 + 0.5) / 10, units[u]);
	else
		snprintf(buf, len, "%.0f %s", floor(v + 0.5), units[u]);
}

void report_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	char h[32], c[32];
	report_fmt_bytes((double)bytes, h, sizeof(h));
	report_fmt_count(bytes, c, sizeof(c));
	if (bytes < 1000)
		snprintf(buf, len, "%s", h);
	else
		snprintf(buf, len, "%s (%s bytes)", h, c);
}

/* The other run's heap (profdb report --json --against): its total per
 * sample, every band. */
static void against_json(FILE *f, const struct hp_profile *hp, const char *title)
{
	double *tot = calloc(hp->nsamples ? hp->nsamples : 1, sizeof(*tot));
	if (!tot)
		return;
	for (size_t i = 0; i < hp->nbands; i++) {
		struct hp_cursor c = HP_CURSOR_INIT;
		struct hp_point pt;
		while (hp_next(&hp->bands[i], &c, &pt))
			if (pt.sample < hp->nsamples)
				tot[pt.sample] += (double)pt.bytes;
	}
	fputs(",\"against\":{\"name\":", f);
	safe_text_json_inert(f, title ? title : "");
	fputs(",\"times\":[", f);
	for (size_t k = 0; k < hp->nsamples; k++)
		fprintf(f, "%s%.6g", k ? "," : "", hp->times[k]);
	fputs("],\"total\":[", f);
	for (size_t k = 0; k < hp->nsamples; k++)
		fprintf(f, "%s%.0f", k ? "," : "", tot[k]);
	fputs("]}", f);
	free(tot);
}

/* What changed since the other run: the movers, as profdb diff lists them. */
static int changes_html(FILE *f, const struct report_input *in)
{
	if (in->sides) {
		fputs("<section id=\"changes\"><h2>Biggest movers</h2>\n", f);
		if (!in->tp || !in->against_tp)
			fputs("<p class=\"note\">No call stacks to compare: both runs need a time profile.</p>\n", f);
	} else {
		fputs("<section id=\"changes\"><h2>Compared with ", f);
		markup_text(f, in->against_title ? in->against_title : "");
		fputs("</h2>\n", f);
	}
	if (in->tp && in->against_tp) {
		size_t n;
		struct cmp_stack *cs = cmp_stacks(in->against_tp, in->tp, &n);
		if (!cs)
			return -1;
		/* movers come first: when the first did not move, none did */
		if (!n || (fabs(cs[0].time[1] - cs[0].time[0]) < 0.05 && fabs(cs[0].alloc[1] - cs[0].alloc[0]) < 0.05 &&
		           cs[0].node[0] != TP_NONE && cs[0].node[1] != TP_NONE)) {
			fprintf(f, "<p class=\"note\">%zu call stacks, matched by their path of functions: none "
			           "moved by 0.1 or more.</p>\n", n);
			free(cs);
			goto bands;
		}
		fprintf(f, "<p class=\"note\">%zu call stacks, matched by their path of functions; the "
		           "biggest movers first.</p>\n<div class=\"scroll\"><table class=\"changes\" "
		           "id=\"stack-movers\"><thead><tr><th>%%time "
		           "before</th><th>after</th><th>change</th><th>%%alloc before</th><th>after</th>"
		           "<th>change</th><th>stack</th></tr></thead><tbody>\n",
		        n);
		size_t shown = 0;
		for (size_t i = 0; i < n && shown < 20; i++) {
			double dt = cs[i].time[1] - cs[i].time[0], da = cs[i].alloc[1] - cs[i].alloc[0];
			if (fabs(dt) < 0.05 && fabs(da) < 0.05 && cs[i].node[0] != TP_NONE &&
			    cs[i].node[1] != TP_NONE)
				break; /* movers come first: the rest did not move */
			shown++;
			char *path = cmp_stack_path(&cs[i], in->against_tp, in->tp);
			fprintf(f, "<tr><td>%.1f</td><td>%.1f</td><td class=\"%s\">%+.1f</td><td>%.1f</td>"
			           "<td>%.1f</td><td class=\"%s\">%+.1f</td><td class=\"path\">",
			        cs[i].time[0], cs[i].time[1], dt > 0.05 ? "up" : dt < -0.05 ? "down" : "same", dt,
			        cs[i].alloc[0], cs[i].alloc[1], da > 0.05 ? "up" : da < -0.05 ? "down" : "same", da);
			markup_text(f, path ? path : "");
			fputs("</td></tr>\n", f);
			free(path);
		}
		if (shown == 20)
			fputs("</tbody></table></div>\n<p class=\"note\">The 20 biggest movers.</p>\n", f);
		else
			fprintf(f, "</tbody></table></div>\n<p class=\"note\">%zu stack%s moved by 0.1 or more; "
			           "the others did not move.</p>\n",
			        shown, shown == 1 ? "" : "s");
		free(cs);
	}
bands:
	if (in->hp && in->against_hp) {
		size_t n;
		struct cmp_band *cb = cmp_bands(in->against_hp, in->hp, &n);
		char b[4][32];
		if (!cb)
			return -1;
		if (in->sides && in->kind_warning)
			fputs("<p class=\"note\">The heap profiles are of different kinds: each band is in "
			      "one run only.</p>\n", f);
		fputs("<p class=\"note\">Heap bands, matched by name without GHC's generated numbers; the "
		      "biggest change of area first.</p>\n<div class=\"scroll\"><table class=\"changes\" "
		      "id=\"band-movers\"><thead><tr><th>peak before</th><th>after</th><th>area "
		      "before (bytes x s)</th><th>after</th><th>heap band</th></tr></thead><tbody>\n",
		      f);
		for (size_t i = 0; i < n && i < 10; i++) {
			report_fmt_bytes(cb[i].peak[0], b[0], sizeof(b[0]));
			report_fmt_bytes(cb[i].peak[1], b[1], sizeof(b[1]));
			report_fmt_bytes(cb[i].area[0], b[2], sizeof(b[2]));
			report_fmt_bytes(cb[i].area[1], b[3], sizeof(b[3]));
			fprintf(f, "<tr><td>%s</td><td>%s</td><td>%s\xc2\xb7s</td><td>%s\xc2\xb7s</td><td>", b[0], b[1], b[2],
			        b[3]);
			markup_text(f, cb[i].name);
			fputs("</td></tr>\n", f);
		}
		fputs("</tbody></table></div>\n", f);
		cmp_bands_free(cb, n);
	} else if (in->sides) {
		fputs("<p class=\"note\">No heap bands to compare: both runs need a heap profile.</p>\n", f);
	}
	fputs("</section>\n", f);
	return 0;
}

void report_heap_json(FILE *f, const char *sample_unit, const struct hp_chart *c)
{
	fputs("\"heap\":{\"times\":[", f);
	for (size_t k = 0; k < c->nsamples; k++)
		fprintf(f, "%s%.10g", k ? "," : "", c->times[k]);
	fputs("],\"sample_unit\":", f);
	safe_text_json_inert(f, sample_unit ? sample_unit : "seconds");
	fputs(",\"bands\":[", f);
	for (size_t i = 0; i < c->nbands; i++) {
		const struct hp_chart_band *b = &c->bands[i];
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		safe_text_json_inert(f, b->name);
		fprintf(f, ",\"colour\":\"%s\",\"peak\":%llu,\"values\":[",
		        heap_colour(b->band == NULL, c->nbands - 1 - i), (unsigned long long)b->peak);
		for (size_t k = 0; k < c->nsamples; k++)
			fprintf(f, "%s%.0f", k ? "," : "", b->values[k]);
		fputs("]}", f);
	}
	fputs("]}", f);
}

static void tree_json(FILE *f, const struct time_profile *p)
{
	fputs("\"tree\":{\"nodes\":[", f);
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct tp_node *n = &p->nodes[i];
		const struct tp_cc *c = &p->ccs[n->cc];
		fprintf(f, "%s{\"parent\":%lld,\"depth\":%u,\"name\":", i ? "," : "",
		        n->parent == TP_NONE ? -1LL : (long long)n->parent, n->depth);
		safe_text_json_inert(f, c->name);
		fputs(",\"module\":", f);
		safe_text_json_inert(f, c->module);
		fputs(",\"src\":", f);
		safe_text_json_inert(f, c->src);
		fprintf(f, ",\"entries\":%llu,\"time\":%.2f,\"alloc\":%.2f,\"inh_time\":%.2f,"
		           "\"inh_alloc\":%.2f}",
		        (unsigned long long)n->entries, n->time, n->alloc, n->inh_time, n->inh_alloc);
	}
	fputs("]}", f);
}

/* The flame graph's SVG without its XML declaration, for inline use. */
static int flame_inline(FILE *f, const struct time_profile *before, const struct time_profile *p,
                        const char *title, const char *against)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -1;
	int rc = before ? flame_svg_diff(m, before, p, FLAME_TIME, title, against) : flame_svg(m, p, FLAME_TIME, title);
	fclose(m);
	const char *body = buf ? strstr(buf, "<svg") : NULL;
	if (rc == 0 && body)
		fputs(body, f);
	free(buf);
	return rc;
}

int report_write_json(FILE *f, const struct report_input *in)
{
	fputs("{\"title\":", f);
	safe_text_json_inert(f, in->title);
	fputs(",\"facts\":[", f);
	for (size_t i = 0; i < in->nfacts; i++) {
		fputs(i ? ",[" : "[", f);
		safe_text_json_inert(f, in->facts[2 * i]);
		fputc(',', f);
		safe_text_json_inert(f, in->facts[2 * i + 1]);
		fputc(']', f);
	}
	fputs("],\"warnings\":[", f);
	for (size_t i = 0; i < in->nwarnings; i++) {
		fputs(i ? "," : "", f);
		safe_text_json_inert(f, in->warnings[i]);
	}
	fputc(']', f);
	if (in->hp && in->chart) {
		fputc(',', f);
		report_heap_json(f, in->hp->sample_unit, in->chart);
		if (in->against_hp && in->against_hp->nsamples)
			against_json(f, in->against_hp, in->against_title);
	}
	if (in->tp) {
		fprintf(f, ",\"total_secs\":%.2f,\"total_ticks\":%llu,\"total_alloc\":%llu,", in->tp->total_secs,
		        (unsigned long long)in->tp->total_ticks, (unsigned long long)in->tp->total_alloc);
		tree_json(f, in->tp);
	}
	fputs("}\n", f);
	return ferror(f) ? -1 : 0;
}

/* The document's head and the page's title. */
static void report_head(FILE *f, const struct report_input *in)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	           "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:%s\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
	        in->live_events || in->trace_api ? "; connect-src 'self'" : "");
	markup_text_cut(f, in->title, 120);
	fprintf(f, " \xe2\x80\x94 profsvc report</title>\n<style>\n%s</style></head>\n<body>\n<header>",
	        report_css);
	if (in->home) {
		fputs("<nav><a class=\"home\" href=\"", f);
		markup_text(f, in->home);
		fputs("\">\xe2\x86\x90 all runs</a></nav>", f);
	}
	fputs("<h1>", f);
	markup_text(f, in->title);
	fputs("</h1><div class=\"sub\">", f);
	markup_text(f, in->tp && in->tp->command ? in->tp->command
	                                         : in->hp && in->hp->job ? in->hp->job : "");
	fputs("</div></header>\n<main>\n", f);
}

/* The page's links (label, href pairs) as one line, dot-separated. */
static void links_line(FILE *f, const struct report_input *in)
{
	if (!in->nlinks)
		return;
	fputs("<p class=\"links\">", f);
	for (size_t i = 0; i < in->nlinks; i++) {
		fputs(i ? " \xc2\xb7 <a href=\"" : "<a href=\"", f);
		markup_text(f, in->links[2 * i + 1]);
		fputs("\">", f);
		markup_text(f, in->links[2 * i]);
		fputs("</a>", f);
	}
	fputs("</p>\n", f);
}

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
	links_line(f, in);
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
	tree_json(f, in->tp);
	fputs("}</script>\n<script>profsvcReport.tree();</script>\n"
	      "<section class=\"flame\" id=\"flame\"><h2>Flame graph (time)</h2>\n",
	      f);
	if (flame_inline(f, NULL, in->tp, in->title, NULL) != 0)
		return -1;
	fputs("</section>\n", f);
	if (in->against_tp) {
		fputs("<section class=\"flame\" id=\"flame-diff\"><h2>Differential flame graph "
		      "(time)</h2>\n",
		      f);
		if (flame_inline(f, in->against_tp, in->tp, in->title, in->against_title) != 0)
			return -1;
		fputs("</section>\n", f);
	}
	return 0;
}

/* ---- two runs compared ------------------------------------------------------ */

/* One panel's chart as the page's script reads it: {run, times,
 * sample_unit, bands: [{name, key, colour, peak, values}]}, bottom band first. */
static int pair_panel_json(FILE *f, int64_t run, const struct hp_profile *hp, const struct hp_chart *c,
                           const struct heap_colours *pc)
{
	if (!c) {
		fputs("null", f);
		return 0;
	}
	fprintf(f, "{\"run\":%lld,\"times\":[", (long long)run);
	for (size_t k = 0; k < c->nsamples; k++)
		fprintf(f, "%s%.6g", k ? "," : "", c->times[k]);
	fputs("],\"sample_unit\":", f);
	safe_text_json_inert(f, hp && hp->sample_unit ? hp->sample_unit : "seconds");
	fputs(",\"bands\":[", f);
	for (size_t i = 0; i < c->nbands; i++) {
		const struct hp_chart_band *b = &c->bands[i];
		char *key = b->band ? cmp_band_key(b->name) : NULL;
		if (b->band && !key)
			return -1;
		size_t rank = 0;
		while (key && rank < pc->n && strcmp(pc->b[rank].key, key) != 0)
			rank++;
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		safe_text_json_inert(f, b->name);
		fputs(",\"key\":", f);
		safe_text_json_inert(f, key ? key : "\x01OTHER");
		char cbuf[8];
		fprintf(f, ",\"colour\":\"%s\",\"peak\":%llu,\"values\":[", heap_colours_rank(b->band == NULL, rank, cbuf),
		        (unsigned long long)b->peak);
		for (size_t k = 0; k < c->nsamples; k++)
			fprintf(f, "%s%.0f", k ? "," : "", b->values[k]);
		fputs("]}", f);
		free(key);
	}
	fputs("]}", f);
	return 0;
}

/* What was compared: both runs side by side, and what makes them compare
 * badly. */
static void compared_section(FILE *f, const struct report_input *in)
{
	static const char *const rows[] = {"guest", "host", "state", "started (UTC)", "ended (UTC)", "profiles"};
	const struct report_side *sd = in->sides;
	fputs("<section id=\"compared\"><h2>Compared with ", f);
	markup_text(f, in->against_title ? in->against_title : "");
	fprintf(f, "</h2>\n<div class=\"scroll\"><table class=\"compared\"><thead><tr><th></th>"
	           "<th class=\"side-a\">before: run %lld</th><th class=\"side-b\">after: run %lld</th>"
	           "</tr></thead><tbody>\n",
	        (long long)sd[0].run_id, (long long)sd[1].run_id);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		fprintf(f, "<tr><th>%s</th>", rows[r]);
		for (int k = 0; k < 2; k++) {
			const char *v[] = {sd[k].name, sd[k].host, sd[k].state, sd[k].started, sd[k].ended, sd[k].profiles};
			fputs(k ? "<td class=\"side-b\">" : "<td class=\"side-a\">", f);
			markup_text(f, v[r] && *v[r] ? v[r] : "-");
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	links_line(f, in);
	if (in->kind_warning) {
		fputs("<div class=\"warn kind\" id=\"kind-warning\" role=\"alert\"><b>Different kinds of "
		      "profile.</b> ",
		      f);
		markup_text(f, in->kind_warning);
		fputs("</div>\n", f);
	}
	for (size_t i = 0; i < in->ncompare_warnings; i++) {
		fputs("<div class=\"warn\">", f);
		markup_text(f, in->compare_warnings[i]);
		fputs("</div>\n", f);
	}
	for (size_t i = 0; i < in->nwarnings; i++) {
		fprintf(f, "<div class=\"warn\">run %lld: ", (long long)sd[1].run_id);
		markup_text(f, in->warnings[i]);
		fputs("</div>\n", f);
	}
	fputs("</section>\n", f);
}

/* Both runs' heaps, one colour per band in both; drawn by the script. */
static int heap_pair_section(FILE *f, const struct report_input *in)
{
	const struct hp_chart *c[2] = {in->against_hp ? in->against_chart : NULL, in->hp ? in->chart : NULL};
	const struct hp_profile *h[2] = {in->against_hp, in->hp};
	struct heap_colours pc = {0};
	fputs("<section id=\"heap-compare\"><h2>Heap</h2>\n<p class=\"note\">Both runs on one time and "
	      "byte scale, each from its start; a band has the same colour in both.</p>\n"
	      "<div class=\"heap-pair\">",
	      f);
	for (int k = 0; k < 2; k++) {
		fprintf(f, "<figure><figcaption>%s: run %lld%s</figcaption><svg id=\"heap-%c\" "
		           "class=\"heap-panel\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 900 "
		           "360\"></svg></figure>",
		        k ? "after" : "before", (long long)in->sides[k].run_id, c[k] ? "" : " (no heap profile)",
		        k ? 'b' : 'a');
	}
	fputs("</div>\n<div id=\"heap-pair-key\" class=\"pair-key\"></div><div id=\"heap-pair-tip\" "
	      "class=\"note\"></div></section>\n"
	      "<script type=\"application/json\" id=\"heap-pair-data\">{\"panels\":[",
	      f);
	int rc = heap_colours_make(&pc, c, 2);
	for (int k = 0; rc == 0 && k < 2; k++) {
		if (k)
			fputc(',', f);
		rc = pair_panel_json(f, in->sides[k].run_id, h[k], c[k], &pc);
	}
	fputs("]}</script>\n", f);
	heap_colours_free(&pc);
	return rc;
}

/* The page of two runs compared, from the top: what was compared, the
 * differential flame graph, both heaps, the biggest movers. */
static int compare_write(FILE *f, const struct report_input *in)
{
	struct report_input h = *in;
	char title[600];
	snprintf(title, sizeof(title), "run %lld \xe2\x86\x92 run %lld: %s", (long long)in->sides[0].run_id,
	         (long long)in->sides[1].run_id, in->sides[1].name ? in->sides[1].name : "");
	h.title = title;
	report_head(f, &h);
	compared_section(f, in);
	fputs("<section class=\"flame\" id=\"flame-diff\"><h2>Differential flame graph (time)</h2>\n", f);
	if (in->tp && in->against_tp) {
		fprintf(f, "<p class=\"note\">Run %lld's call stacks, each coloured by how its share of the "
		           "time changed since run %lld: red grew, blue shrank.</p>\n",
		        (long long)in->sides[1].run_id, (long long)in->sides[0].run_id);
		/* its title says what is compared: run B against run A */
		char what[600];
		snprintf(what, sizeof(what), "%s%srun %lld against run %lld", in->sides[1].name ? in->sides[1].name : "",
		         in->sides[1].name && *in->sides[1].name ? ": " : "", (long long)in->sides[1].run_id,
		         (long long)in->sides[0].run_id);
		fputs("<div class=\"flame-box\">", f);
		if (flame_inline(f, in->against_tp, in->tp, what, NULL) != 0)
			return -1;
		fputs("</div>\n", f);
	} else {
		fputs("<p class=\"note\">None: both runs need a time profile.</p>\n", f);
	}
	fputs("</section>\n", f);
	if (heap_pair_section(f, in) != 0)
		return -1;
	fprintf(f, "<script>\n%s</script>\n<script>profsvcReport.heapPair();</script>\n", report_js);
	if (changes_html(f, in) != 0)
		return -1;
	fputs("</main>\n<script>profsvcReport.ready();</script>\n", f);
	if (in->page_script)
		fprintf(f, "<script>\n%s</script>\n", in->page_script);
	fputs("</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}

int report_write(FILE *f, const struct report_input *in)
{
	if (in->sides)
		return compare_write(f, in);
	report_head(f, in);
	/* the hot spot first: the flat table of the top cost centres */
	if (in->tp && top_section(f, in) != 0)
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
	if (in->tp && cost_centres_section(f, in) != 0)
		return -1;
	if (in->against_title && changes_html(f, in) != 0)
		return -1;
	fputs("</main>\n<script>profsvcReport.ready();</script>\n", f);
	if (in->page_script)
		fprintf(f, "<script>\n%s</script>\n", in->page_script);
	fputs("</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}
