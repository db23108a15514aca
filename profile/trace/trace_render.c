/*
 * trace_render.c - a kept MirageOS trace walked and written out (see
 * trace_render.h).  Every string an event carries is the guest's: it is
 * written through util/safe_text, never as it is: in the events' JSON the
 * exact text (JSON escapes; a byte that is not UTF-8 as the lone surrogate
 * \udcNN, docs/json.md), in Chrome's trace as U+FFFD (its viewers refuse
 * lone surrogates).  Its exported names start trace_render_ (mprof_ is
 * mprof.c's).
 *
 * May call: mprof.c (packets and the event decoder), util/safe_text.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/safe_text.h"
#include "trace_render.h"

/* Walks one packet from min_ts; *last_ts is moved on; returns the content
 * bytes that are sound, and whether the walk was cut. */
static int walk_packet(const struct mprof_trace_packet *pk, uint64_t *last_ts, mprof_event_cb cb,
                       void *ctx, size_t *sound, int *cut)
{
	struct mprof_cursor c;
	struct mprof_event e;
	const char *why;

	*sound = MPROF_HEADER_BYTES;
	*cut = 0;
	if (mprof_cursor_init(&c, pk->bytes, pk->len, *last_ts, &why) != 0) {
		*cut = 1;
		return 0;
	}
	while (mprof_next(&c, &e)) {
		*sound = e.end;
		*last_ts = e.ts;
		if (cb) {
			int rc = cb(ctx, pk, &e);
			if (rc)
				return rc;
		}
	}
	*cut = c.why != NULL;
	return 0;
}

