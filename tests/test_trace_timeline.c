/*
 * test_trace_timeline.c - a MirageOS trace built byte by byte in memory,
 * through profile/trace/trace_timeline.c's model and profile/trace/trace_render.c's
 * writers: each thread's start, parent, label and end, every arrow, the
 * run slices, GC pauses and counters, exactly; guest text as docs/json.md
 * says (JSON escapes, a byte that is not UTF-8 as \udcNN, < > & as \u
 * escapes in the model; the events' JSON the same, never U+FFFD); a
 * window; one thread's events; 300,000 events bounded; the CTF tar's
 * headers (ustar, checksums, sizes).  The end-to-end half, against
 * babeltrace2 and in a browser, is tests/test_trace_timeline.sh.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/trace/trace_render.h"
#include "profile/trace/trace_timeline.h"
#include "testutil.h"

#define PACKET 65536

struct builder {
	uint8_t *buf[160];
	size_t n, pos;
	struct mprof_trace_packet p[160];
};

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void seal(struct builder *b)
{
	struct mprof_header h = {.magic = MPROF_MAGIC, .packet_bits = PACKET * 8, .count = (uint16_t)b->n,
	                         .content_bits = (uint32_t)(b->pos * 8)};
	memcpy(h.uuid, mprof_uuid, 16);
	mprof_header_write(b->buf[b->n], &h);
	b->p[b->n] = (struct mprof_trace_packet){b->n, b->buf[b->n], PACKET, 0};
	b->n++;
}

/* An event: ts, id, the fields (thread, value; NONE: left out), a string. */
#define NO 0xfffffffffffffffeull
static void ev(struct builder *b, uint64_t ts, uint8_t id, uint64_t thread, uint64_t value, int type,
               const char *text)
{
	size_t len = 9 + (thread != NO ? 8 : 0) + (value != NO ? 8 : 0) + (type >= 0) + (text ? strlen(text) + 1 : 0);
	if (!b->buf[b->n] || b->pos + len > PACKET) {
		if (b->buf[b->n])
			seal(b);
		b->buf[b->n] = calloc(1, PACKET);
		b->pos = MPROF_HEADER_BYTES;
	}
	uint8_t *p = b->buf[b->n] + b->pos;
	put64(p, ts);
	p[8] = id;
	p += 9;
	if (thread != NO)
		put64(p, thread), p += 8;
	if (value != NO)
		put64(p, value), p += 8;
	if (type >= 0)
		*p++ = (uint8_t)type;
	if (text)
		memcpy(p, text, strlen(text) + 1);
	b->pos += len;
}

static char *render(int (*fn)(FILE *, const struct mprof_trace *, const void *), const struct mprof_trace *t,
                    const void *arg, size_t *len)
{
	char *s = NULL;
	FILE *f = open_memstream(&s, len);
	CHECK(fn(f, t, arg) == 0, "a render failed");
	fclose(f);
	return s;
}

static int timeline(FILE *f, const struct mprof_trace *t, const void *w)
{
	return trace_timeline_json(f, t, w);
}
static int events_json(FILE *f, const struct mprof_trace *t, const void *unused)
{
	(void)unused;
	return trace_render_json(f, t);
}
static int thread_json(FILE *f, const struct mprof_trace *t, const void *id)
{
	return trace_timeline_thread_json(f, t, *(const uint64_t *)id);
}
static int tar(FILE *f, const struct mprof_trace *t, const void *unused)
{
	(void)unused;
	return trace_render_ctf_tar(f, t, "run-7.ctf", 1700000000);
}

static void has(const char *doc, const char *want, const char *what)
{
	CHECK(doc && strstr(doc, want), "%s: no %s in %.600s", what, want, doc ? doc : "(null)");
}

