/*
 * trace.c - MirageOS traces: a guest's mirage-profile buffer, captured into
 * its run like a HaLVM disk.
 *
 * A mirage-profile guest grants the pages of its trace buffer read-only to
 * dom0 and writes their refs, comma-separated, to
 * /local/domain/<domid>/data/mprof/ring-ref.  We watch that node of every
 * domain (@introduceDomain tells us of new ones), map the pages read-only
 * once the list is sound, and then look at the four packet headers every
 * --trace-poll-ms (sooner when the guest writes fast).  A packet the guest
 * has moved past ("closed": a packet with a larger count holds events) is
 * copied out and kept once, by its count extended past 16 bits; the one
 * being written is taken at the end (the domain died, or withdrew the
 * node), when it no longer changes.  Counts skipped are packets the guest
 * overwrote before we looked: logged, and visible in the store as gaps.
 *
 * Nothing in the buffer is trusted: a header that is not sound is not
 * kept; a packet is copied and its header read again, and a header that
 * changed meanwhile (the guest wrapped onto it) drops the copy; events are
 * only decoded (profile/trace/mprof.c) to count them.  There is no barrier on
 * the guest's side, so this is the best a reader can do; the export
 * stops a packet at its first torn event.
 *
 * One buffer per boot: a guest that rewrites the node with another list
 * while mapped is logged and keeps being read from the first list; after
 * the trace ended, the node is ignored.
 *
 * A trace that cannot be mapped still makes its run: the first time the
 * node is read with a list (the domain lives then: its name and uuid are
 * there to read), the run and its trace device are made, mapped or not.
 * A list that fails to map (its grants not made yet, or ended) is tried
 * again while the domain lives, 10 ms after the first failure, doubling
 * to once a second; a list refused (not a list, too many pages) waits for
 * the guest to write another.  A run whose buffer was never mapped ends
 * with a trace device of no packets and the reason as its end reason
 * ("trace not captured: ..."), so the loss is seen in `profdb show` and
 * the catalogue, not only once in the log.  (Six guests tracing flat out
 * and destroyed 0-500 ms after got 1 to 5 runs of 6: frontend-stub, the
 * simulated guest, ended its grants as its program finished, before its
 * domain died, which mirage-profile never does; each map that came after
 * failed once, and no run was recorded at all.)  Watch events per domain are
 * rate-limited like frontends' (a guest rewriting its node in a loop).
 *
 * Owns struct be_traces (trace.h): every domain's trace node, its watch,
 * mapping, run, device and counts.  May call: runs.c, domains.c,
 * xs_values.c, be_worker_quiesce (datapath/), quota.c, log.c, common/,
 * util/, profile/trace/mprof, the store and the platform.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <xenstore.h>

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "backend/datapath/io_worker.h"
#include "domains.h"
#include "runs.h"
#include "trace.h"
#include "xs_values.h"
#include "util/clock.h"
#include "profile/trace/mprof.h"
#include "util/safe_text.h"
#include "util/grow.h"

#define TRACE_EVENTS_PER_S 20.0
#define TRACE_EVENTS_BURST 40.0
/* A node flooded past its rate is not watched for a while (1 s, doubling
 * up to 32 s while the flood goes on), looked at every second instead:
 * its events cost the loop nothing meanwhile. */
#define TRACE_UNWATCHED_LOOK_US 1000000
#define TRACE_BACKOFF_MIN_US 1000000
#define TRACE_BACKOFF_MAX_US 32000000
#define TRACE_REFS_TEXT_MAX 4096 /* xenstore's value limit */