int trace_render_walk(const struct mprof_trace *t, mprof_event_cb cb, void *ctx)
{
	uint64_t last = 0;
	for (size_t i = 0; i < t->n; i++) {
		size_t sound;
		int cut;
		int rc = walk_packet(&t->p[i], &last, cb, ctx, &sound, &cut);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- facts ------------------------------------------------------------------ */

static struct mprof_counter *counter_of(struct mprof_stats *s, const char *name)
{
	for (size_t i = 0; i < s->ncounters; i++)
		if (strncmp(s->counters[i].name, name, sizeof(s->counters[i].name) - 1) == 0 &&
		    strlen(name) < sizeof(s->counters[i].name))
			return &s->counters[i];
	if (s->ncounters == MPROF_STATS_COUNTERS || strlen(name) >= sizeof(s->counters[0].name)) {
		s->counters_dropped++;
		return NULL;
	}
	struct mprof_counter *c = &s->counters[s->ncounters++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

static int stat_event(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct mprof_stats *s = ctx;
	(void)pk;
	if (s->events++ == 0)
		s->first_ts = e->ts;
	s->last_ts = e->ts;
	s->per_kind[e->id]++;
	switch (e->id) {
	case MPROF_GC:
		s->gc_count++;
		s->gc_total_ns += e->value;
		if (e->value > s->gc_max_ns)
			s->gc_max_ns = e->value;
		break;
	case MPROF_LABEL:
		s->labels++;
		break;
	case MPROF_INCREASE:
	case MPROF_COUNTER: {
		struct mprof_counter *c = counter_of(s, e->text);
		if (c) {
			c->value = e->id == MPROF_COUNTER ? (int64_t)e->value
			                                  : (int64_t)((uint64_t)c->value + e->value);
			c->updates++;
		}
		break;
	}
	}
	return 0;
}

void trace_render_stats(const struct mprof_trace *t, struct mprof_stats *s)
{
	uint64_t next = 0, last = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < t->n; i++) {
		const struct mprof_trace_packet *pk = &t->p[i];
		if (pk->seq > next) {
			s->lost += pk->seq - next;
			s->lost_ranges++;
		}
		next = pk->seq + 1;
		s->kept++;
		s->final |= pk->final;
		size_t sound;
		int cut;
		walk_packet(pk, &last, stat_event, s, &sound, &cut);
		/* The final packet stops where the guest stopped: not a cut. */
		s->cut += cut && !pk->final;
	}
}

void trace_render_lost_ranges(const struct mprof_trace *t, char *out, size_t len)
{
	uint64_t next = 0;
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < t->n && at + 48 < len; i++) {
		uint64_t s = t->p[i].seq;
		if (s > next) {
			if (s - 1 == next)
				at += (size_t)snprintf(out + at, len - at, "%s%" PRIu64, at ? ", " : "", next);
			else
				at += (size_t)snprintf(out + at, len - at, "%s%" PRIu64 "-%" PRIu64, at ? ", " : "",
				                       next, s - 1);
		}
		next = s + 1;
	}
}

/* ---- CTF --------------------------------------------------------------------- */

int trace_render_ctf_stream(FILE *f, const struct mprof_trace *t)
{
	uint64_t last = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct mprof_trace_packet *pk = &t->p[i];
		struct mprof_header h;
		size_t sound;
		int cut;
		if (pk->len < MPROF_HEADER_BYTES)
			continue;
		mprof_header_read(pk->bytes, &h);
		if (mprof_header_check(&h, pk->len))
			continue; /* never kept by the backend; a damaged store */
		walk_packet(pk, &last, NULL, NULL, &sound, &cut);
		/* The guest's bytes, with the content size saying where the sound
		 * events end (a torn last event would stop babeltrace2). */
		uint8_t head[MPROF_HEADER_BYTES];
		h.content_bits = (uint32_t)(sound * 8);
		mprof_header_write(head, &h);
		if (fwrite(head, 1, sizeof(head), f) != sizeof(head) ||
		    fwrite(pk->bytes + MPROF_HEADER_BYTES, 1, pk->len - MPROF_HEADER_BYTES, f) !=
		            pk->len - MPROF_HEADER_BYTES)
			return -1;
	}
	return 0;
}

/* ---- JSON ---------------------------------------------------------------------- */

struct json_walk {
	FILE *f;
	int first;
};

/* str: how a guest's string is written (safe_text_json_bytes in our JSON,
 * the exact bytes; safe_text_json in Chrome's, whose viewers refuse a
 * lone surrogate). */
typedef void (*json_str_fn)(FILE *f, const char *s);

static void event_fields_json(FILE *f, const struct mprof_event *e, json_str_fn str)
{
	if (e->has_thread)
		fprintf(f, ",\"thread\":%" PRIu64, e->thread);
	switch (e->id) {
	case MPROF_CREATES: {
		const char *tt = mprof_thread_type_name(e->thread_type);
		fprintf(f, ",\"child\":%" PRIu64 ",\"thread_type\":", e->value);
		if (tt)
			fprintf(f, "\"%s\"", tt);
		else
			fprintf(f, "%u", e->thread_type);
		break;
	}
	case MPROF_READ:
	case MPROF_SIGNAL:
	case MPROF_TRY_READ:
		fprintf(f, ",\"source\":%" PRIu64, e->value);
		break;
	case MPROF_FULFILLS:
		fprintf(f, ",\"resolvee\":%" PRIu64, e->value);
		break;
	case MPROF_FAILS:
		fprintf(f, ",\"resolvee\":%" PRIu64 ",\"exn\":", e->value);
		str(f, e->text);
		break;
	case MPROF_BECOMES:
		fprintf(f, ",\"sleeper\":%" PRIu64, e->value);
		break;
	case MPROF_LABEL:
		fputs(",\"label\":", f);
		str(f, e->text);
		break;
	case MPROF_INCREASE:
	case MPROF_COUNTER:
		fprintf(f, ",\"%s\":%" PRId64 ",\"counter\":", e->id == MPROF_COUNTER ? "value" : "amount",
		        (int64_t)e->value);
		str(f, e->text);
		break;
	case MPROF_GC:
		fprintf(f, ",\"duration_ns\":%" PRIu64, e->value);
		break;
	}
}

static int json_event(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct json_walk *w = ctx;
	fprintf(w->f, "%s\n{\"seq\":%" PRIu64 ",\"ts\":%" PRIu64 ",\"event\":\"%s\"", w->first ? "" : ",",
	        pk->seq, e->ts, mprof_event_name(e->id));
	w->first = 0;
	event_fields_json(w->f, e, safe_text_json_bytes);
	fputc('}', w->f);
	return 0;
}

int trace_render_json(FILE *f, const struct mprof_trace *t)
{
	struct mprof_stats s;
	char lost[1024];
	struct json_walk w = {f, 1};

	trace_render_stats(t, &s);
	trace_render_lost_ranges(t, lost, sizeof(lost));
	fprintf(f, "{\"run\":%lld,\"guest\":", t->run_id);
	safe_text_json_bytes(f, t->name ? t->name : "");
	fprintf(f, ",\"packets\":{\"kept\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"lost_ranges\":", s.kept, s.lost);
	safe_text_json(f, lost);
	fprintf(f, ",\"cut\":%" PRIu64 ",\"ended\":%s},\"events\":[", s.cut, s.final ? "true" : "false");
	trace_render_walk(t, json_event, &w);
	fputs("\n]}\n", f);
	return ferror(f) ? -1 : 0;
}

/* ---- Chrome trace events ------------------------------------------------------------ */

/* Thread labels, for naming run slices: a small open-addressing map. */
struct labels {
	uint64_t *ids;
	char **names;
	size_t cap, n;
};

static const char *label_get(const struct labels *l, uint64_t id)
{
	if (!l->cap)
		return NULL;
	for (size_t i = (size_t)(id * 0x9e3779b97f4a7c15ull) & (l->cap - 1);; i = (i + 1) & (l->cap - 1)) {
		if (!l->names[i])
			return NULL;
		if (l->ids[i] == id)
			return l->names[i];
	}
}

static void label_put(struct labels *l, uint64_t id, const char *name)
{
	if ((l->n + 1) * 2 > l->cap) {
		struct labels g = {0};
		g.cap = l->cap ? l->cap * 2 : 256;
		g.ids = calloc(g.cap, sizeof(*g.ids));
		g.names = calloc(g.cap, sizeof(*g.names));
		if (!g.ids || !g.names) {
			free(g.ids);
			free(g.names);
			return;
		}
		for (size_t i = 0; i < l->cap; i++)
			if (l->names[i])
				label_put(&g, l->ids[i], l->names[i]), free(l->names[i]);
		free(l->ids);
		free(l->names);
		*l = g;
	}
	size_t i = (size_t)(id * 0x9e3779b97f4a7c15ull) & (l->cap - 1);
	while (l->names[i] && l->ids[i] != id)
		i = (i + 1) & (l->cap - 1);
	char *copy = strdup(name);
	if (!copy)
		return;
	if (l->names[i])
		free(l->names[i]);
	else
		l->n++;
	l->ids[i] = id;
	l->names[i] = copy;
}

struct chrome_walk {
	FILE *f;
	int first;
	struct labels labels;
	int running;           /* a thread's slice is open */
	uint64_t thread, since;
	char slice_name[128];  /* its name (a label, cut at 127 bytes) */
	struct mprof_stats counters; /* running totals of increase */
};

static void chrome_sep(struct chrome_walk *w)
{
	fputs(w->first ? "\n" : ",\n", w->f);
	w->first = 0;
}

static void us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

/* A thread's run slice as a B/E pair on track 1: an E and the next B at
 * the same time, in that order (speedscope stacked complete "X" events that
 * touch as nested calls).  The E repeats its B's name, whatever label the
 * thread got meanwhile. */
static void slice_edge(struct chrome_walk *w, char ph, uint64_t ts)
{
	if (ph == 'B') {
		const char *label = label_get(&w->labels, w->thread);
		if (label)
			snprintf(w->slice_name, sizeof(w->slice_name), "%s", label);
		else
			snprintf(w->slice_name, sizeof(w->slice_name), "thread %" PRIu64, w->thread);
	}
	chrome_sep(w);
	fprintf(w->f, "{\"ph\":\"%c\",\"pid\":1,\"tid\":1,\"cat\":\"lwt\",\"name\":", ph);
	safe_text_json(w->f, w->slice_name);
	fputs(",\"ts\":", w->f);
	us(w->f, ts);
	fputc('}', w->f);
}

static void close_slice(struct chrome_walk *w, uint64_t ts)
{
	if (!w->running)
		return;
	slice_edge(w, 'E', ts);
	w->running = 0;
}

static int chrome_event(void *ctx, const struct mprof_trace_packet *pk, const struct mprof_event *e)
{
	struct chrome_walk *w = ctx;
	FILE *f = w->f;
	(void)pk;

	switch (e->id) {
	case MPROF_SWITCH:
		close_slice(w, e->ts);
		/* Thread -1: the guest blocked (note_suspend). */
		if (e->thread != UINT64_MAX) {
			w->running = 1;
			w->thread = e->thread;
			w->since = e->ts;
			slice_edge(w, 'B', e->ts);
		}
		return 0;
	case MPROF_LABEL:
		label_put(&w->labels, e->thread, e->text);
		break;
	case MPROF_GC:
		chrome_sep(w);
		fputs("{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"cat\":\"gc\",\"name\":\"GC\",\"ts\":", f);
		us(f, e->ts >= e->value ? e->ts - e->value : 0);
		fputs(",\"dur\":", f);
		us(f, e->ts >= e->value ? e->value : e->ts);
		fputc('}', f);
		return 0;
	case MPROF_INCREASE:
	case MPROF_COUNTER: {
		struct mprof_counter *c = counter_of(&w->counters, e->text);
		int64_t v = (int64_t)e->value;
		if (c)
			v = c->value = e->id == MPROF_COUNTER ? v : (int64_t)((uint64_t)c->value + e->value);
		chrome_sep(w);
		fputs("{\"ph\":\"C\",\"pid\":1,\"tid\":3,\"name\":", f);
		safe_text_json(f, e->text);
		fputs(",\"ts\":", f);
		us(f, e->ts);
		fprintf(f, ",\"args\":{\"value\":%" PRId64 "}}", v);
		return 0;
	}
	default:
		break;
	}
	chrome_sep(w);
	fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"cat\":\"lwt\",\"name\":\"%s\",\"ts\":",
	        mprof_event_name(e->id));
	us(f, e->ts);
	fputs(",\"args\":{\"_\":0", f);
	event_fields_json(f, e, safe_text_json);
	fputs("}}", f);
	return 0;
}

