/*
 * report_data.c - the report's data (report.h): the JSON documents the
 * pages' script draws from (the heap chart, the cost-centre tree), the
 * report as one JSON document (profdb report --json), and sizes and
 * counts as every page writes them.  Guest text as inert JSON.
 *
 * May call: report.h's types, heap_colours.c (a band's colour), hp_parse.c (the other
 * run's points), util/safe_text (inert JSON).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "profile/heap/heap_colours.h"
#include "report.h"
#include "report_parts.h"
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

void report_tree_json(FILE *f, const struct time_profile *p)
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
		report_tree_json(f, in->tp);
	}
	fputs("}\n", f);
	return ferror(f) ? -1 : 0;
}
