/*
 * test_backend.c - profile-backend on xensim, against guests played by
 * this process through frontend-stub/blkfront.c:
 *   - the HaLVM order (frontend Initialised before the backend looked),
 *     a real GHC profile written request by request, the domain destroyed:
 *     the run is complete and exports byte-identical;
 *   - the Linux order (InitWait first), a multi-page ring, many requests
 *     outstanding, multi-segment and indirect I/O, reads of written and
 *     unwritten sectors, flush, discard;
 *   - every validation rule, each broken by one request;
 *   - a bogus ring producer index disconnects that device only;
 *   - an unknown protocol, bad ring refs: refused with an error node;
 *   - the close handshake, detach, reconnect after Initialising; detach of
 *     a never-connected device, detach --force of one that never closes;
 *   - domain death mid-connect; no dying domain left behind;
 *   - restart: SIGKILL the backend with requests in flight, restart, the
 *     guest gets its answers and the data is stored;
 *   - --max-run-bytes; an event storm; a reboot makes a second run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xenstore.h>

#include <xen/io/blkif.h>

#include "frontend-stub/halvm_writer.h"
#include "harness.h"
#include "store/store_export.h"

/* ---- scenarios ------------------------------------------------------------------ */

static long status_batches_inline(long *inline_commits);

static void test_halvm_profile(void)
{
	struct guest g;
	char path[4096];
	size_t plen, hlen;

	snprintf(path, sizeof(path), "%s/tests/data/ghc/leak/leak-p-hc.prof", tu_srcdir());
	uint8_t *prof = tu_read_file(path, &plen);
	snprintf(path, sizeof(path), "%s/tests/data/ghc/leak/leak-p-hc.hp", tu_srcdir());
	uint8_t *hp = tu_read_file(path, &hlen);
	REQUIRE(prof && hp, "fixtures");

	guest_new(&g, "halvm-leak", "vdev=xvdp1 vdev=xvdp2");
	struct blkfront_opts ho = {.halvm = 1, .data_pages = 1};
	struct blkfront *fp = connect_dev(&g, "xvdp1", &ho);
	struct blkfront *fh = connect_dev(&g, "xvdp2", &ho);
	REQUIRE(fp && fh, "connect");
	CHECK(blkfront_ring_slots(fp) == 32, "a one-page ring has %u slots", blkfront_ring_slots(fp));
	struct halvm_link sp = {fp, 0}, sh = {fh, 0};
	struct halvm_writer wp, wh;
	long in0, in1, b0 = status_batches_inline(&in0);
	halvm_writer_init(&wh, 8, halvm_link_submit, &sh);
	CHECK(halvm_writer_replay(&wh, hp, hlen, 1, UINT64_MAX) == 0 && !sh.failures, "hp replay");
	halvm_writer_init(&wp, 8, halvm_link_submit, &sp);
	CHECK(halvm_writer_replay(&wp, prof, plen, 0, UINT64_MAX) == 0 && !sp.failures, "prof replay");
	/* One request outstanding: nothing to overlap a commit with, so the
	 * loop commits on its own thread (io.c) rather than handing over. */
	long b1 = status_batches_inline(&in1);
	printf("halvm: %ld batches, %ld committed inline\n", b1 - b0, in1 - in0);
	CHECK(b0 >= 0 && in0 >= 0 && b1 - b0 >= 10 && (in1 - in0) * 10 >= (b1 - b0) * 9,
	      "%ld of %ld one-request batches committed inline", in1 - in0, b1 - b0);
	/* The guest exits: no close handshake, the domain just goes. */
	blkfront_close(fp, 0);
	blkfront_close(fh, 0);
	uint32_t domid = g.domid;
	guest_destroy(&g);
	CHECK(wait_run_state("halvm-leak", STORE_RUN_COMPLETE, 5000), "run not complete");
	struct store_run r;
	REQUIRE(find_run("halvm-leak", &r), "no run");
	size_t n;
	uint8_t *out = export_profile(r.run_id, "prof", &n, NULL);
	CHECK(out && n == plen && !memcmp(out, prof, plen), ".prof export differs (%zu vs %zu)", n, plen);
	free(out);
	out = export_profile(r.run_id, "hp", &n, NULL);
	CHECK(out && n == hlen && !memcmp(out, hp, hlen), ".hp export differs");
	free(out);
	snprintf(path, sizeof(path), "%s/%u", "/local/domain/0/backend/profsvc", domid);
	CHECK(wait_node(path, NULL, 3000), "backend nodes left after the domain died");
	CHECK(!list_has_dying(), "a dying domain is left (mappings not released)");
	free(prof);
	free(hp);
}

/* The backend's batch counters, from `profile-backend status`:
 * "batches N (M committed inline), ...". */
static long status_batches_inline(long *inline_commits)
{
	char out[8192];
	char *at = strstr(backend_status(out, sizeof(out)), "batches ");
	if (inline_commits) {
		char *in = at ? strstr(at, " (") : NULL;
		*inline_commits = in ? strtol(in + 2, NULL, 10) : -1;
	}
	return at ? strtol(at + 8, NULL, 10) : -1;
}

static long status_batches(void)
{
	return status_batches_inline(NULL);
}

