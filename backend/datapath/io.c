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
 * state machine (d->ring_broken; xenbus_fail_broken), as Linux's blkback
 * returns an error to its caller.  Where steps 4-5 run: io_worker.c; what
 * stands in for the store in benchmarks: sink.c.
 *
 * May call: batch.c, sink.c, journal.c, raw_mirror.c, storm.c, blkif/,
 * quota.c, log.c, common/ (state.h), util/clock, the store and the platform
 * (grant copies, notifications); io_worker.c calls it.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/common/log.h"
#include "backend/common/quota.h"
#include "backend/datapath/io.h"
#include "backend/datapath/journal.h"
#include "backend/datapath/raw_mirror.h"
#include "backend/datapath/sink.h"
#include "backend/datapath/storm.h"
#include "util/clock.h"

static int64_t now_us(void)
{
	return store_now_us();
}

/* Devices with requests to take wait in a FIFO: a device served goes to
 * the back if it has more, behind every device that waited.  (A LIFO let
 * the guests just answered, which notify again first, starve the rest: a
 * 64-guest fleet saw some guests' p99 at 30 times the median.) */
void io_schedule(struct device *d)
{
	struct backend *b = d->b;

	if (d->work != WORK_IDLE || !d->connected)
		return;
	d->work = WORK_QUEUED;
	d->next_work = NULL;
	if (b->work_tail)
		b->work_tail->next_work = d;
	else
		b->work = d;
	b->work_tail = d;
}

/* Back at the head of the FIFO: the rest of a turn a full batch cut short. */
static void io_schedule_first(struct device *d)
{
	struct backend *b = d->b;

	d->work = WORK_QUEUED;
	d->next_work = b->work;
	b->work = d;
	if (!b->work_tail)
		b->work_tail = d;
}

void io_unschedule(struct device *d)
{
	struct backend *b = d->b;
	struct device *prev = NULL;

	for (struct device *w = b->work; w; prev = w, w = w->next_work)
		if (w == d) {
			if (prev)
				prev->next_work = d->next_work;
			else
				b->work = d->next_work;
			if (b->work_tail == d)
				b->work_tail = prev;
			break;
		}
	d->work = WORK_IDLE;
}

static struct device *next_scheduled(struct backend *b)
{
	struct device *d = b->work;

	if (d) {
		b->work = d->next_work;
		if (!b->work)
			b->work_tail = NULL;
		d->work = WORK_IDLE;
	}
	return d;
}

/* Grant copy with a per-segment map fallback for platforms without copy. */
static void copy_segments(struct backend *b, uint32_t domid, int to_guest,
                          struct plat_copy_seg *segs, uint32_t n)
{
	if (n == 0)
		return;
	if (plat_gnttab_copy(b->gnt, domid, to_guest, segs, n) == 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *page = plat_gnttab_map(b->gnt, domid, &segs[i].ref, 1, to_guest);
		if (!page) {
			segs[i].status = -1;
			continue;
		}
		if (to_guest)
			memcpy(page + segs[i].offset, segs[i].local, segs[i].len);
		else
			memcpy(segs[i].local, page + segs[i].offset, segs[i].len);
		plat_gnttab_unmap(b->gnt, page, 1);
		segs[i].status = 0;
	}
}

