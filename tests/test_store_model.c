/*
 * test_store_model.c - the store against an in-memory disk model.
 *
 * Thousands of random requests (1-11 segments, overlapping, out of order,
 * chunk-straddling, at sector 0 and at the last sector), discards, batches
 * that commit or abort, reads inside and outside batches, reopen of the
 * store, run end (which trims chunks) followed by more writes, and bulk
 * writes (store_write_many of adjacent requests, whole chunks going to the
 * data file and back into the database when written in part).  After every
 * step the store must read back exactly what the model holds:
 * last-write-wins, unwritten sectors zero, aborted batches invisible; with
 * the intake log on and off (switched at every reopen).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/disk/status_block.h"
#include "store/store_export.h"
#include "testutil.h"

#define NDEV 3
#define SECT 512u

static const uint64_t capacity[NDEV] = {1000, 777, 300}; /* straddle chunk boundaries */
/* Writes stay below limit[]: 40% of the device until the run ends, so the
 * end-of-run trim leaves short chunks that later writes must extend. */
static uint64_t limit[NDEV];
static const char *const vdevs[NDEV] = {"xvdp1", "xvdp2", "xvdz"};

struct model {
	uint8_t *committed[NDEV];
	uint8_t *pending[NDEV];
	int64_t writes_committed[NDEV], writes_pending[NDEV];
};

static struct store *s;
static struct store_device *dev[NDEV];
static int64_t dev_ids[NDEV];
static char *db_path;
static uint64_t rng;

/* With the intake log (store_intake.c) on, then off at every reopen: the
 * same model must hold either way, and across the switch. */
static int use_intake = 1;

static struct store *open_bulk(void)
{
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1, .intake = use_intake};
	struct store *st;
	char err[512];
	REQUIRE(store_open(&st, db_path, &o, err, sizeof(err)) == 0, "store_open: %s", err);
	return st;
}

static void open_all(void)
{
	s = open_bulk();
	for (int i = 0; i < NDEV; i++)
		REQUIRE(store_device_open(s, dev_ids[i], &dev[i]) == 0, "%s", store_errmsg(s));
}

struct cmp_ctx {
	const uint8_t *model;
	uint64_t mismatches;
	uint64_t first_bad;
};

static int cmp_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct cmp_ctx *c = ctx;
	const uint8_t *m = c->model + off;

	for (size_t i = 0; i < len; i++) {
		uint8_t v = data ? ((const uint8_t *)data)[i] : 0;
		if (v != m[i]) {
			if (!c->mismatches)
				c->first_bad = off + i;
			c->mismatches++;
		}
	}
	return 0;
}

/* Whole-device comparison through the export path (SELECT over chunks). */
static void verify_range_read(int d, const uint8_t *model, const char *when)
{
	struct cmp_ctx c = {model, 0, 0};
	int rc = store_read_range(s, dev_ids[d], 0, capacity[d] * SECT, cmp_cb, &c);

	CHECK(rc == 0, "%s: read_range: %s", when, store_errmsg(s));
	CHECK(c.mismatches == 0, "%s: device %d: %llu bytes differ, first at byte %llu", when, d,
	      (unsigned long long)c.mismatches, (unsigned long long)c.first_bad);
}

/* Random sub-range comparison through store_read (incremental blob I/O). */
static void verify_random_reads(int d, const uint8_t *model, int n, const char *when)
{
	uint8_t buf[64 * SECT];

	for (int i = 0; i < n; i++) {
		uint64_t nsect = 1 + tu_rand_below(&rng, 64);
		if (nsect > capacity[d])
			nsect = capacity[d];
		uint64_t sector = tu_rand_below(&rng, capacity[d] - nsect + 1);
		int rc = store_read(dev[d], sector, (uint32_t)nsect, buf);
		CHECK(rc == 0, "%s: store_read: %s", when, store_errmsg(s));
		CHECK(memcmp(buf, model + sector * SECT, nsect * SECT) == 0,
		      "%s: device %d sectors %llu+%llu differ", when, d, (unsigned long long)sector,
		      (unsigned long long)nsect);
	}
}

static uint64_t pick_sector(int d, uint64_t span)
{
	uint64_t cap = limit[d];
	switch (tu_rand_below(&rng, 6)) {
	case 0:
		return 0;
	case 1:
		return cap - span; /* up to the very last sector */
	case 2: {
		/* Around a chunk boundary. */
		uint64_t b = 128 * (1 + tu_rand_below(&rng, cap / 128 + 1));
		uint64_t s0 = b > span / 2 ? b - span / 2 : 0;
		return s0 + span <= cap ? s0 : cap - span;
	}
	default:
		return tu_rand_below(&rng, cap - span + 1);
	}
}

