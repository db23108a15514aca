/*
 * io.c - the data path's batch.  One batch per loop turn, across every
 * device with work:
 *   1. take requests (at most REQUESTS_PER_TURN per device, BATCH_BYTES_MAX
 *      of data in all), each copied out of the ring once and validated;
 *   2. fetch indirect segment pages, check every segment and sector range,
 *      and the run's and the store's limits;
 *   3. grant-copy the data of every write in one call per domain;
 *   4. one store transaction: writes, reads, discards, in ring order;
 *   5. commit (and sync for a FLUSH), then copy read data to the guests;
 *   6. answer every request (OKAY only if its transaction committed), push
 *      the responses, one notification per device.
 * A failed grant copy, a bad request or a failed commit is an error
 * response, never a crash, and never an OKAY for data not stored.  A ring
 * whose producer index is bogus is not served and is reported to the
 * state machine (d->ring_broken; be_xenbus_fail_broken), as Linux's blkback
 * returns an error to its caller.  Where steps 4-5 run: io_worker.c; what
 * stands in for the store in benchmarks: sink.c.
 *
 * Owns struct be_io: the FIFO of devices with requests to take, the
 * batches' counts and commit times, what --max-store-bytes last read of
 * the store, the failed commits' log suppression and the fault injection.
 * It reads struct be_env and the devices and runs it serves; the device
 * list is the state machine's (control/), never changed here.
 *
 * May call: batch.c, sink.c, journal.c, raw_mirror.c, storm.c, blkif/,
 * quota.c, log.c, common/ (state.h), util/clock, util/grow, the store and the
 * platform (grant copies, notifications); io_worker.c, the state machine
 * (be_io_schedule) and the daemon call it.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/common/log.h"
#include "backend/common/quota.h"
#include "io.h"
#include "journal.h"
#include "raw_mirror.h"
#include "sink.h"
#include "storm.h"
#include "util/clock.h"
#include "util/grow.h"

/* The batch's state: what the loop's thread keeps between batches. */
struct be_io {
	const struct be_env *env;
	struct be_device *work, *work_tail; /* devices with requests to take (FIFO) */
	uint64_t batches, commits_failed;
	/* How long batches took in the store, begin to commit (and sync):
	 * counts at or under each of be_io_commit_buckets_us (cumulative, as
	 * Prometheus has them), all of them, and their sum. */
	uint64_t commit_le[BE_IO_COMMIT_BUCKETS], commit_count, commit_sum_us;
	/* --max-store-bytes: store_disk_usage(), read every 100 ms, and what
	 * was admitted since (store_over_limit) */
	int64_t store_usage;
	int64_t store_usage_at_us;
	int store_full_logged;
	int store_full;              /* a write was refused over it: space asked back */
	/* the committing thread's (one at a time): log_store_failure */
	char failed_last[256];
	int64_t failed_last_us;
	unsigned failed_suppressed;
	/* Fault injection for tests: PROFSVC_FAULT_KILL_BEFORE_PUSH=N dies
	 * like a SIGKILL after writing the Nth batch's responses, before
	 * publishing them (the window journal.c exists for); -1: never. */
	long kill_before_push;
};

struct be_io *be_io_new(const struct be_env *env)
{
	struct be_io *io = calloc(1, sizeof(*io));
	if (!io)
		return NULL;
	io->env = env;
	io->kill_before_push = -1;
	const char *fault = getenv("PROFSVC_FAULT_KILL_BEFORE_PUSH");
	if (fault && *fault)
		io->kill_before_push = strtol(fault, NULL, 10);
	return io;
}

void be_io_free(struct be_io *io)
{
	free(io);
}

int be_io_has_work(const struct be_io *io)
{
	return io->work != NULL;
}

uint64_t be_io_batches(const struct be_io *io)
{
	return io->batches;
}

