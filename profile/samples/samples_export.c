/*
 * samples_export.c - what a samples model (samples.h) becomes: folded
 * stacks, `perf script` text, pprof's profile.proto (gzipped), speedscope
 * JSON, and a time profile (time_profile.h) for top, flame and diff.
 *
 * Frames are grouped into functions: one per (kind, name, module), a
 * nameless frame being its own function (shown as its address, 0x...).
 * A function's name is "Module.name" for Haskell, the name otherwise.
 * Names are the guest's, shown as spelled: in the text formats (folded,
 * perf script, pprof's strings) controls, bidi controls and bytes that
 * are not UTF-8 are \xNN or \uNNNN and a backslash stays one backslash
 * (util/safe_text: safe_text_spelled); ';' is \x3b in folded stacks (the
 * frame separator, as flame.c writes it).  Speedscope's JSON carries the
 * exact bytes (safe_text_json_bytes).
 *
 * May call: prof_model.c (tp_cc_get, tp_node_add), prof_feed.c (tp_init,
 * tp_finish, tp_free), parse_util.c, util/id_index, util/safe_text, zlib.
 */
#include "config.h"

#include "profile/samples/samples.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/common/parse_util.h"
#include "profile/prof/time_profile.h"
#include "util/id_index.h"
#include "util/safe_text.h"

#define NO_FRAME UINT32_MAX

/* Nanoseconds a sample of weight w stands for at hz (< 2^62: no overflow). */
static uint64_t sample_ns(uint32_t w, uint32_t hz)
{
	return hz ? (uint64_t)w * 1000000000ull / hz : 0;
}

/* ---- functions: frames grouped by (kind, name, module) ------------------------ */

struct funcs {
	const struct samples_profile *p;
	uint32_t *of_frame; /* frame index -> function index */
	uint32_t *first;    /* function -> its first frame */
	uint32_t *lined;    /* function -> its first frame with a line, or NO_FRAME */
	size_t n;
	struct id_index idx;
};

static uint64_t func_key_hash(const struct samples_frame *f)
{
	static const unsigned char sep = 0xff;
	uint8_t k = (uint8_t)f->kind;
	uint64_t addr = f->name[0] ? 0 : f->addr;
	uint64_t h = id_index_hash(id_index_hash(ID_INDEX_SEED, &k, 1), &addr, sizeof(addr));
	h = id_index_hash(id_index_hash(h, f->name, strlen(f->name)), &sep, 1);
	return id_index_hash(h, f->module, strlen(f->module));
}

static uint64_t func_hash_of(const void *ctx, uint32_t id)
{
	const struct funcs *fs = ctx;
	return func_key_hash(&fs->p->frames[fs->first[id - 1]]);
}

struct func_key {
	const struct funcs *fs;
	const struct samples_frame *f;
};

static int func_is(const void *ctx, uint32_t id)
{
	const struct func_key *k = ctx;
	const struct samples_frame *a = &k->fs->p->frames[k->fs->first[id - 1]], *b = k->f;
	return a->kind == b->kind && !strcmp(a->name, b->name) && !strcmp(a->module, b->module) &&
	       (a->name[0] || a->addr == b->addr);
}

static void funcs_free(struct funcs *fs)
{
	free(fs->of_frame);
	free(fs->first);
	free(fs->lined);
	id_index_free(&fs->idx);
}

static int funcs_build(struct funcs *fs, const struct samples_profile *p)
{
	size_t n = p->nframes ? p->nframes : 1;
	memset(fs, 0, sizeof(*fs));
	fs->p = p;
	fs->of_frame = malloc(n * sizeof(uint32_t));
	fs->first = malloc(n * sizeof(uint32_t));
	fs->lined = malloc(n * sizeof(uint32_t));
	if (!fs->of_frame || !fs->first || !fs->lined)
		return funcs_free(fs), -1;
	for (size_t i = 0; i < p->nframes; i++) {
		const struct samples_frame *f = &p->frames[i];
		struct func_key key = {fs, f};
		size_t at;
		if (id_index_reserve(&fs->idx, func_hash_of, fs) != 0)
			return funcs_free(fs), -1;
		uint32_t id = id_index_find(&fs->idx, func_key_hash(f), func_is, &key, &at);
		if (!id) {
			fs->first[fs->n] = (uint32_t)i;
			fs->lined[fs->n] = NO_FRAME;
			id_index_put(&fs->idx, at, id = (uint32_t)++fs->n);
		}
		fs->of_frame[i] = id - 1;
		if (fs->lined[id - 1] == NO_FRAME && f->line)
			fs->lined[id - 1] = (uint32_t)i;
	}
	return 0;
}

