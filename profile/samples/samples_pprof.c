/*
 * samples_pprof.c - the stack samples (samples.h) as pprof's profile.proto,
 * written by hand and gzipped: a location per frame, a function per
 * function of samples_group.c, strings as the text formats show them.
 *
 * May call: samples_group.c (functions, names, stacks), util/grow.h,
 * util/id_index, util/safe_text, zlib.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "samples.h"
#include "samples_int.h"
#include "util/grow.h"
#include "util/id_index.h"
#include "util/safe_text.h"

/* ---- pprof: profile.proto written by hand, gzipped ------------------------------ */

/* A protobuf message being written; oom once anything failed. */
struct pb {
	uint8_t *d;
	size_t len, cap;
	int oom;
};

static void pb_put(struct pb *b, const void *s, size_t n)
{
	if (!n || b->oom)
		return;
	if (GROW(b->d, b->cap, b->len + n) != 0) {
		b->oom = 1;
		return;
	}
	memcpy(b->d + b->len, s, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t o[10];
	size_t n = 0;
	do {
		o[n++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_put(b, o, n);
}

/* A varint field; left out when 0, proto3's default. */
static void pb_num(struct pb *b, unsigned field, uint64_t v)
{
	if (v) {
		pb_varint(b, (uint64_t)field << 3);
		pb_varint(b, v);
	}
}

static void pb_bytes(struct pb *b, unsigned field, const void *s, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_put(b, s, n);
}

/* sub, a message written apart, as field of b; sub is emptied for reuse. */
static void pb_sub(struct pb *b, unsigned field, struct pb *sub)
{
	b->oom |= sub->oom;
	pb_bytes(b, field, sub->d, sub->len);
	sub->len = 0;
}

/* pprof's string table: each string once, "" first (ids: index + 1). */
struct strtab {
	char **s;
	size_t n, cap;
	struct id_index idx;
};

static uint64_t str_hash_of(const void *ctx, uint32_t id)
{
	const char *s = ((const struct strtab *)ctx)->s[id - 1];
	return id_index_hash(ID_INDEX_SEED, s, strlen(s));
}

struct str_key {
	const struct strtab *t;
	const char *s;
};

static int str_is(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;
	return !strcmp(k->t->s[id - 1], k->s);
}

/* s's index, s taken (freed when already there); 0 ("") when out of memory,
 * with *oom set. */
static uint64_t str_take(struct strtab *t, char *s, int *oom)
{
	struct str_key key = {t, s};
	size_t at;
	uint32_t id = 0;
	if (s && id_index_reserve(&t->idx, str_hash_of, t) == 0 &&
	    !(id = id_index_find(&t->idx, id_index_hash(ID_INDEX_SEED, s, strlen(s)), str_is, &key, &at)) &&
	    t->n < UINT32_MAX - 1 && GROW(t->s, t->cap, t->n + 1) == 0) {
		t->s[t->n] = s;
		id_index_put(&t->idx, at, id = (uint32_t)++t->n);
		return id - 1;
	}
	free(s);
	*oom |= !id;
	return id ? id - 1 : 0;
}

/* Text as the text formats show it (a frame's name when fr, else s): malloc'd. */
static char *spelled(const struct samples_frame *fr, const char *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (!m)
		return NULL;
	if (fr)
		samples_put_label(m, fr, NULL);
	else
		safe_text_spelled(m, s, NULL);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	id_index_free(&t->idx);
}

/* A ValueType {type, unit} as field. */
static void pb_value_type(struct pb *b, unsigned field, struct pb *sub, uint64_t type, uint64_t unit)
{
	pb_num(sub, 1, type);
	pb_num(sub, 2, unit);
	pb_sub(b, field, sub);
}

/* Sample (2): location ids (the frames, leaf first) and [count, nanoseconds]. */
static void pprof_samples(struct pb *b, struct pb *sub, const struct samples_stacks *st)
{
	struct pb packed = {0};
	for (size_t i = 0; i < st->n; i++) {
		const struct samples_stack *s = &st->s[i];
		for (uint32_t k = 0; k < s->depth; k++)
			pb_varint(&packed, (uint64_t)st->ids[s->at + k] + 1);
		pb_sub(sub, 1, &packed);
		pb_varint(&packed, s->count);
		pb_varint(&packed, s->ns);
		pb_sub(sub, 2, &packed);
		pb_sub(b, 2, sub);
	}
	b->oom |= packed.oom;
	free(packed.d);
}

/* Mapping (3): one an object the frames lie in (its addresses, file
 * offset, file and build-id), or, for a stream from before mappings were
 * written, one for the program over every address; each with its
 * functions and lines known (pprof then symbolizes nothing).  Location
 * (4): one a frame (the sampled address, its mapping), one line each. */
static void pprof_mappings(struct pb *b, struct pb *sub, const struct samples_profile *p, struct strtab *t,
                           uint64_t program)
{
	uint64_t top = 0;
	for (size_t i = 0; i < p->nframes; i++)
		top = p->frames[i].addr > top ? p->frames[i].addr : top;
	for (size_t i = 0; i < (p->nmappings ? p->nmappings : 1); i++) {
		const struct samples_mapping *m = p->nmappings ? &p->mappings[i] : NULL;
		pb_num(sub, 1, i + 1);
		pb_num(sub, 2, m ? m->start : 0);
		pb_num(sub, 3, m ? m->limit : top == UINT64_MAX ? top : top + 1);
		pb_num(sub, 4, m ? m->offset : 0);
		pb_num(sub, 5, m ? str_take(t, spelled(NULL, m->file), &b->oom) : program);
		if (m)
			pb_num(sub, 6, str_take(t, spelled(NULL, m->build_id), &b->oom));
		for (unsigned field = 7; field <= 9; field++)
			pb_num(sub, field, 1);
		pb_sub(b, 3, sub);
	}
}

static void pprof_locations(struct pb *b, struct pb *sub, const struct samples_profile *p,
                            const struct samples_funcs *fs)
{
	struct pb line = {0};
	for (size_t i = 0; i < p->nframes; i++) {
		pb_num(sub, 1, i + 1);
		pb_num(sub, 2, p->nmappings ? p->frames[i].mapping : 1);
		pb_num(sub, 3, p->frames[i].addr);
		pb_num(&line, 1, (uint64_t)fs->of_frame[i] + 1);
		pb_num(&line, 2, p->frames[i].line);
		pb_sub(sub, 4, &line);
		pb_sub(b, 4, sub);
	}
	b->oom |= line.oom;
	free(line.d);
}

/* Function (5): a function's name ("Module.name"), its symbol's name and
 * its file, as the text formats show them. */
static void pprof_functions(struct pb *b, struct pb *sub, const struct samples_profile *p,
                            const struct samples_funcs *fs, struct strtab *t)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct samples_frame *fr = &p->frames[fs->first[i]];
		const struct samples_frame *at = fs->lined[i] != SAMPLES_NO_FRAME ? &p->frames[fs->lined[i]] : fr;
		pb_num(sub, 1, i + 1);
		pb_num(sub, 2, str_take(t, spelled(fr, NULL), &b->oom));
		pb_num(sub, 3, str_take(t, fr->name[0] ? spelled(NULL, fr->name) : spelled(fr, NULL), &b->oom));
		pb_num(sub, 4, str_take(t, spelled(NULL, at->file), &b->oom));
		pb_sub(b, 5, sub);
	}
}

static void pprof_message(struct pb *b, const struct samples_profile *p, const struct samples_funcs *fs,
                          const struct samples_stacks *st, struct strtab *t)
{
	struct pb sub = {0};
	uint64_t none = str_take(t, strdup(""), &b->oom); /* string_table[0] */
	uint64_t samples = str_take(t, strdup("samples"), &b->oom), count = str_take(t, strdup("count"), &b->oom);
	uint64_t cpu = str_take(t, strdup("cpu"), &b->oom), ns = str_take(t, strdup("nanoseconds"), &b->oom);
	uint64_t end = 0;
	(void)none;
	pb_value_type(b, 1, &sub, samples, count);
	pb_value_type(b, 1, &sub, cpu, ns);
	pprof_samples(b, &sub, st);
	pprof_mappings(b, &sub, p, t, str_take(t, spelled(NULL, p->program ? p->program : ""), &b->oom));
	pprof_locations(b, &sub, p, fs);
	pprof_functions(b, &sub, p, fs, t);
	for (size_t i = 0; i < p->nsamples; i++)
		end = p->samples[i].t_ns > end ? p->samples[i].t_ns : end;
	pb_num(b, 9, p->start_unix_ns);
	pb_num(b, 10, end);
	pb_value_type(b, 11, &sub, cpu, ns);
	pb_num(b, 12, samples_ns(1, p->hz));
	for (size_t i = 0; i < t->n; i++)
		pb_bytes(b, 6, t->s[i], strlen(t->s[i]));
	b->oom |= sub.oom;
	free(sub.d);
}

/* n bytes at d to f as one gzip member. */
static int gzip_write(FILE *f, const uint8_t *d, size_t n)
{
	z_stream z;
	uint8_t out[16384];
	int rc;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	for (;;) {
		if (z.avail_in == 0 && n) {
			uInt piece = n > (1u << 30) ? 1u << 30 : (uInt)n;
			z.next_in = (Bytef *)d;
			z.avail_in = piece;
			d += piece;
			n -= piece;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
		if (rc == Z_STREAM_ERROR)
			break;
		fwrite(out, 1, sizeof(out) - z.avail_out, f);
		if (rc == Z_STREAM_END)
			break;
	}
	deflateEnd(&z);
	return rc == Z_STREAM_END && !ferror(f) ? 0 : -1;
}

int samples_write_pprof(FILE *f, const struct samples_profile *p)
{
	struct samples_funcs fs;
	struct samples_stacks st;
	struct strtab t = {0};
	struct pb b = {0};
	if (samples_funcs_build(&fs, p) != 0)
		return -1;
	if (samples_stacks_count(&st, p, NULL) != 0)
		return samples_funcs_free(&fs), -1;
	pprof_message(&b, p, &fs, &st, &t);
	int rc = b.oom ? -1 : gzip_write(f, b.d, b.len);
	free(b.d);
	strtab_free(&t);
	samples_stacks_free(&st);
	samples_funcs_free(&fs);
	return rc;
}