void be_io_stats(const struct be_io *io, struct be_io_stats *out)
{
	out->batches = io->batches;
	out->commits_failed = io->commits_failed;
	memcpy(out->commit_le, io->commit_le, sizeof(out->commit_le));
	out->commit_count = io->commit_count;
	out->commit_sum_us = io->commit_sum_us;
}

int be_io_take_store_full(struct be_io *io)
{
	int full = io->store_full;
	io->store_full = 0;
	return full;
}

void be_io_usage_stale(struct be_io *io)
{
	io->store_usage_at_us = 0;
}

static int64_t now_us(void)
{
	return store_now_us();
}

/* Devices with requests to take wait in a FIFO: a device served goes to
 * the back if it has more, behind every device that waited.  (A LIFO let
 * the guests just answered, which notify again first, starve the rest: a
 * 64-guest fleet saw some guests' p99 at 30 times the median.) */
void be_io_schedule(struct be_device *d)
{
	struct be_io *io = d->io;

	if (d->work != WORK_IDLE || !d->connected)
		return;
	d->work = WORK_QUEUED;
	d->next_work = NULL;
	if (io->work_tail)
		io->work_tail->next_work = d;
	else
		io->work = d;
	io->work_tail = d;
}

/* Back at the head of the FIFO: the rest of a turn a full batch cut short. */
static void io_schedule_first(struct be_device *d)
{
	struct be_io *io = d->io;

	d->work = WORK_QUEUED;
	d->next_work = io->work;
	io->work = d;
	if (!io->work_tail)
		io->work_tail = d;
}

void be_io_unschedule(struct be_device *d)
{
	struct be_io *io = d->io;
	struct be_device *prev = NULL;

	for (struct be_device *w = io->work; w; prev = w, w = w->next_work)
		if (w == d) {
			if (prev)
				prev->next_work = d->next_work;
			else
				io->work = d->next_work;
			if (io->work_tail == d)
				io->work_tail = prev;
			break;
		}
	d->work = WORK_IDLE;
}

static struct be_device *next_scheduled(struct be_io *io)
{
	struct be_device *d = io->work;

	if (d) {
		io->work = d->next_work;
		if (!io->work)
			io->work_tail = NULL;
		d->work = WORK_IDLE;
	}
	return d;
}

/* Grant copy with a per-segment map fallback for platforms without copy. */
static void copy_segments(struct be_io *io, uint32_t domid, int to_guest,
                          struct plat_copy_seg *segs, uint32_t n)
{
	if (n == 0)
		return;
	if (plat_gnttab_copy(io->env->gnt, domid, to_guest, segs, n) == 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *page = plat_gnttab_map(io->env->gnt, domid, &segs[i].ref, 1, to_guest);
		if (!page) {
			segs[i].status = -1;
			continue;
		}
		if (to_guest)
			memcpy(page + segs[i].offset, segs[i].local, segs[i].len);
		else
			memcpy(segs[i].local, page + segs[i].offset, segs[i].len);
		plat_gnttab_unmap(io->env->gnt, page, 1);
		segs[i].status = 0;
	}
}