int trace_render_chrome(FILE *f, const struct mprof_trace *t)
{
	struct chrome_walk w = {.f = f, .first = 1};
	uint64_t end = 0;

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"guest\":", f);
	safe_text_json(f, t->name ? t->name : "");
	fprintf(f, ",\"run\":%lld,\"source\":\"mirage-profile via profsvc\"},\"traceEvents\":[", t->run_id);
	chrome_sep(&w);
	fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":", f);
	safe_text_json(f, t->name ? t->name : "guest");
	fputs("}}", f);
	static const char *const tracks[] = {"Lwt threads", "GC", "counters"};
	for (int i = 0; i < 3; i++) {
		chrome_sep(&w);
		fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}",
		        i + 1, tracks[i]);
	}
	trace_render_walk(t, chrome_event, &w);
	/* The slice still open ends with the last event. */
	struct mprof_stats s;
	trace_render_stats(t, &s);
	end = s.last_ts;
	close_slice(&w, end >= w.since ? end : w.since);
	fputs("\n]}\n", f);
	for (size_t i = 0; i < w.labels.cap; i++)
		free(w.labels.names[i]);
	free(w.labels.ids);
	free(w.labels.names);
	return ferror(f) ? -1 : 0;
}

/* ---- the CTF trace as one tar file ---------------------------------------------------- */