static void random_write(struct model *m, int d)
{
	struct store_segment segs[11];
	static uint8_t data[11][8 * SECT];
	unsigned nsegs = 1 + (unsigned)tu_rand_below(&rng, 11);
	uint64_t total = 0;
	uint32_t lens[11];

	for (unsigned i = 0; i < nsegs; i++) {
		lens[i] = 1 + (uint32_t)tu_rand_below(&rng, 8); /* first_sect..last_sect */
		total += lens[i];
	}
	while (total > limit[d]) {
		total -= lens[--nsegs];
	}
	/* Mostly contiguous like blkif; sometimes scattered segments. */
	int scattered = tu_rand_below(&rng, 5) == 0;
	uint64_t sector = pick_sector(d, total);
	for (unsigned i = 0; i < nsegs; i++) {
		for (uint32_t b = 0; b < lens[i] * SECT; b += 8) {
			uint64_t r = tu_rand(&rng);
			memcpy(&data[i][b], &r, 8);
		}
		segs[i].sector = scattered ? pick_sector(d, lens[i]) : sector;
		segs[i].nsect = lens[i];
		segs[i].data = data[i];
		sector += lens[i];
	}
	int rc = store_write(dev[d], segs, nsegs);
	CHECK(rc == 0, "store_write: %s", store_errmsg(s));
	if (rc)
		return;
	for (unsigned i = 0; i < nsegs; i++)
		memcpy(m->pending[d] + segs[i].sector * SECT, segs[i].data, segs[i].nsect * SECT);
	m->writes_pending[d]++;

	/* Status block decoding follows sector 0 of profile devices. */
	struct store_device_info info;
	store_device_get_info(dev[d], &info);
	int wrote0 = 0;
	for (unsigned i = 0; i < nsegs; i++)
		wrote0 |= segs[i].sector == 0;
	if (wrote0 && info.role != STORE_ROLE_RAW) {
		struct status_block sb;
		int r = status_block_decode(m->pending[d], &sb);
		CHECK((r == STATUS_BLOCK_VALID) == (info.status == STORE_STATUS_OK),
		      "status after sector-0 write: decode %d, store %d", r, info.status);
	}
}

/* Adjacent requests at once, as the backend passes a guest's stream:
 * often chunk-aligned and covering whole chunks. */
static void random_bulk_write(struct model *m, int d)
{
	enum { MAXREQ = 8 };
	struct store_segment segs[MAXREQ];
	static uint8_t data[MAXREQ][128 * SECT];
	unsigned n = 1 + (unsigned)tu_rand_below(&rng, MAXREQ);
	uint64_t total = 0;

	for (unsigned i = 0; i < n; i++) {
		segs[i].nsect = tu_rand_below(&rng, 3) ? 128 : 1 + (uint32_t)tu_rand_below(&rng, 128);
		total += segs[i].nsect;
	}
	while (n > 1 && total > limit[d])
		total -= segs[--n].nsect;
	if (total > limit[d]) {
		segs[0].nsect = (uint32_t)limit[d];
		total = limit[d];
	}
	uint64_t sector = tu_rand_below(&rng, 2) ? 128 * tu_rand_below(&rng, (limit[d] - total) / 128 + 1)
	                                         : pick_sector(d, total);
	for (unsigned i = 0; i < n; i++) {
		for (uint32_t b = 0; b < segs[i].nsect * SECT; b += 8) {
			uint64_t r = tu_rand(&rng);
			memcpy(&data[i][b], &r, 8);
		}
		segs[i].sector = sector;
		segs[i].data = data[i];
		sector += segs[i].nsect;
	}
	int rc = store_write_many(dev[d], segs, n);
	CHECK(rc == 0, "store_write_many: %s", store_errmsg(s));
	if (rc)
		return;
	for (unsigned i = 0; i < n; i++)
		memcpy(m->pending[d] + segs[i].sector * SECT, segs[i].data, segs[i].nsect * SECT);
	m->writes_pending[d] += n;
}

static void bad_write(int d)
{
	static uint8_t data[8 * SECT];
	struct store_segment seg = {capacity[d] - 2, 3, data};
	struct store_segment ovf = {UINT64_MAX - 1, 4, data};

	CHECK(store_write(dev[d], &seg, 1) == STORE_EINVAL, "write past the end accepted");
	CHECK(store_write(dev[d], &ovf, 1) == STORE_EINVAL, "overflowing sector accepted");
	seg.sector = 0;
	seg.nsect = 0;
	CHECK(store_write(dev[d], &seg, 1) == STORE_EINVAL, "empty segment accepted");
}

static void random_discard(struct model *m, int d)
{
	uint64_t n = 1 + tu_rand_below(&rng, tu_rand_below(&rng, 4) ? 16 : limit[d]);
	if (n > limit[d])
		n = limit[d];
	uint64_t sector = pick_sector(d, n);
	int rc = store_discard(dev[d], sector, n);
	CHECK(rc == 0, "store_discard: %s", store_errmsg(s));
	if (!rc)
		memset(m->pending[d] + sector * SECT, 0, n * SECT);
}

