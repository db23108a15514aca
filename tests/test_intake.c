/*
 * test_intake.c - the owner's intake log (store/store_intake.c), beyond
 * what test_crash and test_store_model check with it on:
 *   - a writer that dies with every batch still only in the log: the next
 *     owner applies them all, byte for byte, with their counters;
 *   - a record torn or damaged in the log: the ones before it are
 *     applied, it is not (it was never acknowledged, or the file is
 *     damaged), and nothing else is harmed;
 *   - the ring: a writer that goes round it several times and then dies
 *     leaves records on both sides of the wrap, applied in order;
 *   - a log left by another store is refused at open with the reason, and
 *     the store opens once it is moved away;
 *   - a clean close leaves an empty log;
 *   - readers see a batch once it is folded, within a bound, and never a
 *     part of one;
 *   - a device whose run another process deletes while batches for it wait
 *     in the log: the fold leaves none of its data, and its handle then
 *     refuses writes (STORE_ENOTFOUND);
 *   - folds that fail (a full disk, injected): batches already appended
 *     read back (from the records in memory, over what SQLite has), a
 *     batch with writes is refused, a batch of reads is answered; once
 *     folds work again everything is folded and writes are taken again;
 *   - --durability power: the log is synced before a commit returns;
 *   - a log kept elsewhere (the backend keeps it in its run directory under
 *     --durability process) is found by a start that keeps it beside the
 *     database (--durability power), applied, and removed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/store_intake.h"
#include "testutil.h"

#define SECTORS 65536u /* 32 MiB devices */

static uint64_t rng;

/* Where the log goes, and where else one is looked for (NULL: defaults). */
static const char *log_at, *log_other;

static struct store *owner(const char *db, enum store_durability dur)
{
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1, .intake = 1, .durability = dur,
	                            .intake_path = log_at, .intake_other = log_other};
	struct store *s;
	char err[512];
	int rc;
	for (int tries = 0; (rc = store_open(&s, db, &o, err, sizeof(err))) == STORE_ELOCKED && tries < 2000; tries++)
		usleep(1000);
	REQUIRE(rc == 0, "owner open of %s: %s", db, err);
	return s;
}

/* A device and the model of what it holds. */
struct dev {
	struct store_device *d;
	int64_t id;
	uint8_t *model;
	int64_t writes;
};

static void new_run(struct store *s, struct dev *v, const char *name)
{
	struct store_run run = {.domid = 3};
	snprintf(run.name, sizeof(run.name), "%s", name);
	REQUIRE(store_run_begin(s, &run) == 0, "%s", store_errmsg(s));
	REQUIRE(store_device_create(s, run.run_id, "xvdb", 51728, SECTORS, &v->d) == 0, "%s", store_errmsg(s));
	v->id = store_device_id(v->d);
	v->model = calloc(SECTORS, 512);
	v->writes = 0;
}

/* One batch of 1-3 small writes (the HaLVM writer's size), applied to
 * the model only if commit says so. */
static int small_batch(struct store *s, struct dev *v)
{
	uint8_t buf[3][4096];
	struct store_segment seg[3];
	int n = 1 + (int)tu_rand_below(&rng, 3);

	REQUIRE(store_batch_begin(s) == 0, "%s", store_errmsg(s));
	for (int i = 0; i < n; i++) {
		uint32_t nsect = 1 + (uint32_t)tu_rand_below(&rng, 8);
		uint64_t sector = tu_rand_below(&rng, SECTORS - nsect);
		for (size_t k = 0; k < nsect * 512u; k++)
			buf[i][k] = (uint8_t)tu_rand(&rng);
		seg[i] = (struct store_segment){sector, nsect, buf[i]};
		REQUIRE(store_write(v->d, &seg[i], 1) == 0, "%s", store_errmsg(s));
	}
	int rc = store_batch_commit(s);
	if (rc == 0) {
		for (int i = 0; i < n; i++)
			memcpy(v->model + seg[i].sector * 512, seg[i].data, seg[i].nsect * 512u);
		v->writes += n;
	}
	return rc;
}

