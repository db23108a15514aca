/*
 * sampling.c - domains sampled by the daemon (sampling.h).
 *
 * Invariants:
 *  1. The sampler's thread never touches the store: it appends whole
 *     records to its domain's queue (under the queue's lock); the event
 *     loop takes the queue and writes it, as every other write, in a
 *     store batch with the data path quiesced.
 *  2. The device's bytes are the stream from sector 0: each flush writes
 *     the tail (the bytes after the last whole sector) again with the new
 *     bytes after it, zero-padded to a sector.  A sampler that starts on
 *     a device holding an earlier one's stream begins at the next whole
 *     sector (the reader skips a zero record head to the next sector).
 *  3. A domain has one sampler at a time; its run counts the samples
 *     device as one of its devices until the sampler is done, so the run
 *     outlives neither its samples nor its domain.
 *  4. Every domain's samples are stored together when the first of them
 *     is due: one pause of the data path every SAMPLING_FLUSH_MS and
 *     batches of up to BATCH_BYTES, however many domains are sampled,
 *     not a batch per domain (64 domains: 320 commits a second).  A
 *     batch is all or nothing.
 *  5. be_sampling_poll runs at every round of the event loop, that is for
 *     every ring event of every guest: per sampled domain it takes the
 *     sampler's flags, never its figures (the pause percentiles sort up
 *     to 1024 values: 64 domains made that milliseconds a round).
 *
 * Owns struct be_sampling: the domains sampled (each one's sampler, queue,
 * run and device), the finished samplers' pauses, the domains --sample-hz
 * started a sampler for.  It reads struct be_env, the domains' liveness
 * and the runs through struct be_backend.
 *
 * May call: backend/sampling/sampler.h, runs.c, domains.c, the data path's
 * be_worker_quiesce (datapath/, io_worker.h), quota.c, log.c, the store,
 * libxenstore (a domain's name, KERNEL_ROOT), common/ (options.h,
 * state.h), util/ (clock.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstore.h>

#include "backend/common/log.h"
#include "backend/common/options.h"
#include "backend/common/quota.h"
#include "backend/common/state.h"
#include "domains.h"
#include "runs.h"
#include "sampling.h"
#include "backend/datapath/io_worker.h"
#include "backend/sampling/sampler.h"
#include "util/clock.h"
#include "util/grow.h"

#define SECTOR STORE_SECTOR_SIZE
#define QUEUE_MAX (8u << 20) /* queued and not yet stored (minutes at 999 Hz): past it, dropped and counted */
/* Its devid, apart from the trace's 0 in the run's quota (no disk has 1). */
#define SAMPLES_DEVID 1
/* A flush's store batches hold up to this (invariant 4): under the
 * store's intake limit (32 KiB), so that they are appended to the intake
 * log and folded by the store's thread; a bigger batch is an SQL
 * transaction on the event loop's thread (64 domains' flush in one:
 * milliseconds of chunk rewrites while no ring is served). */
#define BATCH_BYTES (16u << 10)

struct sampled {
	uint32_t domid;
	struct be_run *run;
	struct store_device *sdev;
	struct be_sampler *sampler;
	pthread_mutex_t lock;         /* the queue (invariant 1) */
	uint8_t *q;
	size_t qlen, qcap;
	uint64_t dropped;             /* bytes the queue could not hold */
	uint64_t base_sector;         /* where the tail lies (invariant 2) */
	uint8_t tail[SECTOR];
	size_t tail_len;
	uint64_t stored;              /* stream bytes stored */
	int64_t flushed_us;
	int done, abandoned, store_failed;
	int unattended;               /* started by --sample-hz: nobody asks for the summary */
	uint32_t hz;
	int64_t done_us;              /* when it finished (its summary waits 10 s to be asked for) */
	char summary[1024];
	struct sampled *next;
};

/* Pauses: how many, their sum, and how many fell in each of the
 * sampler's buckets. */
struct pause_total {
	uint64_t n, sum_us, in[SAMPLER_PAUSE_BUCKETS];
};

struct be_sampling {
	struct sampled *all;          /* the domains sampled, newest first */
	/* The pauses of the samplers that have finished, for the pause
	 * histogram (be_sampling_metrics): a counter over the daemon's life. */
	struct pause_total ended;
	/* --sample-hz: the domains a sampler was started for, while they live. */
	uint32_t seen[4096];
	size_t nseen;
};

struct be_sampling *be_sampling_new(void)
{
	return calloc(1, sizeof(struct be_sampling));
}