static void small(void)
{
	struct builder b = {0};
	ev(&b, 10, MPROF_CREATES, 1, 2, 1, NULL);            /* 1 creates 2 (Task) */
	ev(&b, 11, MPROF_LABEL, 2, NO, -1, "a\xff\x1b<b>\\"); /* a byte that is not UTF-8, ESC, markup */
	ev(&b, 12, MPROF_READ, 3, 2, -1, NULL);              /* 3 reads 2: 3 never created */
	ev(&b, 13, MPROF_FULFILLS, 1, 2, -1, NULL);          /* 1 resolves 2 */
	ev(&b, 14, MPROF_BECOMES, 3, 4, -1, NULL);           /* 3 becomes 4 */
	ev(&b, 15, MPROF_SWITCH, 1, NO, -1, NULL);
	ev(&b, 16, MPROF_SWITCH, UINT64_MAX, NO, -1, NULL); /* thread -1: the guest blocked */
	ev(&b, 20, MPROF_GC, NO, 5, -1, NULL);
	ev(&b, 21, MPROF_COUNTER, 1, 7, -1, "c\xfe");
	ev(&b, 22, MPROF_INCREASE, 1, 3, -1, "c\xfe");
	ev(&b, 30, MPROF_SWITCH, 3, NO, -1, NULL);
	ev(&b, 31, MPROF_FAILS, 3, 9, -1, "Not_found");
	seal(&b);
	struct mprof_trace t = {b.p, b.n, "guest\xff", 7};
	size_t len;
	char *m = render(timeline, &t, &(struct tt_window){.whole = 1}, &len);
	has(m, "{\"run\":7,\"guest\":\"guest\\udcff\",\"t0\":10,\"t1\":31,\"from\":10,\"to\":31,\"events\":12", "the model's head");
	has(m, "{\"id\":2,\"start\":10,\"end\":13,\"ended\":true,\"parent\":1,"
	       "\"label\":\"a\\udcff\\u001b\\u003cb\\u003e\\\\\",\"type\":\"Task\",\"events\":4}", "thread 2");
	has(m, "{\"id\":3,\"start\":12,\"end\":31,\"ended\":true,\"parent\":null,\"label\":null,\"type\":null,\"events\":4}",
	    "thread 3 (became 4, ran on)");
	has(m, "{\"id\":4,\"start\":14,\"end\":14,\"ended\":false,", "thread 4");
	has(m, "{\"id\":9,\"start\":31,\"end\":31,\"ended\":true,", "thread 9 (failed)");
	has(m, "\"arrows\":[[\"creates\",1,2,10],[\"read\",2,3,12],[\"fulfills\",1,2,13],[\"becomes\",3,4,14],"
	       "[\"fails\",3,9,31]],\"arrows_total\":5", "the arrows");
	has(m, "\"switches\":[[1,15,16],[3,30,31]],\"switches_total\":2", "the run slices");
	has(m, "\"gc\":[[15,20,1,5]],\"gc_total\":1", "the GC pause");
	has(m, "{\"name\":\"c\\udcfe\",\"lo\":7,\"hi\":10,\"last\":10,\"updates\":2,\"in_window\":2,"
	       "\"points\":[[21,7,7,7],[22,10,10,10]]}", "the counter");
	has(m, "\"threads_total\":5,", "five threads");
	CHECK(!strstr(m, "\\ufffd") && !strchr(m, '<') && !strchr(m, '\x1b'), "the model: %s", m);
	free(m);
	/* the events' JSON: the exact text too (it had U+FFFD) */
	char *j = render(events_json, &t, NULL, &len);
	has(j, "\"label\":\"a\\udcff\\u001b<b>\\\\\"", "the events' JSON label");
	has(j, "\"counter\":\"c\\udcfe\"", "the events' JSON counter");
	has(j, "\"guest\":\"guest\\udcff\"", "the events' JSON guest");
	CHECK(!strstr(j, "\\ufffd"), "the events' JSON replaced a byte: %s", j);
	free(j);
	/* a window: 12 to 14 */
	m = render(timeline, &t, &(struct tt_window){.from = 12, .to = 14}, &len);
	has(m, "\"arrows\":[[\"read\",2,3,12],[\"fulfills\",1,2,13],[\"becomes\",3,4,14]],\"arrows_total\":3", "a window's arrows");
	has(m, "\"switches\":[],\"switches_total\":0,\"gc\":[],\"gc_total\":0", "a window's slices and GC");
	has(m, "\"threads_total\":4,", "a window's threads (1 to 4, not 9)");
	free(m);
	uint64_t id = 2;
	m = render(thread_json, &t, &id, &len);
	CHECK(strcmp(m, "{\"thread\":2,\"events\":[{\"ts\":10,\"event\":\"creates\",\"thread\":1,\"other\":2,\"type\":\"Task\"},"
	                "{\"ts\":11,\"event\":\"label\",\"thread\":2,\"text\":\"a\\udcff\\u001b\\u003cb\\u003e\\\\\"},"
	                "{\"ts\":12,\"event\":\"read\",\"thread\":3,\"other\":2},"
	                "{\"ts\":13,\"event\":\"fulfills\",\"thread\":1,\"other\":2}],\"more\":0}\n") == 0,
	      "thread 2's events: %s", m);
	free(m);
	/* 2^64-1 is the "no thread" marker (thread 16's switch), no thread:
	 * it named every event without a thread or another one */
	id = UINT64_MAX;
	m = render(thread_json, &t, &id, &len);
	CHECK(strcmp(m, "{\"thread\":18446744073709551615,\"events\":[],\"more\":0}\n") == 0,
	      "the \"no thread\" marker's events: %s", m);
	free(m);
	/* the CTF tar: a directory and two files, ustar, checksums right */
	char *tr = render(tar, &t, NULL, &len);
	CHECK(len % 512 == 0 && len >= 512 * 6, "the tar is %zu bytes", len);
	size_t off = 0;
	const char *names[] = {"run-7.ctf/", "run-7.ctf/metadata", "run-7.ctf/mprof_stream"};
	for (int i = 0; i < 3 && off + 512 <= len; i++) {
		unsigned char *h = (unsigned char *)tr + off;
		unsigned sum = 0;
		for (int k = 0; k < 512; k++)
			sum += k >= 148 && k < 156 ? ' ' : h[k];
		CHECK(strcmp((char *)h, names[i]) == 0 && memcmp(h + 257, "ustar\0" "00", 8) == 0 &&
		      strtoul((char *)h + 148, NULL, 8) == sum && h[156] == (i ? '0' : '5'),
		      "tar entry %d: %s", i, (char *)h);
		size_t size = strtoul((char *)h + 124, NULL, 8);
		if (i == 2)
			CHECK(size == PACKET, "the stream is %zu bytes", size);
		off += 512 + (size + 511) / 512 * 512;
	}
	CHECK(off + 1024 == len, "the tar ends at %zu, not %zu", off + 1024, len);
	free(tr);
	for (size_t i = 0; i < b.n; i++)
		free(b.buf[i]);
}