static int same_as_model(const char *db, int64_t id, const uint8_t *model, int64_t writes, const char *when)
{
	struct store *r = tu_open_store(db, STORE_READ);
	struct tu_buf b = {0};
	int ok = store_read_range(r, id, 0, (uint64_t)SECTORS * 512, tu_buf_cb, &b) == 0 &&
	         b.len == (size_t)SECTORS * 512 && memcmp(b.p, model, b.len) == 0;
	CHECK(ok, "%s: the device differs from the model", when);
	struct store_device_info info;
	struct store_run run;
	int found = 0;
	if (store_latest_run(r, &run.run_id) == 0 && store_find_device(r, run.run_id, "xvdb", &info) == 0) {
		found = 1;
		CHECK(info.write_requests == writes, "%s: %lld writes counted, %lld acknowledged", when,
		      (long long)info.write_requests, (long long)writes);
	}
	CHECK(found, "%s: no device", when);
	free(b.p);
	store_close(r);
	return ok;
}

/* A child writes n batches with the folder paused (so that they are only
 * in the log), tells the parent through the model file, and dies. */
static void die_with_records(const char *db, int n, int fold_first, uint8_t **model, int64_t *writes,
                             int64_t *id)
{
	char *mpath = tu_path("model.bin");
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		struct store *s = owner(db, STORE_DURABLE_PROCESS);
		struct dev v;
		new_run(s, &v, "intake");
		/* Round the ring first when asked: records then lie on both
		 * sides of its end. */
		for (int i = 0; i < fold_first; i++)
			REQUIRE(small_batch(s, &v) == 0, "%s", store_errmsg(s));
		REQUIRE(store_sync(s) == 0, "%s", store_errmsg(s)); /* all folded (a FLUSH) */
		store_intake_pause(s, 1);
		for (int i = 0; i < n; i++)
			REQUIRE(small_batch(s, &v) == 0, "%s", store_errmsg(s));
		struct store_intake_stats st;
		store_intake_stats(s, &st);
		REQUIRE(st.queued_seq - st.folded_seq == (uint64_t)n, "%llu records not folded, want %d",
		        (unsigned long long)(st.queued_seq - st.folded_seq), n);
		FILE *f = fopen(mpath, "wb");
		REQUIRE(f && fwrite(&v.id, sizeof(v.id), 1, f) == 1 && fwrite(&v.writes, sizeof(v.writes), 1, f) == 1 &&
		                fwrite(v.model, 512, SECTORS, f) == SECTORS && fclose(f) == 0,
		        "writing the model");
		kill(getpid(), SIGKILL);
	}
	int status;
	waitpid(pid, &status, 0);
	REQUIRE(WIFSIGNALED(status), "the writer did not die as told (status %d)", status);
	size_t len;
	uint8_t *m = tu_read_file(mpath, &len);
	REQUIRE(m && len == 16 + (size_t)SECTORS * 512, "the model");
	memcpy(id, m, 8);
	memcpy(writes, m + 8, 8);
	*model = malloc((size_t)SECTORS * 512);
	memcpy(*model, m + 16, (size_t)SECTORS * 512);
	free(m);
	free(mpath);
}

static off_t intake_size(const char *db)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s-intake", db);
	return stat(p, &st) == 0 ? st.st_size : -1;
}

static void test_recovery(void)
{
	char *db = tu_path("rec.db");
	uint8_t *model;
	int64_t writes, id;

	die_with_records(db, 300, 0, &model, &writes, &id);
	CHECK(intake_size(db) > 300 * 4096 / 8, "the log holds %lld bytes", (long long)intake_size(db));
	/* A reader before any owner came back sees only what was folded. */
	struct store *s = owner(db, STORE_DURABLE_PROCESS);
	struct store_intake_stats st;
	store_intake_stats(s, &st);
	CHECK(st.recovered == 300, "the owner applied %llu records, want 300", (unsigned long long)st.recovered);
	store_close(s);
	same_as_model(db, id, model, writes, "after recovery");
	CHECK(intake_size(db) == 0, "a clean close left %lld bytes of log", (long long)intake_size(db));
	/* Opened again: nothing to apply twice. */
	s = owner(db, STORE_DURABLE_PROCESS);
	store_intake_stats(s, &st);
	CHECK(st.recovered == 0, "%llu records applied twice", (unsigned long long)st.recovered);
	store_close(s);
	free(model);
	store_remove_files(db);
	free(db);
}