/* Step 1: take and pre-validate requests of one device. */
static unsigned take_requests(struct be_device *d, struct be_pending_req **items, unsigned *n, unsigned *cap,
                              uint64_t *bytes, int *cut)
{
	unsigned taken = 0;
	int avail = be_ring_pending_requests(&d->ring);

	if (avail < 0) {
		d->ring_broken = 1; /* the state machine disconnects it (be_xenbus_fail_broken) */
		return 0;
	}
	while (avail > 0 && d->turn_taken + taken < REQUESTS_PER_TURN && *bytes < BATCH_BYTES_MAX) {
		/* (the capacity stays as it was if this fails: it once
		 * doubled first, and the next turn wrote past the array) */
		size_t c = *cap;
		if (GROW_FROM(*items, c, (size_t)*n + 1, 64) != 0)
			break;
		*cap = (unsigned)c; /* at most a turn's requests of every device */
		struct be_pending_req *it = &(*items)[(*n)++];
		const char *why = NULL;
		memset(it, 0, sizeof(*it));
		it->d = d;
		it->pending = 1;
		be_blkif_copy_request(d->ring.abi, be_ring_take_request(&d->ring), &it->req);
		avail--;
		taken++;

		int rc = be_blkif_validate(&it->req, d->capacity, BLKIF_BACK_MAX_INDIRECT_SEGMENTS, &why);
		if (rc) {
			be_batch_fail(it, (int16_t)rc, why);
			continue;
		}
		switch (it->req.operation) {
		case BLKIF_OP_DISCARD:
			it->kind = K_DISCARD;
			continue;
		case BLKIF_OP_FLUSH_DISKCACHE:
			it->kind = it->req.nr_segments ? K_WRITE : K_FLUSH;
			break;
		default:
			it->kind = it->req.rw_op == BLKIF_OP_WRITE ? K_WRITE : K_READ;
			break;
		}
		if (it->kind == K_FLUSH)
			continue;
		it->nsegs = it->req.nr_segments;
		*bytes += (uint64_t)it->nsegs * 4096;
	}
	/* Unanswered requests left: come back next turn, no event needed. */
	if (avail > 0)
		d->work = WORK_MORE;
	/* Cut short by the batch's size, not by its own share of the turn:
	 * the rest of its turn comes first in the next batch (be_io_prepare),
	 * and counts against the same share, so that no device keeps the
	 * head of the queue. */
	*cut = avail > 0 && d->turn_taken + taken < REQUESTS_PER_TURN && *bytes >= BATCH_BYTES_MAX;
	d->turn_taken = *cut ? d->turn_taken + taken : 0;
	return taken;
}

/* Step 2a: indirect pages, fetched once into our memory. */
static void fetch_indirect(struct be_io *io, struct be_pending_req *items, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct be_pending_req *it = &items[i];
		if (!it->pending || it->req.operation != BLKIF_OP_INDIRECT)
			continue;
		unsigned pages = (it->nsegs + BLKIF_SEGS_PER_INDIRECT_PAGE - 1) / BLKIF_SEGS_PER_INDIRECT_PAGE;
		struct plat_copy_seg cs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
		it->ind_pages = malloc((size_t)pages * 4096);
		it->ind_segs = malloc(it->nsegs * sizeof(*it->ind_segs));
		if (!it->ind_pages || !it->ind_segs) {
			be_batch_fail(it, BLKIF_RSP_ERROR, "out of memory");
			continue;
		}
		for (unsigned p = 0; p < pages; p++)
			cs[p] = (struct plat_copy_seg){it->req.indirect_grefs[p], 0, 4096,
			                               it->ind_pages + (size_t)p * 4096, 0};
		copy_segments(io, it->d->domid, 0, cs, pages);
		int ok = 1;
		for (unsigned p = 0; p < pages; p++)
			ok &= cs[p].status == 0;
		if (!ok) {
			be_batch_fail(it, BLKIF_RSP_ERROR, "indirect page grant copy failed");
			continue;
		}
		be_blkif_load_indirect(it->ind_pages, it->nsegs, it->ind_segs);
	}
}

/* --max-store-bytes: would this write take the store past it?  The
 * usage is the store's files as allocated, the data file's freed slots
 * included (store_disk_usage), read at most every 100 ms (a few stat
 * calls), and what is admitted meanwhile is added to it.
 *
 * Writes to new places fail as on a full disk once they would take the
 * store past the limit.  A rewrite of what a run holds costs space too:
 * whole chunks go to new slots of the data file, and the old ones come
 * back only once no reader can see them.  Counted as free, a guest
 * rewriting 8 MiB under a 64 MiB limit took the store to 309 MiB.  So a
 * rewrite of whole chunks is charged its chunks, and may take the store
 * past the limit by a margin (an eighth of it, at least 4 MiB), so that a
 * guest at its limit can still rewrite what it holds while the slots its
 * last rewrites freed wait for readers; past the margin it fails like a
 * write to a new place, and the space freed is asked back at once
 * (daemon.c), which lets the next one through unless a reader holds it.
 * Partial rewrites stay in the database, in place: free, as before. */
