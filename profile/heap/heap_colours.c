/*
 * heap_colours.c - a heap band's colour across several panels
 * (heap_colours.h), moved from report.c's comparison so that profdb
 * heap's several runs colour their bands as the compare page does.
 *
 * May call: heap_compare.c (cmp_band_key), heap_chart.h's types, libc.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_colours.h"
#include "heap_compare.h"

static const char *const palette[] = {
	"#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
	"#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2",
	"#bcbd22", "#dbdb8d", "#17becf", "#9edae5", "#7f7f7f", "#c7c7c7",
};

const char *heap_colour(int is_other, size_t rank)
{
	return is_other ? "#e0e0e0" : palette[rank % 20];
}

static int by_weight(const void *x, const void *y)
{
	const struct heap_colour_band *a = x, *b = y;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return strcmp(a->key, b->key);
}

int heap_colours_make(struct heap_colours *hc, const struct hp_chart *const *charts, size_t n)
{
	size_t cap = 0;
	for (size_t k = 0; k < n; k++)
		cap += charts[k] ? charts[k]->nbands : 0;
	hc->n = 0;
	hc->b = calloc(cap ? cap : 1, sizeof(*hc->b));
	if (!hc->b)
		return -1;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; charts[k] && i < charts[k]->nbands; i++) {
			if (!charts[k]->bands[i].band)
				continue; /* OTHER */
			char *key = cmp_band_key(charts[k]->bands[i].name);
			if (!key)
				return -1;
			size_t j = 0;
			while (j < hc->n && strcmp(hc->b[j].key, key) != 0)
				j++;
			if (j == hc->n)
				hc->b[hc->n++].key = key;
			else
				free(key);
			hc->b[j].weight += (double)charts[k]->bands[i].total;
		}
	qsort(hc->b, hc->n, sizeof(*hc->b), by_weight);
	return 0;
}

void heap_colours_free(struct heap_colours *hc)
{
	for (size_t i = 0; hc->b && i < hc->n; i++)
		free(hc->b[i].key);
	free(hc->b);
	hc->b = NULL;
	hc->n = 0;
}

/* heap_svg's 20, then (a comparison may have up to twice as many) colours
 * of their own, spread round the hue circle so no two are the same. */
const char *heap_colours_rank(int is_other, size_t rank, char buf[8])
{
	if (is_other || rank < 20)
		return heap_colour(is_other, rank);
	double h = fmod((double)(rank - 20) * 137.508 + 15, 360) / 60, l = rank % 2 ? 0.42 : 0.68, c = 0.5;
	double x = c * (1 - fabs(fmod(h, 2) - 1)), rgb[3], r = 0, g = 0, b = 0;
	int sx = (int)h;
	switch (sx) {
	case 0: r = c; g = x; break;
	case 1: r = x; g = c; break;
	case 2: g = c; b = x; break;
	case 3: g = x; b = c; break;
	case 4: r = x; b = c; break;
	default: r = c; b = x; break;
	}
	double m = l - c / 2;
	rgb[0] = r + m;
	rgb[1] = g + m;
	rgb[2] = b + m;
	snprintf(buf, 8, "#%02x%02x%02x", (unsigned)(rgb[0] * 255 + 0.5) & 255, (unsigned)(rgb[1] * 255 + 0.5) & 255,
	         (unsigned)(rgb[2] * 255 + 0.5) & 255);
	return buf;
}

const char *heap_colours_of(const struct heap_colours *hc, const struct hp_chart_band *b, char buf[8])
{
	if (!b->band)
		return heap_colours_rank(1, 0, buf);
	char *key = cmp_band_key(b->name);
	if (!key)
		return NULL;
	size_t rank = 0;
	while (rank < hc->n && strcmp(hc->b[rank].key, key) != 0)
		rank++;
	free(key);
	return heap_colours_rank(0, rank, buf);
}