/* ---- names -------------------------------------------------------------------- */

/* A frame's name as the text formats show it ("Module.name", the name, or
 * its address when it has none); each byte of also as \xNN. */
static void put_label(FILE *f, const struct samples_frame *fr, const char *also)
{
	if (!fr->name[0]) {
		fprintf(f, "0x%llx", (unsigned long long)fr->addr);
		return;
	}
	if (fr->kind == SAMPLES_KIND_HASKELL && fr->module[0]) {
		safe_text_spelled(f, fr->module, also);
		fputc('.', f);
	}
	safe_text_spelled(f, fr->name, also);
}

/* The same name unescaped (the guest's bytes), malloc'd; NULL when out of memory. */
static char *raw_label(const struct samples_frame *fr)
{
	size_t n = strlen(fr->name), m = strlen(fr->module);
	char *s = malloc(n + m + 24);
	if (!s)
		return NULL;
	if (!n)
		snprintf(s, 24, "0x%llx", (unsigned long long)fr->addr);
	else if (fr->kind == SAMPLES_KIND_HASKELL && m)
		snprintf(s, n + m + 2, "%s.%s", fr->module, fr->name);
	else
		memcpy(s, fr->name, n + 1);
	return s;
}

/* ---- stacks counted: identical sequences of ids added up ------------------------- */

struct stacks {
	uint32_t *ids; /* every stack's ids, back to back */
	size_t nids, ids_cap;
	struct stack { size_t at; uint32_t depth; uint64_t count, ns; } *s;
	size_t n, cap;
	struct id_index idx;
};

static uint64_t seq_hash(const uint32_t *ids, uint32_t depth)
{
	return id_index_hash(ID_INDEX_SEED, ids, depth * sizeof(*ids));
}

static uint64_t stack_hash_of(const void *ctx, uint32_t id)
{
	const struct stacks *st = ctx;
	return seq_hash(st->ids + st->s[id - 1].at, st->s[id - 1].depth);
}

struct seq_key {
	const struct stacks *st;
	const uint32_t *ids;
	uint32_t depth;
};

static int stack_is(const void *ctx, uint32_t id)
{
	const struct seq_key *k = ctx;
	const struct stack *s = &k->st->s[id - 1];
	return s->depth == k->depth && !memcmp(k->st->ids + s->at, k->ids, k->depth * sizeof(*k->ids));
}

static void stacks_free(struct stacks *st)
{
	free(st->ids);
	free(st->s);
	id_index_free(&st->idx);
	memset(st, 0, sizeof(*st));
}

static int stacks_add(struct stacks *st, const uint32_t *ids, uint32_t depth, uint32_t weight, uint64_t ns)
{
	struct seq_key key = {st, ids, depth};
	size_t at;
	if (id_index_reserve(&st->idx, stack_hash_of, st) != 0)
		return -1;
	uint32_t id = id_index_find(&st->idx, seq_hash(ids, depth), stack_is, &key, &at);
	if (!id) {
		if (st->n >= UINT32_MAX - 1 || pf_grow((void **)&st->s, &st->cap, st->n + 1, sizeof(*st->s)) ||
		    pf_grow((void **)&st->ids, &st->ids_cap, st->nids + depth, sizeof(*st->ids)))
			return -1;
		memcpy(st->ids + st->nids, ids, depth * sizeof(*ids));
		st->s[st->n] = (struct stack){.at = st->nids, .depth = depth};
		st->nids += depth;
		id_index_put(&st->idx, at, id = (uint32_t)++st->n);
	}
	struct stack *s = &st->s[id - 1];
	s->count = s->count > UINT64_MAX - weight ? UINT64_MAX : s->count + weight;
	s->ns = s->ns > UINT64_MAX - ns ? UINT64_MAX : s->ns + ns;
	return 0;
}