/* Linux order, multi-page ring, many requests in flight, every operation. */
static void test_linux_io(void)
{
	struct guest g;
	struct blkfront_opts lo = {.ring_order = 2, .protocol = "x86_64-abi", .data_pages = 1024};
	struct blkfront *f = guest_with_disk(&g, "linux-io", "xvdb", &lo);
	CHECK(blkfront_ring_slots(f) == 128, "4-page ring: %u slots", blkfront_ring_slots(f));
	CHECK(blkfront_sectors(f) > 1000000, "sectors %llu", (unsigned long long)blkfront_sectors(f));

	/* 32 writes outstanding at once, 1 to 88 sectors each, then 4
	 * indirect ones of 1 MiB. */
	enum { N = 36 };
	static struct bf_req reqs[N];
	static uint8_t *bufs[N];
	uint64_t sector = 100;
	for (int i = 0; i < N; i++) {
		uint32_t ns = i < 32 ? 1 + (uint32_t)(i * 7 % 88) : 2048;
		bufs[i] = malloc((size_t)ns * 512);
		fill(bufs[i], (size_t)ns * 512, (uint64_t)i + 1);
		reqs[i] = (struct bf_req){.op = BLKIF_OP_WRITE, .sector = sector, .nsect = ns, .buf = bufs[i]};
		sector += ns;
	}
	long batches_before = status_batches();
	int queued = 0, done = 0;
	while (done < N) {
		while (queued < N && blkfront_queue(f, &reqs[queued]) == 0)
			queued++;
		blkfront_kick(f);
		struct bf_req *r = blkfront_wait(f, 5000);
		if (!r) {
			CHECK(0, "timeout with %d of %d done", done, N);
			break;
		}
		CHECK(r->status == BLKIF_RSP_OKAY, "write %llu failed: %d", (unsigned long long)r->id,
		      r->status);
		done++;
	}
	long batches = status_batches() - batches_before;
	printf("linux-io: %d writes in %ld batches\n", N, batches);
	CHECK(batches > 0 && batches < N, "%d outstanding writes took %ld batches", N, batches);
	/* Read everything back (indirect reads too) and a never-written range. */
	for (int i = 0; i < N; i++)
		CHECK(read_seeded(f, reqs[i].sector, reqs[i].nsect, (uint64_t)i + 1), "read back %d differs", i);
	uint8_t zeros[4096] = {0}, rd[4096];
	memset(rd, 0xee, sizeof(rd));
	struct bf_req z = {.op = BLKIF_OP_READ, .sector = 900000, .nsect = 8, .buf = rd};
	CHECK(blkfront_do(f, &z, 5000) == BLKIF_RSP_OKAY && !memcmp(rd, zeros, 4096),
	      "unwritten sectors do not read as zeros");
	/* Flush, then discard the first write and see zeros. */
	struct bf_req fl = {.op = BLKIF_OP_FLUSH_DISKCACHE};
	CHECK(blkfront_do(f, &fl, 5000) == BLKIF_RSP_OKAY, "flush");
	struct bf_req dc = {.op = BLKIF_OP_DISCARD, .sector = reqs[0].sector, .nr_sectors = reqs[0].nsect};
	CHECK(blkfront_do(f, &dc, 5000) == BLKIF_RSP_OKAY, "discard");
	memset(rd, 0xee, 512);
	struct bf_req rz = {.op = BLKIF_OP_READ, .sector = reqs[0].sector, .nsect = 1, .buf = rd};
	CHECK(blkfront_do(f, &rz, 5000) == BLKIF_RSP_OKAY && !memcmp(rd, zeros, 512),
	      "discarded sectors do not read as zeros");
	for (int i = 0; i < N; i++)
		free(bufs[i]);
	blkfront_close(f, 1);
	char path[128];
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/%lld/state", g.domid, 51728LL);
	CHECK(wait_node(path, "6", 3000), "backend not Closed after the close handshake");
	guest_destroy(&g);
	CHECK(wait_run_state("linux-io", STORE_RUN_COMPLETE, 5000), "a raw-only run ends complete");
}

static void test_validation(void)
{
	struct guest g;
	guest_new(&g, "validator", "vdev=xvdc vdev=xvdd");
	struct blkfront_opts o = {.data_pages = 8};
	struct blkfront *f = connect_dev(&g, "xvdc", &o);
	REQUIRE(f, "connect");
	uint64_t cap = blkfront_sectors(f);
	uint32_t ref = blkfront_grant(f, 0);
	uint8_t s[112];
	struct {
		const char *what;
		uint8_t op, nseg, first, last;
		uint64_t sector;
		uint32_t gref;
		int16_t want;
	} cases[] = {
		{"a valid write", BLKIF_OP_WRITE, 1, 0, 7, 10, 0, BLKIF_RSP_OKAY},
		{"0 segments", BLKIF_OP_WRITE, 0, 0, 7, 10, 0, BLKIF_RSP_ERROR},
		{"12 segments", BLKIF_OP_WRITE, 12, 0, 7, 10, 0, BLKIF_RSP_ERROR},
		{"first_sect > last_sect", BLKIF_OP_WRITE, 1, 5, 2, 10, 0, BLKIF_RSP_ERROR},
		{"last_sect 8", BLKIF_OP_READ, 1, 0, 8, 10, 0, BLKIF_RSP_ERROR},
		{"past the end", BLKIF_OP_WRITE, 1, 0, 1, cap - 1, 0, BLKIF_RSP_ERROR},
		{"sector overflow", BLKIF_OP_READ, 11, 0, 7, UINT64_MAX - 40, 0, BLKIF_RSP_ERROR},
		{"the last sector", BLKIF_OP_WRITE, 1, 0, 0, cap - 1, 0, BLKIF_RSP_OKAY},
		{"unknown operation", 42, 1, 0, 7, 10, 0, BLKIF_RSP_EOPNOTSUPP},
		{"write barrier", BLKIF_OP_WRITE_BARRIER, 1, 0, 7, 10, 0, BLKIF_RSP_EOPNOTSUPP},
		{"a grant never made", BLKIF_OP_WRITE, 1, 0, 7, 10, 99999, BLKIF_RSP_ERROR},
		{"read into a grant never made", BLKIF_OP_READ, 1, 0, 7, 10, 77777, BLKIF_RSP_ERROR},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		blkfront_rw_slot(s, cases[i].op, cases[i].nseg, cases[i].sector, cases[i].gref ? cases[i].gref : ref,
		        cases[i].first, cases[i].last);
		int16_t st = (int16_t)blkfront_do_raw(f, s, 112, 8, 5000);
		CHECK(st == cases[i].want, "%s: status %d, want %d", cases[i].what, st, cases[i].want);
	}
	/* Discard beyond the end. */
	memset(s, 0, 112);
	s[0] = BLKIF_OP_DISCARD;
	uint64_t sec = cap - 4, nr = 8;
	memcpy(s + 16, &sec, 8);
	memcpy(s + 24, &nr, 8);
	CHECK((int16_t)blkfront_do_raw(f, s, 112, 8, 5000) == BLKIF_RSP_ERROR, "discard past the end accepted");
	/* Indirect: bad indirect_op, too many and zero segments, bad page. */
	uint16_t nsegs[] = {3, 257, 0, 3};
	uint8_t iops[] = {BLKIF_OP_FLUSH_DISKCACHE, BLKIF_OP_WRITE, BLKIF_OP_WRITE, BLKIF_OP_WRITE};
	uint32_t ipage[] = {blkfront_grant(f, 1), blkfront_grant(f, 1), blkfront_grant(f, 1), 55555};
	for (int i = 0; i < 4; i++) {
		memset(s, 0, 112);
		s[0] = BLKIF_OP_INDIRECT;
		s[1] = iops[i];
		memcpy(s + 2, &nsegs[i], 2);
		sec = 20;
		memcpy(s + 16, &sec, 8);
		memcpy(s + 28, &ipage[i], 4);
		CHECK((int16_t)blkfront_do_raw(f, s, 112, 8, 5000) == BLKIF_RSP_ERROR, "indirect case %d accepted", i);
	}
	/* An indirect page listing a segment with last_sect 9. */
	uint8_t *ip = blkfront_page(f, 1);
	memset(ip, 0, 4096);
	memcpy(ip, &ref, 4);
	ip[5] = 9;
	memset(s, 0, 112);
	s[0] = BLKIF_OP_INDIRECT;
	s[1] = BLKIF_OP_WRITE;
	uint16_t one = 1;
	memcpy(s + 2, &one, 2);
	memcpy(s + 16, &sec, 8);
	memcpy(s + 28, &ipage[0], 4);
	CHECK((int16_t)blkfront_do_raw(f, s, 112, 8, 5000) == BLKIF_RSP_ERROR, "indirect segment with last_sect 9 accepted");
	/* The device still works. */
	CHECK(write_seeded(f, 50, 8, 5) == 0 && read_seeded(f, 50, 8, 5),
	      "the device stopped working after bad requests");

	/* A 32-bit guest's ABI: id at offset 4, 108-byte slots. */
	struct blkfront_opts o32 = {.protocol = "x86_32-abi", .data_pages = 4};
	struct blkfront *f32 = connect_dev(&g, "xvdd", &o32);
	REQUIRE(f32, "connect x86_32");
	CHECK(blkfront_ring_slots(f32) == 32, "x86_32 ring slots %u", blkfront_ring_slots(f32));
	uint32_t r32 = blkfront_grant(f32, 0);
	memset(blkfront_page(f32, 0), 0x32, 4096);
	memset(s, 0, 108);
	s[0] = BLKIF_OP_WRITE;
	s[1] = 1;
	sec = 64;
	memcpy(s + 12, &sec, 8);
	memcpy(s + 20, &r32, 4);
	s[24] = 0;
	s[25] = 7;
	CHECK((int16_t)blkfront_do_raw(f32, s, 108, 4, 5000) == BLKIF_RSP_OKAY, "x86_32 write");
	memset(blkfront_page(f32, 0), 0, 4096);
	s[0] = BLKIF_OP_READ;
	CHECK((int16_t)blkfront_do_raw(f32, s, 108, 4, 5000) == BLKIF_RSP_OKAY && blkfront_page(f32, 0)[4095] == 0x32,
	      "x86_32 read back");
	blkfront_close(f32, 1);
	blkfront_close(f, 1);
	guest_destroy(&g);
}