/* After be_sampling_shutdown: nothing is sampled any more. */
void be_sampling_free(struct be_sampling *sp)
{
	free(sp);
}

static void pause_add(struct pause_total *t, const struct be_sampler_stats *st)
{
	t->n += st->pauses;
	t->sum_us += st->pause_sum_us;
	for (int i = 0; i < SAMPLER_PAUSE_BUCKETS; i++)
		t->in[i] += st->pause_in[i];
}

/* The sampler's thread: queue the records (invariant 1). */
static void enqueue(void *ctx, const void *bytes, size_t len)
{
	struct sampled *s = ctx;
	pthread_mutex_lock(&s->lock);
	if (s->qlen + len <= QUEUE_MAX)
		(void)GROW_FROM(s->q, s->qcap, s->qlen + len, 65536); /* short: dropped below */
	if (s->qlen + len <= s->qcap) {
		memcpy(s->q + s->qlen, bytes, len);
		s->qlen += len;
	} else {
		s->dropped += len;
	}
	pthread_mutex_unlock(&s->lock);
}

static struct sampled *find(const struct be_sampling *sp, uint32_t domid)
{
	for (struct sampled *s = sp->all; s; s = s->next)
		if (s->domid == domid && !s->abandoned)
			return s;
	return NULL;
}

/* A domid, or a running domain's name looked up in xenstore. */
static int resolve_domain(struct be_backend *b, const char *arg, uint32_t *domid)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	if (*arg && !*end && v < 32752) {
		*domid = (uint32_t)v;
		return 0;
	}
	unsigned n = 0;
	char **ids = xs_directory(b->env.xs, XBT_NULL, "/local/domain", &n);
	int rc = -1;
	for (unsigned i = 0; ids && i < n && rc != 0; i++) {
		char path[64];
		unsigned len;
		snprintf(path, sizeof(path), "/local/domain/%.20s/name", ids[i]);
		char *name = xs_read(b->env.xs, XBT_NULL, path, &len);
		if (name && strcmp(name, arg) == 0 && (v = strtoul(ids[i], &end, 10), !*end)) {
			*domid = (uint32_t)v;
			rc = 0;
		}
		free(name);
	}
	free(ids);
	return rc;
}

/* The run and its samples device: the one an earlier sampler left, or new. */
static int attach_store(struct be_backend *b, struct sampled *s, char *err, size_t errlen)
{
	int gone = 0;
	struct store_device_info info;

	s->run = be_run_for_domain(b->runs, s->domid, &gone);
	if (!s->run) {
		snprintf(err, errlen, "domain %u %s", s->domid, gone ? "is going away" : "has no run: see the log");
		return -1;
	}
	int rc = store_find_device(b->env.store, s->run->run_id, STORE_SAMPLES_VDEV, &info) == 0
	             ? store_device_open(b->env.store, info.device_id, &s->sdev)
	             : store_device_create(b->env.store, s->run->run_id, STORE_SAMPLES_VDEV, SAMPLES_DEVID,
	                                   store_max_capacity(), &s->sdev);
	if (rc != 0) {
		snprintf(err, errlen, "cannot record samples: %s", store_errmsg(b->env.store));
		s->run = NULL;
		return -1;
	}
	store_device_get_info(s->sdev, &info);
	s->base_sector = info.written_end_sector; /* invariant 2: a fresh sector */
	be_run_device_added(s->run);
	return 0;
}

static void free_sampled(struct sampled *s)
{
	pthread_mutex_destroy(&s->lock);
	free(s->q);
	free(s);
}

