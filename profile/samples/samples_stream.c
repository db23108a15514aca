/*
 * samples_stream.c - the samples stream (samples.h): its records encoded
 * (the sampler appends them to a buffer) and read back incrementally into
 * the model (struct samples_profile), bytes arriving in any pieces.
 *
 * The reader keeps only the bytes of a record not yet whole (a head and at
 * most SAMPLES_MAX_RECORD bytes of payload), so its memory is the model's:
 * frames (each kept once over all segments, by kind, name, module, file, line
 * and address, through util/id_index.h), samples and their frame indexes,
 * and a map of the current segment's frame ids.  Every field is checked
 * before anything is kept; the first bad record stops the stream with a
 * message naming its offset and what is wrong.
 *
 * May call: util/grow.h, util/id_index, libc.
 */
#include "config.h"

#include "samples.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/id_index.h"

#define HEAD 8u
#define STR_MAX 65535u

/* ---- writing -------------------------------------------------------------- */

void samples_buf_free(struct samples_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static uint8_t *buf_room(struct samples_buf *b, size_t n)
{
	if (n > SIZE_MAX - b->len || GROW(b->data, b->cap, b->len + n) != 0)
		return NULL;
	uint8_t *at = b->data + b->len;
	b->len += n;
	return at;
}

static uint8_t *put16(uint8_t *o, uint16_t v)
{
	o[0] = (uint8_t)v;
	o[1] = (uint8_t)(v >> 8);
	return o + 2;
}

static uint8_t *put32(uint8_t *o, uint32_t v)
{
	return put16(put16(o, (uint16_t)v), (uint16_t)(v >> 16));
}

static uint8_t *put64(uint8_t *o, uint64_t v)
{
	return put32(put32(o, (uint32_t)v), (uint32_t)(v >> 32));
}

static uint8_t *put_str(uint8_t *o, const char *s, size_t n)
{
	o = put16(o, (uint16_t)n);
	memcpy(o, s, n);
	return o + n;
}

/* A string's length cut to at most max bytes, never inside a UTF-8
 * sequence (a cut name still reads as text). */
static size_t cut_len(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* The head and room for the payload; NULL when out of memory. */
static uint8_t *record(struct samples_buf *b, enum samples_rec type, size_t payload)
{
	uint8_t *o = buf_room(b, HEAD + payload);
	if (!o)
		return NULL;
	o = put16(o, (uint16_t)type);
	o = put16(o, 0);
	return put32(o, (uint32_t)payload);
}

int samples_put_begin(struct samples_buf *b, uint32_t hz, uint64_t start_unix_ns, uint32_t vcpus,
                      const char *program)
{
	const size_t fixed = 4 + 4 + 8 + 4 + 2;
	program = program ? program : "";
	size_t n = cut_len(program, SAMPLES_MAX_RECORD - fixed);
	uint8_t *o = record(b, SAMPLES_REC_BEGIN, fixed + n);
	if (!o)
		return -1;
	o = put32(put32(o, SAMPLES_FORMAT), hz);
	o = put32(put64(o, start_unix_ns), vcpus);
	put_str(o, program, n);
	return 0;
}

/* The three strings' lengths cut so that the record fits: each to 65535
 * bytes, then the longest by what is still over, until it fits. */
static void frame_lens(const char *s[3], size_t n[3], size_t room)
{
	for (int i = 0; i < 3; i++)
		n[i] = cut_len(s[i], STR_MAX);
	for (;;) {
		size_t sum = n[0] + n[1] + n[2];
		if (sum <= room)
			return;
		int l = n[0] >= n[1] && n[0] >= n[2] ? 0 : n[1] >= n[2] ? 1 : 2;
		size_t over = sum - room;
		n[l] = cut_len(s[l], n[l] > over ? n[l] - over : 0);
	}
}

int samples_put_frame(struct samples_buf *b, uint32_t id, const struct samples_frame *f)
{
	const size_t fixed = 4 + 1 + 1 + 2 + 8 + 4 + 3 * 2;
	const char *s[3] = {f->name ? f->name : "", f->module ? f->module : "", f->file ? f->file : ""};
	size_t n[3];
	frame_lens(s, n, SAMPLES_MAX_RECORD - fixed);
	uint8_t *o = record(b, SAMPLES_REC_FRAME, fixed + n[0] + n[1] + n[2]);
	if (!o)
		return -1;
	o = put32(o, id);
	*o++ = (uint8_t)f->kind;
	*o++ = 0;
	o = put16(o, (uint16_t)(f->mapping <= UINT16_MAX ? f->mapping : 0));
	o = put32(put64(o, f->addr), f->line);
	for (int i = 0; i < 3; i++)
		o = put_str(o, s[i], n[i]);
	return 0;
}

int samples_put_sample(struct samples_buf *b, uint64_t t_ns, uint32_t vcpu, uint32_t weight,
                       const uint32_t *ids_leaf_first, uint32_t depth, uint32_t stop)
{
	/* what the reader refuses is never written */
	if (depth == 0 || depth > SAMPLES_MAX_DEPTH || weight == 0 || stop > UINT16_MAX)
		return -1;
	uint8_t *o = record(b, SAMPLES_REC_SAMPLE, 8 + 4 + 4 + 2 + 2 + 4 * (size_t)depth);
	if (!o)
		return -1;
	o = put32(put32(put64(o, t_ns), vcpu), weight);
	o = put16(put16(o, (uint16_t)depth), (uint16_t)stop);
	for (uint32_t i = 0; i < depth; i++)
		o = put32(o, ids_leaf_first[i]);
	return 0;
}

int samples_put_lost(struct samples_buf *b, uint64_t t_ns, uint32_t count, uint32_t reason)
{
	uint8_t *o = record(b, SAMPLES_REC_LOST, 16);
	if (!o)
		return -1;
	put32(put32(put64(o, t_ns), count), reason);
	return 0;
}

int samples_put_rate(struct samples_buf *b, uint64_t t_ns, uint32_t hz)
{
	uint8_t *o = record(b, SAMPLES_REC_RATE, 12);
	if (!o)
		return -1;
	put32(put64(o, t_ns), hz);
	return 0;
}

int samples_put_end(struct samples_buf *b, uint64_t t_ns, uint32_t reason)
{
	uint8_t *o = record(b, SAMPLES_REC_END, 12);
	if (!o)
		return -1;
	put32(put64(o, t_ns), reason);
	return 0;
}

int samples_put_mapping(struct samples_buf *b, uint32_t id, const struct samples_mapping *m)
{
	const size_t fixed = 4 + 4 + 8 + 8 + 8 + 2 + 2;
	const char *file = m->file ? m->file : "", *bid = m->build_id ? m->build_id : "";
	size_t nb = cut_len(bid, 128), nf = cut_len(file, SAMPLES_MAX_RECORD - fixed - nb);
	uint8_t *o = record(b, SAMPLES_REC_MAPPING, fixed + nf + nb);
	if (!o)
		return -1;
	o = put32(put32(o, id), 0);
	o = put64(put64(put64(o, m->start), m->limit), m->offset);
	put_str(put_str(o, file, nf), bid, nb);
	return 0;
}

int samples_put_time(struct samples_buf *b, uint64_t ns)
{
	uint8_t *o = record(b, SAMPLES_REC_TIME, 8);
	if (!o)
		return -1;
	put64(o, ns);
	return 0;
}

/* ---- reading: state --------------------------------------------------------- */

struct reader {
	uint8_t *held;              /* a record not yet whole: head, then payload */
	size_t nheld, held_cap;
	struct id_index by_key;     /* frames by their whole key (ids: index + 1) */
	uint32_t *seg;              /* the segment's frame id - 1 -> index in frames */
	size_t nseg, seg_cap;
	uint32_t *seg_maps;         /* the segment's mapping id - 1 -> index in mappings */
	size_t nseg_maps, seg_maps_cap, mappings_cap;
	size_t frames_cap, samples_cap, pool_cap;
	uint64_t rec_at;            /* the offset of the record being read */
	uint64_t seg_base_ns;       /* this segment's start since the first's */
	uint32_t seg_vcpus, hz;     /* this segment's vCPUs; the rate in effect */
	int in_pad;                 /* inside zero padding, up to the next sector */
	int has_time;               /* a TIME for the next SAMPLE: time_ns */
	uint64_t time_ns;
};

static void frame_drop(struct samples_frame *f)
{
	free(f->name);
	free(f->module);
	free(f->file);
	f->name = f->module = f->file = NULL;
}

void samples_init(struct samples_profile *p)
{
	memset(p, 0, sizeof(*p));
}

void samples_free(struct samples_profile *p)
{
	struct reader *r = p->priv;
	if (r) {
		free(r->held);
		free(r->seg);
		free(r->seg_maps);
		id_index_free(&r->by_key);
		free(r);
	}
	for (size_t i = 0; i < p->nframes; i++)
		frame_drop(&p->frames[i]);
	free(p->frames);
	for (size_t i = 0; i < p->nmappings; i++) {
		free(p->mappings[i].file);
		free(p->mappings[i].build_id);
	}
	free(p->mappings);
	free(p->samples);
	free(p->pool);
	free(p->program);
	memset(p, 0, sizeof(*p));
}

const char *samples_error(const struct samples_profile *p)
{
	return p->failed ? p->err : "";
}

__attribute__((format(printf, 2, 3))) static int fail(struct samples_profile *p, const char *fmt, ...)
{
	const struct reader *r = p->priv;
	int n = snprintf(p->err, sizeof(p->err), "samples: record at byte %llu: ",
	                 (unsigned long long)(r ? r->rec_at : 0));
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, sizeof(p->err) - (size_t)n, fmt, ap);
	va_end(ap);
	p->failed = 1;
	return -1;
}

/* ---- reading: fields ---------------------------------------------------------- */

/* A payload read front to back; a read past its end sets short_. */
struct cursor {
	const uint8_t *at, *end;
	int short_;
};

static uint64_t get_n(struct cursor *c, int bytes)
{
	uint64_t v = 0;
	if (c->end - c->at < bytes) {
		c->short_ = 1;
		c->at = c->end;
		return 0;
	}
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)c->at[i] << (8 * i);
	c->at += bytes;
	return v;
}