/* Step 1: take and pre-validate requests of one device. */
static unsigned take_requests(struct device *d, struct pending_req **items, unsigned *n, unsigned *cap,
                              uint64_t *bytes, int *cut)
{
	unsigned taken = 0;
	int avail = ring_pending_requests(&d->ring);

	if (avail < 0) {
		d->ring_broken = 1; /* the state machine disconnects it (xenbus_fail_broken) */
		return 0;
	}
	while (avail > 0 && d->turn_taken + taken < REQUESTS_PER_TURN && *bytes < BATCH_BYTES_MAX) {
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			struct pending_req *grown = realloc(*items, *cap * sizeof(**items));
			if (!grown)
				break;
			*items = grown;
		}
		struct pending_req *it = &(*items)[(*n)++];
		const char *why = NULL;
		memset(it, 0, sizeof(*it));
		it->d = d;
		it->pending = 1;
		blkif_copy_request(d->ring.abi, ring_take_request(&d->ring), &it->req);
		avail--;
		taken++;

		int rc = blkif_validate(&it->req, d->capacity, BLKIF_BACK_MAX_INDIRECT_SEGMENTS, &why);
		if (rc) {
			batch_fail(it, (int16_t)rc, why);
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
	 * the rest of its turn comes first in the next batch (io_prepare),
	 * and counts against the same share, so that no device keeps the
	 * head of the queue. */
	*cut = avail > 0 && d->turn_taken + taken < REQUESTS_PER_TURN && *bytes >= BATCH_BYTES_MAX;
	d->turn_taken = *cut ? d->turn_taken + taken : 0;
	return taken;
}

/* Step 2a: indirect pages, fetched once into our memory. */
static void fetch_indirect(struct backend *b, struct pending_req *items, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct pending_req *it = &items[i];
		if (!it->pending || it->req.operation != BLKIF_OP_INDIRECT)
			continue;
		unsigned pages = (it->nsegs + BLKIF_SEGS_PER_INDIRECT_PAGE - 1) / BLKIF_SEGS_PER_INDIRECT_PAGE;
		struct plat_copy_seg cs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
		it->ind_pages = malloc((size_t)pages * 4096);
		it->ind_segs = malloc(it->nsegs * sizeof(*it->ind_segs));
		if (!it->ind_pages || !it->ind_segs) {
			batch_fail(it, BLKIF_RSP_ERROR, "out of memory");
			continue;
		}
		for (unsigned p = 0; p < pages; p++)
			cs[p] = (struct plat_copy_seg){it->req.indirect_grefs[p], 0, 4096,
			                               it->ind_pages + (size_t)p * 4096, 0};
		copy_segments(b, it->d->domid, 0, cs, pages);
		int ok = 1;
		for (unsigned p = 0; p < pages; p++)
			ok &= cs[p].status == 0;
		if (!ok) {
			batch_fail(it, BLKIF_RSP_ERROR, "indirect page grant copy failed");
			continue;
		}
		blkif_load_indirect(it->ind_pages, it->nsegs, it->ind_segs);
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

static uint64_t rewrite_cost(const struct pending_req *it, uint64_t fresh)
{
	uint64_t first = (it->req.sector + STORE_CHUNK_SECTORS - 1) / STORE_CHUNK_SECTORS;
	uint64_t end = (it->req.sector + it->nsect) / STORE_CHUNK_SECTORS; /* whole chunks [first, end) */
	uint64_t whole = end > first ? (end - first) * STORE_CHUNK_BYTES : 0;
	return whole > fresh ? whole - fresh : 0;
}

static int store_over_limit(struct backend *b, const struct pending_req *it)
{
	uint64_t fresh = quota_fresh(&it->d->run->chunks, it->d->devid, it->req.sector, it->nsect);
	uint64_t rewrite = rewrite_cost(it, fresh);
	if (!fresh && !rewrite)
		return 0;
	int64_t now = now_us();
	if (now - b->store_usage_at_us > 100000) {
		b->store_usage = store_disk_usage(b->store);
		b->store_usage_at_us = now;
	}
	uint64_t limit = b->opt.max_store_bytes, margin = limit / 8;
	if (margin < REWRITE_MARGIN_MIN)
		margin = REWRITE_MARGIN_MIN;
	uint64_t used = b->store_usage < 0 ? 0 : (uint64_t)b->store_usage;
	int fits = fresh ? used + fresh + rewrite <= limit : used + rewrite <= limit + margin;
	if (b->store_usage < 0 || fits) {
		/* Counted until the next reading: many writes fit in 100 ms. */
		if (b->store_usage >= 0)
			b->store_usage += (int64_t)(fresh + rewrite);
		b->store_full_logged = 0;
		return 0;
	}
	b->give_back_urgent = 1;
	if (!b->store_full_logged) {
		if (fresh)
			blog_at(LOG_WARNING, "store %s holds %lld bytes, at --max-store-bytes (%llu): writes to new places fail "
			     "until runs are deleted or the limit is raised",
			     store_path(b->store), (long long)b->store_usage, (unsigned long long)limit);
		else
			blog_at(LOG_WARNING, "store %s holds %lld bytes, at --max-store-bytes (%llu) and its margin for "
			     "rewrites (%llu): rewrites fail until the space earlier rewrites freed is given back (a "
			     "reader may still see it) or the limit is raised",
			     store_path(b->store), (long long)b->store_usage, (unsigned long long)limit,
			     (unsigned long long)margin);
		b->store_full_logged = 1;
	}
	return 1;
}

/* Step 2b: segments, ranges, limits, buffers. */
static void check_items(struct backend *b, struct pending_req *items, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct pending_req *it = &items[i];
		const char *why;
		if (!it->pending || (it->kind != K_READ && it->kind != K_WRITE))
			continue;
		if (blkif_check_segments(item_segs(it), it->nsegs, it->req.sector, it->d->capacity, &it->nsect,
		                         &why) != 0) {
			batch_fail(it, BLKIF_RSP_ERROR, why);
			continue;
		}
		struct run *r = it->d->run;
		if (it->kind == K_WRITE && r && b->opt.max_store_bytes && store_over_limit(b, it)) {
			batch_fail(it, BLKIF_RSP_ERROR, "store over --max-store-bytes");
			continue;
		}
		/* What the store will hold counts, charged here and given back
		 * by finish() if the write fails. */
		if (it->kind == K_WRITE && r &&
		    quota_admit(&r->chunks, it->d->devid, it->req.sector, it->nsect, b->opt.max_run_bytes,
		                &it->charged) != 0) {
			if (!r->over_limit_logged) {
				dlog_at(LOG_WARNING, it->d, "run reached --max-run-bytes (%llu bytes of store space); further "
				            "writes to new places fail",
				     (unsigned long long)b->opt.max_run_bytes);
				r->over_limit_logged = 1;
			}
			batch_fail(it, BLKIF_RSP_ERROR, "run over --max-run-bytes");
			continue;
		}
		/* Page-aligned: the raw-direct sink hands it to O_DIRECT. */
		if (posix_memalign((void **)&it->data, 4096, it->nsect * 512) != 0)
			it->data = NULL;
		if (!it->data)
			batch_fail(it, BLKIF_RSP_ERROR, "out of memory");
	}
}

/* Steps 3 and 5: grant copy of all data of one direction, one call per
 * domain. */
enum direction { FROM_GUEST, TO_GUEST };

static void transfer(struct backend *b, struct pending_req *items, unsigned n, enum direction dir)
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
				batch_fail(&items[i], BLKIF_RSP_ERROR, "out of memory");
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
			struct pending_req *it = &items[i];
			if (!it->pending || it->kind != kind || it->d->domid != doms[k])
				continue;
			size_t pos = 0;
			const struct blk_seg *sg = item_segs(it);
			for (unsigned s = 0; s < it->nsegs; s++) {
				uint16_t len = (uint16_t)((sg[s].last_sect - sg[s].first_sect + 1) * 512);
				cs[m] = (struct plat_copy_seg){sg[s].gref, (uint16_t)(sg[s].first_sect * 512), len,
				                               it->data + pos, 0};
				owner[m++] = i;
				pos += len;
			}
		}
		copy_segments(b, doms[k], to_guest, cs, (uint32_t)m);
		for (size_t j = 0; j < m; j++)
			if (cs[j].status != 0 && items[owner[j]].pending)
				batch_fail(&items[owner[j]], BLKIF_RSP_ERROR,
				     to_guest ? "grant copy to the guest failed" : "grant copy from the guest failed");
	}