int main(void)
{
	struct model m;
	struct store_run run = {.domid = 7, .name = "model", .uuid = "u"};
	int requests = 0, batches = 0, aborts = 0, reopens = 0;
	const int target = getenv("PROFSVC_LONG") ? 60000 : 6000;

	rng = tu_seed(20261121);
	db_path = tu_path("model.db");
	s = open_bulk();
	REQUIRE(store_run_begin(s, &run) == 0, "%s", store_errmsg(s));
	for (int i = 0; i < NDEV; i++) {
		REQUIRE(store_device_create(s, run.run_id, vdevs[i], 51953 + i, capacity[i], &dev[i]) == 0,
		        "%s", store_errmsg(s));
		dev_ids[i] = store_device_id(dev[i]);
		m.committed[i] = calloc(capacity[i], SECT);
		m.pending[i] = calloc(capacity[i], SECT);
		m.writes_committed[i] = m.writes_pending[i] = 0;
		limit[i] = capacity[i] * 2 / 5;
	}
	/* Never-written sectors read as zeros. */
	for (int i = 0; i < NDEV; i++)
		verify_range_read(i, m.committed[i], "fresh device");

	int run_ended = 0;
	while (requests < target) {
		REQUIRE(store_batch_begin(s) == 0, "%s", store_errmsg(s));
		int n = 1 + (int)tu_rand_below(&rng, 8);
		for (int k = 0; k < n; k++) {
			int d = (int)tu_rand_below(&rng, NDEV);
			uint64_t op = tu_rand_below(&rng, 100);
			if (op < 60) {
				random_write(&m, d);
				requests++;
			} else if (op < 75) {
				random_bulk_write(&m, d);
				requests++;
			} else if (op < 85) {
				random_discard(&m, d);
			} else if (op < 97) {
				verify_random_reads(d, m.pending[d], 2, "inside batch");
			} else {
				bad_write(d); /* the batch stays usable */
			}
		}
		if (tu_rand_below(&rng, 100) < 15) {
			store_batch_abort(s);
			aborts++;
			for (int i = 0; i < NDEV; i++) {
				memcpy(m.pending[i], m.committed[i], capacity[i] * SECT);
				m.writes_pending[i] = m.writes_committed[i];
			}
		} else {
			REQUIRE(store_batch_commit(s) == 0, "%s", store_errmsg(s));
			for (int i = 0; i < NDEV; i++) {
				memcpy(m.committed[i], m.pending[i], capacity[i] * SECT);
				m.writes_committed[i] = m.writes_pending[i];
			}
		}
		batches++;
		if (batches % 50 == 0)
			for (int i = 0; i < NDEV; i++)
				verify_random_reads(i, m.committed[i], 4, "between batches");
		if (batches % 400 == 0) {
			/* Reopen: everything committed survives, nothing else. */
			store_close(s);
			use_intake = !use_intake;
			open_all();
			reopens++;
			for (int i = 0; i < NDEV; i++) {
				verify_range_read(i, m.committed[i], "after reopen");
				struct store_device_info info;
				store_device_get_info(dev[i], &info);
				CHECK(info.write_requests == m.writes_committed[i],
				      "device %d: %lld write requests stored, %lld committed", i,
				      (long long)info.write_requests, (long long)m.writes_committed[i]);
			}
		}
		if (!run_ended && requests > target / 2) {
			/* Ending a run trims chunks; later writes must still work. */
			REQUIRE(store_run_end(s, run.run_id, STORE_RUN_CRASHED, 0) == 0, "%s",
			        store_errmsg(s));
			for (int i = 0; i < NDEV; i++) {
				verify_range_read(i, m.committed[i], "after run end (trim)");
				limit[i] = capacity[i];
			}
			run_ended = 1;
		}
	}
	for (int i = 0; i < NDEV; i++) {
		verify_range_read(i, m.committed[i], "final");
		verify_random_reads(i, m.committed[i], 50, "final");
	}
	char report[256];
	CHECK(store_check_integrity(s, report, sizeof(report)) == 0, "integrity: %s", report);
	/* The bulk path was taken (and left data in the data file). */
	char data_file[4200];
	snprintf(data_file, sizeof(data_file), "%s-data", db_path);
	size_t dlen = 0;
	uint8_t *dbytes = tu_read_file(data_file, &dlen);
	CHECK(dbytes && dlen >= 65536, "no data file: the bulk path was never taken");
	free(dbytes);
	printf("%d requests in %d batches (%d aborted), %d reopens\n", requests, batches, aborts,
	       reopens);
	store_close(s);
	for (int i = 0; i < NDEV; i++) {
		free(m.committed[i]);
		free(m.pending[i]);
	}
	free(db_path);
	return tu_finish("test_store_model");
}
