/*
 * heap_chart.c - hp2ps's band selection and order (heap_chart.h).
 *
 * hp2ps keeps its bands in a 513-bucket hash table and walks it bucket by
 * bucket, newest entry first in a bucket; its sorts are selection sorts,
 * which are not stable.  So two bands with equal totals come out in an
 * order fixed by their names' hashes.  To agree with hp2ps on ties we
 * start from that same order and run the same sort.  Selection sort is
 * quadratic: beyond SELECTION_MAX bands (no GHC profile has that many
 * distinct names, a hostile one might) a stable merge-style qsort on
 * (key, position) takes over, which differs from hp2ps only among ties.
 *
 * May call: the heap profile's points (hp_parse.c's hp_next).
 */
#include "config.h"

#include "heap_chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HP2PS_BUCKETS 513
#define SELECTION_MAX 8192

void hp_chart_defaults(struct hp_chart_opts *o)
{
	o->trace_pct = 1.0;
	o->max_bands = 20;
	o->sort = HP_SORT_AREA;
}

int hp_chart_hp2ps_bucket(const char *name)
{
	/* int r; r = r + r + r + *s with a signed char, wrapping as x86 does */
	uint32_t r = 0;
	for (const char *s = name; *s; s++)
		r = r * 3u + (uint32_t)(int32_t)(signed char)*s;
	int64_t v = (int32_t)r;
	if (v < 0)
		v = -v;
	return (int)(v % HP2PS_BUCKETS);
}

struct slot {
	const struct hp_band *b;
	size_t index;  /* creation order */
	int bucket;
	double key;    /* the sort's key */
	size_t pos;    /* position before a fallback sort */
};

static int by_table_order(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return x->index > y->index ? -1 : x->index < y->index; /* newest first */
}

static int by_key_then_pos(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Ascending by key, as hp2ps's selection sorts do (ties as they do). */
static void sort_slots(struct slot *s, size_t n)
{
	if (n > SELECTION_MAX) {
		for (size_t i = 0; i < n; i++)
			s[i].pos = i;
		qsort(s, n, sizeof(*s), by_key_then_pos);
		return;
	}
	for (size_t i = 0; i + 1 < n; i++) {
		size_t min = i;
		for (size_t j = i + 1; j < n; j++)
			if (s[j].key < s[min].key)
				min = j;
		struct slot t = s[min];
		s[min] = s[i];
		s[i] = t;
	}
}

static void fill_values(const struct hp_band *b, double *v, size_t nsamples)
{
	struct hp_cursor c = HP_CURSOR_INIT;
	struct hp_point pt;
	while (hp_next(b, &c, &pt))
		if (pt.sample < nsamples)
			v[pt.sample] += (double)pt.bytes;
}

/* The bands that have points, in hp2ps's hash-table order; their count. */
static size_t table_order(const struct hp_profile *p, struct slot *s)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nbands; i++) {
		if (p->bands[i].npts == 0) /* only in a sample that was cut off */
			continue;
		s[n++] = (struct slot){.b = &p->bands[i], .index = i,
		                       .bucket = hp_chart_hp2ps_bucket(p->bands[i].name)};
	}
	qsort(s, n, sizeof(*s), by_table_order);
	return n;
}

/* TraceElement: by total, then drop the smallest under trace_pct; how
 * many were dropped (the rest moved to the front). */
static size_t trace_element(struct slot *s, size_t n, double trace_pct)
{
	double grand = 0;
	for (size_t i = 0; i < n; i++) {
		s[i].key = (double)s[i].b->total;
		grand += s[i].key;
	}
	sort_slots(s, n);
	size_t first = 0;
	double cum = 0;
	for (; first < n; first++) {
		cum += 100.0 * s[first].key / grand;
		if (cum >= trace_pct)
			break;
	}
	memmove(s, s + first, (n - first) * sizeof(*s));
	return first;
}