/* A ring index a ring ahead: that device is cut off, nobody else is. */
static void test_ring_overflow(void)
{
	struct guest bad, good;
	struct blkfront_opts o = {.data_pages = 4};
	struct blkfront *fb = guest_with_disk(&bad, "overflower", "xvde", &o);
	struct blkfront *fg = guest_with_disk(&good, "bystander", "xvde", &o);
	volatile uint8_t *sr = blkfront_sring(fb);
	__atomic_store_n((volatile uint32_t *)sr, 1000u, __ATOMIC_RELEASE); /* req_prod */
	blkfront_notify(fb);
	char path[128];
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/51776/state", bad.domid);
	CHECK(wait_node(path, "5", 3000), "a bogus ring index did not disconnect the device");
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/51776/error", bad.domid);
	char *e = dom0_read(path);
	CHECK(e && strstr(e, "producer index"), "error node: %s", e ? e : "(none)");
	free(e);
	uint8_t buf[512] = {1};
	struct bf_req w = {.op = BLKIF_OP_WRITE, .sector = 1, .nsect = 1, .buf = buf};
	CHECK(blkfront_do(fg, &w, 5000) == 0, "the other guest was affected");
	blkfront_close(fb, 0);
	blkfront_close(fg, 1);
	guest_destroy(&bad);
	guest_destroy(&good);
}

/* Bad xenstore values from the frontend: a clear error, no connection. */
static void test_bad_frontend_values(void)
{
	struct guest g;
	guest_new(&g, "liar", "vdev=xvdf vdev=xvdg vdev=xvdh");
	char fe[96], path[160];
	struct {
		const char *vdev, *node, *value, *expect;
	} cases[] = {
		{"xvdf", "protocol", "arm64-abi", "protocol"},
		{"xvdg", "ring-ref", "12abc", "ring-ref"},
		{"xvdh", "ring-page-order", "9", "ring-page-order"},
	};
	for (size_t i = 0; i < 3; i++) {
		int64_t devid = 202 * 256 + (cases[i].vdev[3] - 'a') * 16;
		snprintf(fe, sizeof(fe), "/local/domain/%u/device/vbd/%lld", g.domid, (long long)devid);
		/* as the guest */
		snprintf(path, sizeof(path), "%s/ring-ref", fe);
		xs_write(g.xs, XBT_NULL, path, "8", 1);
		snprintf(path, sizeof(path), "%s/event-channel", fe);
		xs_write(g.xs, XBT_NULL, path, "1", 1);
		snprintf(path, sizeof(path), "%s/%s", fe, cases[i].node);
		xs_write(g.xs, XBT_NULL, path, cases[i].value, (unsigned)strlen(cases[i].value));
		snprintf(path, sizeof(path), "%s/state", fe);
		xs_write(g.xs, XBT_NULL, path, "3", 1);
		snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/%lld/state", g.domid,
		         (long long)devid);
		CHECK(wait_node(path, "5", 3000), "%s=%s: backend not Closing", cases[i].node, cases[i].value);
		snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/%lld/error", g.domid,
		         (long long)devid);
		char *e = dom0_read(path);
		CHECK(e && strstr(e, cases[i].expect), "%s: error node '%s'", cases[i].node, e ? e : "");
		free(e);
	}
	guest_destroy(&g);
	CHECK(!list_has_dying(), "a dying domain is left");
}