static uint16_t get16(struct cursor *c) { return (uint16_t)get_n(c, 2); }
static uint32_t get32(struct cursor *c) { return (uint32_t)get_n(c, 4); }
static uint64_t get64(struct cursor *c) { return get_n(c, 8); }

/* A string's bytes in place (*len of them); NULL when the payload ends
 * first.  A NUL inside is refused by the caller (has_nul). */
static const uint8_t *get_str(struct cursor *c, size_t *len)
{
	*len = get16(c);
	if (c->short_ || (size_t)(c->end - c->at) < *len) {
		c->short_ = 1;
		return NULL;
	}
	const uint8_t *s = c->at;
	c->at += *len;
	return s;
}

static char *dup_str(const uint8_t *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* 0, or -1 with the message: the payload is exactly its fields. */
static int whole(struct samples_profile *p, const struct cursor *c, const char *what)
{
	if (c->short_)
		return fail(p, "a %s record shorter than its fields", what);
	if (c->at != c->end)
		return fail(p, "a %s record with %zu bytes past its fields", what, (size_t)(c->end - c->at));
	return 0;
}

/* ---- reading: frames ------------------------------------------------------------ */

static uint64_t frame_hash(const struct samples_frame *f)
{
	static const unsigned char sep = 0xff;
	uint8_t fixed[1 + 8 + 4 + 4];
	fixed[0] = (uint8_t)f->kind;
	put32(put32(put64(fixed + 1, f->addr), f->line), f->mapping);
	uint64_t h = id_index_hash(ID_INDEX_SEED, fixed, sizeof(fixed));
	for (const char *s[3] = {f->name, f->module, f->file}, **q = s; q < s + 3; q++)
		h = id_index_hash(id_index_hash(h, *q, strlen(*q)), &sep, 1);
	return h;
}

static uint64_t frame_hash_of(const void *ctx, uint32_t id)
{
	return frame_hash(&((const struct samples_profile *)ctx)->frames[id - 1]);
}

struct frame_key {
	const struct samples_profile *p;
	const struct samples_frame *f;
};

static int frame_is(const void *ctx, uint32_t id)
{
	const struct frame_key *k = ctx;
	const struct samples_frame *a = &k->p->frames[id - 1], *b = k->f;
	return a->kind == b->kind && a->addr == b->addr && a->line == b->line && a->mapping == b->mapping &&
	       !strcmp(a->name, b->name) && !strcmp(a->module, b->module) && !strcmp(a->file, b->file);
}

/* The index of frame f in p->frames, added (taking its strings) when new;
 * f's strings are freed when it was known.  -1 when out of memory. */
static int64_t frame_intern(struct samples_profile *p, struct samples_frame *f)
{
	struct reader *r = p->priv;
	struct frame_key key = {p, f};
	size_t at;
	if (id_index_reserve(&r->by_key, frame_hash_of, p) != 0)
		return -1;
	uint32_t id = id_index_find(&r->by_key, frame_hash(f), frame_is, &key, &at);
	if (id) {
		frame_drop(f);
		return id - 1;
	}
	if (p->nframes >= UINT32_MAX - 1 ||
	    GROW(p->frames, r->frames_cap, p->nframes + 1) != 0)
		return -1;
	p->frames[p->nframes] = *f;
	id_index_put(&r->by_key, at, (uint32_t)++p->nframes);
	return (int64_t)p->nframes - 1;
}

/* The frame's three strings, each refused when it holds a NUL. */
static int frame_strings(struct samples_profile *p, struct cursor *c, struct samples_frame *f)
{
	static const char *const what[3] = {"name", "module", "file"};
	char **dst[3] = {&f->name, &f->module, &f->file};
	for (int i = 0; i < 3; i++) {
		size_t n;
		const uint8_t *s = get_str(c, &n);
		if (!s)
			return whole(p, c, "FRAME");
		if (memchr(s, 0, n))
			return fail(p, "FRAME's %s holds a NUL byte", what[i]);
		if (!(*dst[i] = dup_str(s, n)))
			return fail(p, "out of memory");
	}
	return whole(p, c, "FRAME");
}

static int read_frame(struct samples_profile *p, struct cursor *c)
{
	struct reader *r = p->priv;
	uint32_t id = get32(c);
	struct samples_frame f = {0};
	f.kind = (enum samples_kind)get_n(c, 1);
	get_n(c, 1); /* reserved */
	uint32_t map = get16(c);
	f.addr = get64(c);
	f.line = get32(c);
	if (!c->short_ && (uint64_t)id != (uint64_t)r->nseg + 1)
		return fail(p, "FRAME id %u where %zu was next", id, r->nseg + 1);
	if (!c->short_ && map > r->nseg_maps)
		return fail(p, "FRAME %u in mapping %u, not defined in this segment (mappings 1 to %zu)", id, map,
		            r->nseg_maps);
	f.mapping = map && !c->short_ ? r->seg_maps[map - 1] + 1 : 0;
	if (!c->short_ && f.kind > SAMPLES_KIND_KERNEL)
		return fail(p, "FRAME %u of kind %u, which is none of samples_kind", id, (unsigned)f.kind);
	if (frame_strings(p, c, &f) != 0)
		return frame_drop(&f), -1;
	int64_t at = -1;
	if (GROW(r->seg, r->seg_cap, r->nseg + 1) != 0 ||
	    (at = frame_intern(p, &f)) < 0)
		return frame_drop(&f), fail(p, "out of memory");
	r->seg[r->nseg++] = (uint32_t)at;
	return 0;
}

/* ---- reading: samples and the other records ------------------------------------ */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int read_sample(struct samples_profile *p, struct cursor *c)
{
	struct reader *r = p->priv;
	struct samples_sample s = {0};
	s.t_ns = add_sat(r->seg_base_ns, get64(c));
	s.vcpu = get32(c);
	s.weight = get32(c);
	s.depth = get16(c);
	s.stop = get16(c);
	s.hz = r->hz;
	s.cpu_time = r->has_time;
	s.ns = r->has_time ? r->time_ns : s.hz ? (uint64_t)s.weight * 1000000000ull / s.hz : 0;
	r->has_time = 0;
	if (c->short_)
		return whole(p, c, "SAMPLE");
	if (s.depth == 0 || s.depth > SAMPLES_MAX_DEPTH)
		return fail(p, "SAMPLE of depth %u (1 to %u)", s.depth, SAMPLES_MAX_DEPTH);
	if ((size_t)(c->end - c->at) != 4 * (size_t)s.depth)
		return fail(p, "SAMPLE of depth %u in %zu bytes of frame ids", s.depth, (size_t)(c->end - c->at));
	if (s.weight == 0)
		return fail(p, "SAMPLE of weight 0");
	if (r->seg_vcpus ? s.vcpu >= r->seg_vcpus : s.vcpu >= SAMPLES_MAX_VCPUS)
		return fail(p, "SAMPLE of vCPU %u, of a domain of %u", s.vcpu,
		            r->seg_vcpus ? r->seg_vcpus : SAMPLES_MAX_VCPUS);
	if (s.vcpu + 1 > p->vcpus)
		p->vcpus = s.vcpu + 1;
	if (GROW(p->pool, r->pool_cap, p->npool + s.depth) != 0 ||
	    GROW(p->samples, r->samples_cap, p->nsamples + 1) != 0)
		return fail(p, "out of memory");
	s.at = p->npool;
	for (uint32_t i = 0; i < s.depth; i++) {
		uint32_t id = get32(c);
		if (id == 0 || id > r->nseg)
			return fail(p, "SAMPLE names frame %u, not defined in this segment (frames 1 to %zu)", id,
			            r->nseg);
		p->pool[s.at + i] = r->seg[id - 1];
	}
	p->npool += s.depth;
	p->samples[p->nsamples++] = s;
	return 0;
}

static int read_begin(struct samples_profile *p, struct cursor *c)
{
	struct reader *r = p->priv;
	uint32_t format = get32(c), hz = get32(c);
	uint64_t start = get64(c);
	uint32_t vcpus = get32(c);
	size_t n;
	const uint8_t *prog = get_str(c, &n);
	if (whole(p, c, "BEGIN") != 0)
		return -1;
	if (format != SAMPLES_FORMAT)
		return fail(p, "BEGIN of format %u (this reader knows %u)", format, SAMPLES_FORMAT);
	if (hz == 0)
		return fail(p, "BEGIN at 0 Hz");
	if (memchr(prog, 0, n))
		return fail(p, "BEGIN's program holds a NUL byte");
	if (p->segments++ == 0) {
		if (!(p->program = dup_str(prog, n)))
			return fail(p, "out of memory");
		p->hz = hz;
		p->start_unix_ns = start;
	}
	/* a later segment's times are counted from the first one's start */
	r->seg_base_ns = start > p->start_unix_ns ? start - p->start_unix_ns : 0;
	r->seg_vcpus = vcpus;
	r->hz = hz;
	r->nseg = 0;
	r->nseg_maps = 0;
	p->vcpus = vcpus > p->vcpus ? vcpus : p->vcpus;
	return 0;
}

static int read_small(struct samples_profile *p, struct cursor *c, enum samples_rec type)
{
	struct reader *r = p->priv;
	static const char *const names[] = {[SAMPLES_REC_LOST] = "LOST", [SAMPLES_REC_RATE] = "RATE",
	                                    [SAMPLES_REC_END] = "END"};
	get64(c); /* t_ns */
	uint32_t v = get32(c);
	uint32_t reason = type == SAMPLES_REC_LOST ? get32(c) : 0;
	(void)reason; /* any: a newer sampler may have more reasons */
	if (whole(p, c, names[type]) != 0)
		return -1;
	if (type == SAMPLES_REC_LOST)
		p->lost = add_sat(p->lost, v);
	else if (type == SAMPLES_REC_RATE && v == 0)
		return fail(p, "RATE of 0 Hz");
	else if (type == SAMPLES_REC_RATE)
		r->hz = v;
	else
		p->ended = 1;
	return 0;
}

static int mapping_str(struct samples_profile *p, struct cursor *c, char **out, const char *what)
{
	size_t n;
	const uint8_t *s = get_str(c, &n);
	if (!s)
		return whole(p, c, "MAPPING");
	if (memchr(s, 0, n))
		return fail(p, "MAPPING's %s holds a NUL byte", what);
	if (!(*out = dup_str(s, n)))
		return fail(p, "out of memory");
	return 0;
}

/* A mapping: kept once over all segments (by every field); its index in
 * the segment's table. */
static int read_mapping(struct samples_profile *p, struct cursor *c)
{
	struct reader *r = p->priv;
	struct samples_mapping m = {0};
	uint32_t id = get32(c);
	get32(c);
	m.start = get64(c);
	m.limit = get64(c);
	m.offset = get64(c);
	if (!c->short_ && (uint64_t)id != (uint64_t)r->nseg_maps + 1)
		return fail(p, "MAPPING id %u where %zu was next", id, r->nseg_maps + 1);
	if (!c->short_ && m.limit <= m.start)
		return fail(p, "MAPPING %u from %#llx to %#llx", id, (unsigned long long)m.start,
		            (unsigned long long)m.limit);
	if (mapping_str(p, c, &m.file, "file") != 0 || mapping_str(p, c, &m.build_id, "build id") != 0 ||
	    whole(p, c, "MAPPING") != 0) {
		free(m.file);
		free(m.build_id);
		return -1;
	}
	size_t at = 0;
	while (at < p->nmappings && !(p->mappings[at].start == m.start && p->mappings[at].limit == m.limit &&
	                              p->mappings[at].offset == m.offset && !strcmp(p->mappings[at].file, m.file) &&
	                              !strcmp(p->mappings[at].build_id, m.build_id)))
		at++;
	/* (a linear search: a segment names a few hundred objects at most,
	 * and a hostile stream's are bounded by SAMPLES_MAX_MAPPINGS) */
	if (at == p->nmappings) {
		int full = p->nmappings >= SAMPLES_MAX_MAPPINGS;
		if (full || GROW(p->mappings, r->mappings_cap, p->nmappings + 1) != 0) {
			free(m.file);
			free(m.build_id);
			return full ? fail(p, "more than %u mappings", SAMPLES_MAX_MAPPINGS) : fail(p, "out of memory");
		}
		p->mappings[p->nmappings++] = m;
	} else {
		free(m.file);
		free(m.build_id);
	}
	if (GROW(r->seg_maps, r->seg_maps_cap, r->nseg_maps + 1) != 0)
		return fail(p, "out of memory");
	r->seg_maps[r->nseg_maps++] = (uint32_t)at;
	return 0;
}

static int read_time(struct samples_profile *p, struct cursor *c)
{
	struct reader *r = p->priv;
	r->time_ns = get64(c);
	if (whole(p, c, "TIME") != 0)
		return -1;
	r->has_time = 1;
	return 0;
}

static int read_record(struct samples_profile *p, uint16_t type, const uint8_t *pay, uint32_t len)
{
	struct cursor c = {pay, pay + len, 0};
	if (type == SAMPLES_REC_BEGIN)
		return read_begin(p, &c);
	if (type < SAMPLES_REC_BEGIN || type > SAMPLES_REC_MAPPING)
		return 0; /* a newer writer's record */
	if (p->segments == 0)
		return fail(p, "a record of type %u before any BEGIN", type);
	if (type == SAMPLES_REC_FRAME)
		return read_frame(p, &c);
	if (type == SAMPLES_REC_SAMPLE)
		return read_sample(p, &c);
	if (type == SAMPLES_REC_TIME)
		return read_time(p, &c);
	if (type == SAMPLES_REC_MAPPING)
		return read_mapping(p, &c);
	return read_small(p, &c, (enum samples_rec)type);
}

/* ---- reading: feeding --------------------------------------------------------- */

static uint32_t head_len(const uint8_t *h)
{
	return (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
}

/* A whole head at h: 0, or -1 (refused).  (A zero first byte is padding,
 * taken before a head is looked at: skip_padding.) */
static int check_head(struct samples_profile *p, const uint8_t *h)
{
	uint16_t type = (uint16_t)(h[0] | h[1] << 8);
	uint32_t len = head_len(h);
	if (len > SAMPLES_MAX_RECORD)
		return fail(p, "type %u claims %u bytes (at most %u)", type, len, SAMPLES_MAX_RECORD);
	return 0;
}

/* One whole record at h (head and payload). */
static int take_record(struct samples_profile *p, const uint8_t *h)
{
	struct reader *r = p->priv;
	uint32_t len = head_len(h);
	int rc = read_record(p, (uint16_t)(h[0] | h[1] << 8), h + HEAD, len);
	r->rec_at += HEAD + len;
	return rc;
}

/* Bytes added to the held record; how many were taken, or -1. */
static long long feed_held(struct samples_profile *p, const uint8_t *d, size_t len)
{
	struct reader *r = p->priv;
	size_t want = r->nheld < HEAD ? HEAD : HEAD + head_len(r->held);
	size_t take = want - r->nheld < len ? want - r->nheld : len;
	/* grown to the record's size only as its bytes come */
	if (GROW(r->held, r->held_cap, r->nheld + take) != 0)
		return fail(p, "out of memory");
	memcpy(r->held + r->nheld, d, take);
	r->nheld += take;
	if (r->nheld == HEAD && check_head(p, r->held) < 0)
		return -1;
	if (r->nheld >= HEAD && r->nheld == HEAD + head_len(r->held)) {
		r->nheld = 0;
		int rc = take_record(p, r->held);
		if (r->held_cap > 16384) { /* a big record's room is not kept between records */
			free(r->held);
			r->held = NULL;
			r->held_cap = 0;
		}
		if (rc != 0)
			return -1;
	}
	return (long long)take;
}

/* Whole records straight from d; the rest (a record's start) is held. */
static long long feed_direct(struct samples_profile *p, const uint8_t *d, size_t len)
{
	if (len < HEAD)
		return feed_held(p, d, len);
	if (check_head(p, d) < 0)
		return -1;
	size_t need = HEAD + head_len(d);
	if (len < need)
		return feed_held(p, d, len);
	return take_record(p, d) != 0 ? -1 : (long long)need;
}

/* Zero padding, from a record's place to the next sector's start (the
 * writer pads its last sector, and a later sampler starts at the next
 * one): how many bytes it took, or -1 (a byte that is not zero). */
static long long skip_padding(struct samples_profile *p, const uint8_t *d, size_t len)
{
	struct reader *r = p->priv;
	uint64_t end = (r->rec_at / SAMPLES_SECTOR + 1) * SAMPLES_SECTOR;
	size_t n = end - r->rec_at < len ? (size_t)(end - r->rec_at) : len;
	for (size_t i = 0; i < n; i++)
		if (d[i]) {
			r->rec_at += i; /* the message names the byte, however the bytes came */
			return fail(p, "%u inside the zero padding before the next sector", d[i]);
		}
	r->rec_at += n;
	r->in_pad = r->rec_at != end;
	return (long long)n;
}

int samples_feed(struct samples_profile *p, const void *data, size_t len)
{
	const uint8_t *d = data;
	if (p->failed)
		return -1;
	if (!p->priv) {
		struct reader *r = calloc(1, sizeof(*r));
		if (!r) {
			snprintf(p->err, sizeof(p->err), "samples: out of memory");
			p->failed = 1;
			return -1;
		}
		p->priv = r;
	}
	struct reader *r = p->priv;
	p->fed += len;
	while (len > 0) {
		long long n = r->nheld                  ? feed_held(p, d, len)
		              : r->in_pad || d[0] == 0 ? skip_padding(p, d, len)
		                                       : feed_direct(p, d, len);
		if (n < 0)
			return -1;
		d += n;
		len -= (size_t)n;
	}
	return 0;
}

int samples_finish(struct samples_profile *p)
{
	const struct reader *r = p->priv;
	if (p->failed)
		return -1;
	if (!r || r->nheld == 0)
		return 0;
	p->cut = 1; /* a record's first bytes and no more */
	return 0;
}