/* The log's newest record damaged (a torn append, or a flipped bit). */
static void test_torn(int flip)
{
	char *db = tu_path(flip ? "flip.db" : "torn.db");
	char lp[4200];
	uint8_t *model;
	int64_t writes, id;

	/* Write 40 batches; the model file holds the state after all 40.
	 * Then redo with 39 to know what the state before the last was. */
	die_with_records(db, 40, 0, &model, &writes, &id);
	snprintf(lp, sizeof(lp), "%s-intake", db);
	size_t len;
	uint8_t *log = tu_read_file(lp, &len);
	REQUIRE(log && len > 64, "the log");
	/* The last record: the one with the highest sequence number, found as
	 * recovery finds records (magic, then a sound length). */
	size_t last = 0;
	uint64_t top = 0;
	for (size_t off = 0; off + 48 <= len; off += 8) {
		uint64_t seq, tag;
		size_t rl;
		memcpy(&seq, log + off + 8, 8);
		memcpy(&tag, log + off + 16, 8);
		if (store_intake_parse(log + off, len - off, tag, &rl) == 0 && seq >= top) {
			top = seq;
			last = off;
		}
	}
	REQUIRE(top > 0, "no record found in the log");
	uint32_t rlen;
	memcpy(&rlen, log + last + 24, 4);
	if (flip)
		log[last + 40 + (tu_rand_below(&rng, rlen - 48))] ^= 0x10;
	else
		memset(log + last + rlen / 2, 0, rlen - rlen / 2); /* the append stopped half-way */
	REQUIRE(tu_write_file(lp, log, len) == 0, "rewrite the log");
	free(log);
	struct store *s = owner(db, STORE_DURABLE_PROCESS);
	struct store_intake_stats st;
	store_intake_stats(s, &st);
	CHECK(st.recovered == 39, "%s: %llu records applied, want the 39 before it", flip ? "flipped bit" : "torn record",
	      (unsigned long long)st.recovered);
	char report[512];
	CHECK(store_check_integrity(s, report, sizeof(report)) == 0, "integrity: %s", report);
	/* The last batch is not in: the device holds the model minus it, so
	 * at most 3 writes differ; the first 39 batches' counters are in. */
	struct store_device_info info;
	int64_t run_id;
	REQUIRE(store_latest_run(s, &run_id) == 0 && store_find_device(s, run_id, "xvdb", &info) == 0, "device");
	CHECK(info.write_requests < writes && info.write_requests >= writes - 3,
	      "%lld writes counted after losing the last batch of %lld", (long long)info.write_requests,
	      (long long)writes);
	store_close(s);
	free(model);
	store_remove_files(db);
	free(db);
}

static void test_ring(void)
{
	char *db = tu_path("ring.db");
	uint8_t *model;
	int64_t writes, id;

	/* About 3 MiB of records per 1000 batches: round the 4 MiB ring twice
	 * with the folder running, then 400 more in the log only. */
	die_with_records(db, 400, 3000, &model, &writes, &id);
	CHECK(intake_size(db) <= (4 << 20) + (1 << 20), "the log grew to %lld bytes, past its ring",
	      (long long)intake_size(db));
	struct store *s = owner(db, STORE_DURABLE_PROCESS);
	struct store_intake_stats st;
	store_intake_stats(s, &st);
	CHECK(st.recovered == 400, "%llu records applied after the ring wrapped, want 400",
	      (unsigned long long)st.recovered);
	store_close(s);
	same_as_model(db, id, model, writes, "after recovery across the ring's end");
	free(model);
	store_remove_files(db);
	free(db);
}