/* Detach during a connection, reconnect after Initialising. */
static void test_detach_and_reconnect(void)
{
	struct guest g;
	struct blkfront_opts o = {.data_pages = 4};
	struct blkfront *f = guest_with_disk(&g, "cycler", "xvdi", &o);
	CHECK(write_seeded(f, 3, 1, 9) == 0, "write");
	/* Frontend closes and comes back (Closed -> Initialising). */
	blkfront_close(f, 1);
	char path[160];
	snprintf(path, sizeof(path), "/local/domain/%u/device/vbd/51840/state", g.domid);
	xs_write(g.xs, XBT_NULL, path, "1", 1);
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/51840/state", g.domid);
	CHECK(wait_node(path, "2", 3000), "backend not back to InitWait");
	f = connect_dev(&g, "xvdi", &o);
	REQUIRE(f, "reconnect");
	CHECK(read_seeded(f, 3, 1, 9), "data lost over a reconnect");
	/* Detach: the toolstack sets online=0, the frontend closes, both
	 * directories go. */
	pid_t c = fork();
	if (c == 0) {
		char d[16];
		snprintf(d, sizeof(d), "%u", g.domid);
		_exit(cli("detach %s xvdi", d));
	}
	CHECK(wait_node(path, "5", 3000), "detach: backend not Closing");
	blkfront_close(f, 1);
	int st;
	waitpid(c, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "profile-backend detach failed");
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/51840", g.domid);
	CHECK(wait_node(path, NULL, 3000), "backend directory left after detach");
	snprintf(path, sizeof(path), "/local/domain/%u/device/vbd/51840", g.domid);
	CHECK(wait_node(path, NULL, 3000), "frontend directory left after detach");
	/* The domain lives on; attaching again gives the same disk. */
	char d[16];
	snprintf(d, sizeof(d), "%u", g.domid);
	CHECK(cli("attach %s vdev=xvdi", d) == 0, "attach again");
	f = connect_dev(&g, "xvdi", &o);
	REQUIRE(f, "connect after re-attach");
	CHECK(read_seeded(f, 3, 1, 9), "re-attached disk lost data");
	CHECK(cli("attach %s vdev=xvdi", d) != 0, "attached the same vdev twice");
	CHECK(cli("attach %s vdev=floppy", d) != 0, "attached a bad vdev name");
	CHECK(cli("detach 31999 xvdi") != 0, "detach from a domain that does not exist");
	blkfront_close(f, 0);
	guest_destroy(&g);
}

/* Detach with no close handshake to have: a device whose frontend never
 * connected goes at once (it used to wait 10 s and fail), and --force
 * removes one whose frontend is connected and never closes. */
static void test_detach_unanswered(void)
{
	struct guest g;
	guest_new(&g, "shy", "vdev=xvdj");
	char d[16], be[128], fe[96], path[160];
	snprintf(d, sizeof(d), "%u", g.domid);
	snprintf(be, sizeof(be), "/local/domain/0/backend/profsvc/%u/51856", g.domid);
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/vbd/51856", g.domid);
	snprintf(path, sizeof(path), "%s/state", be);
	CHECK(wait_node(path, "2", 3000), "backend not in InitWait");
	CHECK(cli("detach %s xvdj", d) == 0, "detach of a never-connected device failed");
	CHECK(wait_node(be, NULL, 3000), "backend directory left after detach");
	CHECK(wait_node(fe, NULL, 3000), "frontend directory left after detach");

	/* Attached again, connected, written; the frontend then ignores
	 * Closing. */
	CHECK(cli("attach %s vdev=xvdj", d) == 0, "attach again");
	struct blkfront_opts o = {.data_pages = 4};
	struct blkfront *f = connect_dev(&g, "xvdj", &o);
	REQUIRE(f, "connect");
	CHECK(write_seeded(f, 5, 1, 3) == 0, "write");
	CHECK(cli("detach --force %s xvdj", d) == 0, "detach --force failed");
	CHECK(wait_node(be, NULL, 3000), "backend directory left after detach --force");
	CHECK(wait_node(fe, NULL, 3000), "frontend directory left after detach --force");
	blkfront_close(f, 0);
	/* The backend let the device go: attached again, it connects and
	 * holds what was acknowledged. */
	CHECK(cli("attach %s vdev=xvdj", d) == 0, "attach after detach --force");
	f = connect_dev(&g, "xvdj", &o);
	REQUIRE(f, "connect after detach --force");
	CHECK(read_seeded(f, 5, 1, 3), "acknowledged data lost over detach --force");
	blkfront_close(f, 0);
	CHECK(cli("status --force") == 2, "--force accepted by status");
	guest_destroy(&g);
}

/* A guest that dies before ever connecting. */
static void test_death_mid_connect(void)
{
	struct guest g;
	guest_new(&g, "stillborn", "vdev=xvdp1");
	char path[160];
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/51953/state", g.domid);
	CHECK(wait_node(path, "2", 3000), "backend not in InitWait");
	uint32_t domid = g.domid;
	guest_destroy(&g);
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u", domid);
	CHECK(wait_node(path, NULL, 3000), "backend nodes left");
	CHECK(wait_run_state("stillborn", STORE_RUN_CRASHED, 3000), "run not crashed");
}

/* SIGKILL with requests in flight; the restarted backend answers them. */
static void test_restart(void)
{
	struct guest g;
	struct blkfront_opts o = {.data_pages = 400};
	struct blkfront *f = guest_with_disk(&g, "survivor", "xvdp2", &o);
	uint64_t rng = 1234;
	int in_flight = 0;
	enum { ROUNDS = 20, PER = 30 };
	static uint8_t data[ROUNDS][PER][4096];
	static struct bf_req reqs[ROUNDS][PER];
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < PER; i++) {
			fill(data[round][i], 4096, tu_rand(&rng));
			reqs[round][i] = (struct bf_req){.op = BLKIF_OP_WRITE,
			                                 .sector = (uint64_t)(round * PER + i) * 8,
			                                 .nsect = 8, .buf = data[round][i]};
			CHECK(blkfront_queue(f, &reqs[round][i]) == 0, "queue");
		}
		blkfront_kick(f);
		/* Kill the backend at some point while it works on them. */
		usleep((useconds_t)tu_rand_below(&rng, 3000));
		backend_stop(SIGKILL);
		/* What the dead backend had not answered is in flight. */
		in_flight += PER - (int)blkfront_poll_responses(f, 0);
		backend_start(NULL);
		int done = 0;
		while (done < PER) {
			struct bf_req *r = blkfront_wait(f, 10000);
			if (!r) {
				CHECK(0, "round %d: %d of %d answered after the restart", round, done, PER);
				break;
			}
			CHECK(r->status == BLKIF_RSP_OKAY, "round %d: a request failed across the restart",
			      round);
			done++;
		}
	}
	printf("restart: %d of %d requests were in flight at a SIGKILL\n", in_flight, ROUNDS * PER);
	CHECK(in_flight >= PER, "the kills never caught requests in flight (%d)", in_flight);
	/* Everything acknowledged is there. */
	for (int round = 0; round < ROUNDS; round++)
		for (int i = 0; i < PER; i++) {
			uint8_t back[4096];
			struct bf_req r = {.op = BLKIF_OP_READ, .sector = reqs[round][i].sector, .nsect = 8,
			                   .buf = back};
			CHECK(blkfront_do(f, &r, 5000) == 0 && !memcmp(back, data[round][i], 4096),
			      "round %d request %d lost", round, i);
		}
	struct store_run r1, r2;
	CHECK(find_run("survivor", &r1) && r1.state == STORE_RUN_RUNNING, "run not running");
	blkfront_close(f, 0);
	guest_destroy(&g);
	CHECK(wait_run_state("survivor", STORE_RUN_CRASHED, 5000), "run not ended");
	CHECK(find_run("survivor", &r2) && r2.run_id == r1.run_id, "the restarts made new runs");
}