#define REWRITE_MARGIN_MIN ((uint64_t)4 << 20)

static uint64_t rewrite_cost(const struct be_pending_req *it, uint64_t fresh)
{
	uint64_t first = (it->req.sector + STORE_CHUNK_SECTORS - 1) / STORE_CHUNK_SECTORS;
	uint64_t end = (it->req.sector + it->nsect) / STORE_CHUNK_SECTORS; /* whole chunks [first, end) */
	uint64_t whole = end > first ? (end - first) * STORE_CHUNK_BYTES : 0;
	return whole > fresh ? whole - fresh : 0;
}

static int store_over_limit(struct be_io *io, const struct be_pending_req *it)
{
	uint64_t fresh = be_quota_fresh(&it->d->run->chunks, it->d->devid, it->req.sector, it->nsect);
	uint64_t rewrite = rewrite_cost(it, fresh);
	if (!fresh && !rewrite)
		return 0;
	int64_t now = now_us();
	if (now - io->store_usage_at_us > 100000) {
		io->store_usage = store_disk_usage(io->env->store);
		io->store_usage_at_us = now;
	}
	uint64_t limit = io->env->opt.max_store_bytes, margin = limit / 8;
	if (margin < REWRITE_MARGIN_MIN)
		margin = REWRITE_MARGIN_MIN;
	uint64_t used = io->store_usage < 0 ? 0 : (uint64_t)io->store_usage;
	int fits = fresh ? used + fresh + rewrite <= limit : used + rewrite <= limit + margin;
	if (io->store_usage < 0 || fits) {
		/* Counted until the next reading: many writes fit in 100 ms. */
		if (io->store_usage >= 0)
			io->store_usage += (int64_t)(fresh + rewrite);
		io->store_full_logged = 0;
		return 0;
	}
	io->store_full = 1;
	if (!io->store_full_logged) {
		if (fresh)
			be_blog_at(LOG_WARNING, "store %s holds %lld bytes, at --max-store-bytes (%llu): writes to new places fail "
			     "until runs are deleted or the limit is raised",
			     store_path(io->env->store), (long long)io->store_usage, (unsigned long long)limit);
		else
			be_blog_at(LOG_WARNING, "store %s holds %lld bytes, at --max-store-bytes (%llu) and its margin for "
			     "rewrites (%llu): rewrites fail until the space earlier rewrites freed is given back (a "
			     "reader may still see it) or the limit is raised",
			     store_path(io->env->store), (long long)io->store_usage, (unsigned long long)limit,
			     (unsigned long long)margin);
		io->store_full_logged = 1;
	}
	return 1;
}

/* Step 2b: segments, ranges, limits, buffers. */
static void check_items(struct be_io *io, struct be_pending_req *items, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct be_pending_req *it = &items[i];
		const char *why;
		if (!it->pending || (it->kind != K_READ && it->kind != K_WRITE))
			continue;
		if (be_blkif_check_segments(be_item_segs(it), it->nsegs, it->req.sector, it->d->capacity, &it->nsect,
		                         &why) != 0) {
			be_batch_fail(it, BLKIF_RSP_ERROR, why);
			continue;
		}
		struct be_run *r = it->d->run;
		if (it->kind == K_WRITE && r && io->env->opt.max_store_bytes && store_over_limit(io, it)) {
			be_batch_fail(it, BLKIF_RSP_ERROR, "store over --max-store-bytes");
			continue;
		}
		/* What the store will hold counts, charged here and given back
		 * by finish() if the write fails. */
		if (it->kind == K_WRITE && r &&
		    be_quota_admit(&r->chunks, it->d->devid, it->req.sector, it->nsect, io->env->opt.max_run_bytes,
		                &it->charged) != 0) {
			if (!r->over_limit_logged) {
				be_dlog_at(LOG_WARNING, it->d, "run reached --max-run-bytes (%llu bytes of store space); further "
				            "writes to new places fail",
				     (unsigned long long)io->env->opt.max_run_bytes);
				r->over_limit_logged = 1;
			}
			be_batch_fail(it, BLKIF_RSP_ERROR, "run over --max-run-bytes");
			continue;
		}
		/* Page-aligned: the raw-direct sink hands it to O_DIRECT. */
		if (posix_memalign((void **)&it->data, 4096, it->nsect * 512) != 0)
			it->data = NULL;
		if (!it->data)
			be_batch_fail(it, BLKIF_RSP_ERROR, "out of memory");
	}
}

