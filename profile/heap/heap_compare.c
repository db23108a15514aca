/*
 * heap_compare.c - two heap profiles' bands matched by name once GHC's
 * generated parts are taken out, and what a heap profile is by
 * (heap_compare.h).
 *
 * May call: the model (hp_parse.c's hp_next), util/id_index, libc.
 */
#include "config.h"

#include "heap_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/id_index.h"

/* Bands by name: the index's ids are out[]'s index + 1; a name's hash is
 * FNV-1a over it, then one more round. */
static uint64_t str_hash(const char *s)
{
	uint64_t h = ID_INDEX_SEED;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0x1f) * 1099511628211ull;
}

/* ---- heap bands ------------------------------------------------------------- */

static int is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char *cmp_band_key(const char *name)
{
	size_t n = strlen(name);
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	const char *s = name;
	/* -hc: "(302)main/..." numbers the stack; a rebuild renumbers it */
	if (*s == '(') {
		const char *d = s + 1;
		while (*d >= '0' && *d <= '9')
			d++;
		if (d > s + 1 && *d == ')')
			s = d + 1;
	}
	while (*s) {
		/* a generated unique: "_s2Qi", "_sajl", "_r1ab" after a letter,
		 * 2 to 5 characters, ending the word */
		if (*s == '_' && o > out && is_alnum(o[-1]) && (s[1] == 's' || s[1] == 'r')) {
			size_t k = 2;
			while (k < 7 && is_alnum(s[k]))
				k++;
			if (k >= 4 && !is_alnum(s[k])) {
				memcpy(o, "_*", 2);
				o += 2;
				s += k;
				continue;
			}
		}
		*o++ = *s++;
	}
	*o = '\0';
	return out;
}

static int cmp_area(const void *x, const void *y)
{
	const struct cmp_band *a = x, *b = y;
	double da = fabs(a->area[1] - a->area[0]), db = fabs(b->area[1] - b->area[0]);
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

struct point {
	uint32_t key, sample;
	double bytes;
};

static int by_key_sample(const void *x, const void *y)
{
	const struct point *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->sample < b->sample ? -1 : a->sample > b->sample;
}

static uint64_t band_hash(const void *ctx, uint32_t id)
{
	return str_hash(((const struct cmp_band *)ctx)[id - 1].name);
}

struct band_key {
	const struct cmp_band *out;
	const char *name;
};

static int band_is(const void *ctx, uint32_t id)
{
	const struct band_key *k = ctx;
	return strcmp(k->out[id - 1].name, k->name) == 0;
}

/* The band of a normalised name in out[] (key is taken, or freed when
 * the band is there already); its index, or -1 when out of memory. */
static int64_t band_get(struct id_index *x, struct cmp_band *out, size_t *k, char *key)
{
	size_t at;
	struct band_key bk = {out, key};
	if (id_index_reserve(x, band_hash, out) != 0) {
		free(key);
		return -1;
	}
	uint32_t id = id_index_find(x, str_hash(key), band_is, &bk, &at);
	if (id) {
		free(key);
		return id - 1;
	}
	out[*k].name = key;
	id = (uint32_t)++*k;
	id_index_put(x, at, id);
	return id - 1;
}

struct cmp_band *cmp_bands(const struct hp_profile *a, const struct hp_profile *b, size_t *n)
{
	const struct hp_profile *p[2] = {a, b};
	size_t total = a->nbands + b->nbands, k = 0;
	struct cmp_band *out = calloc(total ? total : 1, sizeof(*out));
	struct id_index slots = {0};
	uint32_t *band_key[2] = {calloc(a->nbands + 1, sizeof(uint32_t)), calloc(b->nbands + 1, sizeof(uint32_t))};
	struct point *pts = NULL;
	*n = 0;
	if (!out || !band_key[0] || !band_key[1])
		goto oom;
	/* names to keys: open addressing on the normalised name */
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < p[side]->nbands; i++) {
			char *key = cmp_band_key(p[side]->bands[i].name);
			int64_t at = key ? band_get(&slots, out, &k, key) : -1;
			if (at < 0)
				goto oom;
			band_key[side][i] = (uint32_t)at;
			out[at].present[side] = 1;
		}
	/* per side: every point under its key, summed per sample (bands that
	 * differ only in a unique add up), then peak and area */
	for (int side = 0; side < 2; side++) {
		size_t np = 0, m = 0;
		for (size_t i = 0; i < p[side]->nbands; i++)
			np += p[side]->bands[i].npts;
		free(pts);
		pts = malloc((np ? np : 1) * sizeof(*pts));
		if (!pts)
			goto oom;
		for (size_t i = 0; i < p[side]->nbands; i++) {
			struct hp_cursor c = HP_CURSOR_INIT;
			struct hp_point pt;
			while (hp_next(&p[side]->bands[i], &c, &pt))
				pts[m++] = (struct point){band_key[side][i], pt.sample, (double)pt.bytes};
		}
		qsort(pts, m, sizeof(*pts), by_key_sample);
		for (size_t q = 0; q < m;) {
			struct cmp_band *c = &out[pts[q].key];
			uint32_t sn = pts[q].sample;
			double v = 0;
			for (; q < m && pts[q].key == (uint32_t)(c - out) && pts[q].sample == sn; q++)
				v += pts[q].bytes;
			/* area: byte-seconds, each sample's value held until the next */
			double dt = sn + 1 < p[side]->nsamples ? p[side]->times[sn + 1] - p[side]->times[sn] : 0;
			c->area[side] += v * dt;
			if (v > c->peak[side])
				c->peak[side] = v;
		}
	}
	free(pts);
	id_index_free(&slots);
	free(band_key[0]);
	free(band_key[1]);
	qsort(out, k, sizeof(*out), cmp_area);
	*n = k;
	return out;
oom:
	free(pts);
	id_index_free(&slots);
	free(band_key[0]);
	free(band_key[1]);
	cmp_bands_free(out, k);
	return NULL;
}

