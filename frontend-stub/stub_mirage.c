/*
 * stub_mirage.c - `frontend-stub --mode mirage`: a MirageOS guest that
 * traces with mirage-profile, for tests, benchmarks and the demo.  It does
 * what mirage-profile's MProf_xen.share_with and its trace writer do
 * (lib/mProf_trace_with_tracing.ml): a buffer of whole pages granted
 * read-only to dom0, one grant per page, the refs written comma-separated
 * to <domain path>/data/mprof/ring-ref in one transaction; four packets
 * made with counts 0-3, the next count 1; each event added at the write
 * position after the content size is set; a packet that cannot take the
 * next event is left for the next packet, whose header is cleared with the
 * next count, overwriting whatever it held.
 *
 * The event stream cycles through every event of mirage-profile's newest
 * metadata with realistic fields (Lwt thread ids, labels, counters, GC
 * pauses), at --rate events per second for --events events.  --event-log
 * writes each event as the export's JSON (one object per line) for the
 * tests to compare with; --crash-mid-packet stops dead inside an event
 * (content size set, fields not yet written) and has the domain destroyed;
 * --withdraw removes the node at the end (a guest in dom0 cannot die).
 * Otherwise the grants outlive the program, as a MirageOS guest's last as
 * long as its domain (mirage-profile never ends them): on xensim a
 * domain's grants are its own, ended when it is destroyed.  (Ending them
 * as the program finished made every backend's map that came later fail,
 * and short-lived guests lost their whole trace.)
 *
 * --hostile KIND makes it a guest that means harm (tests/test_trace.sh):
 *   refs-garbage    the node holds "8,x,9"
 *   refs-many       one page granted, a thousand refs written
 *   refs-ungranted  refs that name no grant of ours
 *   late-grant      the refs written, the grants ended at once and made
 *                   again 300 ms later (the same refs: rewritten if not)
 *   rewrite         a second buffer's refs written half-way
 *   headers         packet headers given impossible sizes, over and over
 *   scribble        random bytes written all over the buffer as it goes
 *   flood           the node rewritten thousands of times
 *
 * May call: what the modes share (stub_ctx.c), profile/trace/mprof.h's format,
 * the platform seam.  Called by stub.c's main (stub_modes.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>

#include "profile/trace/mprof.h"
#include "stub_modes.h"

struct mwriter {
	uint8_t *buf;
	size_t size;
	size_t off[MPROF_PACKETS], len[MPROF_PACKETS];
	unsigned active;
	size_t next_event, packet_end;
	unsigned next_count;
	uint64_t packets_begun;
};

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void set_content_end(struct mwriter *w, size_t end)
{
	uint8_t *h = w->buf + w->off[w->active];
	uint32_t bits = (uint32_t)((end - w->off[w->active]) * 8);
	h[26] = (uint8_t)bits, h[27] = (uint8_t)(bits >> 8);
	h[28] = (uint8_t)(bits >> 16), h[29] = (uint8_t)(bits >> 24);
}

static void clear_packet(struct mwriter *w, unsigned i, unsigned count)
{
	uint8_t *h = w->buf + w->off[i];
	uint32_t bits = MPROF_HEADER_BYTES * 8;
	h[24] = (uint8_t)count, h[25] = (uint8_t)(count >> 8);
	h[26] = (uint8_t)bits, h[27] = (uint8_t)(bits >> 8), h[28] = 0, h[29] = 0;
}

static void mwriter_init(struct mwriter *w, uint8_t *buf, size_t size)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->size = size;
	for (unsigned i = 0; i < MPROF_PACKETS; i++) {
		mprof_packet_span(size, i, &w->off[i], &w->len[i]);
		struct mprof_header h = {MPROF_MAGIC, {0}, (uint32_t)(w->len[i] * 8), (uint16_t)i,
		                         MPROF_HEADER_BYTES * 8};
		memcpy(h.uuid, mprof_uuid, 16);
		mprof_header_write(buf + w->off[i], &h);
	}
	w->active = 0;
	w->packet_end = w->off[0] + w->len[0];
	w->next_event = w->off[0] + MPROF_HEADER_BYTES;
	w->next_count = 1;
	w->packets_begun = 1;
}

/* mirage-profile's add_event: room for the 9-byte header and len bytes,
 * or the next packet.  Returns where the fields go. */