out:
	free(cs);
	free(owner);
	free(doms);
}

/* Step 4: the store.  Returns -1 if the batch must be failed whole. */
static int apply(struct backend *b, struct pending_req *items, unsigned n, int *need_sync)
{
	for (unsigned i = 0; i < n; i++) {
		struct pending_req *it = &items[i];
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
					batch_fail(&items[m], BLKIF_RSP_ERROR, store_errmsg(b->store));
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
			 * deleted run's devices are closed: xenbus_fail_broken) */
			batch_fail(it, BLKIF_RSP_ERROR, store_errmsg(b->store));
			it->run_gone = rc == STORE_ENOTFOUND;
		} else if (rc) {
			blog_at(LOG_ERR, "store: %s", store_errmsg(b->store));
			return -1;
		}
	}
	return 0;
}

/* Fault injection for tests: PROFSVC_FAULT_KILL_BEFORE_PUSH=N dies like a
 * SIGKILL after writing the Nth batch's responses, before publishing them
 * (the window journal.c exists for). */
static long kill_before_push = -1;

void io_fault_injection_init(void)
{
	const char *fault = getenv("PROFSVC_FAULT_KILL_BEFORE_PUSH");
	if (fault && *fault)
		kill_before_push = strtol(fault, NULL, 10);
}