/* Deviation: steadiest first. */
static void deviation_sort(struct slot *s, size_t n, size_t ns)
{
	for (size_t i = 0; i < n; i++) {
		const struct hp_band *b = s[i].b;
		double avg = 0, dev = 0;
		struct hp_cursor cur = HP_CURSOR_INIT;
		struct hp_point pt;
		while (hp_next(b, &cur, &pt))
			avg += (double)pt.bytes;
		avg /= (double)ns;
		cur = (struct hp_cursor)HP_CURSOR_INIT;
		while (hp_next(b, &cur, &pt)) {
			double d = (double)pt.bytes - avg;
			dev += d * d;
		}
		s[i].key = sqrt(dev / (double)(ns - 1));
	}
	sort_slots(s, n);
}

/* The OTHER band: the sum of the first `compact` slots. */
static int other_band(struct hp_chart_band *ob, const struct slot *s, size_t compact, size_t ns)
{
	ob->name = "OTHER";
	if (!(ob->values = calloc(ns ? ns : 1, sizeof(double))))
		return -1;
	for (size_t i = 0; i < compact; i++) {
		fill_values(s[i].b, ob->values, ns);
		uint64_t t = s[i].b->total;
		ob->total = ob->total > UINT64_MAX - t ? UINT64_MAX : ob->total + t;
	}
	for (size_t k = 0; k < ns; k++)
		if (ob->values[k] > (double)ob->peak)
			ob->peak = (uint64_t)ob->values[k];
	return 0;
}

/* TopTwenty: the smallest beyond max_bands become OTHER, at the bottom. */
static int top_bands(struct hp_chart *c, const struct slot *s, size_t n, size_t max_bands)
{
	size_t compact = 0, ns = c->nsamples;
	if (max_bands && n > max_bands)
		compact = n - max_bands + 1;
	c->merged_other = compact;
	c->nbands = compact ? max_bands : n;
	c->bands = calloc(c->nbands ? c->nbands : 1, sizeof(*c->bands));
	if (!c->bands)
		return -1;
	size_t at = 0;
	if (compact && other_band(&c->bands[at++], s, compact, ns) != 0)
		return -1;
	for (size_t i = compact; i < n; i++) {
		struct hp_chart_band *cb = &c->bands[at++];
		cb->band = s[i].b;
		cb->name = s[i].b->name;
		cb->total = s[i].b->total;
		cb->peak = s[i].b->peak;
		if (!(cb->values = calloc(ns ? ns : 1, sizeof(double))))
			return -1;
		fill_values(s[i].b, cb->values, ns);
	}
	return 0;
}

int hp_chart_make(const struct hp_profile *p, const struct hp_chart_opts *o, struct hp_chart *c)
{
	size_t n, ns = p->nsamples;
	struct slot *s = calloc(p->nbands ? p->nbands : 1, sizeof(*s));

	memset(c, 0, sizeof(*c));
	c->nsamples = ns;
	c->times = p->times;
	if (!s)
		return -1;
	n = table_order(p, s);
	c->dropped_trace = trace_element(s, n, o->trace_pct);
	n -= c->dropped_trace;
	if (o->sort == HP_SORT_STDDEV)
		deviation_sort(s, n, ns);
	if (top_bands(c, s, n, o->max_bands) != 0) {
		free(s);
		hp_chart_free(c);
		return -1;
	}
	for (size_t k = 0; k < ns; k++) {
		double y = 0;
		for (size_t i = 0; i < c->nbands; i++)
			y += c->bands[i].values[k];
		if (y > c->ymax)
			c->ymax = y;
	}
	free(s);
	return 0;
}

double hp_chart_area(const struct hp_chart *c)
{
	double area = 0, prev = 0;
	for (size_t k = 0; k < c->nsamples; k++) {
		double tot = 0;
		for (size_t i = 0; i < c->nbands; i++)
			tot += c->bands[i].values[k];
		if (k)
			area += (c->times[k] - c->times[k - 1]) * (prev + tot) / 2.0;
		prev = tot;
	}
	return area;
}

void hp_chart_free(struct hp_chart *c)
{
	for (size_t i = 0; c->bands && i < c->nbands; i++)
		free(c->bands[i].values);
	free(c->bands);
	memset(c, 0, sizeof(*c));
}
