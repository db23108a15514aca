/*
 * heap_svg.h - heap charts as SVG: one panel per profile, bands stacked in
 * heap_chart's order (OTHER at the bottom, the largest on top), a key read
 * from the top, hover titles with each band's peak and share (a key
 * entry's: the band's whole name, which the key may cut).  The y axis is in
 * bytes, round ticks in kB/MB/GB as hp2ps's k/M; each panel's header has
 * hp2ps's "bytes x seconds" (hp_chart_area); from 1000 samples the bands
 * have no outlines.  Several
 * panels share one time and one byte scale, so runs compare by eye
 * (hp2pretty's --uniform-scale, eventlog2html's --y-axis).
 */
#ifndef PROFSVC_HEAP_SVG_H
#define PROFSVC_HEAP_SVG_H

#include <stdio.h>

#include "heap_chart.h"
#include "heap_profile.h"

struct heap_svg_panel {
	const struct hp_profile *profile;
	const struct hp_chart *chart;
	const char *caption;  /* "run 12 halvm-leak (complete)"; guest text, escaped here */
	const char *note;     /* "cut mid-sample at 3.2 s: 812 bytes dropped", or NULL */
};

/* Writes a whole SVG document; 0, or -1 if writing failed. */
int heap_svg_write(FILE *f, const struct heap_svg_panel *panels, size_t n);

/* "1.5M", "812k", "96": bytes, shortly (decimal, as hp2ps). */
void heap_fmt_bytes(double v, char *out, size_t len);

/* "166,302,970": a whole number with hp2ps's thousands commas. */
void heap_fmt_grouped(double v, char *out, size_t len);

#endif
