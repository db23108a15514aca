/*
 * report_compare.c - the page of two runs compared (report.h's sides),
 * from the top: what was compared, the differential flame graph, both
 * heaps in one colour per band, the biggest movers; and the movers alone,
 * the section a one-run report ends with when given a second run.
 *
 * May call: report.h's types, report_page.c (the head, links, inline flame graph),
 * report_data.c (sizes), prof_compare.c and heap_compare.c (the movers),
 * heap_colours.c (the band colours), util/safe_text (markup, inert JSON).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/heap/heap_colours.h"
#include "profile/heap/heap_compare.h"
#include "profile/prof/prof_compare.h"
#include "report.h"
#include "report_parts.h"
#include "util/safe_text.h"

/* The call stacks that moved most (both runs have a time profile). */
static int stack_movers(FILE *f, const struct report_input *in)
{
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
		return 0;
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
	return 0;
}

/* The heap bands that changed most (both runs have a heap profile). */
static int band_movers(FILE *f, const struct report_input *in)
{
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
	return 0;
}

/* What changed since the other run: the movers, as profdb diff lists them. */
int report_changes_html(FILE *f, const struct report_input *in)
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
	if (in->tp && in->against_tp && stack_movers(f, in) != 0)
		return -1;
	if (in->hp && in->against_hp) {
		if (band_movers(f, in) != 0)
			return -1;
	} else if (in->sides) {
		fputs("<p class=\"note\">No heap bands to compare: both runs need a heap profile.</p>\n", f);
	}
	fputs("</section>\n", f);
	return 0;
}

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
	report_links_line(f, in);
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
int report_compare_write(FILE *f, const struct report_input *in)
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
		if (report_flame_inline(f, in->against_tp, in->tp, what, NULL) != 0)
			return -1;
		fputs("</div>\n", f);
	} else {
		fputs("<p class=\"note\">None: both runs need a time profile.</p>\n", f);
	}
	fputs("</section>\n", f);
	if (heap_pair_section(f, in) != 0)
		return -1;
	fprintf(f, "<script>\n%s</script>\n<script>profsvcReport.heapPair();</script>\n", report_js);
	if (report_changes_html(f, in) != 0)
		return -1;
	return report_page_end(f, in);
}