/* Steps 3 and 5: grant copy of all data of one direction, one call per
 * domain. */
enum direction { FROM_GUEST, TO_GUEST };

static void transfer(struct be_io *io, struct be_pending_req *items, unsigned n, enum direction dir)
{
	int to_guest = dir == TO_GUEST;
	uint8_t kind = to_guest ? K_READ : K_WRITE;
	size_t total = 0, ndoms = 0;

	for (unsigned i = 0; i < n; i++)
		if (items[i].pending && items[i].kind == kind)
			total += items[i].nsegs;
	if (total == 0)
		return;
	struct plat_copy_seg *cs = malloc(total * sizeof(*cs));
	unsigned *owner = malloc(total * sizeof(*owner));
	uint32_t *doms = malloc(n * sizeof(*doms));
	if (!cs || !owner || !doms) {
		for (unsigned i = 0; i < n; i++)
			if (items[i].pending && items[i].kind == kind)
				be_batch_fail(&items[i], BLKIF_RSP_ERROR, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!items[i].pending || items[i].kind != kind)
			continue;
		size_t k = 0;
		while (k < ndoms && doms[k] != items[i].d->domid)
			k++;
		if (k == ndoms)
			doms[ndoms++] = items[i].d->domid;
	}
	for (size_t k = 0; k < ndoms; k++) {
		size_t m = 0;
		for (unsigned i = 0; i < n; i++) {
			struct be_pending_req *it = &items[i];
			if (!it->pending || it->kind != kind || it->d->domid != doms[k])
				continue;
			size_t pos = 0;
			const struct be_blk_seg *sg = be_item_segs(it);
			for (unsigned s = 0; s < it->nsegs; s++) {
				uint16_t len = (uint16_t)((sg[s].last_sect - sg[s].first_sect + 1) * 512);
				cs[m] = (struct plat_copy_seg){sg[s].gref, (uint16_t)(sg[s].first_sect * 512), len,
				                               it->data + pos, 0};
				owner[m++] = i;
				pos += len;
			}
		}
		copy_segments(io, doms[k], to_guest, cs, (uint32_t)m);
		for (size_t j = 0; j < m; j++)
			if (cs[j].status != 0 && items[owner[j]].pending)
				be_batch_fail(&items[owner[j]], BLKIF_RSP_ERROR,
				     to_guest ? "grant copy to the guest failed" : "grant copy from the guest failed");
	}
out:
	free(cs);
	free(owner);
	free(doms);
}

