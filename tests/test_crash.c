/*
 * test_crash.c - a writer process killed with SIGKILL at random points.
 *
 * Each round a child opens the store as its owner, starts a run with a heap
 * profile device (written exactly like the HaLVM guest: one request per
 * commit) and a raw device (batches of multi-segment requests, and runs of
 * adjacent whole-chunk requests that take the data file), and reports
 * every commit on a pipe.  The parent kills it after a random delay, then
 * checks, on the same database that every earlier round also crashed into:
 *   - PRAGMA integrity_check and foreign_key_check are clean;
 *   - the stored data equals the model after exactly the acknowledged
 *     batches, or after one more (committed, ack not yet sent): every
 *     request is all-or-nothing, nothing acknowledged is lost;
 *   - the device counters agree with that same batch count;
 *   - export equals what convert-profile extracts from the model's raw
 *     image, i.e. it is consistent with the last committed status block.
 * Every other round the writer has an intake log (store_intake.c): its
 * batches are acknowledged once appended to the log and folded into SQLite
 * later, so a kill leaves acknowledged batches only in the log.  Such a
 * round is checked after the next owner opened the store (and applied the
 * log), as a restarted backend would; some of those rounds must have had
 * records to apply, or the test proved nothing about recovery.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frontend-stub/halvm_writer.h"
#include "ref_convert_profile.h"
#include "store/store_export.h"
#include "store/store_intake.h"
#include "testutil.h"

#define HP_SECTORS 2048u  /* 1 MiB */
#define RAW_SECTORS 1500u /* not a whole number of chunks */

struct req {
	int dev; /* 0 = hp, 1 = raw */
	int many; /* each segment is a request: store_write_many (bulk path) */
	unsigned nsegs;
	struct store_segment segs[11];
};

struct batch {
	int nreq;
	struct req *reqs;
};

struct plan {
	struct batch *b;
	int n, cap;
	uint64_t rng;
};

static uint8_t *hp_file;
static size_t hp_len;

static struct batch *new_batch(struct plan *p)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->b = realloc(p->b, (size_t)p->cap * sizeof(*p->b));
	}
	memset(&p->b[p->n], 0, sizeof(p->b[0]));
	return &p->b[p->n++];
}

static struct req *add_req(struct batch *b)
{
	b->reqs = realloc(b->reqs, (size_t)(b->nreq + 1) * sizeof(*b->reqs));
	memset(&b->reqs[b->nreq], 0, sizeof(b->reqs[0]));
	return &b->reqs[b->nreq++];
}

static void *copy_data(const void *src, size_t len)
{
	void *p = malloc(len);
	memcpy(p, src, len);
	return p;
}

/* A raw batch: 1-5 requests of 1-11 contiguous segments. */
static void plan_raw_batch(struct plan *p)
{
	struct batch *b = new_batch(p);
	int nreq = 1 + (int)tu_rand_below(&p->rng, 5);

	for (int r = 0; r < nreq; r++) {
		struct req *q = add_req(b);
		q->dev = 1;
		if (tu_rand_below(&p->rng, 3) == 0) {
			/* 1-4 adjacent requests, 44 KiB or whole chunks, from a
			 * chunk boundary: whole chunks go to the data file. */
			q->many = 1;
			q->nsegs = 1 + (unsigned)tu_rand_below(&p->rng, 4);
			uint64_t sector = 128 * tu_rand_below(&p->rng, RAW_SECTORS / 128 - 4);
			for (unsigned i = 0; i < q->nsegs; i++) {
				uint32_t n = tu_rand_below(&p->rng, 2) ? 128 : 88;
				uint8_t *d = malloc(n * 512);
				for (uint32_t k = 0; k < n * 512; k += 8) {
					uint64_t v = tu_rand(&p->rng);
					memcpy(d + k, &v, 8);
				}
				q->segs[i] = (struct store_segment){sector, n, d};
				sector += n;
			}
			continue;
		}
		q->nsegs = 1 + (unsigned)tu_rand_below(&p->rng, 11);
		uint64_t sector = tu_rand_below(&p->rng, RAW_SECTORS - q->nsegs * 8);
		for (unsigned i = 0; i < q->nsegs; i++) {
			uint32_t n = 1 + (uint32_t)tu_rand_below(&p->rng, 8);
			uint8_t *d = malloc(n * 512);
			for (uint32_t k = 0; k < n * 512; k += 8) {
				uint64_t v = tu_rand(&p->rng);
				memcpy(d + k, &v, 8);
			}
			q->segs[i] = (struct store_segment){sector, n, d};
			sector += n;
		}
	}
}