/* Every sample's stack (leaf first) counted: as functions (fs given) or frames. */
static int stacks_count(struct stacks *st, const struct samples_profile *p, const struct funcs *fs)
{
	uint32_t seq[SAMPLES_MAX_DEPTH];
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		uint32_t d = s->depth <= SAMPLES_MAX_DEPTH ? s->depth : SAMPLES_MAX_DEPTH;
		for (uint32_t k = 0; k < d; k++)
			seq[k] = fs ? fs->of_frame[p->pool[s->at + k]] : p->pool[s->at + k];
		if (stacks_add(st, seq, d, s->weight, sample_ns(s->weight, s->hz)) != 0)
			return stacks_free(st), -1;
	}
	return 0;
}

/* ---- folded stacks -------------------------------------------------------------- */

int samples_write_folded(FILE *f, const struct samples_profile *p)
{
	struct funcs fs;
	struct stacks st;
	if (funcs_build(&fs, p) != 0)
		return -1;
	if (stacks_count(&st, p, &fs) != 0)
		return funcs_free(&fs), -1;
	/* in the order each stack was first sampled; root first on the line */
	for (size_t i = 0; i < st.n; i++) {
		const struct stack *s = &st.s[i];
		for (uint32_t k = s->depth; k-- > 0;) {
			put_label(f, &p->frames[fs.first[st.ids[s->at + k]]], ";");
			fputc(k ? ';' : ' ', f);
		}
		fprintf(f, "%llu\n", (unsigned long long)s->count);
	}
	stacks_free(&st);
	funcs_free(&fs);
	return ferror(f) ? -1 : 0;
}

/* ---- perf script ------------------------------------------------------------------ */

/* The object a frame is in, as perf names it: no white space in it. */
static void put_dso(FILE *f, const struct samples_profile *p, const struct samples_frame *fr)
{
	const char *dso = fr->kind == SAMPLES_KIND_HASKELL ? p->program : fr->module;
	if (fr->kind == SAMPLES_KIND_KERNEL && !dso[0])
		dso = "[kernel.kallsyms]";
	if (fr->kind == SAMPLES_KIND_ROOT || !dso || !dso[0])
		dso = "[unknown]";
	safe_text_spelled(f, dso, " ");
}

/* perf's command field: no white space, at least two bytes (the
 * readers' pattern "^(\S.+?)\s+(\d+)" needs them). */
static void put_comm(FILE *f, const char *comm)
{
	size_t n = strlen(comm);
	if (n < 2)
		fputc('[', f);
	safe_text_spelled(f, comm, " ");
	if (n < 2)
		fputc(']', f);
}

