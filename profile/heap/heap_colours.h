/*
 * heap_colours.h - a heap band's colour across several panels: by the rank
 * of its name (GHC's generated parts taken out: heap_compare.h's
 * cmp_band_key) among the bands of all the panels together, by their
 * total bytes, so a band has the same colour in every panel that has it
 * (OTHER grey): the compare page's two heaps (report.c) and `profdb heap
 * A B -o F.svg` (heap_svg.c).  The first twenty ranks are the palette
 * (heap_colour, also one panel's colours), the rest colours of their own
 * round the hue circle.
 */
#ifndef PROFSVC_HEAP_COLOURS_H
#define PROFSVC_HEAP_COLOURS_H

#include <stddef.h>

#include "heap_chart.h"

struct heap_colour_band {
	char *key;     /* cmp_band_key of its name */
	double weight; /* its bytes over every panel */
};
struct heap_colours {
	struct heap_colour_band *b; /* every band, the heaviest first: b[rank] */
	size_t n;
};

/* The ranks of the bands of charts[0..n) (a NULL chart has none): 0, or
 * -1 out of memory.  heap_colours_free() either way. */
int heap_colours_make(struct heap_colours *hc, const struct hp_chart *const *charts, size_t n);
/* Band b's fill (buf, 8 bytes, holds a colour made for it): NULL when out
 * of memory. */
const char *heap_colours_of(const struct heap_colours *hc, const struct hp_chart_band *b, char buf[8]);
/* A band's fill in one panel: by its rank from the top of the chart
 * (OTHER: grey); the first twenty colours of every rank. */
const char *heap_colour(int is_other, size_t rank);
/* The colour of a rank (is_other: OTHER's grey), as heap_colours_of gives it. */
const char *heap_colours_rank(int is_other, size_t rank, char buf[8]);
void heap_colours_free(struct heap_colours *hc);

#endif
