/*
 * test_concurrency.c - readers, writers and bad databases.
 *   - a reader sees consistent snapshots while another process commits;
 *   - a second owner (another profile-backend) is refused, in another
 *     process and in the same one, and gets in once the first is gone;
 *     short-lived writers (import) coexist with the owner;
 *   - a newer schema, a non-SQLite file, another application's SQLite file
 *     and an empty file are refused with clear messages and left untouched;
 *   - a damaged database gives errors, never a crash or silent success.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store_export.h"
#include "testutil.h"

static int open_rc(const char *path, enum store_open_mode mode, char *err, size_t len)
{
	struct store_open_opts o = {.mode = mode};
	struct store *s;
	int rc = store_open(&s, path, &o, err, len);

	if (rc == 0)
		store_close(s);
	return rc;
}

/* ---- snapshots under a live writer ---------------------------------------- */

static void writer_child(const char *db, int64_t dev_a, int64_t dev_b, int batches)
{
	struct store *s = tu_open_store(db, STORE_OWNER);
	struct store_device *a, *b;
	uint8_t sect[512];

	if (store_device_open(s, dev_a, &a) || store_device_open(s, dev_b, &b))
		_exit(2);
	for (int v = 1; v <= batches; v++) {
		memset(sect, v & 0xff, sizeof(sect));
		memcpy(sect, &v, sizeof(v));
		struct store_segment sa = {5, 1, sect}, sb = {700, 1, sect};
		if (store_batch_begin(s) || store_write(a, &sa, 1) || store_write(b, &sb, 1) ||
		    store_batch_commit(s)) {
			fprintf(stderr, "writer: %s\n", store_errmsg(s));
			_exit(2);
		}
	}
	store_close(s);
	_exit(0);
}

static void test_snapshots(void)
{
	char *db = tu_path("snap.db");
	struct store *s = tu_open_store(db, STORE_OWNER);
	struct store_run run = {.domid = 1, .name = "snap"};
	struct store_device *a, *b;

	REQUIRE(store_run_begin(s, &run) == 0 &&
	                store_device_create(s, run.run_id, "xvdp1", 1, 1024, &a) == 0 &&
	                store_device_create(s, run.run_id, "xvda", 2, 1024, &b) == 0,
	        "%s", store_errmsg(s));
	int64_t ida = store_device_id(a), idb = store_device_id(b);
	store_close(s);

	pid_t pid = fork();
	if (pid == 0)
		writer_child(db, ida, idb, 3000);

	s = tu_open_store(db, STORE_READ);
	REQUIRE(store_device_open(s, ida, &a) == 0 && store_device_open(s, idb, &b) == 0, "%s",
	        store_errmsg(s));
	int last = 0, reads = 0, torn = 0, errors = 0, status;
	while (waitpid(pid, &status, WNOHANG) == 0 || reads == 0) {
		uint8_t x[512], y[512];
		int va, vb;
		if (store_read_begin(s) != 0) {
			errors++;
			continue;
		}
		if (store_read(a, 5, 1, x) || store_read(b, 700, 1, y))
			errors++;
		store_read_end(s);
		memcpy(&va, x, sizeof(va));
		memcpy(&vb, y, sizeof(vb));
		torn += va != vb || va < last;
		last = va;
		reads++;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer failed");
	CHECK(errors == 0, "%d reads failed while the writer committed: %s", errors,
	      store_errmsg(s));
	CHECK(torn == 0, "%d of %d snapshots were inconsistent", torn, reads);
	printf("snapshots: %d consistent reads during 3000 commits (last value seen %d)\n", reads,
	       last);
	store_close(s);
	free(db);
}

/* ---- one owner ------------------------------------------------------------ */

static void test_owner_lock(void)
{
	char *db = tu_path("owner.db");
	char err[512], pid[32];
	struct store *owner = tu_open_store(db, STORE_OWNER);

	/* Same process, second owner. */
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == STORE_ELOCKED, "second owner in-process");
	snprintf(pid, sizeof(pid), "pid %ld", (long)getpid());
	CHECK(strstr(err, pid) != NULL, "the refusal names the owner: %s", err);

	/* Another process. */
	pid_t c = fork();
	if (c == 0)
		_exit(open_rc(db, STORE_OWNER, err, sizeof(err)) == STORE_ELOCKED ? 0 : 1);
	int status;
	waitpid(c, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a second owner process got in");

	/* A short-lived writer (import) works beside the owner. */
	struct store *w = tu_open_store(db, STORE_WRITE);
	struct store_run run = {.domid = -1, .name = "imported", .source = "import"};
	CHECK(store_run_begin(w, &run) == 0, "writer beside owner: %s", store_errmsg(w));
	store_close(w);
	struct store_run got;
	CHECK(store_get_run(owner, run.run_id, &got) == 0 && strcmp(got.name, "imported") == 0,
	      "owner does not see the import");

	store_close(owner);
	/* The owner is gone: the next one gets in. */
	c = fork();
	if (c == 0)
		_exit(open_rc(db, STORE_OWNER, err, sizeof(err)) == 0 ? 0 : 1);
	waitpid(c, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "no owner after the first closed");

	/* An owner killed outright leaves no stale lock. */
	int fds[2];
	REQUIRE(pipe(fds) == 0, "pipe");
	c = fork();
	if (c == 0) {
		struct store *s = tu_open_store(db, STORE_OWNER);
		(void)s;
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char x;
	CHECK(read(fds[0], &x, 1) == 1, "owner child");
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == STORE_ELOCKED, "child owner not seen");
	kill(c, SIGKILL);
	waitpid(c, &status, 0);
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == 0, "stale lock after SIGKILL: %s", err);
	close(fds[0]);
	close(fds[1]);
	free(db);
}