int samples_write_perf_script(FILE *f, const struct samples_profile *p, const char *comm)
{
	if (!comm)
		comm = p->program ? p->program : "";
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		put_comm(f, comm);
		fprintf(f, " %u [%03u] %llu.%06llu: %llu cpu-clock:\n", s->vcpu, s->vcpu,
		        (unsigned long long)(s->t_ns / 1000000000ull),
		        (unsigned long long)(s->t_ns % 1000000000ull / 1000),
		        (unsigned long long)sample_ns(s->weight, s->hz));
		for (uint32_t k = 0; k < s->depth; k++) {
			const struct samples_frame *fr = &p->frames[p->pool[s->at + k]];
			/* the offset into the symbol is not known: +0x0 */
			fprintf(f, "\t%llx ", (unsigned long long)fr->addr);
			put_label(f, fr, NULL);
			fputs("+0x0 (", f);
			put_dso(f, p, fr);
			fputs(")\n", f);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- speedscope ---------------------------------------------------------------------- */

static int json_frame(FILE *f, const struct samples_profile *p, const struct funcs *fs, size_t i)
{
	const struct samples_frame *fr = &p->frames[fs->first[i]];
	char *name = raw_label(fr);
	if (!name)
		return -1;
	fputs(i ? ",{\"name\":" : "{\"name\":", f);
	safe_text_json_bytes(f, name);
	free(name);
	const struct samples_frame *at = fs->lined[i] != NO_FRAME ? &p->frames[fs->lined[i]] : fr;
	if (at->file[0]) {
		fputs(",\"file\":", f);
		safe_text_json_bytes(f, at->file);
	}
	if (fs->lined[i] != NO_FRAME)
		fprintf(f, ",\"line\":%u", at->line);
	fputc('}', f);
	return 0;
}

/* Samples in vCPU order, each vCPU's in stream order. */
struct by_vcpu {
	uint32_t vcpu;
	size_t i;
};

static int by_vcpu_cmp(const void *a, const void *b)
{
	const struct by_vcpu *x = a, *y = b;
	return x->vcpu != y->vcpu ? (x->vcpu < y->vcpu ? -1 : 1) : (x->i > y->i) - (x->i < y->i);
}

/* One vCPU's sampled profile: its samples idx[from .. to). */
static void json_profile(FILE *f, const struct samples_profile *p, const struct funcs *fs,
                         const struct by_vcpu *idx, size_t from, size_t to)
{
	uint64_t sum = 0;
	for (size_t j = from; j < to; j++)
		sum += sample_ns(p->samples[idx[j].i].weight, p->samples[idx[j].i].hz);
	fprintf(f, "%s{\"type\":\"sampled\",\"name\":\"vCPU %u\",\"unit\":\"nanoseconds\",\"startValue\":0,"
	        "\"endValue\":%llu,\"samples\":[",
	        from ? "," : "", p->samples[idx[from].i].vcpu, (unsigned long long)sum);
	for (size_t j = from; j < to; j++) {
		const struct samples_sample *s = &p->samples[idx[j].i];
		fputs(j > from ? ",[" : "[", f);
		for (uint32_t k = s->depth; k-- > 0;)
			fprintf(f, "%u%s", fs->of_frame[p->pool[s->at + k]], k ? "," : "");
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	for (size_t j = from; j < to; j++)
		fprintf(f, "%s%llu", j > from ? "," : "",
		        (unsigned long long)sample_ns(p->samples[idx[j].i].weight, p->samples[idx[j].i].hz));
	fputs("]}", f);
}

int samples_write_speedscope(FILE *f, const struct samples_profile *p, const char *name)
{
	struct funcs fs;
	struct by_vcpu *idx = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*idx));
	if (!idx || funcs_build(&fs, p) != 0)
		return free(idx), -1;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"profsvc " PACKAGE_VERSION "\",\"name\":", f);
	safe_text_json_bytes(f, name ? name : p->program ? p->program : "");
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	int rc = 0;
	for (size_t i = 0; i < fs.n && rc == 0; i++)
		rc = json_frame(f, p, &fs, i);
	fputs("]},\"profiles\":[", f);
	for (size_t i = 0; i < p->nsamples; i++)
		idx[i] = (struct by_vcpu){p->samples[i].vcpu, i};
	qsort(idx, p->nsamples, sizeof(*idx), by_vcpu_cmp);
	for (size_t from = 0, to; from < p->nsamples; from = to) {
		for (to = from + 1; to < p->nsamples && idx[to].vcpu == idx[from].vcpu;)
			to++;
		json_profile(f, p, &fs, idx, from, to);
	}
	fputs("]}\n", f);
	free(idx);
	funcs_free(&fs);
	return rc || ferror(f) ? -1 : 0;
}

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
	if (pf_grow((void **)&b->d, &b->cap, b->len + n, 1) != 0) {
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
	    t->n < UINT32_MAX - 1 && pf_grow((void **)&t->s, &t->cap, t->n + 1, sizeof(*t->s)) == 0) {
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
		put_label(m, fr, NULL);
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
static void pprof_samples(struct pb *b, struct pb *sub, const struct stacks *st)
{
	struct pb packed = {0};
	for (size_t i = 0; i < st->n; i++) {
		const struct stack *s = &st->s[i];
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

/* Mapping (3): one, the program, its functions and lines known (pprof
 * then symbolizes nothing); Location (4): one a frame, one line each. */
static void pprof_locations(struct pb *b, struct pb *sub, const struct samples_profile *p,
                            const struct funcs *fs, uint64_t program)
{
	struct pb line = {0};
	uint64_t top = 0;
	for (size_t i = 0; i < p->nframes; i++)
		top = p->frames[i].addr > top ? p->frames[i].addr : top;
	pb_num(sub, 1, 1);
	pb_num(sub, 3, top == UINT64_MAX ? top : top + 1);
	pb_num(sub, 5, program);
	for (unsigned field = 7; field <= 9; field++)
		pb_num(sub, field, 1);
	pb_sub(b, 3, sub);
	for (size_t i = 0; i < p->nframes; i++) {
		pb_num(sub, 1, i + 1);
		pb_num(sub, 2, 1);
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
                            const struct funcs *fs, struct strtab *t)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct samples_frame *fr = &p->frames[fs->first[i]];
		const struct samples_frame *at = fs->lined[i] != NO_FRAME ? &p->frames[fs->lined[i]] : fr;
		pb_num(sub, 1, i + 1);
		pb_num(sub, 2, str_take(t, spelled(fr, NULL), &b->oom));
		pb_num(sub, 3, str_take(t, fr->name[0] ? spelled(NULL, fr->name) : spelled(fr, NULL), &b->oom));
		pb_num(sub, 4, str_take(t, spelled(NULL, at->file), &b->oom));
		pb_sub(b, 5, sub);
	}
}

static void pprof_message(struct pb *b, const struct samples_profile *p, const struct funcs *fs,
                          const struct stacks *st, struct strtab *t)
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
	pprof_locations(b, &sub, p, fs, str_take(t, spelled(NULL, p->program ? p->program : ""), &b->oom));
	pprof_functions(b, &sub, p, fs, t);
	for (size_t i = 0; i < p->nsamples; i++)
		end = p->samples[i].t_ns > end ? p->samples[i].t_ns : end;
	pb_num(b, 9, p->start_unix_ns);
	pb_num(b, 10, end);
	pb_value_type(b, 11, &sub, cpu, ns);
	pb_num(b, 12, sample_ns(1, p->hz));
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
	struct funcs fs;
	struct stacks st;
	struct strtab t = {0};
	struct pb b = {0};
	if (funcs_build(&fs, p) != 0)
		return -1;
	if (stacks_count(&st, p, NULL) != 0)
		return funcs_free(&fs), -1;
	pprof_message(&b, p, &fs, &st, &t);
	int rc = b.oom ? -1 : gzip_write(f, b.d, b.len);
	free(b.d);
	strtab_free(&t);
	stacks_free(&st);
	funcs_free(&fs);
	return rc;
}

/* ---- the time profile -------------------------------------------------------------- */

struct tree {
	struct time_profile *tp;
	struct id_index idx; /* nodes by (parent, cost centre); ids: index + 1 */
};

static uint64_t node_key_hash(uint32_t parent, uint32_t cc)
{
	uint32_t k[2] = {parent, cc};
	return id_index_hash(ID_INDEX_SEED, k, sizeof(k));
}

static uint64_t node_hash_of(const void *ctx, uint32_t id)
{
	const struct tp_node *n = &((const struct tree *)ctx)->tp->nodes[id - 1];
	return node_key_hash(n->parent, n->cc);
}

struct node_key {
	const struct tree *t;
	uint32_t parent, cc;
};

static int node_is(const void *ctx, uint32_t id)
{
	const struct node_key *k = ctx;
	const struct tp_node *n = &k->t->tp->nodes[id - 1];
	return n->parent == k->parent && n->cc == k->cc;
}

/* The node of cc under parent, added when new; TP_NONE when out of memory. */
static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t cc)
{
	struct node_key key = {t, parent, cc};
	size_t at;
	if (id_index_reserve(&t->idx, node_hash_of, t) != 0)
		return TP_NONE;
	uint32_t id = id_index_find(&t->idx, node_key_hash(parent, cc), node_is, &key, &at);
	if (id)
		return id - 1;
	struct tp_node n = {0};
	n.no = (int64_t)t->tp->nnodes + 1;
	if (tp_node_add(t->tp, cc, parent, &n) != 0)
		return TP_NONE;
	id_index_put(&t->idx, at, (uint32_t)t->tp->nnodes);
	return (uint32_t)t->tp->nnodes - 1;
}

