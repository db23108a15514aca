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
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>

#include "../profile/mprof.h"
#include "stub.h"

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

/* One event of kind k (the stream cycles through all of them); log: the
 * export's JSON line for it. */
static void write_event(struct mwriter *w, unsigned k, uint64_t n, uint64_t ts, FILE *log, int crash)
{
	static const char *const labels[] = {"http-server", "tcp.read", "dns-cache", "<script>x</script>"};
	static const char *const counters[] = {"bytes_rx", "bytes_tx", "net-packets"};
	static const char *const exns[] = {"Not_found", "Failure(\"timeout\")", "Invalid_argument(\"x\")"};
	uint64_t thread = 100 + n % 17, other = 1000 + n;
	const char *text = NULL;
	int64_t value = 0;
	size_t fixed = 0;
	uint8_t tt = (uint8_t)(n % 15);

	switch (k) {
	case MPROF_CREATES: fixed = 17; break;
	case MPROF_FAILS: text = exns[n % 3]; fixed = 16; break;
	case MPROF_LABEL: text = labels[n % 4]; fixed = 8; break;
	case MPROF_INCREASE: text = counters[(n / MPROF_EVENT_KINDS) % 3]; value = (int64_t)(n % 1500) - 20; fixed = 16; break;
	case MPROF_COUNTER: text = counters[(n / MPROF_EVENT_KINDS + 1) % 3]; value = (int64_t)(n * 7); fixed = 16; break;
	case MPROF_SWITCH: case MPROF_GC: fixed = 8; break;
	default: fixed = 16; break;
	}
	size_t len = fixed + (text ? strlen(text) + 1 : 0);
	size_t f = add_event(w, (uint8_t)k, len, ts);
	if (crash)
		return; /* dead inside the event: content set, fields not written */
	uint8_t *p = w->buf + f;
	if (k == MPROF_GC) {
		put64(p, 20000 + n % 5000);
	} else {
		put64(p, thread);
		p += 8;
		if (k == MPROF_CREATES) {
			put64(p, other);
			p[8] = tt;
		} else if (k == MPROF_INCREASE || k == MPROF_COUNTER) {
			put64(p, (uint64_t)value);
		} else if (k != MPROF_LABEL && k != MPROF_SWITCH) {
			put64(p, other);
		}
		if (text)
			memcpy(w->buf + f + fixed, text, strlen(text) + 1);
	}
	if (!log)
		return;
	fprintf(log, "{\"ts\":%llu,\"event\":\"%s\"", (unsigned long long)ts, mprof_event_name(k));
	if (k != MPROF_GC)
		fprintf(log, ",\"thread\":%llu", (unsigned long long)thread);
	switch (k) {
	case MPROF_CREATES:
		fprintf(log, ",\"child\":%llu,\"thread_type\":\"%s\"", (unsigned long long)other,
		        mprof_thread_type_name(tt));
		break;
	case MPROF_READ: case MPROF_SIGNAL: case MPROF_TRY_READ:
		fprintf(log, ",\"source\":%llu", (unsigned long long)other);
		break;
	case MPROF_FULFILLS:
		fprintf(log, ",\"resolvee\":%llu", (unsigned long long)other);
		break;
	case MPROF_FAILS:
		fprintf(log, ",\"resolvee\":%llu,\"exn\":\"", (unsigned long long)other);
		for (const char *s = text; *s; s++)
			fprintf(log, *s == '"' ? "\\\"" : "%c", *s);
		fputc('"', log);
		break;
	case MPROF_BECOMES:
		fprintf(log, ",\"sleeper\":%llu", (unsigned long long)other);
		break;
	case MPROF_LABEL:
		fprintf(log, ",\"label\":\"%s\"", text);
		break;
	case MPROF_INCREASE:
		fprintf(log, ",\"amount\":%lld,\"counter\":\"%s\"", (long long)value, text);
		break;
	case MPROF_COUNTER:
		fprintf(log, ",\"value\":%lld,\"counter\":\"%s\"", (long long)value, text);
		break;
	case MPROF_GC:
		fprintf(log, ",\"duration_ns\":%llu", (unsigned long long)(20000 + n % 5000));
		break;
	}
	fputs("}\n", log);
}

/* MProf_xen.share_with: grant, then the refs in one transaction. */
static int share(struct stub_ctx *c, uint8_t **buf, uint32_t pages, struct plat_gntshr **gs_out)
{
	uint32_t *refs = calloc(pages, sizeof(*refs));
	struct plat_gntshr *gs = plat_gntshr_open(c->plat);
	char *path = NULL, *value = NULL;
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
	char *dom = xs_get_domain_path(c->xs, c->domid);
	if (!value || !dom || asprintf(&path, "%s/data/mprof/ring-ref", dom) < 0) {
		free(dom);
		path = NULL;
		goto out;
	}
	free(dom);
	size_t at = 0;
	for (uint32_t i = 0; i < pages; i++)
		at += (size_t)sprintf(value + at, "%s%u", i ? "," : "", refs[i]);
	*gs_out = gs;
	for (int tries = 0; tries < 10; tries++) {
		xs_transaction_t t = xs_transaction_start(c->xs);
		if (!t)
			break;
		if (!xs_write(c->xs, t, path, value, (unsigned)at)) {
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
out:
	free(refs);
	free(path);
	free(value);
	if (rc && gs && !*gs_out)
		plat_gntshr_close(gs);
	return rc;
}

int run_mirage(struct stub_ctx *c)
{
	struct plat_gntshr *gs = NULL;
	uint8_t *buf = NULL;
	struct mwriter w;
	uint64_t total = c->requests, crash_at = c->crash_at;

	if (share(c, &buf, c->mirage_pages, &gs) != 0)
		return 1;
	stub_say("dom%u: tracing into %u pages shared read-only with dom0, %llu events at %u/s%s",
	         c->domid, c->mirage_pages, (unsigned long long)total, c->mirage_rate,
	         crash_at != UINT64_MAX ? ", will crash mid-packet" : "");
	mwriter_init(&w, buf, (size_t)c->mirage_pages * PLAT_PAGE_SIZE);
	uint64_t start = now_ns(), last_ts = 0;
	for (uint64_t n = 0; n < total; n++) {
		if (c->mirage_rate) {
			/* Paced: event n is due at n / rate seconds. */
			uint64_t due = start + n * 1000000000ull / c->mirage_rate, now = now_ns();
			if (due > now + 200000) {
				struct timespec d = {0, (long)(due - now)};
				d.tv_sec = d.tv_nsec / 1000000000, d.tv_nsec %= 1000000000;
				nanosleep(&d, NULL);
			}
		}
		uint64_t ts = now_ns();
		if (ts <= last_ts)
			ts = last_ts + 1; /* a monotonic clock, never equal in the log */
		last_ts = ts;
		int crash = n == crash_at;
		write_event(&w, (unsigned)(n % MPROF_EVENT_KINDS), n, ts, crash ? NULL : c->event_log, crash);
		if (crash) {
			if (c->event_log)
				fflush(c->event_log);
			stub_say("crashed inside event %llu (packet %llu), as asked", (unsigned long long)n,
			         (unsigned long long)w.packets_begun - 1);
			fflush(stdout);
			if (c->kind == PLAT_SIM)
				stub_destroy_self(c); /* kills us */
			_exit(0);
		}
	}
	if (c->event_log)
		fflush(c->event_log);
	stub_say("dom%u: %llu events in %llu packets", c->domid, (unsigned long long)total,
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
	plat_gntshr_unshare(gs, buf, c->mirage_pages);
	plat_gntshr_close(gs);
	return 0;
}
