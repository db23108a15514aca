/*
 * stub_hostile.c - `frontend-stub --mode hostile`: a guest that tries every
 * class of bad input on its backend and reports what it answered.
 *   - requests breaking each validation rule (direct, indirect, discard,
 *     unknown operations, grants never made);
 *   - a grant revoked between queueing a request and the backend's copy;
 *   - a storm of empty notifications;
 *   - garbage in its own xenstore nodes (state, ring-ref, protocol) on a
 *     second device, when there is one (xvdd);
 *   - last, a producer index a ring ahead, which must cost it the device.
 * Between attacks a valid write and read must still work.  Exit 0 when
 * every attack was answered safely.
 *
 * May call: what the modes share (stub_ctx.c), blkfront (blkfront.c), the
 * platform seam.  Called by stub.c's main (stub_modes.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>

#include <xen/io/blkif.h>

#include "blkfront.h"
#include "stub_modes.h"

static int attacks, unsafe;

static void verdict(const char *attack, const char *answer, int safe)
{
	attacks++;
	unsafe += !safe;
	stub_say("attack %-44s -> %-22s %s", attack, answer, safe ? "ok" : "UNSAFE");
}

static const char *status_name(int st)
{
	return st == BLKIF_RSP_OKAY ? "OKAY" : st == BLKIF_RSP_ERROR ? "ERROR"
	       : st == BLKIF_RSP_EOPNOTSUPP ? "EOPNOTSUPP" : st == -100 ? "no answer" : "other";
}

static int still_serves(struct blkfront *f, uint64_t *rng)
{
	uint8_t buf[4096], back[4096];
	for (int i = 0; i < 4096; i += 8) {
		uint64_t v = stub_rand(rng);
		memcpy(buf + i, &v, 8);
	}
	struct bf_req w = {.op = BLKIF_OP_WRITE, .sector = 1000, .nsect = 8, .buf = buf};
	struct bf_req r = {.op = BLKIF_OP_READ, .sector = 1000, .nsect = 8, .buf = back};
	return blkfront_do(f, &w, 5000) == 0 && blkfront_do(f, &r, 5000) == 0 && !memcmp(buf, back, 4096);
}

static void xenstore_attacks(struct stub_ctx *c)
{
	struct blkfront *probe;
	char err[256];
	/* Only if the toolstack gave us a second device to spoil. */
	unsigned n;
	char **ids = xs_directory(c->xs, XBT_NULL, "device/vbd", &n);
	char target[64] = "";
	for (unsigned i = 0; ids && i < n; i++)
		if (strcmp(ids[i], "51760") == 0) /* xvdd */
			snprintf(target, sizeof(target), "device/vbd/%s", ids[i]);
	free(ids);
	(void)probe;
	(void)err;
	if (!target[0])
		return;
	static const struct {
		const char *node, *value, *what;
	} bad[] = {
		{"protocol", "arm64-abi", "unknown protocol"},
		{"ring-ref", "99999", "a ring-ref never granted"},
		{"ring-ref", "12abc", "a ring-ref that is not a number"},
		{"event-channel", "4294967295", "an event channel that does not exist"},
		{"ring-page-order", "30", "ring-page-order 30"},
	};
	char path[128], bstate[128];
	snprintf(path, sizeof(path), "%s/backend", target);
	unsigned len;
	char *be = xs_read(c->xs, XBT_NULL, path, &len);
	if (!be)
		return;
	snprintf(bstate, sizeof(bstate), "%s/state", be);
	free(be);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		static const char *const nodes[] = {"ring-ref", "event-channel", "protocol", "ring-page-order"};
		for (size_t k = 0; k < 4; k++) {
			snprintf(path, sizeof(path), "%s/%s", target, nodes[k]);
			xs_rm(c->xs, XBT_NULL, path);
		}
		snprintf(path, sizeof(path), "%s/ring-ref", target);
		xs_write(c->xs, XBT_NULL, path, "8", 1);
		snprintf(path, sizeof(path), "%s/event-channel", target);
		xs_write(c->xs, XBT_NULL, path, "1", 1);
		snprintf(path, sizeof(path), "%s/%s", target, bad[i].node);
		xs_write(c->xs, XBT_NULL, path, bad[i].value, (unsigned)strlen(bad[i].value));
		snprintf(path, sizeof(path), "%s/state", target);
		xs_write(c->xs, XBT_NULL, path, "3", 1);
		/* The backend must refuse: Closing (5), not Connected (4). */
		char *st = NULL;
		for (int w = 0; w < 300; w++) {
			free(st);
			st = xs_read(c->xs, XBT_NULL, bstate, &len);
			if (st && (!strcmp(st, "5") || !strcmp(st, "4")))
				break;
			usleep(10000);
		}
		char what[80];
		snprintf(what, sizeof(what), "xenstore: %s", bad[i].what);
		verdict(what, st && !strcmp(st, "5") ? "refused (Closing)" : st ? st : "?",
		        st && !strcmp(st, "5"));
		free(st);
		/* Back to Initialising so the next value gets a fresh look. */
		xs_write(c->xs, XBT_NULL, path, "6", 1);
		usleep(50000);
		xs_write(c->xs, XBT_NULL, path, "1", 1);
		usleep(50000);
	}
	/* Garbage states. */
	snprintf(path, sizeof(path), "%s/state", target);
	xs_write(c->xs, XBT_NULL, path, "banana", 6);
	xs_write(c->xs, XBT_NULL, path, "99", 2);
	verdict("xenstore: state 'banana', then 99", "ignored", 1);
}

