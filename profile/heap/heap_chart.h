/*
 * heap_chart.h - which bands a heap chart shows, in which order, and their
 * values: hp2ps's rules (utils/hp2ps: TraceElement.c, Deviation.c,
 * TopTwenty.c), so a chart here and hp2ps's agree band for band.
 *
 *  1. Bands are put in hp2ps's table order, then sorted by total (the sum
 *     of a band's values over all samples: hp2ps's "area"), smallest
 *     first, with hp2ps's own selection sort so ties fall the same way.
 *  2. Trace elements: the smallest bands are dropped while their combined
 *     share of the grand total stays under trace_pct (1% by default).
 *  3. By standard deviation (hp2ps -d): re-sorted, steadiest first.
 *  4. More than max_bands (20 by default, hp2ps -m; 0: no limit): the
 *     smallest are summed into OTHER, which becomes the bottom band.
 *
 * The result is bottom to top, as drawn: the largest band ends on top,
 * and a key read from the top lists the largest first.
 */
#ifndef PROFSVC_HEAP_CHART_H
#define PROFSVC_HEAP_CHART_H

#include "heap_profile.h"

enum hp_sort { HP_SORT_AREA, HP_SORT_STDDEV };

struct hp_chart_opts {
	double trace_pct; /* 1.0 as hp2ps */
	size_t max_bands; /* 20 as hp2ps; 0: no limit */
	enum hp_sort sort;
};

struct hp_chart_band {
	const struct hp_band *band; /* NULL: OTHER */
	const char *name;
	double *values;             /* one per sample */
	uint64_t total, peak;
};

struct hp_chart {
	size_t nbands;
	struct hp_chart_band *bands; /* bottom to top */
	size_t nsamples;
	const double *times;
	double ymax;                 /* the highest stacked total */
	size_t dropped_trace;        /* bands dropped as trace elements */
	size_t merged_other;         /* bands summed into OTHER */
};

void hp_chart_defaults(struct hp_chart_opts *o);
/* 0, or -1 when out of memory. */
int hp_chart_make(const struct hp_profile *p, const struct hp_chart_opts *o, struct hp_chart *c);
void hp_chart_free(struct hp_chart *c);

/* hp2ps's "bytes x seconds" (AreaBelow.c): the integral over time of the
 * chart's total (its bands, trace elements dropped, OTHER in), by the
 * trapezoidal rule between samples, as hp2ps prints it in its title. */
double hp_chart_area(const struct hp_chart *c);

/* hp2ps's hash (HpFile.c), which fixes its table order; exposed for tests. */
int hp_chart_hp2ps_bucket(const char *name);

#endif