struct be_trace {
	uint32_t domid;
	char node[64];              /* .../data/mprof/ring-ref, watched */
	int look;                   /* its node changed: read it this round */
	double tokens;              /* watch events it may still cause now */
	int64_t tokens_us;
	int unwatched;              /* its node's watch dropped (a flood): looked at every second */
	int64_t rewatch_at_us, backoff_us, rewatched_us, next_look_us;
	/* the buffer */
	uint8_t *mem;               /* read-only mapping, or NULL */
	uint32_t npages;
	uint32_t refs_hash;         /* of the list mapped, or refused last */
	int refused;                /* the list at refs_hash was refused */
	int rewrite_logged;
	int ended;                  /* its last packet was taken: ignored */
	/* a list that did not map, tried again while the domain lives */
	uint32_t *want;             /* its refs, or NULL */
	uint32_t nwant;
	int map_tries;
	int64_t map_retry_us;       /* next try (monotonic) */
	char unmapped[256];         /* why nothing is mapped ("": mapped, or not looked at) */
	/* where it goes */
	struct be_run *run;
	struct store_device *sdev;
	uint64_t next_seq;          /* the next packet to keep */
	uint64_t kept, lost, dropped, kept_bytes;
	int64_t lost_logged_us;
	/* polling */
	int64_t next_poll_us;
	int64_t last_poll_us;
	uint64_t poll_us_max;       /* --trace-poll-ms */
	uint64_t last_progress;     /* seq * packet size + content, at last poll */
	struct be_trace *next;
};

/* Packets copied out this turn, stored together in one batch. */
struct kept_packet {
	struct be_trace *t;
	struct store_trace_packet p;
	uint8_t *bytes;
	int stored;                 /* in the batch, counted once it commits */
};

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static void trace_withdrawn(struct be_backend *b, struct be_trace *t);

static struct be_trace *trace_find(struct be_backend *b, uint32_t domid)
{
	for (struct be_trace *t = b->traces->list; t; t = t->next)
		if (t->domid == domid)
			return t;
	return NULL;
}