/* The backend dies after writing responses into the ring but before
 * publishing them: those slots no longer hold the requests.  The restarted
 * backend must publish the recorded responses, not re-execute the slots. */
static void test_kill_before_publish(void)
{
	struct guest g;
	struct blkfront_opts o = {.data_pages = 64};
	struct blkfront *f = guest_with_disk(&g, "half-answered", "xvdp1", &o);
	backend_stop(SIGTERM);
	setenv("PROFSVC_FAULT_KILL_BEFORE_PUSH", "1", 1);
	backend_start(NULL);
	unsetenv("PROFSVC_FAULT_KILL_BEFORE_PUSH");
	enum { N = 20 };
	static uint8_t data[N][4096];
	static struct bf_req reqs[N];
	for (int i = 0; i < N; i++) {
		fill(data[i], 4096, 1000 + (uint64_t)i);
		reqs[i] = (struct bf_req){.op = BLKIF_OP_WRITE, .sector = (uint64_t)i * 8, .nsect = 8,
		                          .buf = data[i]};
		CHECK(blkfront_queue(f, &reqs[i]) == 0, "queue");
	}
	blkfront_kick(f);
	/* It dies by itself at the fault point. */
	int st;
	for (int i = 0; i < 500 && waitpid(backend_pid, &st, WNOHANG) == 0; i++)
		usleep(10000);
	CHECK(kill(backend_pid, 0) != 0, "the fault point was never reached");
	tu_untrack_child(backend_pid);
	backend_pid = 0;
	CHECK(blkfront_poll_responses(f, 0) == 0, "responses were published before the kill");
	backend_start(NULL);
	int done = 0;
	while (done < N) {
		struct bf_req *r = blkfront_wait(f, 10000);
		if (!r)
			break;
		CHECK(r->status == BLKIF_RSP_OKAY, "request %llu answered %d after the restart",
		      (unsigned long long)(r->id & 0xffff), r->status);
		done++;
	}
	CHECK(done == N, "%d of %d answered", done, N);
	for (int i = 0; i < N; i++)
		CHECK(read_seeded(f, (uint64_t)i * 8, 8, 1000 + (uint64_t)i), "write %d lost", i);
	blkfront_close(f, 0);
	guest_destroy(&g);
}

/* Reboot: a new domid with the same name is a second run. */
static void test_reboot(void)
{
	int64_t ids[2];
	for (int boot = 0; boot < 2; boot++) {
		struct guest g;
		struct blkfront_opts o = {.halvm = 1, .data_pages = 1};
		struct blkfront *f = guest_with_disk(&g, "rebooter", "xvdp1", &o);
		CHECK(write_seeded(f, 1, 1, (uint64_t)boot) == 0, "write");
		blkfront_close(f, 0);
		guest_destroy(&g);
		struct store_run r;
		CHECK(wait_run_state("rebooter", STORE_RUN_CRASHED, 5000) && find_run("rebooter", &r),
		      "boot %d not recorded", boot);
		ids[boot] = r.run_id;
	}
	CHECK(ids[0] != ids[1], "a reboot did not make a second run");
}

/* Empty notifications by the hundred thousand. */
static void test_event_storm(void)
{
	struct guest g;
	struct blkfront_opts o = {.data_pages = 2};
	struct blkfront *f = guest_with_disk(&g, "stormer", "xvdj", &o);
	for (int i = 0; i < 200000; i++)
		blkfront_notify(f);
	uint8_t buf[512] = {7};
	struct bf_req w = {.op = BLKIF_OP_WRITE, .sector = 1, .nsect = 1, .buf = buf};
	CHECK(blkfront_do(f, &w, 5000) == 0, "the storming guest is not served after its storm");
	blkfront_close(f, 0);
	guest_destroy(&g);
}

/* --max-run-bytes: beyond it, write errors. */
static void test_max_run_bytes(void)
{
	backend_stop(SIGTERM);
	backend_start("--max-run-bytes 64K");
	struct guest g;
	struct blkfront_opts o = {.data_pages = 40};
	struct blkfront *f = guest_with_disk(&g, "hungry", "xvdk", &o);
	static uint8_t buf[32768];
	struct bf_req a = {.op = BLKIF_OP_WRITE, .sector = 0, .nsect = 64, .buf = buf};
	CHECK(blkfront_do(f, &a, 5000) == 0, "the first 32 KiB");
	struct bf_req b = {.op = BLKIF_OP_WRITE, .sector = 64, .nsect = 64, .buf = buf};
	CHECK(blkfront_do(f, &b, 5000) == 0, "the second 32 KiB");
	struct bf_req c = {.op = BLKIF_OP_WRITE, .sector = 128, .nsect = 1, .buf = buf};
	CHECK(blkfront_do(f, &c, 5000) == BLKIF_RSP_ERROR, "a write past --max-run-bytes succeeded");
	struct bf_req r = {.op = BLKIF_OP_READ, .sector = 0, .nsect = 8, .buf = buf};
	CHECK(blkfront_do(f, &r, 5000) == 0, "reads still work past the limit");
	blkfront_close(f, 0);
	guest_destroy(&g);
	backend_stop(SIGTERM);

	/* What the store holds is charged, not what is written: one-sector
	 * writes 64 KiB apart each take a chunk (once, 8 MiB of them under a
	 * 1M limit grew the store to 1 GiB).  Refusals are saved with the
	 * device, and a restarted backend remembers what the run holds. */
	backend_start("--max-run-bytes 1M");
	f = guest_with_disk(&g, "sparse", "xvdk", &o);
	int ok = 0, refused = 0;
	for (int i = 0; i < 128; i++) {
		struct bf_req w = {.op = BLKIF_OP_WRITE, .sector = (uint64_t)i * 128, .nsect = 1, .buf = buf};
		int rc = blkfront_do(f, &w, 5000);
		ok += rc == BLKIF_RSP_OKAY;
		refused += rc == BLKIF_RSP_ERROR;
	}
	CHECK(ok == 16 && refused == 112, "1M of 64 KiB chunks is 16 sparse writes: %d written, %d refused", ok,
	      refused);
	struct bf_req again = {.op = BLKIF_OP_WRITE, .sector = 3 * 128 + 7, .nsect = 8, .buf = buf};
	CHECK(blkfront_do(f, &again, 5000) == BLKIF_RSP_OKAY, "a rewrite inside a held chunk costs nothing");
	/* The guest stays connected across the restart (it picks it up). */
	backend_stop(SIGTERM);
	backend_start("--max-run-bytes 1M");
	struct bf_req more = {.op = BLKIF_OP_WRITE, .sector = 200 * 128, .nsect = 1, .buf = buf};
	CHECK(blkfront_do(f, &more, 5000) == BLKIF_RSP_ERROR, "a restarted backend forgot what the run holds");
	struct bf_req held = {.op = BLKIF_OP_WRITE, .sector = 5 * 128, .nsect = 1, .buf = buf};
	CHECK(blkfront_do(f, &held, 5000) == BLKIF_RSP_OKAY, "after the restart, a held chunk");
	blkfront_close(f, 0);
	guest_destroy(&g);
	struct store_run run;
	REQUIRE(wait_run_state("sparse", STORE_RUN_CRASHED, 5000) || wait_run_state("sparse", STORE_RUN_COMPLETE, 100),
	        "run ended");
	REQUIRE(find_run("sparse", &run), "run");
	struct store *st = tu_open_store(db, STORE_READ);
	struct store_device_info info;
	REQUIRE(store_find_device(st, run.run_id, "xvdk", &info) == 0, "%s", store_errmsg(st));
	CHECK(info.errors == 113, "%lld refusals saved with the device, not 113", (long long)info.errors);
	store_close(st);
	backend_stop(SIGTERM);
	backend_start(NULL);
}

