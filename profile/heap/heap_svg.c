/*
 * heap_svg.c - drawing heap charts as SVG (heap_svg.h).
 *
 * The page is plain SVG 1.1 with no script and no external reference, so
 * it opens anywhere and can be inlined into an HTML report.  Each band is
 * one closed path (its upper edge left to right, the band below's edge
 * back), as hp2ps's ShadeCurve draws it.  Every guest-chosen string goes
 * through markup_text.  Several panels colour a band alike
 * (heap_colours.c: by its rank over all of them, as the compare page).
 *
 * May call: util/safe_text (markup), heap_colours.c, heap_chart.c.
 */
#include "config.h"

#include "heap_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heap_colours.h"
#include "util/safe_text.h"

#define WIDTH 1000.0
#define PANEL_H 420.0
#define PLOT_X 80.0
#define PLOT_W 600.0
#define PLOT_TOP 56.0
#define PLOT_H 300.0
#define KEY_X (PLOT_X + PLOT_W + 24.0)
#define OUTLINE_MAX 1000 /* samples: from here the bands have no outline */

/* Twenty distinct fills (d3's category20), OTHER grey. */
void heap_fmt_bytes(double v, char *out, size_t len)
{
	static const char units[] = " kMGTPE";
	int u = 0;
	while (v >= 1000 && u < 6) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%.0f", v);
	else
		snprintf(out, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

/* A tick step of 1, 2 or 5 times a power of ten giving about n ticks. */
static double nice_step(double range, int n)
{
	if (!(range > 0) || !isfinite(range))
		return 1;
	double raw = range / n, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* Band i of c's fill: by its rank in the panel, or over every panel
 * (hc); buf holds a colour made for it.  NULL when out of memory. */
static const char *fill_of(const struct hp_chart *c, size_t i, const struct heap_colours *hc, char buf[8])
{
	const struct hp_chart_band *b = &c->bands[i];
	return hc ? heap_colours_of(hc, b, buf) : heap_colour(b->band == NULL, c->nbands - 1 - i);
}

/* The y axis's ticks in one unit chosen by the step, as hp2ps's axis
 * (Axes.c): "20 MB" where hp2ps says "20M"; values in decimal units. */
static void y_label(double v, double step, const char *vunit, char *out, size_t len)
{
	int bytes = !vunit || strcmp(vunit, "bytes") == 0;
	static const char *const names[2][4] = {{"", "k", "M", "G"}, {"", "kB", "MB", "GB"}};
	int u = step >= 1e9 ? 3 : step >= 1e6 ? 2 : step >= 1e3 ? 1 : 0;
	if (v == 0)
		snprintf(out, len, "0");
	else
		snprintf(out, len, u ? "%g %s" : "%g", v / pow(1e3, u), names[bytes][u]);
}

static void axes(FILE *f, double y0, double tmax, double ymax, const char *sunit, const char *vunit)
{
	double step = nice_step(ymax, 5);
	fprintf(f, "<g class=\"axes\" font-size=\"11\" fill=\"#333\">\n");
	for (int i = 0; ymax > 0 && i * step <= ymax * 1.0001; i++) {
		char b[48];
		double v = i * step; /* not summed: 0.1 + 0.2 is not 0.3 */
		double y = y0 + PLOT_TOP + PLOT_H - v / ymax * PLOT_H;
		y_label(v, step, vunit, b, sizeof(b));
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
		           "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
		           "data-value=\"%.15g\">",
		        PLOT_X, y, PLOT_X + PLOT_W, y, PLOT_X - 6, y + 4, v);
		markup_text(f, b);
		fputs("</text>\n", f);
	}
	/* the axis's unit, along it, as hp2ps's legend */
	fprintf(f, "<text class=\"yunit\" transform=\"translate(%.1f %.1f) rotate(-90)\" "
	           "text-anchor=\"middle\">",
	        PLOT_X - 62, y0 + PLOT_TOP + PLOT_H / 2);
	markup_text(f, vunit ? vunit : "bytes");
	fputs("</text>\n", f);
	step = nice_step(tmax, 8);
	for (int i = 0; tmax > 0 && i * step <= tmax * 1.0001; i++) {
		double t = i * step, x = PLOT_X + t / tmax * PLOT_W;
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x,
		        y0 + PLOT_TOP + PLOT_H + 16, t);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", PLOT_X + PLOT_W / 2,
	        y0 + PLOT_TOP + PLOT_H + 34);
	markup_text(f, sunit ? sunit : "seconds");
	fprintf(f, "</text>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
	           "stroke=\"#333\"/>\n</g>\n",
	        PLOT_X, y0 + PLOT_TOP, PLOT_W, PLOT_H);
}

void heap_fmt_grouped(double v, char *out, size_t len)
{
	char digits[64];
	/* truncated, as hp2ps prints its (intish) area */
	snprintf(digits, sizeof(digits), "%.0f", v > 0 && v < 1e30 ? floor(v) : 0);
	size_t n = strlen(digits), o = 0;
	for (size_t k = 0; k < n && o + 2 < len; k++) {
		if (k && (n - k) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[k];
	}
	out[o] = '\0';
}

/* A panel's title: the job, the caption and date, the note. */
static void panel_title(FILE *f, const struct heap_svg_panel *p, double y0)
{
	const struct hp_profile *hp = p->profile;
	fprintf(f, "<g class=\"panel\">\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"15\" "
	           "font-weight=\"bold\">",
	        PLOT_X, y0 + 22);
	markup_text_cut(f, hp->job ? hp->job : "(no JOB line)", 70);
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#555\">", PLOT_X,
	        y0 + 40);
	if (p->caption)
		markup_text_cut(f, p->caption, 70);
	if (hp->date) {
		fputs(" \xc2\xb7 ", f);
		markup_text_cut(f, hp->date, 40);
	}
	fputs("</text>\n", f);
	/* hp2ps's "bytes x seconds", as its title has it */
	char area[64];
	heap_fmt_grouped(hp_chart_area(p->chart), area, sizeof(area));
	fprintf(f, "<text class=\"area\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#333\">%s ",
	        KEY_X, y0 + 22, area);
	markup_text_cut(f, hp->value_unit ? hp->value_unit : "bytes", 20);
	fputs(" x ", f);
	markup_text_cut(f, hp->sample_unit ? hp->sample_unit : "seconds", 20);
	fputs("</text>\n", f);
	if (p->note) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#b00\">", KEY_X,
		        y0 + 40);
		markup_text_cut(f, p->note, 44);
		fputs("</text>\n", f);
	}
}