/* Every HaLVM request is its own batch; raw batches are interleaved. */
static int plan_halvm(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct plan *p = ctx;
	struct req *q = add_req(new_batch(p));

	q->dev = 0;
	q->nsegs = 1;
	q->segs[0] = (struct store_segment){sector, nsect, copy_data(data, nsect * 512u)};
	if (tu_rand_below(&p->rng, 3) == 0)
		plan_raw_batch(p);
	return 0;
}

static void make_plan(struct plan *p, uint64_t seed)
{
	struct halvm_writer w;

	memset(p, 0, sizeof(*p));
	p->rng = seed;
	halvm_writer_init(&w, 8, plan_halvm, p);
	halvm_writer_replay(&w, hp_file, hp_len, 1, UINT64_MAX);
}

static void free_plan(struct plan *p)
{
	for (int i = 0; i < p->n; i++) {
		for (int r = 0; r < p->b[i].nreq; r++)
			for (unsigned s = 0; s < p->b[i].reqs[r].nsegs; s++)
				free((void *)p->b[i].reqs[r].segs[s].data);
		free(p->b[i].reqs);
	}
	free(p->b);
}

enum { MSG_IDS, MSG_ACK, MSG_DONE };
struct msg {
	int32_t type;
	int32_t batch;
	int64_t run_id, dev[2];
};

static void send_msg(int fd, const struct msg *m)
{
	if (write(fd, m, sizeof(*m)) != (ssize_t)sizeof(*m))
		_exit(3);
}

static int intake_round(int round)
{
	return round % 2 == 1;
}

static void child(const char *db, const struct plan *p, int round, int fd)
{
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1, .intake = intake_round(round)};
	struct store_run run = {.domid = round};
	struct store_device *dev[2];
	struct store *s;
	struct msg m = {0};
	char err[512];

	/* The previous round's child may not be reaped by the kernel yet: its
	 * lock goes with it.  Retry briefly. */
	for (int tries = 0;; tries++) {
		int rc = store_open(&s, db, &o, err, sizeof(err));
		if (rc == 0)
			break;
		if (rc != STORE_ELOCKED || tries > 1000) {
			fprintf(stderr, "child: %s\n", err);
			_exit(2);
		}
		usleep(1000);
	}
	snprintf(run.name, sizeof(run.name), "crash-%d", round);
	if (store_run_begin(s, &run) ||
	    store_device_create(s, run.run_id, "xvdp2", 51954, HP_SECTORS, &dev[0]) ||
	    store_device_create(s, run.run_id, "xvdr", 51968, RAW_SECTORS, &dev[1])) {
		fprintf(stderr, "child: %s\n", store_errmsg(s));
		_exit(2);
	}
	m.type = MSG_IDS;
	m.run_id = run.run_id;
	m.dev[0] = store_device_id(dev[0]);
	m.dev[1] = store_device_id(dev[1]);
	send_msg(fd, &m);
	for (int i = 0; i < p->n; i++) {
		if (store_batch_begin(s))
			_exit(2);
		for (int r = 0; r < p->b[i].nreq; r++) {
			const struct req *q = &p->b[i].reqs[r];
			if ((q->many ? store_write_many(dev[q->dev], q->segs, q->nsegs)
			             : store_write(dev[q->dev], q->segs, q->nsegs))) {
				fprintf(stderr, "child: %s\n", store_errmsg(s));
				_exit(2);
			}
		}
		if (store_batch_commit(s)) {
			fprintf(stderr, "child: %s\n", store_errmsg(s));
			_exit(2);
		}
		m.type = MSG_ACK;
		m.batch = i;
		send_msg(fd, &m);
	}
	store_run_end(s, run.run_id, STORE_RUN_CRASHED, 0);
	m.type = MSG_DONE;
	send_msg(fd, &m);
	store_close(s);
	_exit(0);
}