/* Step 4: the store.  Returns -1 if the batch must be failed whole. */
static int apply(struct be_io *io, struct be_pending_req *items, unsigned n, int *need_sync)
{
	for (unsigned i = 0; i < n; i++) {
		struct be_pending_req *it = &items[i];
		int rc = 0;
		if (!it->pending)
			continue;
		switch (it->kind) {
		case K_WRITE: {
			/* The writes right after it to the sectors right after it go
			 * with it: chunks they cover whole between them take the
			 * store's bulk path (a Linux guest's 44 KiB requests). */
			struct store_segment seg[REQUESTS_PER_TURN];
			unsigned k = 0, j = i;
			do {
				seg[k++] = (struct store_segment){items[j].req.sector, (uint32_t)items[j].nsect,
				                                  items[j].data};
				j++;
			} while (j < n && k < REQUESTS_PER_TURN && it->req.operation != BLKIF_OP_FLUSH_DISKCACHE &&
			         items[j].pending && items[j].d == it->d && items[j].kind == K_WRITE &&
			         items[j].req.operation != BLKIF_OP_FLUSH_DISKCACHE &&
			         items[j].req.sector == items[j - 1].req.sector + items[j - 1].nsect);
			rc = store_write_many(it->d->sdev, seg, k);
			if (rc == STORE_EINVAL || rc == STORE_ENOTFOUND)
				for (unsigned m = i + 1; m < j; m++) {
					be_batch_fail(&items[m], BLKIF_RSP_ERROR, store_errmsg(io->env->store));
					items[m].run_gone = rc == STORE_ENOTFOUND;
				}
			if (it->req.operation == BLKIF_OP_FLUSH_DISKCACHE) {
				store_note_flush(it->d->sdev);
				*need_sync = 1;
			}
			i = j - 1;
			break;
		}
		case K_READ:
			rc = store_read(it->d->sdev, it->req.sector, (uint32_t)it->nsect, it->data);
			break;
		case K_DISCARD:
			rc = store_discard(it->d->sdev, it->req.sector, it->req.nr_sectors);
			break;
		case K_FLUSH:
			store_note_flush(it->d->sdev);
			*need_sync = 1;
			break;
		}
		if (rc == STORE_EINVAL || rc == STORE_ENOTFOUND) {
			/* a bad range, or a device whose run was deleted: this
			 * request fails, the rest of the batch goes on (and a
			 * deleted run's devices are closed: be_xenbus_fail_broken) */
			be_batch_fail(it, BLKIF_RSP_ERROR, store_errmsg(io->env->store));
			it->run_gone = rc == STORE_ENOTFOUND;
		} else if (rc) {
			be_blog_at(LOG_ERR, "store: %s", store_errmsg(io->env->store));
			return -1;
		}
	}
	return 0;
}

static void respond(struct be_io *io, struct be_pending_req *items, unsigned n)
{
	uint64_t *ids = malloc(n * sizeof(*ids));
	uint8_t *ops = malloc(n);
	int16_t *st = malloc(n * sizeof(*st));

	/* Per device, in ring order: journal, write, publish, notify.  A
	 * device's items are consecutive (prepare takes each device once). */
	for (unsigned i = 0, end; i < n; i = end) {
		struct be_device *d = items[i].d;
		for (end = i + 1; end < n && items[end].d == d; end++)
			;
		if (!d->connected)
			continue;
		uint32_t m = 0;
		for (unsigned k = i; k < end && ids; k++) {
			ids[m] = items[k].req.id;
			ops[m] = items[k].req.operation;
			st[m++] = items[k].status;
		}
		if (ids && ops && st)
			be_journal_begin(d, d->ring.rsp_prod_pvt, m, ids, ops, st);
		for (unsigned k = i; k < end; k++)
			be_blkif_write_response(d->ring.abi, be_ring_next_response(&d->ring), items[k].req.id,
			                     items[k].req.operation, items[k].status);
		if (io->kill_before_push > 0 && --io->kill_before_push == 0)
			raise(SIGKILL);
		if (be_ring_push_responses(&d->ring))
			plat_evtchn_notify(io->env->evt, d->local_port);
		be_journal_end(d);
	}
	free(ids);
	free(ops);
	free(st);
}

/* Counts failed requests against their devices in the store (the worker's
 * store, or the loop's while the worker is idle). */
static void note_errors(struct be_batch *bt)
{
	for (unsigned i = 0; i < bt->n; i++) {
		struct be_pending_req *it = &bt->items[i];
		if (it->status != BLKIF_RSP_OKAY && !it->pending && !it->noted && it->d->sdev) {
			store_note_error(it->d->sdev);
			it->noted = 1;
		}
	}
}