/* How many points the counter named name has in model m, and its highest max. */
static size_t points_of(const char *m, const char *name, int64_t *hi)
{
	char key[64];
	snprintf(key, sizeof(key), "{\"name\":\"%s\"", name);
	const char *p = strstr(m, key), *end;
	size_t n = 0;
	*hi = INT64_MIN;
	if (!p || !(p = strstr(p, "\"points\":[")) || !(end = strstr(p, "]]}")))
		return 0;
	for (p += 10; p && p < end; p = strchr(p + 1, '[')) {
		long long t, lo, mx, last;
		if (sscanf(p, "[%lld,%lld,%lld,%lld]", &t, &lo, &mx, &last) == 4) {
			n++;
			if (mx > *hi)
				*hi = mx;
		}
	}
	return n;
}

/* 300,000 events, a new thread every other one: the model stays bounded. */
static void big(void)
{
	struct builder b = {0};
	uint64_t ts = 1000;
	for (uint64_t n = 0; n < 300000 && b.n < 159; n++, ts += 100) {
		switch (n % 6) {
		case 0: ev(&b, ts, MPROF_CREATES, 100 + n % 17, 1000 + n, 0, NULL); break;
		case 1: ev(&b, ts, MPROF_READ, 100 + n % 17, 1000 + n - 1, -1, NULL); break;
		case 2: ev(&b, ts, MPROF_SWITCH, 100 + n % 17, NO, -1, NULL); break;
		case 3: ev(&b, ts, MPROF_GC, NO, 50, -1, NULL); break;
		case 4: ev(&b, ts, MPROF_INCREASE, 100, 1, -1, "rx"); break;
		default: ev(&b, ts, MPROF_FULFILLS, 100 + n % 17, 1000 + n - 5, -1, NULL); break;
		}
	}
	seal(&b);
	struct mprof_trace t = {b.p, b.n, "big", 8};
	size_t len;
	char *m = render(timeline, &t, &(struct tt_window){.whole = 1}, &len);
	CHECK(len < 1500000, "300,000 events: a model of %zu bytes", len);
	has(m, "\"events\":300000,", "every event walked");
	has(m, "\"threads_total\":50017,", "every thread counted");
	has(m, "\"arrows_total\":150000,", "every arrow counted");
	has(m, "\"gc_total\":50000,", "every pause counted");
	size_t arrows = 0;
	for (const char *p = strstr(m, "\"arrows\":["); p && (p = strstr(p + 1, "[\"")) && p < strstr(m, "\"arrows_total\"");)
		arrows++;
	CHECK(arrows > 3000 && arrows <= TT_MAX_ARROWS, "%zu arrows written", arrows);
	int64_t hi;
	size_t np = points_of(m, "rx", &hi);
	CHECK(np > 550 && np <= TT_MAX_POINTS, "the counter's 50,000 updates in %zu points", np);
	printf("test_trace_timeline: 300,000 events: a model of %zu bytes, %zu of 150,000 arrows\n", len, arrows);
	free(m);
	struct tt_live live;
	CHECK(trace_timeline_live(&t, &live) == 0 && live.threads == 50017 && live.alive == 17,
	      "live: %llu threads, %llu alive", (unsigned long long)live.threads, (unsigned long long)live.alive);
	for (size_t i = 0; i < b.n; i++)
		free(b.buf[i]);
}