/* The model after the first nbatches batches. */
static void model_after(const struct plan *p, int nbatches, uint8_t *img[2], int64_t reqs[2])
{
	memset(img[0], 0, HP_SECTORS * 512u);
	memset(img[1], 0, RAW_SECTORS * 512u);
	reqs[0] = reqs[1] = 0;
	for (int i = 0; i < nbatches && i < p->n; i++)
		for (int r = 0; r < p->b[i].nreq; r++) {
			const struct req *q = &p->b[i].reqs[r];
			for (unsigned s = 0; s < q->nsegs; s++)
				memcpy(img[q->dev] + q->segs[s].sector * 512, q->segs[s].data,
				       q->segs[s].nsect * 512u);
			reqs[q->dev] += q->many ? (int64_t)q->nsegs : 1;
		}
}

struct cmp {
	const uint8_t *model;
	int equal;
};

static int cmp_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct cmp *c = ctx;
	static const uint8_t zeros[65536];

	while (len > 0) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);
		if (memcmp(c->model + off, data ? data : zeros, n) != 0)
			c->equal = 0;
		off += n;
		len -= n;
		if (data)
			data = (const uint8_t *)data + n;
	}
	return 0;
}

static int device_equals(struct store *s, int64_t dev, const uint8_t *model, uint64_t sectors)
{
	struct cmp c = {model, 1};

	if (store_read_range(s, dev, 0, sectors * 512, cmp_cb, &c) != 0)
		return 0;
	return c.equal;
}

static int recovering_rounds;

/* An intake round: the next owner applies what the log holds. */
static void recover(const char *db, int round)
{
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1, .intake = 1};
	struct store_intake_stats st;
	struct store *s;
	char err[512];
	int rc;

	for (int tries = 0; (rc = store_open(&s, db, &o, err, sizeof(err))) == STORE_ELOCKED && tries < 1000; tries++)
		usleep(1000);
	REQUIRE(rc == 0, "round %d: the owner after the kill: %s", round, err);
	store_intake_stats(s, &st);
	if (st.recovered)
		recovering_rounds++;
	store_close(s);
}