/* ---- files that are not (our) databases ------------------------------------- */

static int same_file(const char *path, const uint8_t *want, size_t len)
{
	size_t got;
	uint8_t *now = tu_read_file(path, &got);
	int same = now && got == len && memcmp(now, want, len) == 0;
	free(now);
	return same;
}

static void expect_refused(const char *path, int code, const char *words, const char *what)
{
	size_t len;
	uint8_t *before = tu_read_file(path, &len);
	char err[512];

	for (int mode = STORE_READ; mode <= STORE_OWNER; mode++) {
		int rc = open_rc(path, (enum store_open_mode)mode, err, sizeof(err));
		CHECK(rc == code, "%s (mode %d): rc %d, want %d: %s", what, mode, rc, code, err);
		CHECK(strstr(err, words) != NULL, "%s: message lacks '%s': %s", what, words, err);
	}
	CHECK(same_file(path, before, len), "%s was modified", what);
	free(before);
}

static void test_foreign_files(void)
{
	char *db = tu_path("newer.db");
	struct store *s = tu_open_store(db, STORE_OWNER);
	store_close(s);

	/* A database from a newer profsvc. */
	sqlite3 *raw;
	REQUIRE(sqlite3_open(db, &raw) == SQLITE_OK, "sqlite3_open");
	sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL);
	sqlite3_close(raw);
	expect_refused(db, STORE_ENEWER, "newer than this profsvc", "newer schema");
	free(db);

	/* Not SQLite at all. */
	char *junk = tu_path("junk.db");
	char text[8192];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	tu_write_file(junk, text, sizeof(text));
	expect_refused(junk, STORE_ENOTDB, "not a profsvc database", "text file");
	free(junk);

	/* Some other application's SQLite database. */
	char *other = tu_path("other.db");
	REQUIRE(sqlite3_open(other, &raw) == SQLITE_OK, "sqlite3_open");
	sqlite3_exec(raw, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL, NULL);
	sqlite3_close(raw);
	expect_refused(other, STORE_ENOTDB, "not a profsvc store", "foreign database");
	free(other);

	/* Nothing there / empty file: readers say so, writers create. */
	char err[512];
	char *none = tu_path("none.db");
	CHECK(open_rc(none, STORE_READ, err, sizeof(err)) == STORE_ENOTFOUND &&
	              strstr(err, "no database at"),
	      "missing database: %s", err);
	tu_write_file(none, "", 0);
	CHECK(open_rc(none, STORE_READ, err, sizeof(err)) == STORE_ENOTFOUND && strstr(err, "empty"),
	      "empty database: %s", err);
	CHECK(open_rc(none, STORE_WRITE, err, sizeof(err)) == 0, "writer on empty file: %s", err);
	CHECK(open_rc(none, STORE_READ, err, sizeof(err)) == 0, "reader after init: %s", err);
	free(none);

	/* A directory. */
	CHECK(open_rc(tu_tmpdir(), STORE_READ, err, sizeof(err)) == STORE_ENOTDB, "directory: %s",
	      err);
}