static void test_status(void)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "%s/profile-backend status --run-dir %s", tu_builddir(), rundir);
	FILE *p = popen(cmd, "r");
	char out[8192];
	size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
	out[n] = '\0';
	CHECK(p && pclose(p) == 0 && strstr(out, "profile-backend") && strstr(out, "DOMID"),
	      "status: %s", out);
	CHECK(cli("start") != 0, "a second backend started on the same run directory");
}

/* create GUEST.cfg on xensim: the profsvc disks become devices, the rest
 * is left to xl (here: ignored); keys and permissions as libxl writes. */
static void test_create(void)
{
	char *cfg = tu_path("guest.cfg");
	const char *text =
		"# a HaLVM guest\n"
		"name = \"cfg-guest\"\n"
		"kernel = \"/boot/halvm.elf\"\n"
		"memory = 64\n"
		"disk = [ 'file:/tmp/other.img,xvda,w',   # an ordinary disk stays with xl\n"
		"         'vdev=xvdp1, backendtype=profsvc',\n"
		"         \"vdev=xvdp2, backendtype=profsvc\" ]\n"
		"extra = \"+RTS -p -hc\"\n";
	REQUIRE(tu_write_file(cfg, text, strlen(text)) == 0, "write cfg");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "%s/profile-backend create --platform sim --sim-dir %s %s",
	         tu_builddir(), sim.dir, cfg);
	FILE *p = popen(cmd, "r");
	char out[64] = "";
	size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;
	out[n] = '\0';
	CHECK(p && pclose(p) == 0, "create failed: %s", out);
	uint32_t domid = (uint32_t)strtoul(out, NULL, 10);
	CHECK(domid > 0, "create printed '%s'", out);
	char path[160];
	static const char *const fe_keys[][2] = {{"backend-id", "0"}, {"state", "1"},
	                                         {"virtual-device", "51953"}, {"device-type", "disk"},
	                                         {"protocol", "x86_64-abi"}};
	for (size_t i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "/local/domain/%u/device/vbd/51953/%s", domid, fe_keys[i][0]);
		char *v = dom0_read(path);
		/* state moves on once the backend answers; everything else is fixed */
		CHECK(v && (!strcmp(v, fe_keys[i][1]) || i == 1), "%s = %s", path, v ? v : "(missing)");
		free(v);
	}
	static const char *const be_keys[][2] = {{"frontend-id", NULL}, {"online", "1"}, {"dev", "xvdp2"},
	                                         {"type", "profsvc"}, {"mode", "w"}, {"device-type", "disk"}};
	for (size_t i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/51954/%s", domid, be_keys[i][0]);
		char *v = dom0_read(path);
		CHECK(v && (!be_keys[i][1] || !strcmp(v, be_keys[i][1])), "%s = %s", path, v ? v : "(missing)");
		free(v);
	}
	snprintf(path, sizeof(path), "/local/domain/%u/device/vbd/51712", domid);
	char *v = dom0_read(path);
	CHECK(!v, "the ordinary disk xvda was written as a profsvc device");
	free(v);
	/* Permissions: the guest owns its frontend directory, dom0 the backend's. */
	char sock[600];
	snprintf(sock, sizeof(sock), "%s/dom0/xs.sock", sim.dir);
	setenv("XENSTORED_PATH", sock, 1);
	struct xs_handle *h = xs_open(0);
	unsigned np;
	snprintf(path, sizeof(path), "/local/domain/%u/device/vbd/51953", domid);
	struct xs_permissions *pf = xs_get_permissions(h, XBT_NULL, path, &np);
	CHECK(pf && np == 2 && pf[0].id == domid && pf[1].id == 0 && pf[1].perms == XS_PERM_READ,
	      "frontend directory permissions");
	free(pf);
	snprintf(path, sizeof(path), "/local/domain/0/backend/profsvc/%u/51953", domid);
	struct xs_permissions *pb = xs_get_permissions(h, XBT_NULL, path, &np);
	CHECK(pb && np == 2 && pb[0].id == 0 && pb[1].id == domid && pb[1].perms == XS_PERM_READ,
	      "backend directory permissions");
	free(pb);
	xs_close(h);
	/* The guest can use what was created. */
	struct guest g = {.domid = domid};
	struct plat_opts o = {.kind = PLAT_SIM, .sim_dir = sim.dir, .sim_domid = domid};
	char err[512];
	REQUIRE(plat_open(&g.p, &o, err, sizeof(err)) == 0, "%s", err);
	g.xs = plat_xs_open(g.p);
	struct blkfront_opts ho = {.halvm = 1, .data_pages = 1};
	struct blkfront *f = connect_dev(&g, "xvdp1", &ho);
	CHECK(f != NULL, "a HaLVM guest cannot use the created device");
	blkfront_close(f, 0);
	guest_destroy(&g);
	/* A create that fails once its domain exists destroys it: a device
	 * node planted for the next domids makes writing xvdp2 fail. */
	setenv("XENSTORED_PATH", sock, 1);
	h = xs_open(0);
	REQUIRE(h, "xs_open of dom0's xenstore");
	char plant[160];
	for (uint32_t d = domid + 1; d <= domid + 8; d++) {
		snprintf(plant, sizeof(plant), "/local/domain/%u/device/vbd/51954", d);
		xs_write(h, XBT_NULL, plant, "x", 1);
	}
	const char *rb = "name = \"rollback\"\n"
	                 "disk = [ 'vdev=xvdp1, backendtype=profsvc', 'vdev=xvdp2, backendtype=profsvc' ]\n";
	REQUIRE(tu_write_file(cfg, rb, strlen(rb)) == 0, "write cfg");
	snprintf(cmd, sizeof(cmd), "%s/profile-backend create --platform sim --sim-dir %s %s 2>&1",
	         tu_builddir(), sim.dir, cfg);
	p = popen(cmd, "r");
	char rbout[1024];
	n = p ? fread(rbout, 1, sizeof(rbout) - 1, p) : 0;
	rbout[n] = '\0';
	CHECK(p && pclose(p) != 0 && strstr(rbout, "already has a device xvdp2"),
	      "create over a planted device: %s", rbout);
	char list[8192];
	tu_xensim_run(&sim, "list", list, sizeof(list));
	CHECK(!strstr(list, "rollback"), "a failed create left its domain:\n%s", list);
	for (uint32_t d = domid + 1; d <= domid + 8; d++) {
		snprintf(plant, sizeof(plant), "/local/domain/%u/device", d);
		xs_rm(h, XBT_NULL, plant);
	}
	xs_close(h);
	/* Bad configs. */
	const char *bad = "name = \"x\"\ndisk = [ 'backendtype=profsvc' ]\n";
	tu_write_file(cfg, bad, strlen(bad));
	snprintf(cmd, sizeof(cmd), "%s/profile-backend create --platform sim --sim-dir %s %s 2>/dev/null",
	         tu_builddir(), sim.dir, cfg);
	CHECK(system(cmd) != 0, "a profsvc disk without vdev accepted");
	CHECK(cli("create /nonexistent.cfg") != 0, "a missing config accepted");

	/* xl gets the file as it is, then the list of its disks, whole: a
	 * spec longer than 511 bytes (once cut there) and one holding a ',
	 * and the profsvc disk in stock xl's form. */
	char longspec[700];
	memset(longspec, 'a', sizeof(longspec));
	memcpy(longspec, "target=/srv/", 12);
	longspec[sizeof(longspec) - 1] = '\0';
	char keep[2048];
	snprintf(keep, sizeof(keep),
	         "name = \"keep\"\n"
	         "disk = [ 'format=raw, vdev=xvda, access=rw, %s',\n"
	         "         \"format=raw, vdev=xvdb, target=/srv/o'brien.img\",\n"
	         "         'vdev=xvdp1, backendtype=profsvc' ]\n",
	         longspec);
	tu_write_file(cfg, keep, strlen(keep));
	snprintf(cmd, sizeof(cmd), "%s/profile-backend create --dry-run %s", tu_builddir(), cfg);
	p = popen(cmd, "r");
	char got[4096];
	n = p ? fread(got, 1, sizeof(got) - 1, p) : 0;
	got[n] = '\0';
	CHECK(p && pclose(p) == 0, "create --dry-run failed: %s", got);
	char want[4096];
	snprintf(want, sizeof(want),
	         "%s\n# profile-backend: the disks as stock xl takes them (each backendtype=profsvc "
	         "one as script=block-profsvc)\n"
	         "disk = [ \"format=raw, vdev=xvda, access=rw, %s\", "
	         "\"format=raw, vdev=xvdb, target=/srv/o'brien.img\", "
	         "\"vdev=xvdp1, script=block-profsvc, target=prof\" ]\n"
	         "# profsvc disk: xvdp1\n",
	         keep, longspec);
	CHECK(strcmp(got, want) == 0, "the config xl would get:\n%s\nnot\n%s", got, want);
	/* A FIFO as the config is refused, not waited on. */
	char *fifo = tu_path("guest.fifo");
	mkfifo(fifo, 0600);
	snprintf(cmd, sizeof(cmd), "timeout 10 %s/profile-backend create --dry-run %s 2>/dev/null", tu_builddir(),
	         fifo);
	int st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1, "create of a FIFO: status %d", st);
	free(fifo);
	free(cfg);
}