/* Returns 1 if the kill landed mid-workload. */
static int verify_round(const char *db, const struct plan *p, const struct msg *ids, int acked,
                        int done, int round, uint8_t *img[2])
{
	if (intake_round(round))
		recover(db, round);
	struct store *s = tu_open_store(db, STORE_READ);
	char report[512];
	int64_t reqs[2];

	CHECK(store_check_integrity(s, report, sizeof(report)) == 0, "round %d: integrity: %s",
	      round, report);
	if (!ids->run_id) {
		store_close(s);
		return 0; /* killed before the run existed */
	}
	store_read_begin(s);
	/* acked batches are committed; the next one may be too. */
	int matched = -1;
	for (int k = acked; k <= acked + 1 && k <= p->n && matched < 0; k++) {
		model_after(p, k, img, reqs);
		if (device_equals(s, ids->dev[0], img[0], HP_SECTORS) &&
		    device_equals(s, ids->dev[1], img[1], RAW_SECTORS))
			matched = k;
	}
	CHECK(matched >= 0, "round %d: store matches neither %d nor %d committed batches", round,
	      acked, acked + 1);
	if (matched >= 0) {
		for (int d = 0; d < 2; d++) {
			struct store_device_info info;
			CHECK(store_find_device(s, ids->run_id, d ? "xvdr" : "xvdp2", &info) == 0 &&
			              info.write_requests == reqs[d],
			      "round %d: device %d counts %lld writes, model %lld", round, d,
			      (long long)info.write_requests, (long long)reqs[d]);
		}
		/* Export vs convert-profile on the model's raw image. */
		struct store_device_info hp;
		struct store_extract_report rep;
		struct tu_buf b = {0};
		uint8_t *ref;
		size_t reflen;
		enum ref_result rr = ref_convert_profile(img[0], HP_SECTORS * 512u, 8, &ref, &reflen);
		REQUIRE(store_find_device(s, ids->run_id, "xvdp2", &hp) == 0, "%s", store_errmsg(s));
		int rc = store_extract_profile(s, &hp, 0, tu_buf_cb, &b, &rep);
		if (rr == REF_CORRUPT)
			CHECK(rc == STORE_ECORRUPT && rep.header == STATUS_BLOCK_EMPTY,
			      "round %d: export of an unwritten profile: %d", round, rc);
		else
			CHECK(rc == 0 && b.len == reflen && memcmp(b.p, ref, reflen) == 0,
			      "round %d: export (%zu bytes) differs from convert-profile (%zu)", round,
			      b.len, reflen);
		free(b.p);
		free(ref);
	}
	store_read_end(s);
	store_close(s);
	return !done && matched > 0 && matched < p->n;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	char path[4096];
	uint64_t rng = tu_seed(0xc4a54);
	int rounds = getenv("PROFSVC_LONG") ? 1001 : 201; /* round 0 calibrates */
	int mid = 0, before = 0, after = 0;
	double full = 0, window = 0;
	uint8_t *img[2] = {malloc(HP_SECTORS * 512u), malloc(RAW_SECTORS * 512u)};
	char *db = tu_path("crash.db");

	snprintf(path, sizeof(path), "%s/tests/data/ghc/phases/phases-killed-SIGKILL.hp",
	         tu_srcdir());
	hp_file = tu_read_file(path, &hp_len);
	REQUIRE(hp_file, "cannot read %s", path);

	for (int round = 0; round < rounds; round++) {
		struct plan p;
		int fds[2];
		make_plan(&p, tu_rand(&rng));
		REQUIRE(pipe(fds) == 0, "pipe");
		double t0 = now_s();
		pid_t pid = fork();
		REQUIRE(pid >= 0, "fork");
		if (pid == 0) {
			close(fds[0]);
			child(db, &p, round, fds[1]);
		}
		close(fds[1]);
		/* Round 0 runs to completion to calibrate the kill window; the
		 * window then shrinks whenever a kill comes after the writer
		 * finished (the machine got faster, e.g. other tests ended). */
		if (round > 0) {
			double delay = window * (double)tu_rand_below(&rng, 1000000) / 1e6;
			struct timespec ts = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
			nanosleep(&ts, NULL);
			kill(pid, SIGKILL);
		}
		int status;
		waitpid(pid, &status, 0);
		if (round == 0) {
			full = now_s() - t0;
			window = full * 1.1;
			REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			        "the uninterrupted writer failed (status %d)", status);
			printf("an uninterrupted round takes %.1f ms (%d batches)\n", full * 1e3, p.n);
		} else {
			CHECK(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
			      "round %d: writer failed on its own (status %d)", round, status);
		}
		struct msg m, ids = {0};
		int acked = 0, done = 0;
		while (read(fds[0], &m, sizeof(m)) == (ssize_t)sizeof(m)) {
			if (m.type == MSG_IDS)
				ids = m;
			else if (m.type == MSG_ACK)
				acked = m.batch + 1;
			else if (m.type == MSG_DONE)
				done = 1;
		}
		close(fds[0]);
		if (verify_round(db, &p, &ids, acked, done, round, img))
			mid++;
		else if (done) {
			after++;
			if (round > 0)
				window *= 0.85;
		} else
			before++;
		free_plan(&p);
		if (tu_failures > 20)
			break;
	}
	printf("%d kills: %d mid-write, %d before the first batch, %d after the last\n", rounds - 1,
	       mid, before, after);
	/* Otherwise the timing calibration failed and the test proved little. */
	CHECK(mid >= rounds / 2, "only %d of %d kills landed mid-write", mid, rounds - 1);
	printf("%d intake rounds left acknowledged batches in the log only (applied by the next owner)\n",
	       recovering_rounds);
	CHECK(recovering_rounds >= rounds / 10, "only %d kills left records in the intake log to recover",
	      recovering_rounds);
	free(hp_file);
	free(img[0]);
	free(img[1]);
	free(db);
	return tu_finish("test_crash");
}