/* The bands, stacked bottom up, each with its peak and share. */
static int panel_bands(FILE *f, const struct hp_chart *c, double y0, double tmax, double ymax,
                       const struct heap_colours *hc)
{
	size_t ns = c->nsamples;
	double grand = 0;
	for (size_t i = 0; i < c->nbands; i++)
		for (size_t k = 0; k < ns; k++)
			grand += c->bands[i].values[k];
	double *lower = calloc(ns ? ns : 1, sizeof(double));
	if (!lower)
		return -1;
	double t0 = ns ? c->times[0] : 0;
	double sx = tmax > 0 ? PLOT_W / tmax : 0, sy = ymax > 0 ? PLOT_H / ymax : 0;
	double base = y0 + PLOT_TOP + PLOT_H;
	for (size_t i = 0; i < c->nbands && ns; i++) {
		const struct hp_chart_band *b = &c->bands[i];
		char cbuf[8];
		const char *fill = fill_of(c, i, hc, cbuf);
		if (!fill) {
			free(lower);
			return -1;
		}
		/* outlines part the bands of a short chart; over thousands of
		 * samples they would be all that is seen */
		fprintf(f, "<path class=\"band\" fill=\"%s\" %s d=\"M", fill,
		        ns >= OUTLINE_MAX ? "stroke=\"none\"" : "stroke=\"#222\" stroke-width=\"0.3\"");
		for (size_t k = 0; k < ns; k++)
			fprintf(f, "%s%.1f %.1f", k ? " " : "", PLOT_X + (c->times[k] - t0) * sx,
			        base - (lower[k] + b->values[k]) * sy);
		for (size_t k = ns; k-- > 0;)
			fprintf(f, " %.1f %.1f", PLOT_X + (c->times[k] - t0) * sx, base - lower[k] * sy);
		for (size_t k = 0; k < ns; k++)
			lower[k] += b->values[k];
		char peak[32];
		heap_fmt_bytes((double)b->peak, peak, sizeof(peak));
		double share = 0;
		for (size_t k = 0; k < ns; k++)
			share += b->values[k];
		fputs("Z\"><title>", f);
		markup_text(f, b->name);
		fprintf(f, " \xe2\x80\x94 peak %s, %.1f%% of the chart</title></path>\n", peak,
		        grand > 0 ? 100 * share / grand : 0);
	}
	free(lower);
	return 0;
}