/* XSA-216: responses are written field by field; the padding bytes of
 * the slot keep what the guest put there. */
static void test_response_padding(void)
{
	struct guest g;
	struct blkfront_opts o = {.data_pages = 2};
	struct blkfront *f = guest_with_disk(&g, "padder", "xvdl", &o);
	uint8_t s[112];
	blkfront_rw_slot(s, BLKIF_OP_WRITE, 1, 5, blkfront_grant(f, 0), 0, 7);
	volatile uint8_t *slot0 = blkfront_sring(f) + 64;
	CHECK((int16_t)blkfront_do_raw(f, s, 112, 8, 5000) == BLKIF_RSP_OKAY, "write");
	/* Response bytes 12..15 are padding; they overlap the upper half of
	 * the request's id, which blkfront tags 0xA5A5A5A5. */
	CHECK(slot0[12] == 0xA5 && slot0[13] == 0xA5 && slot0[14] == 0xA5 && slot0[15] == 0xA5,
	      "response padding overwritten: %02x %02x %02x %02x", slot0[12], slot0[13], slot0[14],
	      slot0[15]);
	blkfront_close(f, 0);
	guest_destroy(&g);
}

/* Daemon mode, --mirror-raw and --durability power, and stop. */
static void test_daemon_mirror_power(void)
{
	char *mirror = tu_path("mirror"), *rd2 = tu_path("run2"), *db2 = tu_path("power.db");
	char cmd[8192];
	mkdir(mirror, 0700);
	snprintf(cmd, sizeof(cmd),
	         "%s/profile-backend start --platform sim --sim-dir %s --db %s --run-dir %s "
	         "--durability power --mirror-raw %s --capacity 100000 >/dev/null",
	         tu_builddir(), sim.dir, db2, rd2, mirror);
	/* The foreground backend of the other tests must not see these
	 * guests: it is stopped meanwhile. */
	backend_stop(SIGTERM);
	REQUIRE(system(cmd) == 0, "daemonised start");
	struct guest g;
	struct blkfront_opts o = {.halvm = 1, .data_pages = 1};
	struct blkfront *f = guest_with_disk(&g, "mirrored", "xvdp1", &o);
	CHECK(blkfront_sectors(f) == 100000, "--capacity: %llu sectors", (unsigned long long)blkfront_sectors(f));
	uint8_t buf[4096];
	fill(buf, sizeof(buf), 77);
	struct bf_req w = {.op = BLKIF_OP_WRITE, .sector = 9, .nsect = 8, .buf = buf};
	CHECK(blkfront_do(f, &w, 5000) == 0, "write with power durability");
	blkfront_close(f, 0);
	guest_destroy(&g);
	snprintf(cmd, sizeof(cmd), "%s/profile-backend stop --run-dir %s", tu_builddir(), rd2);
	CHECK(system(cmd) == 0, "profile-backend stop");
	snprintf(cmd, sizeof(cmd), "%s/profile-backend.pid", rd2);
	CHECK(access(cmd, F_OK) != 0, "pid file left after stop");
	snprintf(cmd, sizeof(cmd), "%s/profile-backend status --run-dir %s 2>/dev/null", tu_builddir(), rd2);
	CHECK(system(cmd) != 0, "status says running after stop");
	/* The raw image holds the write at its byte offset. */
	snprintf(cmd, sizeof(cmd), "%s/mirrored-run1-xvdp1.img", mirror);
	size_t len;
	uint8_t *img = tu_read_file(cmd, &len);
	CHECK(img && len == 100000 * 512u && !memcmp(img + 9 * 512, buf, 4096),
	      "raw mirror %s wrong (%zu bytes)", cmd, len);
	free(img);
	backend_start(NULL);
	free(mirror);
	free(rd2);
	free(db2);
}