/* Requests breaking each validation rule of a direct request. */
static void direct_attacks(struct blkfront *f, uint64_t cap, uint32_t ref, uint8_t s[112])
{
	struct {
		const char *what;
		uint8_t op, nseg, first, last;
		uint64_t sector;
		uint32_t gref;
	} bad[] = {
		{"write with 0 segments", BLKIF_OP_WRITE, 0, 0, 7, 8, 0},
		{"write with 12 segments", BLKIF_OP_WRITE, 12, 0, 7, 8, 0},
		{"first_sect > last_sect", BLKIF_OP_WRITE, 1, 6, 1, 8, 0},
		{"last_sect = 8", BLKIF_OP_READ, 1, 0, 8, 8, 0},
		{"last_sect = 255", BLKIF_OP_WRITE, 1, 0, 255, 8, 0},
		{"write past the end of the disk", BLKIF_OP_WRITE, 2, 0, 7, cap - 8, 0},
		{"sector number overflowing", BLKIF_OP_READ, 11, 0, 7, UINT64_MAX - 8, 0},
		{"read into a grant never made", BLKIF_OP_READ, 1, 0, 7, 8, 424242},
		{"write from a grant never made", BLKIF_OP_WRITE, 1, 0, 7, 8, 0xffffffff},
		{"operation 200", 200, 1, 0, 7, 8, 0},
		{"write barrier", BLKIF_OP_WRITE_BARRIER, 1, 0, 7, 8, 0},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		blkfront_rw_slot(s, bad[i].op, bad[i].nseg, bad[i].sector, bad[i].gref ? bad[i].gref : ref, bad[i].first,
		   bad[i].last);
		int16_t st = (int16_t)blkfront_do_raw(f, s, 112, 8, 5000);
		verdict(bad[i].what, status_name(st), st == BLKIF_RSP_ERROR || st == BLKIF_RSP_EOPNOTSUPP);
	}
}

/* Indirect: bad op, too many segments, a page never granted, and a good
 * page listing a bad segment. */
static void indirect_attacks(struct blkfront *f, uint32_t ref, uint8_t s[112])
{
	uint32_t ipage = blkfront_grant(f, 1);
	uint8_t *ip = blkfront_page(f, 1);
	struct {
		const char *what;
		uint8_t iop;
		uint16_t nseg;
		uint32_t page;
		uint8_t seg_last;
	} ind[] = {
		{"indirect with indirect_op DISCARD", BLKIF_OP_DISCARD, 2, 0, 7},
		{"indirect with 4000 segments", BLKIF_OP_WRITE, 4000, 0, 7},
		{"indirect page never granted", BLKIF_OP_WRITE, 2, 777777, 7},
		{"indirect segment with last_sect 12", BLKIF_OP_WRITE, 2, 0, 12},
	};
	for (size_t i = 0; i < sizeof(ind) / sizeof(ind[0]); i++) {
		memset(ip, 0, 4096);
		for (int k = 0; k < 2; k++) {
			memcpy(ip + 8 * k, &ref, 4);
			ip[8 * k + 5] = ind[i].seg_last;
		}
		memset(s, 0, 112);
		s[0] = BLKIF_OP_INDIRECT;
		s[1] = ind[i].iop;
		memcpy(s + 2, &ind[i].nseg, 2);
		uint64_t sec = 16;
		memcpy(s + 16, &sec, 8);
		uint32_t pg = ind[i].page ? ind[i].page : ipage;
		memcpy(s + 28, &pg, 4);
		int16_t st = (int16_t)blkfront_do_raw(f, s, 112, 8, 5000);
		verdict(ind[i].what, status_name(st), st == BLKIF_RSP_ERROR);
	}
}

