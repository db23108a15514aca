/*
 * hp_parse.c - the incremental .hp parser (heap_profile.h): bytes in any
 * pieces, lines out, complete samples into the model.
 *
 * Why line-based, not hp2ps's whitespace tokens: hp2ps reads a band name
 * as one run of non-space characters, so a name with a space in it (GHC's
 * -hd/-hy names can have them, -L cuts them anywhere) throws it off.  GHC
 * writes "name\tbytes", so the name is everything before the last tab;
 * without a tab (hand-made files) before the last run of spaces.
 *
 * A band line is held in the open sample's list until END_SAMPLE, so a
 * sample cut by a crash never leaks half its bands into the chart.
 *
 * May call: parse_util.c (pf_lines_feed, pf_error), util/id_index,
 * util/grow.h, libc.
 */
#include "config.h"

#include "heap_profile.h"
#include "profile/common/parse_util.h"
#include "util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct hp_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct hp_profile *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pf_error(p->err, sizeof(p->err), p->line_no, fmt, ap);
	va_end(ap);
	p->failed = 1;
	return -1;
}

static int oom(struct hp_profile *p)
{
	return fail(p, "out of memory");
}

/* Grows *arr (elements of size sz) to hold at least need; 0 or -1. */
void hp_init(struct hp_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->line_no = 1;
}

void hp_free(struct hp_profile *p)
{
	free(p->job);
	free(p->date);
	free(p->sample_unit);
	free(p->value_unit);
	free(p->times);
	free(p->marks);
	for (size_t i = 0; i < p->nbands; i++) {
		free(p->bands[i].name);
		for (size_t k = 0; k < p->bands[i].nblocks; k++)
			free(p->bands[i].blocks[k]);
		free(p->bands[i].blocks);
	}
	free(p->bands);
	free(p->lines.buf);
	free(p->open);
	free(p->open_bytes);
	id_index_free(&p->names);
	memset(p, 0, sizeof(*p));
}

const char *hp_error(const struct hp_profile *p)
{
	return p->failed ? p->err : "";
}

/* ---- names ---------------------------------------------------------------- */

static uint64_t band_hash(const void *ctx, uint32_t id)
{
	const struct hp_band *b = &((const struct hp_profile *)ctx)->bands[id - 1];
	return id_index_hash(ID_INDEX_SEED, b->name, b->name_len);
}

struct name_key {
	const struct hp_profile *p;
	const char *name;
	size_t n;
};

static int band_is(const void *ctx, uint32_t id)
{
	const struct name_key *k = ctx;
	const struct hp_band *b = &k->p->bands[id - 1];
	return b->name_len == k->n && memcmp(b->name, k->name, k->n) == 0;
}

/* The band called name, made if new; NULL when out of memory. */
static struct hp_band *band_get(struct hp_profile *p, const char *name, size_t n)
{
	size_t at;
	struct name_key key = {p, name, n};
	if (id_index_reserve(&p->names, band_hash, p) != 0)
		return NULL;
	uint32_t id = id_index_find(&p->names, id_index_hash(ID_INDEX_SEED, name, n), band_is, &key, &at);
	if (id)
		return &p->bands[id - 1];
	if (p->nbands >= UINT32_MAX - 1 ||
	    GROW(p->bands, p->bands_cap, p->nbands + 1) != 0)
		return NULL;
	struct hp_band *b = &p->bands[p->nbands];
	memset(b, 0, sizeof(*b));
	b->name = malloc(n + 1);
	if (!b->name)
		return NULL;
	memcpy(b->name, name, n);
	b->name[n] = '\0';
	b->name_len = n;
	id_index_put(&p->names, at, (uint32_t)++p->nbands);
	return b;
}

/* ---- numbers -------------------------------------------------------------- */

/* A sample time: a finite, non-negative decimal ("0.101069", "12", "1e3"). */
static int parse_time(struct hp_profile *p, const char *s, const char *what, double *out)
{
	char *end;
	if (!*s)
		return fail(p, "a time must follow %s", what);
	if (!((*s >= '0' && *s <= '9') || *s == '.'))
		return fail(p, "%s needs a non-negative time, not '%.40s'", what, s);
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v) || v < 0)
		return fail(p, "%s needs a non-negative time, not '%.40s'", what, s);
	*out = v;
	return 0;
}

/* A band's bytes: a decimal integer that fits in 64 bits. */
static int parse_bytes(struct hp_profile *p, const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (*s == '-')
		return fail(p, "negative band value '%.40s'", s);
	if (!*s)
		return fail(p, "an integer must follow the band name");
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return fail(p, "an integer must follow the band name, not '%.40s'", s);
		if (v > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			return fail(p, "band value '%.40s' does not fit in 64 bits", s);
		v = v * 10 + (uint64_t)(*c - '0');
	}
	*out = v;
	return 0;
}