int be_sampling_start(struct be_backend *b, const struct be_sampling_request *rq, uint32_t *domid, char *err,
                   size_t errlen)
{
	struct sampled *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&s->lock, NULL);
	if (b->env.opt.sink != SINK_STORE) {
		snprintf(err, errlen, "this backend runs with --sink %s: it records nothing, samples neither",
		         b->env.opt.sink == SINK_NULL ? "null" : "raw");
		goto fail;
	}
	if (resolve_domain(b, rq->domain, &s->domid) != 0) {
		snprintf(err, errlen, "no domain '%.100s' (give its domid or its name, as 'xl list' shows)",
		         rq->domain);
		goto fail;
	}
	if (s->domid == 0 || find(b->sampling, s->domid)) {
		snprintf(err, errlen, "domain %u %s", s->domid,
		         s->domid == 0 ? "is dom0, where the sampler runs" : "is being sampled already");
		goto fail;
	}
	/* The sampler opens the domain on its thread; the run and its device
	 * come when it is ready (be_sampling_poll): a domain that cannot be
	 * looked into gets no run.  What it emits waits in the queue. */
	char node[128];
	snprintf(node, sizeof(node), KERNEL_ROOT "/%u", s->domid);
	struct be_sampler_opts o = {
		.plat = {.kind = b->env.opt.platform, .sim_dir = b->env.opt.sim_dir},
		.domid = s->domid, .hz = rq->hz, .duration_us = rq->duration_us, .symbols = rq->symbols,
		.kernel_symbols = rq->kernel_symbols, .kernel_node = rq->symbols ? NULL : node, .program = rq->symbols,
	};
	if (be_sampler_start(&s->sampler, &o, enqueue, s, err, errlen) != 0)
		goto fail;
	s->hz = rq->hz;
	s->flushed_us = clock_mono_us();
	s->next = b->sampling->all;
	b->sampling->all = s;
	*domid = s->domid;
	return 0;
fail:
	free_sampled(s);
	return -1;
}

/* ---- the event loop's side --------------------------------------------------- */

static uint8_t *take_queue(struct sampled *s, size_t *len)
{
	pthread_mutex_lock(&s->lock);
	uint8_t *q = s->q;
	*len = s->qlen;
	s->q = NULL;
	s->qlen = s->qcap = 0;
	pthread_mutex_unlock(&s->lock);
	return q;
}

/* A flush's sectors: the tail stored before, then what was queued since. */
struct pending {
	uint8_t *buf;
	uint64_t nsect, added;
	size_t len, total;
	int rc; /* 0 stored, 1 over --max-run-bytes, -1 the store failed, -2 no memory */
};

/* Takes s's queue into p; 0 when there is nothing to store. */
static int pending_take(struct be_backend *b, struct sampled *s, struct pending *p)
{
	size_t len;
	uint8_t *data = take_queue(s, &len);
	*p = (struct pending){.len = len, .rc = -2};
	if (!p->len) {
		free(data);
		return 0;
	}
	p->total = s->tail_len + p->len;
	p->nsect = (p->total + SECTOR - 1) / SECTOR;
	if ((p->buf = calloc(p->nsect, SECTOR)) != NULL) {
		memcpy(p->buf, s->tail, s->tail_len);
		memcpy(p->buf + s->tail_len, data, p->len);
		if (be_quota_admit(&s->run->chunks, SAMPLES_DEVID, s->base_sector, p->nsect, b->env.opt.max_run_bytes,
		                &p->added) != 0)
			p->rc = 1;
		else
			p->rc = 0; /* to be written */
	}
	free(data);
	return 1;
}

/* p written (rc 0) or not: the tail moved on, or the bytes counted lost. */
static void pending_done(struct be_backend *b, struct sampled *s, struct pending *p, int64_t now)
{
	if (p->rc == 0) {
		uint64_t whole = p->total / SECTOR;
		s->base_sector += whole;
		s->tail_len = p->total % SECTOR;
		memcpy(s->tail, p->buf + whole * SECTOR, s->tail_len);
		s->stored += p->len;
	} else {
		s->dropped += p->len;
		if (p->rc < 0 && p->added)
			be_quota_release(&s->run->chunks, SAMPLES_DEVID, s->base_sector, p->added);
		if (!s->store_failed)
			be_blog_at(LOG_WARNING, "domid=%u run=%lld: samples not stored (%s): the rest of this sampling "
			        "may have gaps", s->domid, (long long)s->run->run_id,
			        p->rc > 0    ? "the run is at --max-run-bytes"
			        : p->rc == -2 ? "out of memory"
			                      : store_errmsg(b->env.store));
		s->store_failed = 1;
	}
	free(p->buf);
	p->buf = NULL;
	s->flushed_us = now;
}

/* Stores what every sampler in v[0..n) queued (invariant 2), in batches
 * of up to BATCH_BYTES after one pause of the data path (invariant 4). */