/* A cost centre per function: name and module as the frame has them (a
 * nameless frame named by its address), src "file:line" of its first
 * frame with a line.  ccs[i] for function i. */
static int cost_centres(struct time_profile *tp, const struct funcs *fs, uint32_t *ccs)
{
	const struct samples_profile *p = fs->p;
	for (size_t i = 0; i < fs->n; i++) {
		const struct samples_frame *fr = &p->frames[fs->first[i]];
		char addr[24], *src = NULL;
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)fr->addr);
		if (fs->lined[i] != NO_FRAME) {
			const struct samples_frame *l = &p->frames[fs->lined[i]];
			size_t n = strlen(l->file) + 16;
			if (!(src = malloc(n)))
				return -1;
			snprintf(src, n, "%s:%u", l->file, l->line);
		}
		/* A C function's module would be its file (perf's dso), which
		 * flame and diff would print as "hot.main": Haskell's only. */
		const char *module = fr->kind == SAMPLES_KIND_HASKELL ? fr->module : "";
		ccs[i] = tp_cc_get(tp, fr->name[0] ? fr->name : addr, module, src ? src : "", 0, (int64_t)i);
		free(src);
		if (ccs[i] == TP_NONE)
			return -1;
	}
	return 0;
}

/* Each sample's path from its root, a tick a sample on its leaf. */
static int grow_tree(struct tree *t, const struct samples_profile *p, const struct funcs *fs,
                     const uint32_t *ccs)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct samples_sample *s = &p->samples[i];
		uint32_t node = TP_NONE;
		for (uint32_t k = s->depth; k-- > 0;)
			if ((node = tree_child(t, node, ccs[fs->of_frame[p->pool[s->at + k]]])) == TP_NONE)
				return -1;
		t->tp->nodes[node].ticks += s->weight;
		t->tp->total_ticks += s->weight;
	}
	return 0;
}