/* The benchmark baselines (--sink): the same protocol, the data in a raw
 * image (raw, raw-direct) or nowhere (null), never in the store. */
static void test_sinks(void)
{
	static const char *const sinks[] = {"null", "raw", "raw-direct"};
	char *dir = tu_path("sink"), args[4400], cmd[8192];
	mkdir(dir, 0700);
	backend_stop(SIGTERM);

	/* Refused at the command line or at start, with a reason. */
	snprintf(cmd, sizeof(cmd), "%s/profile-backend start --sink bogus 2>/dev/null", tu_builddir());
	CHECK(WEXITSTATUS(system(cmd)) == 2, "--sink bogus accepted");
	snprintf(cmd, sizeof(cmd), "%s/profile-backend start --sink null --mirror-raw %s 2>/dev/null",
	         tu_builddir(), dir);
	CHECK(WEXITSTATUS(system(cmd)) == 2, "--sink null with --mirror-raw accepted");
	snprintf(cmd, sizeof(cmd),
	         "%s/profile-backend start --platform sim --sim-dir %s --db %s --run-dir %s "
	         "--sink raw=%s/missing >/dev/null 2>&1",
	         tu_builddir(), sim.dir, db, rundir, dir);
	CHECK(system(cmd) != 0, "--sink raw= with a missing directory started");

	for (int k = 0; k < 3; k++) {
		char name[32];
		snprintf(args, sizeof(args), k ? "--sink %s=%s" : "--sink %s", sinks[k], dir);
		backend_start(args);
		snprintf(name, sizeof(name), "sink-%s", sinks[k]);
		struct guest g;
		struct blkfront_opts o = {.data_pages = 64};
		struct blkfront *f = guest_with_disk(&g, name, "xvdp1", &o);
		static uint8_t buf[3][16384], back[16384];
		struct bf_req w[3];
		for (int i = 0; i < 3; i++) {
			fill(buf[i], sizeof(buf[i]), 900 + (uint64_t)i);
			w[i] = (struct bf_req){.op = BLKIF_OP_WRITE, .sector = 64 + (uint64_t)i * 32,
			                       .nsect = 32, .buf = buf[i]};
			CHECK(blkfront_queue(f, &w[i]) == 0, "queue");
		}
		blkfront_kick(f);
		for (int i = 0; i < 3; i++) {
			struct bf_req *r = blkfront_wait(f, 5000);
			CHECK(r && r->status == BLKIF_RSP_OKAY, "write on sink %s", sinks[k]);
		}
		struct bf_req fl = {.op = BLKIF_OP_FLUSH_DISKCACHE};
		CHECK(blkfront_do(f, &fl, 5000) == 0, "flush on sink %s", sinks[k]);
		struct bf_req rd = {.op = BLKIF_OP_READ, .sector = 96, .nsect = 32, .buf = back};
		CHECK(blkfront_do(f, &rd, 5000) == 0, "read on sink %s", sinks[k]);
		static const uint8_t zero[16384];
		CHECK(!memcmp(back, k ? buf[1] : zero, sizeof(back)), "read on sink %s returned other data",
		      sinks[k]);
		struct bf_req dc = {.op = BLKIF_OP_DISCARD, .sector = 64, .nr_sectors = 32};
		CHECK(blkfront_do(f, &dc, 5000) == 0, "discard on sink %s", sinks[k]);
		blkfront_close(f, 1);
		guest_destroy(&g);
		struct store_run run;
		CHECK(wait_run_state(name, STORE_RUN_CRASHED, 5000), "run of sink %s not ended", sinks[k]);
		CHECK(find_run(name, &run), "no run for sink %s", sinks[k]);
		size_t n = 0;
		int how = 0;
		uint8_t *data = export_profile(run.run_id, "prof", &n, &how);
		CHECK(!data, "sink %s put data in the store", sinks[k]);
		free(data);
		backend_stop(SIGTERM);
		if (k) {
			snprintf(cmd, sizeof(cmd), "%s/%s-run%lld-xvdp1.img", dir, name, (long long)run.run_id);
			/* A sparse image of the whole capacity: read where written. */
			static uint8_t img[96 * 512];
			int fd = open(cmd, O_RDONLY);
			CHECK(fd >= 0 && pread(fd, img, sizeof(img), 64 * 512) == (ssize_t)sizeof(img) &&
			          !memcmp(img, zero, 16384) && !memcmp(img + 16384, buf[1], 16384) &&
			          !memcmp(img + 32768, buf[2], 16384),
			      "raw image %s of sink %s wrong", cmd, sinks[k]);
			if (fd >= 0)
				close(fd);
			unlink(cmd);
		}
	}
	rmdir(dir);
	free(dir);
	backend_start(NULL);
}

int main(void)
{
	harness_start();
	backend_start(NULL);

	test_halvm_profile();
	test_linux_io();
	test_validation();
	test_ring_overflow();
	test_bad_frontend_values();
	test_detach_and_reconnect();
	test_detach_unanswered();
	test_death_mid_connect();
	test_reboot();
	test_event_storm();
	test_status();
	test_create();
	test_response_padding();
	test_daemon_mirror_power();
	test_sinks();
	test_restart();
	test_kill_before_publish();
	test_max_run_bytes();

	harness_stop();
	return tu_finish("test_backend");
}