static void respond(struct backend *b, struct pending_req *items, unsigned n)
{
	uint64_t *ids = malloc(n * sizeof(*ids));
	uint8_t *ops = malloc(n);
	int16_t *st = malloc(n * sizeof(*st));

	/* Per device, in ring order: journal, write, publish, notify.  A
	 * device's items are consecutive (prepare takes each device once). */
	for (unsigned i = 0, end; i < n; i = end) {
		struct device *d = items[i].d;
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
			journal_begin(d, d->ring.rsp_prod_pvt, m, ids, ops, st);
		for (unsigned k = i; k < end; k++)
			blkif_write_response(d->ring.abi, ring_next_response(&d->ring), items[k].req.id,
			                     items[k].req.operation, items[k].status);
		if (kill_before_push > 0 && --kill_before_push == 0)
			raise(SIGKILL);
		if (ring_push_responses(&d->ring))
			plat_evtchn_notify(b->evt, d->local_port);
		journal_end(d);
	}
	free(ids);
	free(ops);
	free(st);
}

/* Counts failed requests against their devices in the store (the worker's
 * store, or the loop's while the worker is idle). */
static void note_errors(struct batch *bt)
{
	for (unsigned i = 0; i < bt->n; i++) {
		struct pending_req *it = &bt->items[i];
		if (it->status != BLKIF_RSP_OKAY && !it->pending && !it->noted && it->d->sdev) {
			store_note_error(it->d->sdev);
			it->noted = 1;
		}
	}
}

/* Steps 1-3, on the loop's thread: take, check, copy in. */
struct batch *io_prepare(struct backend *b)
{
	struct batch *bt = calloc(1, sizeof(*bt));
	struct device *again = NULL, *again_tail = NULL, *d;
	uint64_t bytes = 0;

