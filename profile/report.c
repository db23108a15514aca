/*
 * report.c - writing the HTML report (report.h).
 *
 * The page is static markup plus JSON documents in
 * <script type="application/json"> elements, which report.js draws from.
 * JSON inside a script element ends at the first "</script", so every
 * '<', '>' and '&' in a string is written as a \u escape: the JSON is the
 * same, and no name can end the element or open markup.
 */
#include "config.h"

#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "heap_svg.h"
#include "markup.h"
#include "util/safe_text.h"

void report_json_string(FILE *f, const char *s)
{
	/* The form a person sees (safe_text: controls, bidi overrides and bad
	 * bytes as visible \xNN, \uNNNN), as a JSON string: once parsed by
	 * the page's script it still shows them, it does not obey them. */
	size_t cap = strlen(s) * 4 + 8;
	char *buf = malloc(cap);
	if (!buf)
		return;
	safe_text(buf, cap, s);
	fputc('"', f);
	for (const char *c = buf; *c; c++) {
		switch (*c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '<': fputs("\\u003c", f); break;
		case '>': fputs("\\u003e", f); break;
		case '&': fputs("\\u0026", f); break;
		default: fputc(*c, f);
		}
	}
	fputc('"', f);
	free(buf);
}

static void heap_json(FILE *f, const struct hp_profile *hp, const struct hp_chart *c)
{
	fputs("\"heap\":{\"times\":[", f);
	for (size_t k = 0; k < c->nsamples; k++)
		fprintf(f, "%s%.6g", k ? "," : "", c->times[k]);
	fputs("],\"sample_unit\":", f);
	report_json_string(f, hp->sample_unit ? hp->sample_unit : "seconds");
	fputs(",\"bands\":[", f);
	for (size_t i = 0; i < c->nbands; i++) {
		const struct hp_chart_band *b = &c->bands[i];
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		report_json_string(f, b->name);
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
		report_json_string(f, c->name);
		fputs(",\"module\":", f);
		report_json_string(f, c->module);
		fputs(",\"src\":", f);
		report_json_string(f, c->src);
		fprintf(f, ",\"entries\":%llu,\"time\":%.2f,\"alloc\":%.2f,\"inh_time\":%.2f,"
		           "\"inh_alloc\":%.2f}",
		        (unsigned long long)n->entries, n->time, n->alloc, n->inh_time, n->inh_alloc);
	}
	fputs("]}", f);
}

/* The flame graph's SVG without its XML declaration, for inline use. */
static int flame_inline(FILE *f, const struct time_profile *p, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -1;
	int rc = flame_svg(m, p, FLAME_TIME, title);
	fclose(m);
	const char *body = buf ? strstr(buf, "<svg") : NULL;
	if (rc == 0 && body)
		fputs(body, f);
	free(buf);
	return rc;
}

int report_write(FILE *f, const struct report_input *in)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>",
	      f);
	markup_text_cut(f, in->title, 120);
	fprintf(f, " \xe2\x80\x94 profsvc report</title>\n<style>\n%s</style></head>\n<body>\n"
	           "<header><h1>",
	        report_css);
	markup_text(f, in->title);
	fputs("</h1><div class=\"sub\">", f);
	markup_text(f, in->tp && in->tp->command ? in->tp->command
	                                         : in->hp && in->hp->job ? in->hp->job : "");
	fputs("</div></header>\n<main>\n<section id=\"facts\"><h2>Run</h2><table class=\"facts\">\n", f);
	for (size_t i = 0; i < in->nfacts; i++) {
		fputs("<tr><td>", f);
		markup_text(f, in->facts[2 * i]);
		fputs("</td><td>", f);
		markup_text(f, in->facts[2 * i + 1]);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	for (size_t i = 0; i < in->nwarnings; i++) {
		fputs("<div class=\"warn\">", f);
		markup_text(f, in->warnings[i]);
		fputs("</div>\n", f);
	}
	fputs("</section>\n", f);
	if (in->hp && in->chart) {
		fputs("<section id=\"heap\"><h2>Heap</h2>\n<div id=\"heap-modes\">"
		      "<button data-mode=\"stacked\">stacked</button><button data-mode=\"line\">line"
		      "</button><button data-mode=\"normalised\">normalised</button></div>\n"
		      "<p class=\"note\">",
		      f);
		fprintf(f, "%zu samples; %zu bands shown (hp2ps's rules: %zu trace bands dropped, %zu "
		           "summed into OTHER). Click a band in the key to hide it.</p>\n",
		        in->chart->nsamples, in->chart->nbands, in->chart->dropped_trace,
		        in->chart->merged_other);
		fputs("<div class=\"chart\"><svg id=\"heap-svg\" xmlns=\"http://www.w3.org/2000/svg\" "
		      "viewBox=\"0 0 900 360\"></svg><div id=\"heap-key\"></div></div>\n"
		      "<div id=\"heap-tip\"></div></section>\n"
		      "<script type=\"application/json\" id=\"heap-data\">{",
		      f);
		heap_json(f, in->hp, in->chart);
		fputs("}</script>\n", f);
	}
	/* the script right after the chart's data: the chart is drawn before
	 * the browser has read the tree and the flame graph below */
	fprintf(f, "<script>\n%s</script>\n", report_js);
	if (in->tp) {
		fprintf(f, "<section id=\"cost-centres\"><h2>Cost centres</h2>\n<p class=\"note\">total "
		           "time %.2f s (%llu ticks), total alloc %llu bytes</p>\n<div class=\"tools\">"
		           "<input id=\"tree-search\" type=\"search\" placeholder=\"search names\">"
		           "<button id=\"tree-open\">open all</button><span id=\"tree-count\" "
		           "class=\"note\"></span></div>\n<table id=\"tree\"><thead><tr></tr></thead>"
		           "<tbody></tbody></table></section>\n"
		           "<script type=\"application/json\" id=\"tree-data\">{",
		        in->tp->total_secs, (unsigned long long)in->tp->total_ticks,
		        (unsigned long long)in->tp->total_alloc);
		tree_json(f, in->tp);
		fputs("}</script>\n<script>profsvcReport.tree();</script>\n"
		      "<section class=\"flame\"><h2>Flame graph (time)</h2>\n",
		      f);
		if (flame_inline(f, in->tp, in->title) != 0)
			return -1;
		fputs("</section>\n", f);
	}
	fputs("</main>\n<script>profsvcReport.ready();</script>\n</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}