/* The key, top down: the top band first, as it is stacked. */
static void panel_key(FILE *f, const struct hp_chart *c, double y0, const struct heap_colours *hc)
{
	size_t rows = c->nbands;
	double dy = rows ? fmin(18, PLOT_H / (double)rows) : 18;
	fprintf(f, "<g class=\"key\" font-size=\"11\">\n");
	for (size_t r = 0; r < rows; r++) {
		size_t i = rows - 1 - r;
		double y = y0 + PLOT_TOP + r * dy;
		char cbuf[8];
		const char *fill = fill_of(c, i, hc, cbuf);
		/* an entry's title is the band's whole name: the key may cut it */
		fputs("<g class=\"key-entry\"><title>", f);
		markup_text(f, c->bands[i].name);
		fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"%.1f\" "
		           "fill=\"%s\" stroke=\"#222\" stroke-width=\"0.3\"/><text x=\"%.1f\" y=\"%.1f\">",
		        KEY_X, y + 1, fmax(dy - 4, 4), fill ? fill : "#e0e0e0", KEY_X + 18,
		        y + fmin(dy - 4, 12));
		markup_text_cut(f, c->bands[i].name, 42);
		fputs("</text></g>\n", f);
	}
	if (rows == 0)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">no bands</text>\n", KEY_X, y0 + PLOT_TOP + 12);
	fputs("</g>\n</g>\n", f);
}

static void panel(FILE *f, const struct heap_svg_panel *p, double y0, double tmax, double ymax,
                  const struct heap_colours *hc)
{
	panel_title(f, p, y0);
	axes(f, y0, tmax, ymax, p->profile->sample_unit, p->profile->value_unit);
	if (panel_bands(f, p->chart, y0, tmax, ymax, hc) != 0)
		return;
	panel_key(f, p->chart, y0, hc);
}

int heap_svg_write(FILE *f, const struct heap_svg_panel *panels, size_t n)
{
	double tmax = 0, ymax = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hp_chart *c = panels[i].chart;
		if (c->nsamples && c->times[c->nsamples - 1] - c->times[0] > tmax)
			tmax = c->times[c->nsamples - 1] - c->times[0];
		if (c->ymax > ymax)
			ymax = c->ymax;
	}
	/* several panels: a band one colour in all (one: by its rank, as hp2ps) */
	struct heap_colours hc = {0};
	const struct hp_chart **charts = n > 1 ? calloc(n, sizeof(*charts)) : NULL;
	int many = charts != NULL;
	for (size_t i = 0; many && i < n; i++)
		charts[i] = panels[i].chart;
	if (many && heap_colours_make(&hc, charts, n) != 0) {
		heap_colours_free(&hc);
		free(charts);
		return -1;
	}
	if (n > 1 && !many)
		return -1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	           "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\">\n"
	           "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	        WIDTH, PANEL_H * (double)n, WIDTH, PANEL_H * (double)n);
	for (size_t i = 0; i < n; i++)
		panel(f, &panels[i], PANEL_H * (double)i, tmax, ymax, many ? &hc : NULL);
	heap_colours_free(&hc);
	free(charts);
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}