static void tlog(int prio, const struct be_trace *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tlog(int prio, const struct be_trace *t, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (t->run)
		be_elog_at(prio, t->domid, t->run->run_id, "dom%u trace run %lld: %s", t->domid,
		        (long long)t->run->run_id, msg);
	else
		be_elog_at(prio, t->domid, -1, "dom%u trace: %s", t->domid, msg);
}

/* ---- domains and their nodes ------------------------------------------------ */

static struct be_trace *trace_watch_domain(struct be_backend *b, uint32_t domid)
{
	struct be_trace *t = trace_find(b, domid);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->domid = domid;
	snprintf(t->node, sizeof(t->node), "/local/domain/%u/data/mprof/ring-ref", domid);
	/* The watch fires once when set: that first event is our first look. */
	if (!xs_watch(b->env.xs, t->node, "mprof")) {
		be_blog_at(LOG_ERR, "dom%u: cannot watch %s: %s", domid, t->node, strerror(errno));
		free(t);
		return NULL;
	}
	t->next = b->traces->list;
	b->traces->list = t;
	return t;
}

/* Every domain's trace node watched (at start, and after @introduceDomain). */
static void trace_scan_domains(struct be_backend *b)
{
	unsigned n = 0;
	char **doms = xs_directory(b->env.xs, XBT_NULL, "/local/domain", &n);

	for (unsigned i = 0; doms && i < n; i++) {
		char *end;
		errno = 0;
		unsigned long domid = strtoul(doms[i], &end, 10);
		if (*end || end == doms[i] || errno || domid > 32767)
			continue;
		trace_watch_domain(b, (uint32_t)domid);
	}
	free(doms);
}

int be_trace_init(struct be_backend *b)
{
	if (!xs_watch(b->env.xs, "@introduceDomain", "intro"))
		return -1;
	trace_scan_domains(b);
	return 0;
}

/* A watch event of ours: 1 when it needs a round (noted in the trace). */
int be_trace_note_event(struct be_backend *b, const char *path, const char *token)
{
	if (strcmp(token, "intro") == 0) {
		b->traces->scan_due = 1;
		return 1;
	}
	if (strcmp(token, "mprof") != 0)
		return 0;
	for (struct be_trace *t = b->traces->list; t; t = t->next) {
		if (strcmp(path, t->node) != 0)
			continue;
		int64_t now = clock_mono_us();
		t->tokens = t->tokens_us ? t->tokens + (double)(now - t->tokens_us) * TRACE_EVENTS_PER_S / 1e6
		                         : TRACE_EVENTS_BURST;
		if (t->tokens > TRACE_EVENTS_BURST)
			t->tokens = TRACE_EVENTS_BURST;
		t->tokens_us = now;
		if (t->tokens < 1.0) {
			/* Past its rate: looked at on its next poll, not now, and
			 * its watch dropped for a while (events queued before that
			 * still come: they land here). */
			t->look = 1;
			be_domains_count(b->domains, BE_XS_DEFERRED);
			if (t->unwatched)
				return 0;
			t->backoff_us = t->rewatched_us && now - t->rewatched_us < 2 * t->backoff_us
			                        ? (t->backoff_us * 2 > TRACE_BACKOFF_MAX_US ? TRACE_BACKOFF_MAX_US
			                                                                    : t->backoff_us * 2)
			                        : TRACE_BACKOFF_MIN_US;
			t->unwatched = 1;
			t->rewatch_at_us = now + t->backoff_us;
			t->next_look_us = now + TRACE_UNWATCHED_LOOK_US;
			xs_unwatch(b->env.xs, t->node, "mprof");
			be_domains_count(b->domains, BE_XS_UNWATCHED);
			tlog(LOG_WARNING, t, "xenstore event flood on %s: not watched but looked at every %d s, for %lld s",
			     t->node, TRACE_UNWATCHED_LOOK_US / 1000000, (long long)(t->backoff_us / 1000000));
			return 0;
		}
		t->tokens -= 1.0;
		t->look = 1;
		return 1;
	}
	return 0; /* a domain we stopped watching: a stale event */
}

static int note_kept(void *ctx, const struct store_trace_packet *p)
{
	struct be_trace *t = ctx;
	if (p->seq + 1 > t->next_seq)
		t->next_seq = p->seq + 1;
	t->kept++;
	t->kept_bytes += p->bytes;
	t->ended |= p->final;
	return 0;
}

/* The run and its trace device: new, or the one a previous backend left. */
static int attach_store(struct be_backend *b, struct be_trace *t)
{
	int gone = 0;
	struct store_device_info info;

	t->run = be_run_for_domain(b->runs, t->domid, &gone);
	if (!t->run)
		return -1;
	if (store_find_device(b->env.store, t->run->run_id, STORE_TRACE_VDEV, &info) == 0) {
		if (store_device_open(b->env.store, info.device_id, &t->sdev) != 0)
			goto fail;
		if (store_trace_packets(b->env.store, info.device_id, note_kept, t) != 0)
			goto fail;
		/* Lost before this backend: the gaps so far. */
		t->lost = t->next_seq - t->kept;
		if (t->ended) {
			tlog(LOG_INFO, t, "already ended (its last packet was kept): the node is ignored");
			store_device_release(t->sdev);
			t->sdev = NULL;
			t->run = NULL; /* not one of its devices: nothing to hand back */
			return -1;
		}
		tlog(LOG_NOTICE, t, "resumed: %llu packets kept so far, next %llu", (unsigned long long)t->kept,
		     (unsigned long long)t->next_seq);
	} else if (store_device_create(b->env.store, t->run->run_id, STORE_TRACE_VDEV, 0, store_max_capacity(),
	                               &t->sdev) != 0) {
		goto fail;
	}
	be_run_device_added(t->run);
	return 0;
fail:
	tlog(LOG_ERR, t, "cannot record the trace: %s", store_errmsg(b->env.store));
	if (t->sdev)
		store_device_release(t->sdev);
	t->sdev = NULL;
	t->run = NULL;
	return -1;
}

/* The buffer is not mapped, for why (printf-style): said once in the log
 * (a warning), and kept for the run's end reason; the run and its trace
 * device made now, while the domain's name and uuid can be read. */
static void unmapped(struct be_backend *b, struct be_trace *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void unmapped(struct be_backend *b, struct be_trace *t, const char *fmt, ...)
{
	char why[sizeof(t->unmapped)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!t->sdev)
		(void)attach_store(b, t);
	if (strcmp(why, t->unmapped) != 0) /* once per reason, not per try */
		tlog(LOG_WARNING, t, "%s%s", why, t->want ? "; tried again while the domain lives" : "");
	snprintf(t->unmapped, sizeof(t->unmapped), "%s", why);
	if (!t->run)
		return;
	if (t->map_tries > 1)
		snprintf(t->run->lost_why, sizeof(t->run->lost_why), STORE_TRACE_NOT_CAPTURED "%s; tried %d times while the domain lived",
		         why, t->map_tries);
	else
		snprintf(t->run->lost_why, sizeof(t->run->lost_why), STORE_TRACE_NOT_CAPTURED "%s", why);
}

/* Maps t->want; 0, or -1 with the reason kept (unmapped) and the next
 * try scheduled. */
static int map_wanted(struct be_backend *b, struct be_trace *t)
{
	uint32_t n = t->nwant;
	uint8_t *mem = plat_gnttab_map(b->env.gnt, t->domid, t->want, n, 0);
	if (!mem) {
		int e = errno;
		t->map_tries++;
		int64_t wait = 10000LL << (t->map_tries < 7 ? t->map_tries - 1 : 7);
		t->map_retry_us = clock_mono_us() + (wait > 1000000 ? 1000000 : wait);
		unmapped(b, t, "cannot map the %u pages of %s read-only: %s (are they granted to dom0?)", n, t->node,
		         strerror(e));
		return -1;
	}
	t->mem = mem;
	t->npages = n;
	t->refused = 0;
	if (!t->sdev && attach_store(b, t) != 0) {
		plat_gnttab_unmap(b->env.gnt, t->mem, t->npages);
		t->mem = NULL;
		t->refused = 1;
		free(t->want);
		t->want = NULL;
		return -1;
	}
	if (t->map_tries)
		tlog(LOG_NOTICE, t, "mapped at try %d", t->map_tries + 1);
	free(t->want);
	t->want = NULL;
	t->map_tries = 0;
	t->unmapped[0] = '\0';
	if (t->run)
		t->run->lost_why[0] = '\0';
	t->next_poll_us = 0;
	tlog(LOG_NOTICE, t, "capturing a mirage-profile trace (%u pages, packets of %zu bytes)", n,
	     (size_t)n * PLAT_PAGE_SIZE / MPROF_PACKETS);
	return 0;
}

static void trace_look(struct be_backend *b, struct be_trace *t)
{
	unsigned len;
	char *v = xs_read(b->env.xs, XBT_NULL, t->node, &len);
	const char *why = NULL;

	t->look = 0;
	if (!v)
		return trace_withdrawn(b, t);
	if (t->ended) {
		free(v);
		return;
	}
	uint32_t h = fnv1a(v);
	if (t->mem) {
		if (h != t->refs_hash && !t->rewrite_logged) {
			tlog(LOG_WARNING, t, "%s rewritten with another list while mapped: ignored, the first buffer is "
			        "still read (one buffer per boot)", t->node);
			t->rewrite_logged = 1;
		}
		free(v);
		return;
	}
	if (t->refused && h == t->refs_hash) {
		free(v);
		return; /* refused before, unchanged */
	}
	if (t->want && h == t->refs_hash) {
		free(v);
		return; /* the same list: its tries go on (be_trace_poll) */
	}
	uint32_t *refs = NULL, n = 0;
	t->refs_hash = h;
	free(t->want); /* a list written since replaces the one retried */
	t->want = NULL;
	t->map_tries = 0;
	if (strlen(v) >= TRACE_REFS_TEXT_MAX || be_xsv_trace_refs(v, b->env.opt.max_trace_pages, &refs, &n, &why) != 0) {
		char shown[64];
		t->refused = 1;
		unmapped(b, t, "%s %s (%s): not mapped", t->node, why ? why : "is too long",
		         safe_text(shown, sizeof(shown), v));
		free(v);
		return;
	}
	free(v);
	t->want = refs;
	t->nwant = n;
	(void)map_wanted(b, t);
}

/* ---- snapshots --------------------------------------------------------------- */

/* The 64-bit sequence of a 16-bit count: the one nearest next_seq. */
static uint64_t extend_seq(uint64_t next, uint16_t count)
{
	uint64_t s = (next & ~(uint64_t)0xffff) | count;
	if (s + 0x8000 < next)
		s += 0x10000;
	else if (s > next + 0x8000 && s >= 0x10000)
		s -= 0x10000;
	return s;
}

static void read_header(const struct be_trace *t, unsigned i, struct mprof_header *h, size_t *off,
                        size_t *len)
{
	uint8_t raw[MPROF_HEADER_BYTES];
	mprof_packet_span((size_t)t->npages * PLAT_PAGE_SIZE, i, off, len);
	/* The guest writes while we read: what we copy is what we judge. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(raw, t->mem + *off, sizeof(raw));
	mprof_header_read(raw, h);
}

struct keep_list {
	struct kept_packet *v;
	size_t n, cap;
};

static void note_lost(struct be_trace *t, uint64_t from, uint64_t to)
{
	int64_t now = clock_mono_us();
	t->lost += to - from;
	if (now - t->lost_logged_us > 10 * 1000000) {
		tlog(LOG_WARNING, t, "packets %llu-%llu lost: the guest overwrote them before they were kept (%llu lost "
		        "so far; --trace-poll-ms, or a larger buffer in the guest)",
		     (unsigned long long)from, (unsigned long long)to - 1, (unsigned long long)t->lost);
		t->lost_logged_us = now;
	}
}

/* Progress for the next poll's timing: the active packet (its sequence
 * and length) says how fast the guest writes. */
static void pace_polls(struct be_trace *t, const struct mprof_header *active, uint64_t seq, size_t len)
{
	uint64_t progress = seq * len + mprof_content_bytes(active);
	int64_t now = clock_mono_us();
	if (t->last_poll_us && progress > t->last_progress && now > t->last_poll_us) {
		double rate = (double)(progress - t->last_progress) / (double)(now - t->last_poll_us);
		/* Poll at least twice per packet filled: the guest overwrites a
		 * closed packet three packets later. */
		double us = (double)len / rate / 2;
		int64_t limit = (int64_t)t->poll_us_max;
		t->next_poll_us = now + (us < 1000 ? 1000 : us > limit ? limit : (int64_t)us);
	}
	t->last_poll_us = now;
	t->last_progress = progress;
}

/* Copies out the packets to keep; final: the domain is dead or withdrew
 * the buffer, so the active packet is taken too. */
static void snapshot(struct be_trace *t, int final, struct keep_list *kl)
{
	struct mprof_header h[MPROF_PACKETS];
	size_t off[MPROF_PACKETS], len[MPROF_PACKETS];
	uint64_t seq[MPROF_PACKETS];
	int sound[MPROF_PACKETS], active = -1;

	for (unsigned i = 0; i < MPROF_PACKETS; i++) {
		read_header(t, i, &h[i], &off[i], &len[i]);
		sound[i] = mprof_header_check(&h[i], len[i]) == NULL && !mprof_header_empty(&h[i]);
		seq[i] = extend_seq(t->next_seq, h[i].count);
		if (sound[i] && (active < 0 || seq[i] > seq[active]))
			active = (int)i;
	}
	if (active < 0)
		return;
	pace_polls(t, &h[active], seq[active], len[active]);

	for (;;) {
		/* The smallest sequence left to keep. */
		int pick = -1;
		for (unsigned i = 0; i < MPROF_PACKETS; i++) {
			int closed = seq[i] < seq[active] || (final && (int)i == active);
			if (sound[i] && closed && seq[i] >= t->next_seq && (pick < 0 || seq[i] < seq[pick]))
				pick = (int)i;
		}
		if (pick < 0)
			break;
		unsigned i = (unsigned)pick;
		sound[i] = 0;
		uint8_t *copy = malloc(len[i]);
		if (!copy)
			break;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(copy, t->mem + off[i], len[i]);
		struct mprof_header again;
		size_t o2, l2;
		read_header(t, i, &again, &o2, &l2);
		if (again.count != h[i].count || again.content_bits != h[i].content_bits ||
		    again.packet_bits != h[i].packet_bits || again.magic != h[i].magic ||
		    memcmp(copy + 4, mprof_uuid, 16) != 0) {
			/* Overwritten under us: the guest is a whole ring ahead. */
			free(copy);
			t->dropped++;
			continue;
		}
		if (seq[i] > t->next_seq)
			note_lost(t, t->next_seq, seq[i]);
		struct mprof_packet_summary sum;
		mprof_summarize(copy, len[i], 0, &sum);
		if (GROW_FROM(kl->v, kl->cap, kl->n + 1, 8) != 0) {
			free(copy);
			break;
		}
		kl->v[kl->n++] = (struct kept_packet){
			t,
			{.seq = seq[i], .bytes = (uint32_t)len[i], .events = sum.events, .first_ts = sum.first_ts,
			 .last_ts = sum.last_ts, .final = final && (int)i == active},
			copy,
			0,
		};
		t->next_seq = seq[i] + 1;
	}
}

/* Stores the copies in one batch (the loop's, the worker idle). */
static void store_kept(struct be_backend *b, struct keep_list *kl)
{
	if (!kl->n)
		return;
	be_worker_quiesce(b->worker);
	int rc = store_batch_begin(b->env.store);
	for (size_t k = 0; k < kl->n && rc == 0; k++) {
		struct kept_packet *kp = &kl->v[k];
		struct be_trace *t = kp->t;
		uint64_t added = 0;
		uint64_t nsect = (kp->p.bytes + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE;
		struct store_device_info info;
		store_device_get_info(t->sdev, &info);
		int64_t usage = b->env.opt.max_store_bytes ? store_disk_usage(b->env.store) : 0;
		if ((b->env.opt.max_store_bytes && usage >= 0 &&
		     (uint64_t)usage + kp->p.bytes > b->env.opt.max_store_bytes) ||
		    be_quota_admit(&t->run->chunks, 0, info.written_end_sector, nsect, b->env.opt.max_run_bytes,
		                &added) != 0) {
			if (!t->run->over_limit_logged) {
				tlog(LOG_WARNING, t, "run or store at its limit (--max-run-bytes, --max-store-bytes): packets are "
				        "no longer kept");
				t->run->over_limit_logged = 1;
			}
			t->lost++;
			continue;
		}
		rc = store_trace_keep(t->sdev, &kp->p, kp->bytes);
		if (rc == 0)
			kp->stored = 1;
		else if (rc == 1)
			rc = 0; /* kept by an earlier backend */
	}
	if (rc == 0)
		rc = store_batch_commit(b->env.store);
	else
		store_batch_abort(b->env.store);
	if (rc != 0)
		be_blog_at(LOG_ERR, "store: %d trace packets not kept (counted as lost): %s", (int)kl->n, store_errmsg(b->env.store));
	for (size_t k = 0; k < kl->n; k++) {
		struct kept_packet *kp = &kl->v[k];
		if (rc == 0 && kp->stored) {
			kp->t->kept++;
			kp->t->kept_bytes += kp->p.bytes;
		} else if (rc != 0) {
			kp->t->lost++;
		}
		free(kp->bytes);
	}
	kl->n = 0;
}

/* ---- the end of a trace -------------------------------------------------------- */

/* Takes the last packets, unmaps, and hands the run back. */
static void trace_finish(struct be_backend *b, struct be_trace *t, int domain_dead, const char *why)
{
	free(t->want);
	t->want = NULL;
	if (!t->mem && t->unmapped[0]) {
		tlog(LOG_WARNING, t, "ended (%s) and never mapped: no packet kept (%s)", why, t->unmapped);
		t->unmapped[0] = '\0';
	}
	if (t->mem) {
		struct keep_list kl = {0};
		snapshot(t, 1, &kl);
		store_kept(b, &kl);
		free(kl.v);
		/* A mapping held keeps a dead domain a zombie. */
		plat_gnttab_unmap(b->env.gnt, t->mem, t->npages);
		t->mem = NULL;
		t->ended = 1;
		tlog(LOG_NOTICE, t, "ended (%s): %llu packets kept (%llu bytes), %llu lost", why,
		     (unsigned long long)t->kept, (unsigned long long)t->kept_bytes,
		     (unsigned long long)t->lost);
	}
	if (t->sdev) {
		store_device_release(t->sdev);
		t->sdev = NULL;
	}
	if (t->run) {
		struct be_run *r = t->run;
		t->run = NULL;
		be_run_device_gone(b->runs, r, domain_dead);
	}
}

static void trace_withdrawn(struct be_backend *b, struct be_trace *t)
{
	free(t->want); /* nothing to map any more */
	t->want = NULL;
	if (t->mem)
		trace_finish(b, t, 0, "the guest withdrew its buffer");
}

static void trace_free(struct be_backend *b, struct be_trace *t)
{
	for (struct be_trace **p = &b->traces->list; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	if (!t->unwatched)
		xs_unwatch(b->env.xs, t->node, "mprof");
	free(t->want);
	free(t);
}

void be_trace_run_closed(struct be_backend *b, struct be_run *r)
{
	for (struct be_trace *t = b->traces->list; t; t = t->next)
		if (t->run == r) {
			trace_finish(b, t, 0, "its run is being deleted");
			t->ended = 1; /* its node is ignored from now on */
		}
}

void be_trace_domains_changed(struct be_backend *b)
{
	for (struct be_trace *t = b->traces->list, *next; t; t = next) {
		next = t->next;
		if (be_domain_alive(b->domains, t->domid))
			continue;
		trace_finish(b, t, 1, "domain destroyed");
		trace_free(b, t);
	}
}

/* ---- the loop's hooks ------------------------------------------------------------ */

int be_trace_round(struct be_backend *b)
{
	int introduced = b->traces->scan_due;
	if (introduced) {
		b->traces->scan_due = 0;
		trace_scan_domains(b);
	}
	for (struct be_trace *t = b->traces->list, *next; t; t = next) {
		next = t->next;
		if (t->look)
			trace_look(b, t);
	}
	return introduced;
}

int be_trace_poll(struct be_backend *b)
{
	int64_t now = clock_mono_us(), next = -1;
	struct keep_list kl = {0};
	int looked = 0;

	for (struct be_trace *t = b->traces->list, *nt; t; t = nt) {
		nt = t->next;
		if (t->unwatched) {
			if (t->rewatch_at_us <= now) {
				/* The watch fires once when set: a look. */
				t->unwatched = 0;
				t->rewatched_us = now;
				t->tokens = TRACE_EVENTS_BURST;
				t->tokens_us = now;
				if (!xs_watch(b->env.xs, t->node, "mprof"))
					tlog(LOG_ERR, t, "cannot watch %s again: %s", t->node, strerror(errno));
			} else {
				if (t->next_look_us <= now) {
					t->look = 1;
					t->next_look_us = now + TRACE_UNWATCHED_LOOK_US;
				}
				int64_t due = t->next_look_us < t->rewatch_at_us ? t->next_look_us : t->rewatch_at_us;
				int64_t wait = (due - now + 999) / 1000;
				next = next < 0 || wait < next ? wait : next;
			}
		}
		/* Node events past the rate limit wait for the poll. */
		if (t->look && !t->mem && now - t->tokens_us > 1000000 / TRACE_EVENTS_PER_S) {
			if (!looked++)
				be_worker_quiesce(b->worker);
			trace_look(b, t);
		}
		if (!t->mem && t->want && !t->ended) {
			/* a list that did not map: again while the domain lives */
			if (t->map_retry_us <= now && be_domain_alive(b->domains, t->domid)) {
				if (!looked++)
					be_worker_quiesce(b->worker);
				(void)map_wanted(b, t);
			}
			if (!t->mem) {
				int64_t wait = (t->map_retry_us - now + 999) / 1000;
				next = next < 0 || wait < next ? (wait < 0 ? 0 : wait) : next;
				continue;
			}
		}
		if (!t->mem)
			continue;
		if (!t->poll_us_max)
			t->poll_us_max = (uint64_t)b->env.opt.trace_poll_ms * 1000;
		if (t->next_poll_us <= now) {
			t->next_poll_us = now + (int64_t)t->poll_us_max;
			snapshot(t, 0, &kl);
		}
		int64_t wait = (t->next_poll_us - now + 999) / 1000;
		next = next < 0 || wait < next ? wait : next;
	}
	store_kept(b, &kl);
	free(kl.v);
	return next < 0 ? -1 : (int)next;
}

void be_trace_shutdown(struct be_backend *b)
{
	/* Guests go on; a restarted backend picks their traces up. */
	while (b->traces->list) {
		struct be_trace *t = b->traces->list;
		if (t->mem)
			plat_gnttab_unmap(b->env.gnt, t->mem, t->npages);
		if (t->sdev)
			store_device_release(t->sdev);
		b->traces->list = t->next;
		free(t->want);
		free(t);
	}
}

json_t *be_trace_status_json(const struct be_traces *tr)
{
	json_t *a = json_array();
	for (struct be_trace *t = tr->list; t; t = t->next) {
		if (!t->mem && !t->ended && !t->kept)
			continue;
		json_array_append_new(a, json_pack("{s:i, s:o, s:i, s:I, s:I, s:I, s:I, s:s}", "domid", (int)t->domid,
			"run_id", t->run ? json_integer(t->run->run_id) : json_null(), "pages", (int)t->npages,
			"packets_kept", (json_int_t)t->kept, "packets_lost", (json_int_t)t->lost,
			"packets_dropped", (json_int_t)t->dropped, "bytes", (json_int_t)t->kept_bytes,
			"state", t->mem ? "capturing" : "ended"));
	}
	return a;
}

void be_trace_status(const struct be_traces *tr, FILE *f)
{
	int n = 0;
	for (struct be_trace *t = tr->list; t; t = t->next) {
		if (!t->mem && !t->ended && !t->kept)
			continue;
		if (!n++)
			fprintf(f, "\n%-6s %-6s %-6s %10s %10s %8s %14s  %s\n", "DOMID", "RUN", "PAGES", "KEPT",
			        "LOST", "DROPPED", "BYTES", "STATE");
		fprintf(f, "%-6u %6lld %-6u %10llu %10llu %8llu %14llu  %s\n", t->domid,
		        t->run ? (long long)t->run->run_id : -1LL, t->npages, (unsigned long long)t->kept,
		        (unsigned long long)t->lost, (unsigned long long)t->dropped,
		        (unsigned long long)t->kept_bytes, t->mem ? "capturing" : "ended");
	}
}