static void flush_set(struct be_backend *b, struct sampled **v, size_t n)
{
	struct pending *p = calloc(n ? n : 1, sizeof(*p));
	int64_t now = clock_mono_us();
	size_t writes = 0;
	if (!p) {
		for (size_t i = 0; i < n; i++)
			v[i]->flushed_us = now; /* tried again at the next flush */
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (pending_take(b, v[i], &p[i]) && p[i].rc == 0)
			writes++;
	if (writes)
		be_worker_quiesce(b->worker);
	for (size_t i = 0; i < n && writes;) {
		/* one batch: up to BATCH_BYTES, at least one write */
		size_t first = i, bytes = 0;
		int rc = store_batch_begin(b->env.store);
		for (; i < n && rc == 0; i++) {
			if (!p[i].len || p[i].rc != 0)
				continue;
			if (i > first && bytes + p[i].nsect * SECTOR > BATCH_BYTES)
				break;
			struct store_segment seg = {v[i]->base_sector, (uint32_t)p[i].nsect, p[i].buf};
			rc = store_write(v[i]->sdev, &seg, 1);
			bytes += p[i].nsect * SECTOR;
		}
		if (rc == 0)
			rc = store_batch_commit(b->env.store);
		else if (store_in_batch(b->env.store))
			store_batch_abort(b->env.store);
		for (size_t k = first; k < i && rc != 0; k++)
			if (p[k].len && p[k].rc == 0)
				p[k].rc = -1; /* a batch is all or nothing */
		if (rc != 0)
			for (; i < n; i++) /* the store failed: not the rest either */
				if (p[i].len && p[i].rc == 0)
					p[i].rc = -1;
	}
	for (size_t i = 0; i < n; i++)
		if (p[i].len)
			pending_done(b, v[i], &p[i], now);
		else
			v[i]->flushed_us = now;
	free(p);
}

static void flush(struct be_backend *b, struct sampled *s)
{
	flush_set(b, &s, 1);
}

/* Every sampling domain's queue, once one of them is due. */
static void flush_due(struct be_backend *b, int64_t now)
{
	size_t n = 0, due = 0;
	for (struct sampled *s = b->sampling->all; s; s = s->next)
		if (s->sampler && s->run) {
			n++;
			due |= now - s->flushed_us >= SAMPLING_FLUSH_MS * 1000;
		}
	if (!due)
		return;
	struct sampled **v = malloc(n * sizeof(*v));
	if (!v)
		return; /* tried again on the loop's next round */
	n = 0;
	for (struct sampled *s = b->sampling->all; s; s = s->next)
		if (s->sampler && s->run)
			v[n++] = s;
	flush_set(b, v, n);
	free(v);
}

/* The sampler is ready: its run and device (2 in store_failed when they
 * cannot be had: the sampling stops). */
static void attach(struct be_backend *b, struct sampled *s, const struct be_sampler_stats *st)
{
	char err[512];
	if (attach_store(b, s, err, sizeof(err)) != 0) {
		be_blog_at(LOG_ERR, "domid=%u: %s", s->domid, err);
		snprintf(s->summary, sizeof(s->summary), "error: %.900s\n", err);
		s->store_failed = 2;
		return;
	}
	char ksyms[64] = "";
	if (st->kernel_symbols)
		snprintf(ksyms, sizeof(ksyms), ", %zu kernel symbols", st->kernel_symbols);
	be_blog_at(LOG_NOTICE, "domid=%u run=%lld: sampling at %u Hz%s%s%s", s->domid, (long long)s->run->run_id, s->hz,
	        st->symbols[0] ? ", symbols " : " (no symbols: addresses only)", st->symbols, ksyms);
	if (st->note[0])
		be_blog_at(LOG_WARNING, "domid=%u run=%lld: %s", s->domid, (long long)s->run->run_id, st->note);
}

/* The sampler finished: the rest stored, the device handed back. */
static void finish(struct be_backend *b, struct sampled *s)
{
	struct be_sampler_stats st;
	be_sampler_stop(s->sampler, &st);
	s->sampler = NULL;
	s->done = 1;
	pause_add(&b->sampling->ended, &st);
	s->done_us = clock_mono_us();
	if (!s->run) {
		/* It never got ready: the domain could not be looked into. */
		if (!s->summary[0])
			snprintf(s->summary, sizeof(s->summary), "error: %.900s\n", st.why);
		be_blog_at(s->unattended ? LOG_WARNING : LOG_INFO, "domid=%u: not sampled: %s", s->domid, st.why);
		return;
	}
	flush(b, s);
	int domain_dead = strstr(st.why, "domain ended") != NULL;
	snprintf(s->summary, sizeof(s->summary),
	         "domain %u, run %lld: %llu samples in %llu ticks (%llu lost), %llu bytes, %u Hz at the end; pause p50 "
	         "%llu us, p99 %llu us, max %llu us; %s\n",
	         s->domid, (long long)s->run->run_id, (unsigned long long)st.samples,
	         (unsigned long long)st.ticks, (unsigned long long)st.lost, (unsigned long long)s->stored, st.hz_now,
	         (unsigned long long)st.pause_us_p50, (unsigned long long)st.pause_us_p99,
	         (unsigned long long)st.pause_us_max, st.why);
	be_blog_at(LOG_NOTICE, "domid=%u run=%lld: sampling ended: %.*s", s->domid, (long long)s->run->run_id,
	        (int)strlen(s->summary) - 1, s->summary);
	store_device_release(s->sdev);
	s->sdev = NULL;
	struct be_run *r = s->run;
	s->run = NULL;
	be_run_device_gone(b->runs, r, domain_dead);
}

int be_sampling_poll(struct be_backend *b)
{
	int64_t now = clock_mono_us();
	int wait = -1;
	for (struct sampled **pp = &b->sampling->all; *pp;) {
		struct sampled *s = *pp;
		if (s->sampler) {
			/* every round of the loop, for every domain: the flags
			 * only (invariant 5) */
			unsigned state = be_sampler_state(s->sampler);
			if ((state & SAMPLER_READY) && !s->run && !(state & SAMPLER_FAILED)) {
				struct be_sampler_stats st;
				be_sampler_get_stats(s->sampler, &st);
				attach(b, s, &st);
			}
			if ((state & SAMPLER_FINISHED) || s->abandoned || s->store_failed == 2)
				finish(b, s);
		}
		if (s->done && (s->abandoned || s->unattended || now - s->done_us > 10000000)) {
			*pp = s->next;
			free_sampled(s);
			continue;
		}
		/* A finished one's summary is taken by its asker on the loop's
		 * next round (be_control_expire): come round soon. */
		int w = s->done ? 20 : SAMPLING_FLUSH_MS;
		wait = wait < 0 || w < wait ? w : wait;
		pp = &s->next;
	}
	flush_due(b, now);
	return wait;
}

void be_sampling_run_closed(struct be_backend *b, struct be_run *r)
{
	for (struct sampled *s = b->sampling->all; s; s = s->next)
		if (s->run == r && !s->abandoned)
			s->abandoned = 1;
	be_sampling_poll(b);
}

void be_sampling_stop(struct be_backend *b, uint32_t domid)
{
	for (struct sampled *s = b->sampling->all; s; s = s->next)
		if (s->domid == domid && !s->abandoned) {
			s->abandoned = 1;
			break;
		}
	be_sampling_poll(b);
}

int be_sampling_result(struct be_sampling *sp, uint32_t domid, char *line, size_t len)
{
	struct sampled *s = find(sp, domid);
	if (!s)
		return -1;
	if (!s->done)
		return 0;
	snprintf(line, len, "%s", s->summary);
	s->abandoned = 1; /* told: freed at the next poll */
	return 1;
}

void be_sampling_shutdown(struct be_backend *b)
{
	for (struct sampled *s = b->sampling->all; s; s = s->next)
		s->abandoned = 1;
	be_sampling_poll(b);
}

void be_sampling_status(const struct be_sampling *sp, FILE *f)
{
	int n = 0;
	for (struct sampled *s = sp->all; s; s = s->next) {
		if (s->done || !s->sampler)
			continue;
		struct be_sampler_stats st;
		be_sampler_get_stats(s->sampler, &st);
		if (!n++)
			fprintf(f, "\n%-6s %-6s %6s %10s %8s %12s %10s\n", "DOMID", "RUN", "HZ", "SAMPLES", "LOST",
			        "BYTES", "PAUSE p99");
		fprintf(f, "%-6u %-6lld %6u %10llu %8llu %12llu %8llu us\n", s->domid,
		        s->run ? (long long)s->run->run_id : -1LL, st.hz_now, (unsigned long long)st.samples,
		        (unsigned long long)st.lost, (unsigned long long)s->stored,
		        (unsigned long long)st.pause_us_p99);
	}
}

/* The sampler's cost and yield as Prometheus families (daemon/metrics.c):
 * per domain sampled now, its samples, those lost, and its pause p99;
 * and every pause since the daemon started (finished samplers' and live
 * ones') as one histogram, which sums over domains and time as a p99
 * cannot. */
void be_sampling_metrics(const struct be_sampling *sp, FILE *f)
{
	static const char *const fams[][3] = {
		{"profsvc_backend_samples_total", "counter", "Stack samples taken of a domain."},
		{"profsvc_backend_samples_lost_total", "counter", "Ticks of a domain's sampler that gave no sample."},
		{"profsvc_backend_sample_pause_p99_seconds", "gauge",
		 "The 99th percentile of how long a domain was paused per sample (the last 1024 pauses)."},
	};
	struct pause_total all_pauses = sp->ended;
	for (int k = 0; k < 3; k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fams[k][0], fams[k][2], fams[k][0], fams[k][1]);
		for (struct sampled *s = sp->all; s; s = s->next) {
			if (s->done || !s->sampler)
				continue;
			struct be_sampler_stats st;
			be_sampler_get_stats(s->sampler, &st);
			if (k == 0)
				pause_add(&all_pauses, &st);
			fprintf(f, "%s{domid=\"%u\",run=\"%lld\"} ", fams[k][0], s->domid,
			        s->run ? (long long)s->run->run_id : -1LL);
			if (k == 2)
				fprintf(f, "%.6f\n", (double)st.pause_us_p99 / 1e6);
			else
				fprintf(f, "%llu\n", (unsigned long long)(k == 0 ? st.samples : st.lost));
		}
	}
	fprintf(f, "# HELP profsvc_backend_sample_pause_seconds How long a domain was paused per sample, every "
	           "sampler since the backend started.\n# TYPE profsvc_backend_sample_pause_seconds histogram\n");
	uint64_t le = 0;
	for (int i = 0; i < SAMPLER_PAUSE_BUCKETS; i++) {
		le += all_pauses.in[i];
		fprintf(f, "profsvc_backend_sample_pause_seconds_bucket{le=\"%g\"} %llu\n",
		        (double)be_sampler_pause_le_us[i] / 1e6, (unsigned long long)le);
	}
	fprintf(f, "profsvc_backend_sample_pause_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)all_pauses.n);
	fprintf(f, "profsvc_backend_sample_pause_seconds_sum %.6f\n", (double)all_pauses.sum_us / 1e6);
	fprintf(f, "profsvc_backend_sample_pause_seconds_count %llu\n", (unsigned long long)all_pauses.n);
}

/* ---- --sample-hz: every domain from its start --------------------------------------- */

static int seen_before(struct be_sampling *sp, uint32_t domid)
{
	for (size_t i = 0; i < sp->nseen; i++)
		if (sp->seen[i] == domid)
			return 1;
	if (sp->nseen < sizeof(sp->seen) / sizeof(sp->seen[0]))
		sp->seen[sp->nseen++] = domid;
	return 0;
}

void be_sampling_new_domains(struct be_backend *b)
{
	if (!b->env.opt.start_sample_hz)
		return;
	unsigned n = 0;
	char **ids = xs_directory(b->env.xs, XBT_NULL, "/local/domain", &n);
	for (unsigned i = 0; ids && i < n; i++) {
		char *end, err[512];
		unsigned long v = strtoul(ids[i], &end, 10);
		if (*end || v == 0 || v >= 32752 || seen_before(b->sampling, (uint32_t)v))
			continue;
		struct be_sampling_request rq = {ids[i], b->env.opt.start_sample_hz, 0, NULL, b->env.opt.kernel_symbols};
		uint32_t domid;
		if (be_sampling_start(b, &rq, &domid, err, sizeof(err)) != 0) {
			be_blog_at(LOG_WARNING, "domid=%lu: not sampled (--sample-hz): %s", v, err);
			continue;
		}
		b->sampling->all->unattended = 1; /* be_sampling_start put it first */
	}
	free(ids);
}

void be_sampling_domains_changed(struct be_backend *b)
{
	struct be_sampling *sp = b->sampling;
	unsigned n = 0;
	char **ids = xs_directory(b->env.xs, XBT_NULL, KERNEL_ROOT, &n);
	for (unsigned i = 0; ids && i < n; i++) {
		char *end, node[128];
		unsigned long v = strtoul(ids[i], &end, 10);
		if (*end || v >= 32752 || be_domain_alive(b->domains, (uint32_t)v))
			continue;
		snprintf(node, sizeof(node), KERNEL_ROOT "/%lu", v);
		xs_rm(b->env.xs, XBT_NULL, node); /* a later domain may have its domid */
		for (size_t k = 0; k < sp->nseen; k++)
			if (sp->seen[k] == v)
				sp->seen[k] = sp->seen[--sp->nseen];
	}
	free(ids);
}