static int describe(struct time_profile *tp, const struct samples_profile *p)
{
	const char *prog = p->program ? p->program : "";
	size_t n = strlen(prog) + 64;
	tp->format = TP_TEXT;
	tp->has_ticks = 1;
	tp->tick_us = p->hz ? 1e6 / p->hz : 0;
	tp->total_secs = (double)tp->total_ticks * tp->tick_us / 1e6;
	tp->command = strdup(prog);
	tp->title = malloc(n);
	if (!tp->command || !tp->title)
		return -1;
	snprintf(tp->title, n, "%s: stack samples at %u Hz", prog, p->hz);
	for (size_t i = 0; i < tp->nccs; i++)
		tp->has_src |= tp->ccs[i].src[0] != '\0';
	return 0;
}

int samples_to_time_profile(const struct samples_profile *p, struct time_profile *out)
{
	struct funcs fs;
	struct tree t = {out, {0}};
	tp_init(out);
	if (funcs_build(&fs, p) != 0)
		return tp_fail(out, "out of memory");
	uint32_t *ccs = malloc((fs.n ? fs.n : 1) * sizeof(*ccs));
	int rc = !ccs || cost_centres(out, &fs, ccs) || grow_tree(&t, p, &fs, ccs) || describe(out, p)
	                 ? tp_fail(out, "out of memory")
	                 : 0;
	free(ccs);
	funcs_free(&fs);
	id_index_free(&t.idx);
	if (rc == 0 && out->nnodes == 0)
		rc = tp_fail(out, "no stack samples");
	if (rc == 0)
		rc = tp_finish(out);
	/* the percentages, from ticks (tp_finish computed the inherited ticks) */
	double total = out->total_ticks ? (double)out->total_ticks : 1;
	for (size_t i = 0; rc == 0 && i < out->nnodes; i++) {
		out->nodes[i].time = 100.0 * (double)out->nodes[i].ticks / total;
		out->nodes[i].inh_time = 100.0 * (double)out->nodes[i].inh_ticks / total;
	}
	return rc;
}