static size_t add_event(struct mwriter *w, uint8_t op, size_t len, uint64_t ts)
{
	for (;;) {
		size_t i = w->next_event, new_i = i + 9 + len;
		if (new_i >= w->packet_end) {
			w->active = (w->active + 1) % MPROF_PACKETS;
			w->packet_end = w->off[w->active] + w->len[w->active];
			w->next_event = w->off[w->active] + MPROF_HEADER_BYTES;
			clear_packet(w, w->active, w->next_count & 0xffff);
			w->next_count++;
			w->packets_begun++;
			continue;
		}
		w->next_event = new_i;
		set_content_end(w, new_i);
		put64(w->buf + i, ts);
		w->buf[i + 8] = op;
		return i + 9;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An event of the stream: its kind, number and fields. */
struct mevent {
	unsigned k;
	uint64_t n, ts;
	uint64_t thread, other;
	const char *text; /* NULL: the kind has no string */
	int64_t value;
	size_t fixed;     /* the fields' bytes before the string */
	uint8_t tt;       /* a CREATES's thread type */
};

/* Event n's fields: kind k's, varied by the kind's own count. */
static void event_shape(struct mevent *e, unsigned k, uint64_t n, uint64_t ts)
{
	static const char *const labels[] = {"http-server", "tcp.read", "dns-cache", "<script>x</script>"};
	static const char *const counters[] = {"bytes_rx", "bytes_tx", "net-packets"};
	static const char *const exns[] = {"Not_found", "Failure(\"timeout\")", "Invalid_argument(\"x\")"};
	uint64_t round = n / MPROF_EVENT_KINDS; /* each kind's own count: its values vary */

	*e = (struct mevent){.k = k, .n = n, .ts = ts, .thread = 100 + n % 17, .other = 1000 + n};
	/* Every Lwt thread type, and the 99 mirage-profile writes for one it
	 * does not know. */
	e->tt = round % 16 == 15 ? 99 : (uint8_t)(round % 16);
	switch (k) {
	case MPROF_CREATES: e->fixed = 17; break;
	case MPROF_FAILS: e->text = exns[round % 3]; e->fixed = 16; break;
	case MPROF_LABEL: e->text = labels[round % 4]; e->fixed = 8; break;
	case MPROF_INCREASE: e->text = counters[round % 3]; e->value = (int64_t)(n % 1500) - 20; e->fixed = 16; break;
	case MPROF_COUNTER: e->text = counters[(round + 1) % 3]; e->value = (int64_t)(n * 7); e->fixed = 16; break;
	case MPROF_SWITCH: case MPROF_GC: e->fixed = 8; break;
	default: e->fixed = 16; break;
	}
}

/* The event's fields at f in the buffer. */
static void event_fields(struct mwriter *w, const struct mevent *e, size_t f)
{
	uint8_t *p = w->buf + f;
	if (e->k == MPROF_GC) {
		put64(p, 20000 + e->n % 5000);
		return;
	}
	put64(p, e->thread);
	p += 8;
	if (e->k == MPROF_CREATES) {
		put64(p, e->other);
		p[8] = e->tt;
	} else if (e->k == MPROF_INCREASE || e->k == MPROF_COUNTER) {
		put64(p, (uint64_t)e->value);
	} else if (e->k != MPROF_LABEL && e->k != MPROF_SWITCH) {
		put64(p, e->other);
	}
	if (e->text)
		memcpy(w->buf + f + e->fixed, e->text, strlen(e->text) + 1);
}

/* The export's JSON line for the event. */
static void event_log(FILE *log, const struct mevent *e, uint64_t seq)
{
	fprintf(log, "{\"seq\":%llu,\"ts\":%llu,\"event\":\"%s\"", (unsigned long long)seq,
	        (unsigned long long)e->ts, mprof_event_name(e->k));
	if (e->k != MPROF_GC)
		fprintf(log, ",\"thread\":%llu", (unsigned long long)e->thread);
	switch (e->k) {
	case MPROF_CREATES:
		fprintf(log, ",\"child\":%llu,\"thread_type\":", (unsigned long long)e->other);
		if (mprof_thread_type_name(e->tt))
			fprintf(log, "\"%s\"", mprof_thread_type_name(e->tt));
		else
			fprintf(log, "%u", e->tt);
		break;
	case MPROF_READ: case MPROF_SIGNAL: case MPROF_TRY_READ:
		fprintf(log, ",\"source\":%llu", (unsigned long long)e->other);
		break;
	case MPROF_FULFILLS:
		fprintf(log, ",\"resolvee\":%llu", (unsigned long long)e->other);
		break;
	case MPROF_FAILS:
		fprintf(log, ",\"resolvee\":%llu,\"exn\":\"", (unsigned long long)e->other);
		for (const char *s = e->text; *s; s++)
			fprintf(log, *s == '"' ? "\\\"" : "%c", *s);
		fputc('"', log);
		break;
	case MPROF_BECOMES:
		fprintf(log, ",\"sleeper\":%llu", (unsigned long long)e->other);
		break;
	case MPROF_LABEL:
		fprintf(log, ",\"label\":\"%s\"", e->text);
		break;
	case MPROF_INCREASE:
		fprintf(log, ",\"amount\":%lld,\"counter\":\"%s\"", (long long)e->value, e->text);
		break;
	case MPROF_COUNTER:
		fprintf(log, ",\"value\":%lld,\"counter\":\"%s\"", (long long)e->value, e->text);
		break;
	case MPROF_GC:
		fprintf(log, ",\"duration_ns\":%llu", (unsigned long long)(20000 + e->n % 5000));
		break;
	}
	fputs("}\n", log);
}

/* One event of kind k (the stream cycles through all of them); log: the
 * export's JSON line for it. */
static void write_event(struct mwriter *w, unsigned k, uint64_t n, uint64_t ts, FILE *log, int crash)
{
	struct mevent e;
	event_shape(&e, k, n, ts);
	size_t len = e.fixed + (e.text ? strlen(e.text) + 1 : 0);
	size_t f = add_event(w, (uint8_t)k, len, ts);
	if (crash)
		return; /* dead inside the event: content set, fields not written */
	event_fields(w, &e, f);
	if (log)
		event_log(log, &e, w->packets_begun - 1);
}

static int write_node(struct stub_ctx *c, const char *value)
{
	char *dom = xs_get_domain_path(c->xs, c->domid), *path = NULL;
	int rc = -1;

	if (!dom || asprintf(&path, "%s/data/mprof/ring-ref", dom) < 0) {
		free(dom);
		return -1;
	}
	free(dom);
	for (int tries = 0; tries < 10; tries++) {
		xs_transaction_t t = xs_transaction_start(c->xs);
		if (!t)
			break;
		if (!xs_write(c->xs, t, path, value, (unsigned)strlen(value))) {
			xs_transaction_end(c->xs, t, true);
			break;
		}
		if (xs_transaction_end(c->xs, t, false)) {
			rc = 0;
			break;
		}
		if (errno != EAGAIN)
			break;
	}
	if (rc)
		fprintf(stderr, "frontend-stub: cannot write %s: %s\n", path, strerror(errno));
	free(path);
	return rc;
}

/* --hostile late-grant: the node written with value, the refs of grants
 * already ended, and the grants made again 300 ms later (the same refs,
 * the lowest free: the node written again if not), as a guest that writes
 * its refs before it grants. */
static int late_grant(struct stub_ctx *c, struct plat_gntshr *gs, uint8_t **buf, const char *value)
{
	uint32_t n = c->mirage_pages, *refs = calloc(n, sizeof(*refs));
	char *again = malloc((size_t)n * 11 + 1);
	int rc = -1;

	if (!refs || !again || write_node(c, value) != 0)
		goto out;
	struct timespec d = {0, 300000000};
	nanosleep(&d, NULL);
	if (!(*buf = plat_gntshr_share(gs, 0, n, refs, 0))) {
		fprintf(stderr, "frontend-stub: cannot share %u pages with dom0 again: %s\n", n, strerror(errno));
		goto out;
	}
	memset(*buf, 0, (size_t)n * PLAT_PAGE_SIZE);
	size_t at = 0;
	for (uint32_t i = 0; i < n; i++)
		at += (size_t)sprintf(again + at, "%s%u", i ? "," : "", refs[i]);
	rc = strcmp(again, value) == 0 ? 0 : write_node(c, again);
out:
	free(refs);
	free(again);
	return rc;
}

/* MProf_xen.share_with: grant, then the refs in one transaction. */
static int share(struct stub_ctx *c, uint8_t **buf, uint32_t pages, struct plat_gntshr **gs_out)
{
	uint32_t *refs = calloc(pages, sizeof(*refs));
	struct plat_gntshr *gs = plat_gntshr_open(c->plat);
	char *value = NULL;
	int rc = -1;

	if (!refs || !gs)
		goto out;
	*buf = plat_gntshr_share(gs, 0, pages, refs, 0);
	if (!*buf) {
		fprintf(stderr, "frontend-stub: cannot share %u pages with dom0: %s\n", pages, strerror(errno));
		goto out;
	}
	memset(*buf, 0, (size_t)pages * PLAT_PAGE_SIZE);
	value = malloc((size_t)pages * 11 + 1);
	if (!value)
		goto out;
	size_t at = 0;
	for (uint32_t i = 0; i < pages; i++)
		at += (size_t)sprintf(value + at, "%s%u", i ? "," : "", refs[i]);
	*gs_out = gs;
	const char *h = c->mirage_hostile;
	if (h && !strcmp(h, "refs-garbage")) {
		sprintf(value, "8,x,9");
	} else if (h && !strcmp(h, "refs-ungranted")) {
		at = 0;
		for (uint32_t i = 0; i < pages; i++)
			at += (size_t)sprintf(value + at, "%s%u", i ? "," : "", refs[i] + 5000);
	} else if (h && !strcmp(h, "refs-many")) {
		char *many = malloc(1000 * 11 + 1);
		if (!many)
			goto out;
		at = 0;
		for (uint32_t i = 0; i < 1000; i++)
			at += (size_t)sprintf(many + at, "%s%u", i ? "," : "", refs[0] + i);
		free(value);
		value = many;
	}
	if (h && !strcmp(h, "late-grant")) {
		/* ended before the node names them: no backend can map them first */
		plat_gntshr_unshare(gs, *buf, pages);
		rc = late_grant(c, gs, buf, value);
	} else {
		rc = write_node(c, value);
	}
out:
	free(refs);
	free(value);
	if (rc && gs && !*gs_out)
		plat_gntshr_close(gs);
	return rc;
}

/* --hostile before event n: the node rewritten with a second buffer's
 * refs half-way, headers spoiled every 50 events, or a random byte
 * scribbled over the buffer. */
static void hostile_step(struct stub_ctx *c, const char *hostile, struct mwriter *w, uint64_t n,
                         uint64_t total, uint64_t *rnd)
{
	if (!strcmp(hostile, "rewrite") && n == total / 2) {
		struct plat_gntshr *gs2 = NULL;
		uint8_t *buf2 = NULL;
		if (share(c, &buf2, c->mirage_pages, &gs2) == 0) {
			stub_say("dom%u: rewrote the node with a second buffer's refs", c->domid);
			plat_gntshr_leave(gs2); /* its grants the domain's, unused */
		}
	}
	if (!strcmp(hostile, "headers") && n % 50 == 0) {
		uint64_t r = stub_rand(rnd);
		uint8_t *hd = w->buf + w->off[r % MPROF_PACKETS];
		switch ((r >> 8) % 4) {
		case 0: hd[20] ^= 0xff; break;                          /* packet_size */
		case 1: hd[28] = 0xff, hd[29] = 0x7f; break;            /* content past the packet */
		case 2: hd[0] ^= 0x55; break;                           /* magic */
		case 3: hd[26] = 3; break;                              /* content not whole bytes */
		}
	}
	if (!strcmp(hostile, "scribble")) {
		uint64_t r = stub_rand(rnd);
		w->buf[r % w->size] = (uint8_t)(r >> 32);
	}
}

/* Paced: event n is due at n / rate seconds after *start.  Events come in
 * bursts of up to 2 ms, as an Lwt program's do (a sleep per event cost 32
 * guests all of a CPU).  A guest held off its CPU for longer (the host
 * busy, the VM itself paused) does not make the time up in one burst:
 * its events are its work, done later, not bunched; *start moves on.  (A
 * catch-up burst after a 400 ms stop of the whole host wrote past the
 * ring before the backend's next look: seven packets lost, and the
 * test's "a guest at its pace loses nothing" failed in CI.) */
#define PACE_BURST_NS 2000000ull
static void pace(unsigned rate, uint64_t *start, uint64_t n)
{
	uint64_t at = n * 1000000000ull / rate, due = *start + at, now = now_ns();
	if (due > now + PACE_BURST_NS) {
		struct timespec d = {0, (long)(due - now)};
		d.tv_sec = d.tv_nsec / 1000000000, d.tv_nsec %= 1000000000;
		nanosleep(&d, NULL);
	} else if (now > due + PACE_BURST_NS) {
		*start = now - at;
	}
}

/* --crash-at: dead inside event n; on xensim the toolstack destroys the
 * domain. */
static _Noreturn void crash_now(struct stub_ctx *c, const struct mwriter *w, uint64_t n)
{
	if (c->event_log)
		fflush(c->event_log);
	stub_say("crashed inside event %llu (packet %llu), as asked", (unsigned long long)n,
	         (unsigned long long)w->packets_begun - 1);
	fflush(stdout);
	if (c->kind == PLAT_SIM)
		stub_destroy_self(c); /* kills us */
	_exit(0);
}

/* The events, one after another, as the program makes them. */
static void trace_events(struct stub_ctx *c, struct mwriter *w)
{
	uint64_t total = c->requests, crash_at = c->crash_at;
	uint64_t start = now_ns(), last_ts = 0, rnd = c->seed;
	const char *hostile = c->mirage_hostile ? c->mirage_hostile : "";
	if (!strcmp(hostile, "flood")) {
		char v[64];
		for (int i = 0; i < 5000; i++) {
			snprintf(v, sizeof(v), i % 2 ? "%d" : "1,2,%d", i);
			write_node(c, v);
		}
	}
	for (uint64_t n = 0; n < total; n++) {
		hostile_step(c, hostile, w, n, total, &rnd);
		if (c->mirage_rate)
			pace(c->mirage_rate, &start, n);
		uint64_t ts = now_ns();
		if (ts <= last_ts)
			ts = last_ts + 1; /* a monotonic clock, never equal in the log */
		last_ts = ts;
		int crash = n == crash_at;
		write_event(w, (unsigned)(n % MPROF_EVENT_KINDS), n, ts, crash ? NULL : c->event_log, crash);
		if (crash)
			crash_now(c, w, n);
	}
}

int run_mirage(struct stub_ctx *c)
{
	struct plat_gntshr *gs = NULL;
	uint8_t *buf = NULL;
	struct mwriter w;

	if (share(c, &buf, c->mirage_pages, &gs) != 0)
		return 1;
	if (c->mirage_hostile && !strncmp(c->mirage_hostile, "refs-", 5)) {
		/* Bad lists: a backend that maps nothing is what is tested; the
		 * buffer is written all the same. */
		stub_say("dom%u: wrote a hostile ring-ref (%s)", c->domid, c->mirage_hostile);
	}
	stub_say("dom%u: tracing into %u pages shared read-only with dom0, %llu events at %u/s%s",
	         c->domid, c->mirage_pages, (unsigned long long)c->requests, c->mirage_rate,
	         c->crash_at != UINT64_MAX ? ", will crash mid-packet" : "");
	mwriter_init(&w, buf, (size_t)c->mirage_pages * PLAT_PAGE_SIZE);
	trace_events(c, &w);
	if (c->event_log)
		fflush(c->event_log);
	stub_say("dom%u: %llu events in %llu packets", c->domid, (unsigned long long)c->requests,
	         (unsigned long long)w.packets_begun);
	if (c->mirage_withdraw) {
		char *dom = xs_get_domain_path(c->xs, c->domid), *path = NULL;
		if (dom && asprintf(&path, "%s/data/mprof/ring-ref", dom) >= 0)
			xs_rm(c->xs, XBT_NULL, path);
		free(path);
		free(dom);
		/* The backend takes the last packet on the node's removal. */
		sleep(1);
	}
	if (c->mirage_withdraw) {
		plat_gntshr_unshare(gs, buf, c->mirage_pages);
		plat_gntshr_close(gs);
	} else {
		plat_gntshr_leave(gs); /* the grants end with the domain */
	}
	return 0;
}