/* ---- damage --------------------------------------------------------------- */

static int count_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	(void)off;
	(void)data;
	*(uint64_t *)ctx += len;
	return 0;
}

static void test_damage(void)
{
	char *db = tu_path("damaged.db");
	struct store *s = tu_open_store(db, STORE_OWNER);
	struct store_run run = {.domid = 1, .name = "victim"};
	struct store_device *d;
	static uint8_t data[64 * 512];

	REQUIRE(store_run_begin(s, &run) == 0 &&
	                store_device_create(s, run.run_id, "xvdp1", 1, 100000, &d) == 0,
	        "%s", store_errmsg(s));
	memset(data, 'p', sizeof(data));
	for (int i = 0; i < 200; i++) {
		struct store_segment seg = {(uint64_t)i * 64, 64, data};
		REQUIRE(store_batch_begin(s) == 0 && store_write(d, &seg, 1) == 0 &&
		                store_batch_commit(s) == 0,
		        "%s", store_errmsg(s));
	}
	int64_t dev = store_device_id(d);
	store_close(s);

	size_t len;
	uint8_t *img = tu_read_file(db, &len);
	REQUIRE(img && len > 64 * 4096, "database too small: %zu", len);
	uint64_t rng = 99;
	int detected = 0, trials = 0;
	/* Garbage over b-tree pages: every trial must end in a clean error or
	 * a clean integrity report, and never in a crash. */
	for (int t = 0; t < 40; t++) {
		uint8_t *bad = malloc(len);
		memcpy(bad, img, len);
		size_t page = 1 + tu_rand_below(&rng, len / 4096 - 1);
		for (size_t i = 0; i < 4096; i++)
			bad[page * 4096 + i] = (uint8_t)tu_rand(&rng);
		tu_write_file(db, bad, len);
		free(bad);
		char err[512], report[512];
		struct store_open_opts o = {.mode = STORE_READ};
		if (store_open(&s, db, &o, err, sizeof(err)) != 0) {
			detected++;
			trials++;
			continue;
		}
		uint64_t n = 0;
		int rc1 = store_read_range(s, dev, 0, 100000ull * 512, count_cb, &n);
		int rc2 = store_check_integrity(s, report, sizeof(report));
		CHECK(rc2 != 0 || rc1 == 0, "read failed (%s) but integrity says ok", store_errmsg(s));
		detected += rc2 != 0;
		trials++;
		store_close(s);
	}
	/* Overwritten overflow (data) pages are invisible to SQLite without
	 * checksums; b-tree damage is not.  Most trials hit b-tree pages. */
	printf("damage: %d of %d corruptions detected\n", detected, trials);
	CHECK(detected > 0, "no corruption was ever detected");

	/* Truncated to half. */
	tu_write_file(db, img, len / 2);
	char err[512], report[512];
	struct store_open_opts o = {.mode = STORE_READ};
	if (store_open(&s, db, &o, err, sizeof(err)) == 0) {
		uint64_t n = 0;
		int rc = store_read_range(s, dev, 0, 100000ull * 512, count_cb, &n);
		CHECK(rc != 0 || store_check_integrity(s, report, sizeof(report)) != 0,
		      "a truncated database reads as fine");
		CHECK(rc == 0 || strstr(store_errmsg(s), "damaged"), "message: %s", store_errmsg(s));
		store_close(s);
	}
	free(img);
	free(db);
}

int main(void)
{
	test_owner_lock();
	test_foreign_files();
	test_damage();
	test_snapshots();
	return tu_finish("test_concurrency");
}