void cmp_bands_free(struct cmp_band *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].name);
	free(s);
}

/* ---- what a heap profile is by -------------------------------------------------- */

static const char *const kinds[][2] = {
	{"c", "cost-centre stacks (-hc)"}, {"m", "modules (-hm)"}, {"d", "closure descriptions (-hd)"},
	{"y", "types (-hy)"}, {"r", "retainer sets (-hr)"}, {"b", "biographies (-hb)"},
	{"T", "closure types (-hT)"}, {"i", "info tables (-hi)"}, {"e", "eras (-he)"},
};

char cmp_hp_kind(const char *job)
{
	char kind = 0;
	int rts = 0;
	for (const char *s = job ? job : ""; *s;) {
		while (*s == ' ' || *s == '\t')
			s++;
		const char *w = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		size_t n = (size_t)(s - w);
		if (n == 4 && memcmp(w, "+RTS", 4) == 0)
			rts = 1;
		else if (n == 4 && memcmp(w, "-RTS", 4) == 0)
			rts = 0;
		else if (rts && n == 2 && memcmp(w, "-h", 2) == 0)
			kind = 'c'; /* -h alone: by cost-centre stack */
		else if (rts && n == 3 && memcmp(w, "-h", 2) == 0 && strchr("cmdyrbTie", w[2]))
			kind = w[2];
	}
	return kind;
}

const char *cmp_hp_kind_name(char kind)
{
	for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i][0][0] == kind)
			return kinds[i][1];
	return "not known";
}

int cmp_kind_warning(char *buf, size_t len, long long a, const char *job_a, long long b, const char *job_b)
{
	char ka = cmp_hp_kind(job_a), kb = cmp_hp_kind(job_b);
	if (!ka || !kb || ka == kb)
		return 0;
	snprintf(buf, len,
	         "The two heap profiles are of different kinds: run %lld's is by %s, run %lld's by %s. Their "
	         "bands are different things, so none match: compare runs profiled the same way.",
	         a, cmp_hp_kind_name(ka), b, cmp_hp_kind_name(kb));
	return 1;
}