static void test_foreign(void)
{
	char *db = tu_path("foreign.db");
	char lp[4200], moved[4300];
	uint8_t *model;
	int64_t writes, id;

	die_with_records(db, 20, 0, &model, &writes, &id);
	free(model);
	/* The database goes; its log stays; a new store at the path. */
	snprintf(lp, sizeof(lp), "%s-intake", db);
	snprintf(moved, sizeof(moved), "%s.kept", lp);
	REQUIRE(rename(lp, moved) == 0, "keep the log");
	store_remove_files(db);
	REQUIRE(rename(moved, lp) == 0, "put the log back");
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1, .intake = 1};
	struct store *s;
	char err[512];
	int rc = store_open(&s, db, &o, err, sizeof(err));
	CHECK(rc == STORE_ENOTDB && strstr(err, "another store") && strstr(err, "move it away"),
	      "a log of another store: %d %s", rc, err);
	if (rc == 0)
		store_close(s);
	REQUIRE(rename(lp, moved) == 0, "move the log away");
	rc = store_open(&s, db, &o, err, sizeof(err));
	CHECK(rc == 0, "the store without the foreign log: %s", err);
	if (rc == 0)
		store_close(s);
	unlink(moved);
	store_remove_files(db);
	free(db);
}

/* Readers see a batch once folded: within a bound, whole. */
static void test_readers(void)
{
	char *db = tu_path("readers.db");
	struct store *s = owner(db, STORE_DURABLE_PROCESS);
	struct dev v;
	new_run(s, &v, "readers");
	struct store *r = tu_open_store(db, STORE_READ);
	double worst = 0;
	for (int i = 0; i < 50; i++) {
		/* a batch of two writes that a reader must see both or neither of */
		uint8_t a[512], b[512];
		memset(a, 'a' + i % 26, sizeof(a));
		memset(b, 'A' + i % 26, sizeof(b));
		struct store_segment sa = {10, 1, a}, sb = {5000, 1, b};
		REQUIRE(store_batch_begin(s) == 0 && store_write(v.d, &sa, 1) == 0 && store_write(v.d, &sb, 1) == 0 &&
		                store_batch_commit(s) == 0,
		        "%s", store_errmsg(s));
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int seen = 0;
		for (int k = 0; k < 20000 && !seen; k++) {
			struct tu_buf x = {0}, y = {0};
			REQUIRE(store_read_begin(r) == 0, "%s", store_errmsg(r));
			store_read_range(r, v.id, 10 * 512, 512, tu_buf_cb, &x);
			store_read_range(r, v.id, 5000 * 512, 512, tu_buf_cb, &y);
			store_read_end(r);
			int has_a = x.len == 512 && !memcmp(x.p, a, 512), has_b = y.len == 512 && !memcmp(y.p, b, 512);
			CHECK(has_a == has_b, "batch %d seen in part by a reader", i);
			seen = has_a && has_b;
			free(x.p);
			free(y.p);
			if (!seen)
				usleep(100);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		worst = ms > worst ? ms : worst;
		CHECK(seen, "batch %d never reached a reader", i);
	}
	printf("readers: a committed batch reached a reader within %.1f ms (worst of 50)\n", worst);
	/* A generous bound: the folder looks every millisecond; a loaded CI
	 * host (sanitizers, valgrind beside) can be a hundred times slower. */
	CHECK(worst < 2000, "a batch took %.0f ms to reach readers", worst);
	store_close(r);
	store_close(s);
	free(v.model);
	store_remove_files(db);
	free(db);
}

/* Another process deletes the run while its batches wait in the log. */
static void test_deleted_under(void)
{
	char *db = tu_path("deleted.db");
	struct store *s = owner(db, STORE_DURABLE_PROCESS);
	struct dev v;
	new_run(s, &v, "doomed");
	int64_t run_id;
	REQUIRE(store_latest_run(s, &run_id) == 0, "%s", store_errmsg(s));
	store_intake_pause(s, 1);
	for (int i = 0; i < 20; i++)
		REQUIRE(small_batch(s, &v) == 0, "%s", store_errmsg(s));
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		struct store *w = tu_open_store(db, STORE_WRITE);
		_exit(store_run_delete(w, run_id) == 0 ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the run was not deleted");
	store_intake_pause(s, 0);
	/* The next batch starts after the fold has seen the device gone. */
	int refused = 0;
	for (int i = 0; i < 200 && !refused; i++) {
		uint8_t x[512] = {1};
		struct store_segment sg = {1, 1, x};
		REQUIRE(store_batch_begin(s) == 0, "%s", store_errmsg(s));
		int rc = store_write(v.d, &sg, 1);
		refused = rc == STORE_ENOTFOUND;
		CHECK(rc == 0 || rc == STORE_ENOTFOUND, "write to a deleted device: %d %s", rc, store_errmsg(s));
		store_batch_commit(s);
		if (!refused)
			usleep(5000);
	}
	CHECK(refused, "writes to a device whose run was deleted are still taken");
	CHECK(store_device_gone(v.d), "the handle does not know its device is gone");
	store_close(s);
	struct store *r = tu_open_store(db, STORE_READ);
	char report[512];
	CHECK(store_check_integrity(r, report, sizeof(report)) == 0, "integrity: %s", report);
	int64_t left = -1;
	struct store_run_space *sp;
	size_t n;
	if (store_runs_space(r, 0, &sp, &n) == 0) {
		left = 0;
		for (size_t i = 0; i < n; i++)
			left += sp[i].db_bytes + sp[i].slot_bytes;
		free(sp);
	}
	CHECK(left == 0, "%lld bytes of data left by a deleted run", (long long)left);
	store_close(r);
	free(v.model);
	store_remove_files(db);
	free(db);
}

static int read_matches(struct store *s, struct dev *v, uint64_t sector, uint32_t nsect, int in_batch)
{
	uint8_t buf[8 * 4096];
	if (in_batch && store_batch_begin(s) != 0)
		return 0;
	int rc = store_read(v->d, sector, nsect, buf);
	if (in_batch)
		store_batch_commit(s); /* a batch of reads: its counters may be refused */
	return rc == 0 && memcmp(buf, v->model + sector * 512, nsect * 512u) == 0;
}

static void test_fold_fails(void)
{
	char *db = tu_path("failing.db");
	struct store *s = owner(db, STORE_DURABLE_PROCESS);
	struct dev v;
	new_run(s, &v, "failing");
	for (int i = 0; i < 30; i++)
		REQUIRE(small_batch(s, &v) == 0, "%s", store_errmsg(s));
	store_intake_inject_failure(s, 1);
	/* Appended until a fold has failed; then refused. */
	int refused = 0, taken = 0;
	for (int i = 0; i < 2000 && !refused; i++) {
		int rc = small_batch(s, &v);
		CHECK(rc == 0 || rc == STORE_ENOSPC, "a batch while folds fail: %d %s", rc, store_errmsg(s));
		if (rc)
			refused = 1;
		else
			taken++;
		if (!refused)
			usleep(200);
	}
	CHECK(refused, "batches with writes still taken while every fold fails");
	CHECK(strstr(store_errmsg(s), "no space left"), "the refusal does not say why: %s", store_errmsg(s));
	struct store_intake_stats st;
	store_intake_stats(s, &st);
	CHECK(st.queued_seq > st.folded_seq, "nothing waits in the log (the failing fold was not exercised)");
	/* Everything acknowledged reads back, in and outside batches. */
	int bad = 0;
	for (uint64_t sec = 0; sec < SECTORS; sec += 8)
		bad += !read_matches(s, &v, sec, 8, (sec / 8) % 2);
	CHECK(bad == 0, "%d reads of acknowledged data differ while folds fail", bad);
	/* A guest that goes on reading: each batch of reads appends its
	 * counters, until the ring is full; then such a batch is refused,
	 * not kept waiting for room that no fold will make (the backend once
	 * hung there, on a full dom0).  alarm: a hang fails the test. */
	alarm(120);
	int reads_taken = 0, reads_refused = 0;
	uint8_t rbuf[4096];
	for (int i = 0; i < 400000 && !reads_refused; i++) {
		REQUIRE(store_batch_begin(s) == 0, "%s", store_errmsg(s));
		CHECK(store_read(v.d, 0, 8, rbuf) == 0, "a read while folds fail: %s", store_errmsg(s));
		int rc = store_batch_commit(s);
		CHECK(rc == 0 || rc == STORE_ENOSPC, "a batch of reads while folds fail: %d %s", rc, store_errmsg(s));
		if (rc)
			reads_refused = 1;
		else
			reads_taken++;
	}
	alarm(0);
	CHECK(reads_refused, "%d batches of reads and the ring never filled", reads_taken);
	CHECK(read_matches(s, &v, 0, 8, 1), "reads with a full ring and failing folds");
	/* A read outside a batch, and a read transaction, both wait for the
	 * log to be folded: the one reads SQLite and the log, the other is
	 * refused.  Then folds work again: what is queued reaches SQLite by
	 * the folder's own retries, with no new batch to push it (each of
	 * the two once kept the folder from retrying). */
	CHECK(store_read(v.d, 0, 8, rbuf) == 0 && memcmp(rbuf, v.model, sizeof(rbuf)) == 0,
	      "a read outside a batch while folds fail: %s", store_errmsg(s));
	CHECK(store_read_begin(s) == STORE_ENOSPC, "a read transaction while folds fail: %s", store_errmsg(s));
	store_intake_inject_failure(s, 0);
	int caught_up = 0;
	for (int i = 0; i < 60 && !caught_up; i++) {
		store_intake_stats(s, &st);
		caught_up = st.folded_seq == st.queued_seq;
		if (!caught_up)
			usleep(50000);
	}
	CHECK(caught_up, "the queue not folded within 3 s of folds working again (folded %llu of %llu)",
	      (unsigned long long)st.folded_seq, (unsigned long long)st.queued_seq);
	/* Writes are taken again, everything gets folded. */
	int again = 0;
	for (int i = 0; i < 200 && !again; i++) {
		again = small_batch(s, &v) == 0;
		if (!again)
			usleep(5000);
	}
	CHECK(again, "writes not taken again once folds work: %s", store_errmsg(s));
	int64_t writes = v.writes, id = v.id;
	store_close(s);
	same_as_model(db, id, v.model, writes, "after folds failed for a while");
	printf("failing folds: %d batches appended after the failure began, then refused; %d batches of reads "
	       "until the ring was full, then refused\n", taken, reads_taken);
	free(v.model);
	store_remove_files(db);
	free(db);
}

static void test_power(void)
{
	char *db = tu_path("power.db");
	struct store *s = owner(db, STORE_DURABLE_POWER);
	struct dev v;
	new_run(s, &v, "power");
	for (int i = 0; i < 50; i++)
		REQUIRE(small_batch(s, &v) == 0, "%s", store_errmsg(s));
	int64_t writes = v.writes, id = v.id;
	store_close(s);
	same_as_model(db, id, v.model, writes, "power durability");
	free(v.model);
	store_remove_files(db);
	free(db);
}

static void test_moved_log(void)
{
	char *db = tu_path("moved.db"), *ring = tu_path("run-intake");
	uint8_t *model;
	int64_t writes, id;

	log_at = ring;
	die_with_records(db, 50, 0, &model, &writes, &id);
	struct stat st;
	CHECK(stat(ring, &st) == 0 && intake_size(db) < 0, "the log is not where it was put");
	log_at = NULL;
	log_other = ring;
	struct store *s = owner(db, STORE_DURABLE_POWER);
	struct store_intake_stats sts;
	store_intake_stats(s, &sts);
	CHECK(sts.recovered == 50, "%llu records applied from the log left elsewhere, want 50",
	      (unsigned long long)sts.recovered);
	store_close(s);
	log_other = NULL;
	CHECK(stat(ring, &st) != 0, "the log applied from elsewhere was left there");
	same_as_model(db, id, model, writes, "a log left in another place");
	free(model);
	store_remove_files(db);
	free(db);
	free(ring);
}

int main(void)
{
	rng = tu_seed(0x1a7a6e);
	test_recovery();
	test_torn(0);
	test_torn(1);
	test_ring();
	test_foreign();
	test_readers();
	test_deleted_under();
	test_fold_fails();
	test_power();
	test_moved_log();
	return tu_finish("test_intake");
}