/* JOB "a ""quoted"" word": the string, quotes undoubled. */
static int parse_string(struct hp_profile *p, const char *s, const char *what, char **out)
{
	if (*s != '"')
		return fail(p, "a quoted string must follow %s", what);
	size_t n = strlen(s);
	char *v = malloc(n);
	if (!v)
		return oom(p);
	size_t k = 0;
	const char *c = s + 1;
	for (;;) {
		if (!*c) {
			free(v);
			return fail(p, "%s's string has no closing quote", what);
		}
		if (*c == '"') {
			if (c[1] == '"') {
				v[k++] = '"';
				c += 2;
				continue;
			}
			break;
		}
		v[k++] = *c++;
	}
	for (c++; *c == ' ' || *c == '\t' || *c == '\r'; c++)
		;
	if (*c) {
		free(v);
		return fail(p, "unexpected text after %s's string", what);
	}
	v[k] = '\0';
	free(*out);
	*out = v;
	return 0;
}

/* ---- lines ---------------------------------------------------------------- */

static size_t block_size(size_t k)
{
	return k < 7 ? HP_BLOCK_FIRST << k : HP_BLOCK_MAX;
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Appends a point: blocks for all of its bytes first, so that a failed
 * allocation leaves the band as it was. */
static int point_add(struct hp_band *b, uint32_t sample, uint64_t bytes)
{
	uint8_t code[20];
	size_t len = put_varint(code, sample - b->last_sample);
	len += put_varint(code + len, bytes);
	size_t room = b->nblocks ? block_size(b->nblocks - 1) - b->used : 0, k = b->nblocks;
	while (room < len) {
		if (GROW(b->blocks, b->blocks_cap, k + 1) != 0 ||
		    !(b->blocks[k] = malloc(block_size(k)))) {
			while (k > b->nblocks) /* the ones taken for this point */
				free(b->blocks[--k]);
			return -1;
		}
		room += block_size(k++);
	}
	size_t blk = b->nblocks ? b->nblocks - 1 : 0, off = b->nblocks ? b->used : 0;
	for (size_t i = 0; i < len; i++) {
		if (off == block_size(blk)) {
			blk++;
			off = 0;
		}
		b->blocks[blk][off++] = code[i];
	}
	b->nblocks = k;
	b->used = off;
	b->last_sample = sample;
	b->npts++;
	return 0;
}

static int end_sample(struct hp_profile *p)
{
	if (p->nsamples >= UINT32_MAX - 1)
		return fail(p, "more than %u samples", UINT32_MAX - 1);
	if (GROW(p->times, p->times_cap, p->nsamples + 1) != 0)
		return oom(p);
	uint32_t s = (uint32_t)p->nsamples;
	for (size_t i = 0; i < p->nopen; i++) {
		struct hp_band *b = &p->bands[p->open[i]];
		uint64_t v = p->open_bytes[i];
		if (point_add(b, s, v) != 0)
			return oom(p);
		b->total = b->total > UINT64_MAX - v ? UINT64_MAX : b->total + v;
		if (v > b->peak)
			b->peak = v;
		b->pending = 0;
	}
	p->nopen = 0;
	p->times[p->nsamples++] = p->sample_time;
	p->in_sample = 0;
	return 0;
}

static int band_line(struct hp_profile *p, char *line, size_t len)
{
	/* The name is everything before the last tab (else the last spaces). */
	char *sep = memrchr(line, '\t', len);
	char *name_end;
	if (sep) {
		name_end = sep;
	} else {
		sep = memrchr(line, ' ', len);
		if (!sep)
			return fail(p, "a band line needs a name, a tab and a value");
		name_end = sep;
		while (name_end > line && name_end[-1] == ' ')
			name_end--;
	}
	if (name_end == line)
		return fail(p, "a band with an empty name");
	uint64_t v = 0;
	if (parse_bytes(p, sep + 1, &v) != 0)
		return -1;
	if (!p->in_sample)
		return fail(p, "a band outside BEGIN_SAMPLE/END_SAMPLE");
	struct hp_band *b = band_get(p, line, (size_t)(name_end - line));
	if (!b)
		return oom(p);
	if (b->pending) { /* the same name twice in a sample: hp2ps adds them */
		uint64_t *o = &p->open_bytes[b->pending - 1];
		*o = *o > UINT64_MAX - v ? UINT64_MAX : *o + v;
		return 0;
	}
	if (GROW(p->open, p->open_cap, p->nopen + 1) != 0)
		return oom(p);
	uint64_t *ob = realloc(p->open_bytes, p->open_cap * sizeof(*ob));
	if (!ob)
		return oom(p);
	p->open_bytes = ob;
	p->open[p->nopen] = (uint32_t)(b - p->bands);
	p->open_bytes[p->nopen] = v;
	b->pending = (uint32_t)++p->nopen;
	return 0;
}

/* The first word of line if it is a keyword: its argument, else NULL. */
static const char *keyword(const char *line, const char *kw)
{
	size_t n = strlen(kw);
	if (strncmp(line, kw, n) != 0 || (line[n] && line[n] != ' ' && line[n] != '\t'))
		return NULL;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

static int do_line(struct hp_profile *p, char *line, size_t len)
{
	const char *arg;
	double t;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		line[--len] = '\0';
	if (len == 0)
		return 0;
	if (memchr(line, '\0', len))
		return fail(p, "a NUL byte");
	if ((arg = keyword(line, "BEGIN_SAMPLE"))) {
		if (p->in_sample)
			return fail(p, "BEGIN_SAMPLE inside a sample (no END_SAMPLE for %g)",
			            p->sample_time);
		if (parse_time(p, arg, "BEGIN_SAMPLE", &t) != 0)
			return -1;
		if (t < p->last_time)
			return fail(p, "samples out of sequence: %g after %g", t, p->last_time);
		p->in_sample = 1;
		p->sample_time = p->last_time = t;
		return 0;
	}
	if ((arg = keyword(line, "END_SAMPLE"))) {
		if (!p->in_sample)
			return fail(p, "END_SAMPLE without BEGIN_SAMPLE");
		if (parse_time(p, arg, "END_SAMPLE", &t) != 0)
			return -1;
		return end_sample(p);
	}
	if (p->in_sample)
		return band_line(p, line, len);
	if ((arg = keyword(line, "JOB")))
		return parse_string(p, arg, "JOB", &p->job);
	if ((arg = keyword(line, "DATE")))
		return parse_string(p, arg, "DATE", &p->date);
	if ((arg = keyword(line, "SAMPLE_UNIT")))
		return parse_string(p, arg, "SAMPLE_UNIT", &p->sample_unit);
	if ((arg = keyword(line, "VALUE_UNIT")))
		return parse_string(p, arg, "VALUE_UNIT", &p->value_unit);
	if ((arg = keyword(line, "MARK"))) {
		if (parse_time(p, arg, "MARK", &t) != 0)
			return -1;
		if (GROW(p->marks, p->marks_cap, p->nmarks + 1) != 0)
			return oom(p);
		p->marks[p->nmarks++] = t;
		return 0;
	}
	if (!p->job && !p->nsamples)
		return fail(p, "not a GHC heap profile (.hp): it starts with '%.24s', not JOB", line);
	return fail(p, "a band line outside a sample, or an unknown keyword");
}

static int line_done(void *ctx, char *line, size_t len)
{
	struct hp_profile *p = ctx;
	if (do_line(p, line, len) != 0)
		return -1;
	p->line_no++;
	if (!p->in_sample)
		p->committed = p->fed;
	return 0;
}

int hp_feed(struct hp_profile *p, const void *data, size_t len)
{
	if (p->failed)
		return -1;
	int rc = pf_lines_feed(&p->lines, &p->fed, HP_MAX_LINE, data, len, line_done, p);
	if (rc == PF_TOO_LONG)
		return fail(p, "a line longer than %u bytes", HP_MAX_LINE);
	if (rc == PF_NO_MEMORY)
		return oom(p);
	return rc ? -1 : 0;
}

int hp_finish(struct hp_profile *p, struct hp_tail *tail)
{
	/* A last line without its newline is read if it reads cleanly (GHC
	 * ends files with one, a hand-made file may not); otherwise it is a
	 * line cut by a crash and counts as dropped, not as an error. */
	if (!p->failed && !p->finished && p->lines.len) {
		p->lines.buf[p->lines.len] = '\0';
		if (do_line(p, p->lines.buf, p->lines.len) == 0) {
			if (!p->in_sample)
				p->committed = p->fed;
		} else {
			p->failed = 0;
			p->err[0] = '\0';
		}
		p->lines.len = 0;
	}
	p->finished = 1;
	if (tail) {
		memset(tail, 0, sizeof(*tail));
		tail->dropped_bytes = p->fed - p->committed;
		tail->partial_sample = p->in_sample;
		tail->partial_time = p->in_sample ? p->sample_time : 0;
		tail->partial_bands = p->in_sample ? p->nopen : 0;
	}
	return p->failed ? -1 : 0;
}

static uint64_t get_varint(const struct hp_band *b, struct hp_cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (c->off == block_size(c->block)) {
			c->block++;
			c->off = 0;
		}
		uint8_t byte = b->blocks[c->block][c->off++];
		if (shift < 64)
			v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
}

int hp_next(const struct hp_band *b, struct hp_cursor *c, struct hp_point *pt)
{
	if (c->i >= b->npts)
		return 0;
	c->sample += (uint32_t)get_varint(b, c);
	pt->sample = c->sample;
	pt->bytes = get_varint(b, c);
	c->i++;
	return 1;
}

uint64_t hp_band_at(const struct hp_band *b, struct hp_cursor *c, uint32_t s)
{
	if (c->ahead_state == 0)
		c->ahead_state = hp_next(b, c, &c->ahead) ? 1 : 2;
	while (c->ahead_state == 1 && c->ahead.sample < s)
		c->ahead_state = hp_next(b, c, &c->ahead) ? 1 : 2;
	return c->ahead_state == 1 && c->ahead.sample == s ? c->ahead.bytes : 0;
}

size_t hp_band_stored_bytes(const struct hp_band *b)
{
	size_t n = 0;
	for (size_t k = 0; k < b->nblocks; k++)
		n += block_size(k);
	return n;
}