/* A ustar header for name (at most 99 bytes) of size bytes; type '0' a
 * file, '5' a directory. */
/* v as digits octal digits and a NUL; -1 when it does not fit. */
static int octal(unsigned char *p, size_t digits, unsigned long long v)
{
	p[digits] = '\0';
	for (size_t i = digits; i-- > 0; v >>= 3)
		p[i] = (unsigned char)('0' + (v & 7));
	return v ? -1 : 0;
}

static int tar_header(FILE *f, const char *name, size_t size, char type, long long mtime)
{
	unsigned char h[512];
	unsigned sum = 0;

	memset(h, 0, sizeof(h));
	snprintf((char *)h, 100, "%s", name);
	octal(h + 100, 7, type == '5' ? 0755u : 0644u);
	octal(h + 108, 7, 0);
	octal(h + 116, 7, 0);
	if (octal(h + 124, 11, size) != 0) /* 8 GiB: ustar's bound */
		return -1;
	octal(h + 136, 11, (unsigned long long)(mtime > 0 && mtime < 077777777777LL ? mtime : 0));
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < sizeof(h); i++)
		sum += h[i];
	octal(h + 148, 6, sum);
	h[155] = ' ';
	return fwrite(h, 1, sizeof(h), f) == sizeof(h) ? 0 : -1;
}

static int tar_file(FILE *f, const char *name, const char *data, size_t len, long long mtime)
{
	static const char zero[512];
	if (tar_header(f, name, len, '0', mtime) != 0 || fwrite(data, 1, len, f) != len)
		return -1;
	return len % 512 && fwrite(zero, 1, 512 - len % 512, f) != 512 - len % 512 ? -1 : 0;
}

int trace_render_ctf_tar(FILE *f, const struct mprof_trace *t, const char *dir, long long mtime)
{
	char *meta = NULL, *stream = NULL, name[100];
	size_t mlen = 0, slen = 0;
	int rc = -1;
	FILE *m = open_memstream(&meta, &mlen), *s = m ? open_memstream(&stream, &slen) : NULL;

	if (!m || !s || strlen(dir) > 80)
		goto out;
	mprof_write_metadata(m, t->name, t->run_id);
	if (trace_render_ctf_stream(s, t) != 0 || fflush(m) != 0 || fflush(s) != 0 || ferror(m) || ferror(s))
		goto out;
	snprintf(name, sizeof(name), "%s/", dir);
	if (tar_header(f, name, 0, '5', mtime) != 0)
		goto out;
	snprintf(name, sizeof(name), "%s/metadata", dir);
	if (tar_file(f, name, meta, mlen, mtime) != 0)
		goto out;
	snprintf(name, sizeof(name), "%s/mprof_stream", dir);
	if (tar_file(f, name, stream, slen, mtime) != 0)
		goto out;
	static const char end[1024];
	rc = fwrite(end, 1, sizeof(end), f) == sizeof(end) && !ferror(f) ? 0 : -1;
out:
	if (m)
		fclose(m);
	if (s)
		fclose(s);
	free(meta);
	free(stream);
	return rc;
}