/* Counters thinned to the window's columns (min, max, last each), a spike
 * kept; threads grouped by label, a rare label never thinned away. */
static void columns_and_groups(void)
{
	struct builder b = {0};
	uint64_t ts = 1000;
	for (uint64_t n = 0; n < 20000; n++, ts += 50) {
		ev(&b, ts, MPROF_CREATES, 1, 100 + n, 0, NULL);                  /* 20,000 threads */
		if (n % 4 == 0)
			ev(&b, ts + 1, MPROF_COUNTER, 1, n == 10000 ? 1000000 : n % 7, -1, "s"); /* 5,000 updates, one spike */
		if (n % 5000 == 17)
			ev(&b, ts + 2, MPROF_LABEL, 100 + n, NO, -1, "rare");        /* 4 threads */
		else if (n % 2 == 0)
			ev(&b, ts + 2, MPROF_LABEL, 100 + n, NO, -1, "common");
	}
	seal(&b);
	struct mprof_trace t = {b.p, b.n, "cols", 9};
	size_t len;
	int64_t hi;
	char *m = render(timeline, &t, &(struct tt_window){.whole = 1}, &len);
	size_t np = points_of(m, "s", &hi);
	/* the whole trace's columns were [0, 2^64): one point */
	CHECK(np > 550 && np <= TT_MAX_POINTS && hi == 1000000, "the whole trace: %zu points of 5,000 updates, max %lld",
	      np, (long long)hi);
	has(m, "\"groups\":[{\"label\":\"common\",\"threads\":10000,", "the common label's group");
	has(m, "{\"label\":\"rare\",\"threads\":4,\"shown\":4}", "the rare label's group, every thread shown");
	has(m, "{\"label\":null,\"threads\":9997,", "the unlabelled threads' group (and their creator)");
	has(m, "\"groups_more\":{\"labels\":0,\"threads\":0,\"shown\":0},\"threads_total\":20001,", "no more labels");
	size_t shown = 0;
	for (const char *p = strstr(m, "\"threads\":["); p && (p = strstr(p + 1, "{\"id\":")) && p < strstr(m, "\"groups\":");)
		shown++;
	CHECK(shown > 1990 && shown <= TT_MAX_THREADS, "%zu threads shown", shown);
	free(m);
	/* as many columns as asked, and a window's own */
	m = render(timeline, &t, &(struct tt_window){.whole = 1, .cols = 2000}, &len);
	np = points_of(m, "s", &hi);
	CHECK(np > 1800 && np <= 2000 && hi == 1000000, "2000 columns: %zu points, max %lld", np, (long long)hi);
	free(m);
	m = render(timeline, &t, &(struct tt_window){.from = 0, .to = UINT64_MAX, .cols = 300}, &len);
	np = points_of(m, "s", &hi);
	CHECK(np > 250 && np <= 300 && hi == 1000000, "[0, 2^64-1] in 300 columns: %zu points, max %lld", np,
	      (long long)hi);
	free(m);
	m = render(timeline, &t, &(struct tt_window){.from = 400000, .to = 600000, .cols = 100}, &len);
	np = points_of(m, "s", &hi);
	CHECK(np > 90 && np <= 100 && hi == 1000000, "a window in 100 columns: %zu points, max %lld", np, (long long)hi);
	free(m);
	for (size_t i = 0; i < b.n; i++)
		free(b.buf[i]);
	/* 300 labels, a thread each: 64 groups listed, the rest one */
	struct builder c = {0};
	for (uint64_t n = 0; n < 300; n++) {
		char l[16];
		snprintf(l, sizeof(l), "l%03u", (unsigned)n);
		ev(&c, 10 + n, MPROF_LABEL, 100 + n, NO, -1, l);
	}
	seal(&c);
	struct mprof_trace t2 = {c.p, c.n, "labels", 10};
	m = render(timeline, &t2, &(struct tt_window){.whole = 1}, &len);
	has(m, "\"groups\":[{\"label\":\"l000\",\"threads\":1,\"shown\":1},", "the first of 300 labels");
	has(m, "{\"label\":\"l063\",\"threads\":1,\"shown\":1}],\"groups_more\":{\"labels\":236,\"threads\":236,"
	       "\"shown\":236}", "64 labels listed, 236 more");
	free(m);
	for (size_t i = 0; i < c.n; i++)
		free(c.buf[i]);
}

int main(void)
{
	small();
	big();
	columns_and_groups();
	return tu_finish("test_trace_timeline");
}