	if (!bt)
		return NULL;
	/* Devices are taken in order until the batch is full; those not
	 * reached keep their place at the front for the next one, and so
	 * does the one the batch's size cut short, ahead of them: sent to
	 * the back, the rest of its requests waited a whole round of every
	 * other device (a fleet's guests saw twice their median at p99). */
	while (bytes < BATCH_BYTES_MAX && (d = next_scheduled(b))) {
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
		if (bt->n == before && d->connected && d->work != WORK_MORE && ring_final_check(&d->ring))
			d->work = WORK_MORE;
		if (bt->n == before && d->port_masked)
			storm_empty_wakeup(d); /* woken with nothing to do (XSA-332) */
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
	for (struct device *next; again; again = next) {
		next = again->next_work;
		io_schedule(again);
	}
	if (bt->n == 0) {
		free(bt->items);
		free(bt);
		return NULL;
	}
	fetch_indirect(b, bt->items, bt->n);
	check_items(b, bt->items, bt->n);
	transfer(b, bt->items, bt->n, FROM_GUEST);
	return bt;
}

/*
 * A store that keeps failing (disk full, the database replaced) fails
 * every batch: log the first failure, each new kind of failure, and then
 * at most one line per 10 s with the count in between, not one line per
 * guest request.  Runs on whichever thread commits; one at a time.
 */
static void log_store_failure(struct backend *b, const char *what)
{
	static char last[256];
	static int64_t last_us;
	static unsigned suppressed;
	const char *msg = store_errmsg(b->store);
	int64_t now = store_now_us();

	if (strcmp(last, msg) == 0 && now - last_us < 10 * 1000000) {
		suppressed++;
		return;
	}
	if (suppressed)
		blog_at(LOG_ERR, "store %s failed: %s (and %u more batches since)", what, msg, suppressed);
	else
		blog_at(LOG_ERR, "store %s failed: %s", what, msg);
	snprintf(last, sizeof(last), "%s", msg);
	last_us = now;
	suppressed = 0;
}

static int only_reads(const struct batch *bt)
{
	for (unsigned i = 0; i < bt->n; i++)
		if (bt->items[i].pending && bt->items[i].kind != K_READ)
			return 0;
	return 1;
}

/* Steps 4-5, on the worker: the store. */
void io_commit(struct backend *b, struct batch *bt)
{
	if (b->opt.sink != SINK_STORE) {
		sink_batch(b, bt);
		return;
	}
	int64_t t0 = clock_mono_us();
	int failed = store_batch_begin(b->store) != 0;

	if (!failed) {
		failed = apply(b, bt->items, bt->n, &bt->need_sync) != 0;
		if (failed) {
			log_store_failure(b, "write");
			store_batch_abort(b->store);
		} else {
			/* The requests refused so far are counted inside the batch:
			 * counted after it, a device whose every request is refused
			 * (past --max-run-bytes) never had its errors saved. */
			note_errors(bt);
		}
	} else {
		log_store_failure(b, "batch");
	}
	if (!failed && store_batch_commit(b->store) != 0) {
		log_store_failure(b, "commit");
		/* A batch of reads only wrote its read counters: what it read
		 * is committed data, so the reads are answered (a guest can
		 * read its disk back while dom0's disk is full); only the
		 * counters are lost. */
		failed = !only_reads(bt);
	}
	if (!failed && bt->need_sync && store_sync(b->store) != 0) {
		blog_at(LOG_ERR, "%s", store_errmsg(b->store));
		for (unsigned i = 0; i < bt->n; i++)
			if (bt->items[i].pending && bt->items[i].req.operation == BLKIF_OP_FLUSH_DISKCACHE)
				batch_fail(&bt->items[i], BLKIF_RSP_ERROR, "flush failed");
	}
	if (failed)
		for (unsigned i = 0; i < bt->n; i++)
			if (bt->items[i].pending)
				batch_fail(&bt->items[i], BLKIF_RSP_ERROR, "the store could not commit");
	bt->failed = failed;
	note_errors(bt);
	bt->commit_us = clock_mono_us() - t0;
}

/* The commit histogram's bucket bounds, in microseconds (metrics.c prints
 * them as seconds). */
const int64_t commit_buckets_us[COMMIT_BUCKETS] = {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
                                                   100000, 250000, 1000000};

static void note_commit_time(struct backend *b, int64_t us)
{
	for (int i = 0; i < COMMIT_BUCKETS; i++)
		if (us <= commit_buckets_us[i])
			b->commit_le[i]++;
	b->commit_count++;
	b->commit_sum_us += (uint64_t)(us > 0 ? us : 0);
}

/* Step 6, on the loop's thread, with the worker idle. */
void io_finish(struct backend *b, struct batch *bt)
{
	struct pending_req *items = bt->items;
	unsigned n = bt->n;

	if (b->opt.sink == SINK_STORE)
		note_commit_time(b, bt->commit_us);
	if (bt->failed) {
		b->commits_failed++;
	} else {
		for (unsigned i = 0; i < n; i++) {
			struct pending_req *it = &items[i];
			if (!it->pending || it->kind != K_WRITE)
				continue;
			it->d->bytes += it->nsect * 512;
			if (it->d->mirror && b->opt.sink == SINK_STORE) /* else the mirror is the sink */
				raw_mirror_write(it->d, it->req.sector, it->data, (uint32_t)it->nsect);
		}
		transfer(b, items, n, TO_GUEST);
		note_errors(bt);
	}
	for (unsigned i = 0; i < n; i++) {
		struct pending_req *it = &items[i];
		if (it->pending)
			it->status = BLKIF_RSP_OKAY;
		it->d->requests++;
		it->d->run_gone |= it->run_gone;
		if (it->status != BLKIF_RSP_OKAY) {
			it->d->errors++;
			if (it->charged && it->d->run)
				quota_release(&it->d->run->chunks, it->d->devid, it->req.sector, it->charged);
		}
	}
	respond(b, items, n);
	b->batches++;
	/* Re-check each ring we served: requests that came while we worked. */
	for (unsigned i = 0; i < n; i++) {
		struct device *d = items[i].d;
		if (d->connected && d->work == WORK_IDLE && ring_final_check(&d->ring))
			io_schedule(d);
		free(items[i].data);
		free(items[i].ind_pages);
		free(items[i].ind_segs);
	}
	free(items);
	free(bt);
}