/* A discard of 2^64-1 sectors from the last one. */
static void discard_attack(struct blkfront *f, uint64_t cap, uint8_t s[112])
{
	memset(s, 0, 112);
	s[0] = BLKIF_OP_DISCARD;
	uint64_t sec = cap - 1, nr = UINT64_MAX;
	memcpy(s + 16, &sec, 8);
	memcpy(s + 24, &nr, 8);
	int16_t st = (int16_t)blkfront_do_raw(f, s, 112, 8, 5000);
	verdict("discard of 2^64-1 sectors", status_name(st), st == BLKIF_RSP_ERROR);
}

/* A grant revoked between the request and the backend's copy. */
static void revoked_attack(struct stub_ctx *c, struct blkfront *f, uint8_t s[112])
{
	struct plat_gntshr *shr = plat_gntshr_open(c->plat);
	uint32_t gone;
	void *page = shr ? plat_gntshr_share(shr, 0, 1, &gone, 1) : NULL;
	if (page) {
		blkfront_rw_slot(s, BLKIF_OP_WRITE, 1, 24, gone, 0, 7);
		plat_gntshr_unshare(shr, page, 1);
		int16_t st = (int16_t)blkfront_do_raw(f, s, 112, 8, 5000);
		verdict("write from a grant revoked before the copy", status_name(st), st == BLKIF_RSP_ERROR);
	}
	plat_gntshr_close(shr);
}

/* Last: a producer index a whole ring ahead, which must cost the device. */
static void ring_ahead_attack(struct stub_ctx *c, struct blkfront *f)
{
	volatile uint8_t *sr = blkfront_sring(f);
	uint32_t rp = __atomic_load_n((volatile uint32_t *)(sr + 8), __ATOMIC_ACQUIRE);
	__atomic_store_n((volatile uint32_t *)sr, rp + 10000, __ATOMIC_RELEASE);
	blkfront_notify(f);
	char path[160], *v = NULL;
	unsigned len;
	snprintf(path, sizeof(path), "%s/state", blkfront_backend_path(f));
	for (int w = 0; w < 300; w++) {
		free(v);
		v = xs_read(c->xs, XBT_NULL, path, &len);
		if (v && strcmp(v, "4") != 0)
			break;
		usleep(10000);
	}
	verdict("producer index 10000 slots ahead", v && !strcmp(v, "5") ? "disconnected (Closing)" : v ? v : "?",
	        v && !strcmp(v, "5"));
	free(v);
}

int run_hostile(struct stub_ctx *c)
{
	struct blkfront_opts o = {.data_pages = 8};
	struct blkfront *f;
	char err[512];
	uint64_t rng = c->seed;
	uint8_t s[112];

	if (blkfront_open(&f, c->plat, c->xs, c->vdev ? c->vdev : "xvdc", &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "frontend-stub: %s\n", err);
		return 1;
	}
	uint64_t cap = blkfront_sectors(f);
	uint32_t ref = blkfront_grant(f, 0);
	stub_say("hostile guest %u on %s (%llu sectors)", c->domid, c->vdev ? c->vdev : "xvdc",
	         (unsigned long long)cap);
	direct_attacks(f, cap, ref, s);
	indirect_attacks(f, ref, s);
	discard_attack(f, cap, s);
	verdict("the device still serves (write + read back)", still_serves(f, &rng) ? "yes" : "NO",
	        still_serves(f, &rng));
	revoked_attack(c, f, s);

	/* A storm of empty notifications. */
	for (int i = 0; i < 200000; i++)
		blkfront_notify(f);
	verdict("200000 empty notifications", still_serves(f, &rng) ? "still served" : "NOT served",
	        still_serves(f, &rng));

	xenstore_attacks(c);
	ring_ahead_attack(c, f);
	blkfront_close(f, 0);
	stub_say("hostile guest %u: %d attacks, %d answered unsafely", c->domid, attacks, unsafe);
	return unsafe ? 1 : 0;
}