/* Steps 1-3, on the loop's thread: take, check, copy in. */
struct be_batch *be_io_prepare(struct be_io *io)
{
	struct be_batch *bt = calloc(1, sizeof(*bt));
	struct be_device *again = NULL, *again_tail = NULL, *d;
	uint64_t bytes = 0;

	if (!bt)
		return NULL;
	/* Devices are taken in order until the batch is full; those not
	 * reached keep their place at the front for the next one, and so
	 * does the one the batch's size cut short, ahead of them: sent to
	 * the back, the rest of its requests waited a whole round of every
	 * other device (a fleet's guests saw twice their median at p99). */
	while (bytes < BATCH_BYTES_MAX && (d = next_scheduled(io))) {
		if (!d->connected)
			continue;
		unsigned before = bt->n;
		int cut = 0;
		take_requests(d, &bt->items, &bt->n, &bt->cap, &bytes, &cut);
		if (cut) {
			io_schedule_first(d);
			continue;
		}
		/* Looked and found nothing: tell the frontend to notify us for
		 * its next request (req_event), and catch one that slipped in.
		 * Without this a ring whose requests an earlier batch took (or a
		 * restart answered from the journal) waits for a wake-up that the
		 * guest's notify-if-needed check never sends. */
		if (bt->n == before && d->connected && d->work != WORK_MORE && be_ring_final_check(&d->ring))
			d->work = WORK_MORE;
		if (bt->n == before && d->port_masked)
			be_storm_empty_wakeup(d); /* woken with nothing to do (XSA-332) */
		if (d->work == WORK_MORE) {
			d->work = WORK_IDLE;
			d->next_work = NULL;
			if (again_tail)
				again_tail->next_work = d;
			else
				again = d;
			again_tail = d;
		}
	}
	for (struct be_device *next; again; again = next) {
		next = again->next_work;
		be_io_schedule(again);
	}
	if (bt->n == 0) {
		free(bt->items);
		free(bt);
		return NULL;
	}
	fetch_indirect(io, bt->items, bt->n);
	check_items(io, bt->items, bt->n);
	transfer(io, bt->items, bt->n, FROM_GUEST);
	return bt;
}

/*
 * A store that keeps failing (disk full, the database replaced) fails
 * every batch: log the first failure, each new kind of failure, and then
 * at most one line per 10 s with the count in between, not one line per
 * guest request.  Runs on whichever thread commits; one at a time.
 */
static void log_store_failure(struct be_io *io, const char *what)
{
	const char *msg = store_errmsg(io->env->store);
	int64_t now = store_now_us();

	if (strcmp(io->failed_last, msg) == 0 && now - io->failed_last_us < 10 * 1000000) {
		io->failed_suppressed++;
		return;
	}
	if (io->failed_suppressed)
		be_blog_at(LOG_ERR, "store %s failed: %s (and %u more batches since)", what, msg, io->failed_suppressed);
	else
		be_blog_at(LOG_ERR, "store %s failed: %s", what, msg);
	snprintf(io->failed_last, sizeof(io->failed_last), "%s", msg);
	io->failed_last_us = now;
	io->failed_suppressed = 0;
}

static int only_reads(const struct be_batch *bt)
{
	for (unsigned i = 0; i < bt->n; i++)
		if (bt->items[i].pending && bt->items[i].kind != K_READ)
			return 0;
	return 1;
}

/* Steps 4-5, on the worker: the store. */
void be_io_commit(struct be_io *io, struct be_batch *bt)
{
	if (io->env->opt.sink != SINK_STORE) {
		be_sink_batch(io->env->opt.sink, bt);
		return;
	}
	int64_t t0 = clock_mono_us();
	int failed = store_batch_begin(io->env->store) != 0;

	if (!failed) {
		failed = apply(io, bt->items, bt->n, &bt->need_sync) != 0;
		if (failed) {
			log_store_failure(io, "write");
			store_batch_abort(io->env->store);
		} else {
			/* The requests refused so far are counted inside the batch:
			 * counted after it, a device whose every request is refused
			 * (past --max-run-bytes) never had its errors saved. */
			note_errors(bt);
		}
	} else {
		log_store_failure(io, "batch");
	}
	if (!failed && store_batch_commit(io->env->store) != 0) {
		log_store_failure(io, "commit");
		/* A batch of reads only wrote its read counters: what it read
		 * is committed data, so the reads are answered (a guest can
		 * read its disk back while dom0's disk is full); only the
		 * counters are lost. */
		failed = !only_reads(bt);
	}
	if (!failed && bt->need_sync && store_sync(io->env->store) != 0) {
		be_blog_at(LOG_ERR, "%s", store_errmsg(io->env->store));
		for (unsigned i = 0; i < bt->n; i++)
			if (bt->items[i].pending && bt->items[i].req.operation == BLKIF_OP_FLUSH_DISKCACHE)
				be_batch_fail(&bt->items[i], BLKIF_RSP_ERROR, "flush failed");
	}
	if (failed)
		for (unsigned i = 0; i < bt->n; i++)
			if (bt->items[i].pending)
				be_batch_fail(&bt->items[i], BLKIF_RSP_ERROR, "the store could not commit");
	bt->failed = failed;
	note_errors(bt);
	bt->commit_us = clock_mono_us() - t0;
}

/* The commit histogram's bucket bounds, in microseconds (metrics.c prints
 * them as seconds). */
const int64_t be_io_commit_buckets_us[BE_IO_COMMIT_BUCKETS] = {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
                                                   100000, 250000, 1000000};

static void note_commit_time(struct be_io *io, int64_t us)
{
	for (int i = 0; i < BE_IO_COMMIT_BUCKETS; i++)
		if (us <= be_io_commit_buckets_us[i])
			io->commit_le[i]++;
	io->commit_count++;
	io->commit_sum_us += (uint64_t)(us > 0 ? us : 0);
}

/* Step 6, on the loop's thread, with the worker idle. */
void be_io_finish(struct be_io *io, struct be_batch *bt)
{
	struct be_pending_req *items = bt->items;
	unsigned n = bt->n;

	if (io->env->opt.sink == SINK_STORE)
		note_commit_time(io, bt->commit_us);
	if (bt->failed) {
		io->commits_failed++;
	} else {
		for (unsigned i = 0; i < n; i++) {
			struct be_pending_req *it = &items[i];
			if (!it->pending || it->kind != K_WRITE)
				continue;
			it->d->bytes += it->nsect * 512;
			if (it->d->mirror && io->env->opt.sink == SINK_STORE) /* else the mirror is the sink */
				be_raw_mirror_write(it->d, it->req.sector, it->data, (uint32_t)it->nsect);
		}
		transfer(io, items, n, TO_GUEST);
		note_errors(bt);
	}
	for (unsigned i = 0; i < n; i++) {
		struct be_pending_req *it = &items[i];
		if (it->pending)
			it->status = BLKIF_RSP_OKAY;
		it->d->requests++;
		it->d->run_gone |= it->run_gone;
		if (it->status != BLKIF_RSP_OKAY) {
			it->d->errors++;
			if (it->charged && it->d->run)
				be_quota_release(&it->d->run->chunks, it->d->devid, it->req.sector, it->charged);
		}
	}
	respond(io, items, n);
	io->batches++;
	/* Re-check each ring we served: requests that came while we worked. */
	for (unsigned i = 0; i < n; i++) {
		struct be_device *d = items[i].d;
		if (d->connected && d->work == WORK_IDLE && be_ring_final_check(&d->ring))
			be_io_schedule(d);
		free(items[i].data);
		free(items[i].ind_pages);
		free(items[i].ind_segs);
	}
	free(items);
	free(bt);
}
