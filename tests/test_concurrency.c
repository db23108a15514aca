/*
 * test_concurrency.c - readers, writers and bad databases.
 *   - a reader sees consistent snapshots while another process commits;
 *   - a second owner (another profile-backend) is refused, in another
 *     process and in the same one, and gets in once the first is gone;
 *     short-lived writers (import) coexist with the owner;
 *   - a newer schema, a non-SQLite file, another application's SQLite file
 *     and an empty file are refused with clear messages and left untouched;
 *   - a damaged database gives errors, never a crash or silent success;
 *   - a version-1 store is read as it is and upgraded by the first writer;
 *   - only a run ended as saved is opened again (a restored domain's);
 *   - the data file: old snapshots keep their slots, dead slots are given
 *     back later, a missing data file is reported;
 *   - the store's files are one store: a data file that is missing, empty
 *     or another store's is refused by the owner (and by readers), a
 *     schema-3 data file gets its header with every byte kept, --db as a
 *     link keeps every file beside the target, two hard links are one
 *     owner, links planted for the store's files are not followed, and a
 *     directory other users can write is refused to writers.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* ---- migrations ----------------------------------------------------------- */

/* Schema version 1 as profsvc 0.1 created it (a fixture: never changes). */
static const char schema_v1[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE runs (run_id INTEGER PRIMARY KEY AUTOINCREMENT, domid INTEGER NOT NULL,"
	"  name TEXT NOT NULL, uuid TEXT NOT NULL DEFAULT '', started_us INTEGER NOT NULL,"
	"  ended_us INTEGER, state TEXT NOT NULL CHECK (state IN ('running', 'complete', 'crashed')),"
	"  host TEXT NOT NULL DEFAULT '', backend_version TEXT NOT NULL DEFAULT '',"
	"  source TEXT NOT NULL DEFAULT 'capture' CHECK (source IN ('capture', 'import')));"
	"CREATE INDEX runs_by_started ON runs(started_us);"
	"CREATE INDEX runs_running ON runs(state) WHERE state = 'running';"
	"CREATE TABLE devices (device_id INTEGER PRIMARY KEY CHECK (device_id BETWEEN 1 AND 2147483647),"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, vdev TEXT NOT NULL,"
	"  devid INTEGER NOT NULL, role TEXT NOT NULL CHECK (role IN ('prof', 'hp', 'raw')),"
	"  capacity_sectors INTEGER NOT NULL CHECK (capacity_sectors > 0),"
	"  write_requests INTEGER NOT NULL DEFAULT 0, write_bytes INTEGER NOT NULL DEFAULT 0,"
	"  read_requests INTEGER NOT NULL DEFAULT 0, read_bytes INTEGER NOT NULL DEFAULT 0,"
	"  flush_requests INTEGER NOT NULL DEFAULT 0, discard_requests INTEGER NOT NULL DEFAULT 0,"
	"  errors INTEGER NOT NULL DEFAULT 0, written_end_sector INTEGER NOT NULL DEFAULT 0,"
	"  status TEXT NOT NULL DEFAULT 'none' CHECK (status IN ('none', 'ok', 'corrupt')),"
	"  file_size INTEGER, closed INTEGER, word_size INTEGER, status_updated_us INTEGER,"
	"  UNIQUE (run_id, vdev));"
	"CREATE TABLE chunks (key INTEGER PRIMARY KEY, data BLOB NOT NULL);"
	"CREATE TRIGGER devices_drop_chunks AFTER DELETE ON devices BEGIN"
	"  DELETE FROM chunks WHERE key BETWEEN OLD.device_id * 4294967296"
	"                                  AND OLD.device_id * 4294967296 + 4294967295;"
	"END;"
	"PRAGMA user_version = 1; PRAGMA application_id = 1347571526;";

static int64_t count_rows(const char *db, const char *sql)
{
	sqlite3 *raw;
	sqlite3_stmt *st;
	int64_t n = -1;
	if (sqlite3_open(db, &raw) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(raw);
	return n;
}

/* A version-1 store: readers read it as it is, the first writer upgrades
 * it, and nothing is lost or changes meaning on the way. */
static void test_migration_v1(void)
{
	char *db = tu_path("v1.db"), err[512];
	sqlite3 *raw;
	uint8_t chunk[65536];

	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (uint8_t)(i * 7 + 42);
	REQUIRE(sqlite3_open(db, &raw) == SQLITE_OK, "sqlite3_open");
	REQUIRE(sqlite3_exec(raw, "PRAGMA journal_mode = WAL; PRAGMA auto_vacuum = INCREMENTAL; VACUUM;",
	                     NULL, NULL, NULL) == SQLITE_OK, "v1 pragmas");
	REQUIRE(sqlite3_exec(raw, schema_v1, NULL, NULL, NULL) == SQLITE_OK, "v1 schema: %s",
	        sqlite3_errmsg(raw));
	REQUIRE(sqlite3_exec(raw,
	                     "INSERT INTO runs(domid, name, started_us, state) VALUES (7, 'old', 1, "
	                     "'complete');"
	                     "INSERT INTO devices(run_id, vdev, devid, role, capacity_sectors, "
	                     "write_requests, written_end_sector, status, file_size, closed, word_size) "
	                     "VALUES (1, 'xvdp2', 51954, 'hp', 4096, 3, 128, 'ok', 65024, 1, 8);",
	                     NULL, NULL, NULL) == SQLITE_OK,
	        "v1 rows: %s", sqlite3_errmsg(raw));
	sqlite3_stmt *st;
	REQUIRE(sqlite3_prepare_v2(raw, "INSERT INTO chunks(key, data) VALUES (4294967296, ?1)", -1, &st,
	                           NULL) == SQLITE_OK, "prepare");
	sqlite3_bind_blob(st, 1, chunk, sizeof(chunk), SQLITE_STATIC);
	REQUIRE(sqlite3_step(st) == SQLITE_DONE, "v1 chunk");
	sqlite3_finalize(st);
	sqlite3_close(raw);

	/* A reader takes it as it is and does not upgrade it. */
	struct store_open_opts ro = {.mode = STORE_READ};
	struct store *s;
	CHECK(store_open(&s, db, &ro, err, sizeof(err)) == 0, "reader on a v1 store: %s", err);
	if (s) {
		struct store_run run;
		CHECK(store_get_run(s, 1, &run) == 0 && !strcmp(run.name, "old") && run.hp_bytes == 65024,
		      "v1 run read wrong");
		store_close(s);
	}
	CHECK(count_rows(db, "PRAGMA user_version") == 1, "a reader upgraded the store");

	/* The first writer upgrades it. */
	s = tu_open_store(db, STORE_OWNER);
	struct store_device *d;
	uint8_t back[4096];
	REQUIRE(store_device_open(s, 1, &d) == 0, "device after the upgrade: %s", store_errmsg(s));
	CHECK(store_read(d, 8, 8, back) == 0 && !memcmp(back, chunk + 4096, 4096), "chunk data changed");
	struct store_device_info info;
	store_device_get_info(d, &info);
	CHECK(info.write_requests == 3 && info.written_end_sector == 128 && info.file_size == 65024,
	      "device row changed by the upgrade");
	uint8_t sect[512] = {1};
	struct store_segment seg = {9, 1, sect};
	CHECK(store_batch_begin(s) == 0 && store_write(d, &seg, 1) == 0 && store_batch_commit(s) == 0,
	      "write after the upgrade: %s", store_errmsg(s));
	store_device_release(d);
	/* Schema 6: the old run has no end reason; one ended now keeps its. */
	struct store_run old;
	CHECK(store_get_run(s, 1, &old) == 0 && old.end_reason[0] == '\0', "v1 run given an end reason");
	CHECK(store_run_end_why(s, 1, STORE_RUN_CRASHED, 0, "domain gone while no backend ran") == 0 &&
	          store_get_run(s, 1, &old) == 0 && !strcmp(old.end_reason, "domain gone while no backend ran"),
	      "end reason not kept: '%s' (%s)", old.end_reason, store_errmsg(s));
	store_close(s);
	CHECK(count_rows(db, "PRAGMA user_version") == STORE_SCHEMA_VERSION, "not upgraded to version %d",
	      STORE_SCHEMA_VERSION);
	CHECK(count_rows(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'devices_v2'") == 0,
	      "the upgrade left its scratch table");

	/* The constraints and the cascade still hold. */
	REQUIRE(sqlite3_open(db, &raw) == SQLITE_OK, "sqlite3_open");
	sqlite3_exec(raw, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	CHECK(sqlite3_exec(raw, "UPDATE devices SET status = 'bogus'", NULL, NULL, NULL) ==
	          SQLITE_CONSTRAINT,
	      "status CHECK lost in the upgrade");
	CHECK(sqlite3_exec(raw, "DELETE FROM runs", NULL, NULL, NULL) == SQLITE_OK, "delete run");
	sqlite3_close(raw);
	CHECK(count_rows(db, "SELECT count(*) FROM chunks") == 0, "cascade to chunks lost in the upgrade");
	free(db);
}

/* ---- the data file: snapshots and reclaiming ------------------------------------ */

static int write_whole_chunk(struct store *s, struct store_device *d, uint8_t fillbyte)
{
	static uint8_t buf[65536];
	memset(buf, fillbyte, sizeof(buf));
	struct store_segment seg = {128, 128, buf}; /* chunk 1, whole */
	return store_batch_begin(s) || store_write_many(d, &seg, 1) || store_batch_commit(s);
}

/* Another connection empties the WAL (as a restart does); busy while a
 * reader holds an old snapshot. */
static void truncate_wal(const char *db)
{
	sqlite3 *raw;
	if (sqlite3_open(db, &raw) == SQLITE_OK) {
		sqlite3_busy_timeout(raw, 100);
		/* A connection knows the WAL only once it has read the database. */
		sqlite3_exec(raw, "SELECT count(*) FROM sqlite_schema; PRAGMA wal_checkpoint(TRUNCATE)", NULL,
		             NULL, NULL);
	}
	sqlite3_close(raw);
}

static int64_t allocated_kib(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int64_t)st.st_blocks / 2 : -1;
}

/* A chunk rewritten whole gets a new slot; a reader holding the old
 * snapshot keeps reading the old slot through any number of WAL
 * generations; once no reader can see it, its space is given back. */
static void test_slot_reclaim(void)
{
	char *db = tu_path("slots.db"), data[4200], err[512];
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1};
	struct store *s;
	struct store_run run = {.domid = 3, .name = "slots"};
	struct store_device *d;

	snprintf(data, sizeof(data), "%s-data", db);
	REQUIRE(store_open(&s, db, &o, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(store_run_begin(s, &run) == 0 && store_device_create(s, run.run_id, "xvdz", 51968, 1024, &d) == 0,
	        "%s", store_errmsg(s));
	REQUIRE(write_whole_chunk(s, d, 0xaa) == 0, "first write: %s", store_errmsg(s));

	/* A reader in a snapshot that sees 0xaa. */
	struct store *r = tu_open_store(db, STORE_READ);
	uint8_t back[65536];
	REQUIRE(store_read_begin(r) == 0, "%s", store_errmsg(r));
	struct store_device *rd;
	REQUIRE(store_device_open(r, store_device_id(d), &rd) == 0, "%s", store_errmsg(r));
	CHECK(store_read(rd, 128, 128, back) == 0 && back[0] == 0xaa && back[65535] == 0xaa,
	      "reader: first version");

	/* Rewrites (each a new slot, the old one dead) and WAL restarts
	 * attempted all along: the reader's version must stay readable. */
	for (int i = 0; i < 8; i++) {
		REQUIRE(write_whole_chunk(s, d, (uint8_t)(0x10 + i)) == 0, "rewrite: %s", store_errmsg(s));
		truncate_wal(db);
	}
	CHECK(store_read(rd, 128, 128, back) == 0 && back[0] == 0xaa && back[65535] == 0xaa,
	      "reader's snapshot changed under it (a slot it sees was reused or punched)");
	store_device_release(rd);
	store_read_end(r);
	store_close(r);

	/* No reader: a few generations later the dead slots are holes. */
	int64_t before = allocated_kib(data);
	for (int i = 0; i < 6; i++) {
		REQUIRE(write_whole_chunk(s, d, (uint8_t)(0x40 + i)) == 0, "rewrite: %s", store_errmsg(s));
		truncate_wal(db);
	}
	REQUIRE(write_whole_chunk(s, d, 0x77) == 0, "last write: %s", store_errmsg(s));
	CHECK(store_read(d, 128, 128, back) == 0 && back[0] == 0x77 && back[65535] == 0x77,
	      "the last version is not what reads back");
	int64_t after = allocated_kib(data);
	CHECK(before > 0 && after >= 0 && after < before,
	      "no space given back: %lld KiB allocated before, %lld after", (long long)before,
	      (long long)after);
	char report[512];
	CHECK(store_check_integrity(s, report, sizeof(report)) == 0, "integrity: %s", report);
	store_device_release(d);
	store_close(s);

	/* The data file is part of the store: without it, reads say so. */
	char moved[4300];
	snprintf(moved, sizeof(moved), "%s.moved", data);
	REQUIRE(rename(data, moved) == 0, "rename");
	r = tu_open_store(db, STORE_READ);
	uint8_t *img = NULL;
	size_t len = 0;
	struct store_device_info info;
	REQUIRE(store_find_device(r, run.run_id, "xvdz", &info) == 0, "%s", store_errmsg(r));
	struct store_device *md;
	REQUIRE(store_device_open(r, info.device_id, &md) == 0, "%s", store_errmsg(r));
	CHECK(store_read(md, 128, 8, back) == STORE_ECORRUPT && strstr(store_errmsg(r), "data file"),
	      "missing data file not reported: %s", store_errmsg(r));
	CHECK(store_check_integrity(r, report, sizeof(report)) == STORE_ECORRUPT && strstr(report, "missing"),
	      "check did not find the missing data file: %s", report);
	store_device_release(md);
	store_close(r);
	free(img);
	(void)len;
	rename(moved, data);
	free(db);
}


/* ---- the store's files are one store -------------------------------------- */

/* A store at db with bulk data: chunk 1 of a device holds fillbyte in the
 * data file.  Returns the device id. */
static int64_t bulk_store(const char *db, uint8_t fillbyte)
{
	char err[512];
	struct store_open_opts o = {.mode = STORE_OWNER, .bulk_file = 1};
	struct store *s;
	struct store_run run = {.domid = 4, .name = "bulk"};
	struct store_device *d;

	REQUIRE(store_open(&s, db, &o, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(store_run_begin(s, &run) == 0 && store_device_create(s, run.run_id, "xvdz", 51968, 1024, &d) == 0,
	        "%s", store_errmsg(s));
	REQUIRE(write_whole_chunk(s, d, fillbyte) == 0, "bulk write: %s", store_errmsg(s));
	int64_t id = store_device_id(d);
	store_device_release(d);
	store_close(s);
	return id;
}

/* Chunk 1 of device id reads back as fillbyte (through a reader). */
static int reads_back(const char *db, int64_t id, uint8_t fillbyte, char *err, size_t len)
{
	struct store *r;
	struct store_open_opts o = {.mode = STORE_READ};
	static uint8_t back[65536];
	struct store_device *d;

	if (store_open(&r, db, &o, err, len) != 0)
		return 0;
	int ok = store_device_open(r, id, &d) == 0 && store_read(d, 128, 128, back) == 0;
	if (!ok)
		snprintf(err, len, "%s", store_errmsg(r));
	else
		store_device_release(d);
	store_close(r);
	for (size_t i = 0; ok && i < sizeof(back); i++)
		ok = back[i] == fillbyte;
	return ok;
}

static void test_one_store(void)
{
	char *db = tu_path("one.db"), *other = tu_path("store2.db"), data[4200], odata[4200], err[512];
	snprintf(data, sizeof(data), "%s-data", db);
	snprintf(odata, sizeof(odata), "%s-data", other);
	int64_t id = bulk_store(db, 0x5a);
	bulk_store(other, 0xa5);
	CHECK(reads_back(db, id, 0x5a, err, sizeof(err)), "bulk data does not read back: %s", err);

	/* Missing: the owner refuses to start (it once recreated the file and
	 * every older chunk read as zeros), and creates nothing. */
	char moved[4300];
	snprintf(moved, sizeof(moved), "%s.moved", data);
	REQUIRE(rename(data, moved) == 0, "rename");
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == STORE_ECORRUPT && strstr(err, "missing"),
	      "an owner started without the data file: %s", err);
	struct stat st;
	CHECK(stat(data, &st) != 0, "the refused owner created a data file");
	/* Empty is missing too. */
	tu_write_file(data, "", 0);
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == STORE_ECORRUPT && strstr(err, "empty"),
	      "an owner started on an empty data file: %s", err);
	/* Another store's: refused by the owner and by readers. */
	size_t len;
	uint8_t *foreign = tu_read_file(odata, &len);
	REQUIRE(foreign, "read %s", odata);
	tu_write_file(data, foreign, len);
	free(foreign);
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == STORE_ECORRUPT && strstr(err, "another store"),
	      "an owner started on another store's data file: %s", err);
	CHECK(!reads_back(db, id, 0x5a, err, sizeof(err)) && strstr(err, "another store"),
	      "a reader read another store's data file: %s", err);
	char report[1024];
	struct store *chk = tu_open_store(db, STORE_READ);
	CHECK(store_check_integrity(chk, report, sizeof(report)) == STORE_ECORRUPT &&
	          strstr(report, "another store"),
	      "check did not find another store's data file: %s", report);
	store_close(chk);
	uint8_t *after = tu_read_file(data, &len);
	uint8_t *orig = tu_read_file(odata, &len);
	CHECK(after && orig && memcmp(after, orig, len) == 0, "the refused owner changed the foreign data file");
	free(after);
	free(orig);
	REQUIRE(rename(moved, data) == 0, "rename back");
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == 0, "its own data file back: %s", err);
	CHECK(reads_back(db, id, 0x5a, err, sizeof(err)), "data after the data file came back: %s", err);

	/* A link planted where the data file goes is not followed. */
	char *victim = tu_path("victim"), *fresh = tu_path("fresh.db"), fdata[4200];
	tu_write_file(victim, "precious", 8);
	snprintf(fdata, sizeof(fdata), "%s-data", fresh);
	REQUIRE(symlink(victim, fdata) == 0, "symlink");
	struct store_open_opts ob = {.mode = STORE_OWNER, .bulk_file = 1};
	struct store *s;
	CHECK(store_open(&s, fresh, &ob, err, sizeof(err)) != 0 && strstr(err, "link"),
	      "an owner used a data file that is a link: %s", err);
	uint8_t *v = tu_read_file(victim, &len);
	CHECK(v && len == 8 && memcmp(v, "precious", 8) == 0, "the link's target was written");
	free(v);
	unlink(fdata);

	/* --db a link: every file of the store beside the target. */
	char *dir = tu_path("linkdir"), *target = tu_path("linkdir/real.db"), *lnk = tu_path("link.db");
	mkdir(dir, 0700);
	tu_write_file(target, "", 0); /* an empty file: a new store */
	REQUIRE(symlink(target, lnk) == 0, "symlink");
	int64_t lid = bulk_store(lnk, 0x3c);
	char p[4300];
	snprintf(p, sizeof(p), "%s-data", target);
	CHECK(stat(p, &st) == 0, "no data file beside the link's target");
	snprintf(p, sizeof(p), "%s-data", lnk);
	CHECK(lstat(p, &st) != 0, "a data file beside the link");
	CHECK(reads_back(target, lid, 0x3c, err, sizeof(err)), "through the target: %s", err);
	CHECK(reads_back(lnk, lid, 0x3c, err, sizeof(err)), "through the link: %s", err);

	/* Two hard links are one store with one owner. */
	char *hard = tu_path("hard.db");
	REQUIRE(link(db, hard) == 0, "link");
	struct store *owner = tu_open_store(db, STORE_OWNER);
	CHECK(open_rc(hard, STORE_OWNER, err, sizeof(err)) == STORE_ELOCKED && strstr(err, "already owned"),
	      "a second owner through a hard link: %s", err);
	char mypid[32];
	snprintf(mypid, sizeof(mypid), "pid %ld", (long)getpid());
	CHECK(strstr(err, mypid) != NULL, "the message does not name the owner (%s): %s", mypid, err);
	store_close(owner);
	/* Once it is gone, the other name is still not a second store: its
	 * data file would be hard.db-data, which does not exist. */
	CHECK(open_rc(hard, STORE_OWNER, err, sizeof(err)) == STORE_ECORRUPT && strstr(err, "missing"),
	      "an owner through the other name once the first was gone: %s", err);
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == 0, "the first name again: %s", err);
	unlink(hard);

	/* A directory other users can write: writers refuse, readers read. */
	char *shared = tu_path("shared"), *sdb = tu_path("shared/s.db");
	mkdir(shared, 0700);
	bulk_store(sdb, 1);
	chmod(shared, 01777);
	CHECK(open_rc(sdb, STORE_OWNER, err, sizeof(err)) == STORE_EPERM && strstr(err, "chmod go-w"),
	      "an owner in a world-writable directory: %s", err);
	CHECK(open_rc(sdb, STORE_WRITE, err, sizeof(err)) == STORE_EPERM, "a writer there: %s", err);
	CHECK(open_rc(sdb, STORE_READ, err, sizeof(err)) == 0, "a reader there: %s", err);
	chmod(shared, 0770);
	CHECK(open_rc(sdb, STORE_OWNER, err, sizeof(err)) == STORE_EPERM, "group-writable: %s", err);
	chmod(shared, 0700);
	free(db), free(other), free(victim), free(fresh), free(dir), free(target), free(lnk);
	free(hard), free(shared), free(sdb);
}

/* A data file written before headers (schema 3) gets one at its owner's
 * open; the chunk that was in slot 0 moves, every byte kept. */
static void test_data_header_upgrade(void)
{
	char *db = tu_path("v3data.db"), data[4200], err[512];
	snprintf(data, sizeof(data), "%s-data", db);
	int64_t id = bulk_store(db, 0x66);
	/* Make it what schema 3 wrote: the chunk in slot 0, no header. */
	size_t len;
	uint8_t *img = tu_read_file(data, &len);
	REQUIRE(img && len == 2 * 65536, "data file of %zu bytes", len);
	tu_write_file(data, img + 65536, 65536);
	free(img);
	sqlite3 *raw;
	REQUIRE(sqlite3_open(db, &raw) == SQLITE_OK, "open");
	REQUIRE(sqlite3_exec(raw, "UPDATE chunks SET slot = 0 WHERE slot = 1; "
	                          "UPDATE meta SET value = '1' WHERE key = 'data_slots'; "
	                          "DELETE FROM meta WHERE key IN ('store_id', 'data_header'); "
	                          "DROP TABLE trace_packets; " /* schema 5's, made again */
	                          "ALTER TABLE chunks DROP COLUMN sum; " /* schema 9's */
	                          "ALTER TABLE runs DROP COLUMN end_reason; " /* schema 6's */
	                          "PRAGMA user_version = 3",
	                     NULL, NULL, NULL) == SQLITE_OK,
	        "%s", sqlite3_errmsg(raw));
	sqlite3_close(raw);
	CHECK(reads_back(db, id, 0x66, err, sizeof(err)), "schema 3 as it is: %s", err);
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == 0, "owner open (upgrade): %s", err);
	CHECK(reads_back(db, id, 0x66, err, sizeof(err)), "after the header was added: %s", err);
	img = tu_read_file(data, &len);
	CHECK(img && len == 2 * 65536 && memcmp(img, "profsvc data file of store ", 27) == 0,
	      "no header in slot 0 (%zu bytes)", len);
	free(img);
	char report[512];
	struct store *s = tu_open_store(db, STORE_READ);
	CHECK(store_check_integrity(s, report, sizeof(report)) == 0, "integrity: %s", report);
	store_close(s);
	/* And once more: nothing moves again. */
	CHECK(open_rc(db, STORE_OWNER, err, sizeof(err)) == 0 && reads_back(db, id, 0x66, err, sizeof(err)),
	      "second open: %s", err);
	img = tu_read_file(data, &len);
	CHECK(img && len == 2 * 65536, "the data file grew on a second open: %zu bytes", len);
	free(img);
	free(db);
}

/* What schema 7 made of the devices table: the roles before 'eventlog'. */
static const char to_schema_v7[] =
	"PRAGMA foreign_keys = OFF; BEGIN;"
	"DROP TRIGGER devices_drop_chunks;"
	"CREATE TABLE devices_v7 ("
	"  device_id INTEGER PRIMARY KEY CHECK (device_id BETWEEN 1 AND 2147483647),"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
	"  vdev TEXT NOT NULL, devid INTEGER NOT NULL,"
	"  role TEXT NOT NULL CHECK (role IN ('prof', 'hp', 'raw', 'trace', 'samples')),"
	"  capacity_sectors INTEGER NOT NULL CHECK (capacity_sectors > 0),"
	"  write_requests INTEGER NOT NULL DEFAULT 0, write_bytes INTEGER NOT NULL DEFAULT 0,"
	"  read_requests INTEGER NOT NULL DEFAULT 0, read_bytes INTEGER NOT NULL DEFAULT 0,"
	"  flush_requests INTEGER NOT NULL DEFAULT 0, discard_requests INTEGER NOT NULL DEFAULT 0,"
	"  errors INTEGER NOT NULL DEFAULT 0, written_end_sector INTEGER NOT NULL DEFAULT 0,"
	"  status TEXT NOT NULL DEFAULT 'none' CHECK (status = 'none' OR status = 'ok' OR status = 'corrupt'),"
	"  file_size INTEGER, closed INTEGER, word_size INTEGER, status_updated_us INTEGER,"
	"  UNIQUE (run_id, vdev));"
	"INSERT INTO devices_v7 SELECT * FROM devices;"
	"DROP TABLE devices;"
	"ALTER TABLE devices_v7 RENAME TO devices;"
	"CREATE TRIGGER devices_drop_chunks AFTER DELETE ON devices BEGIN"
	"  INSERT OR IGNORE INTO dead_slots(slot, freed_gen)"
	"    SELECT slot, -1 FROM chunks WHERE key BETWEEN OLD.device_id * 4294967296"
	"                                 AND OLD.device_id * 4294967296 + 4294967295"
	"                                 AND slot IS NOT NULL;"
	"  DELETE FROM chunks WHERE key BETWEEN OLD.device_id * 4294967296"
	"                                  AND OLD.device_id * 4294967296 + 4294967295;"
	"END;"
	"INSERT INTO devices(run_id, vdev, devid, role, capacity_sectors, write_requests, written_end_sector,"
	"  status, file_size, closed, word_size) VALUES (1, 'xvdp2', 51954, 'hp', 4096, 3, 128, 'ok', 65024, 1, 8);"
	/* schema 9's checksums, not there yet; and a chunk in the row
	 * (bulk_store's is in the data file) */
	"ALTER TABLE chunks DROP COLUMN sum; ALTER TABLE trace_packets DROP COLUMN sum;"
	"INSERT INTO chunks(key, data) SELECT device_id * 4294967296, randomblob(4096) FROM devices "
	"  WHERE vdev = 'xvdp2';"
	"COMMIT; PRAGMA user_version = 7;";

/* A schema-7 store (before the eventlog role): read as it is, upgraded by
 * its first writer to 8 with every run, device row and byte kept, and an
 * eventlog device (xvdp3) can then be made. */
static void test_migration_v7(void)
{
	char *db = tu_path("v7.db"), err[512];
	int64_t id = bulk_store(db, 0x77);
	sqlite3 *raw;
	REQUIRE(sqlite3_open(db, &raw) == SQLITE_OK, "open");
	REQUIRE(sqlite3_exec(raw, to_schema_v7, NULL, NULL, NULL) == SQLITE_OK, "to schema 7: %s", sqlite3_errmsg(raw));
	CHECK(sqlite3_exec(raw, "INSERT INTO devices(run_id, vdev, devid, role, capacity_sectors) "
	                        "VALUES (1, 'xvdp3', 51955, 'eventlog', 8)",
	                   NULL, NULL, NULL) == SQLITE_CONSTRAINT,
	      "the schema-7 store took the role 'eventlog'");
	sqlite3_close(raw);
	CHECK(reads_back(db, id, 0x77, err, sizeof(err)), "schema 7 as it is: %s", err);
	CHECK(count_rows(db, "PRAGMA user_version") == 7, "a reader upgraded the store");

	struct store *s = tu_open_store(db, STORE_OWNER);
	CHECK(strstr(store_open_note(s), "computed those of 2 stored chunks and 0 trace packets") != NULL,
	      "the upgrade's note: '%s'", store_open_note(s));
	struct store_sums_report sums;
	CHECK(store_check_sums(s, NULL, NULL, &sums) == 0 && sums.chunks == 2 && sums.unsummed == 0 &&
	          sums.bad_chunks == 0,
	      "the upgraded store's sums: %llu verified, %llu without, %llu bad: %s",
	      (unsigned long long)sums.chunks, (unsigned long long)sums.unsummed,
	      (unsigned long long)sums.bad_chunks, store_errmsg(s));
	struct store_device_info hp;
	CHECK(store_find_device(s, 1, "xvdp2", &hp) == 0 && hp.role == STORE_ROLE_HP && hp.status == STORE_STATUS_OK &&
	          hp.file_size == 65024 && hp.closed && hp.written_end_sector == 128 && hp.write_requests == 3,
	      "the .hp device changed in the upgrade");
	struct store_run run;
	CHECK(store_get_run(s, 1, &run) == 0 && !strcmp(run.name, "bulk") && run.hp_bytes == 65024 && run.ndevices == 2,
	      "the run changed in the upgrade");
	struct store_device *ev;
	CHECK(store_device_create(s, 1, "xvdp3", 51955, 4096, &ev) == 0, "an eventlog device after the upgrade: %s",
	      store_errmsg(s));
	if (ev) {
		struct store_device_info info;
		store_device_get_info(ev, &info);
		CHECK(info.role == STORE_ROLE_EVENTLOG && !strcmp(store_role_name(info.role), "eventlog"),
		      "xvdp3 is role %s", store_role_name(info.role));
		store_device_release(ev);
	}
	store_close(s);
	CHECK(count_rows(db, "PRAGMA user_version") == STORE_SCHEMA_VERSION, "not upgraded to version %d",
	      STORE_SCHEMA_VERSION);
	CHECK(count_rows(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'devices_v8'") == 0,
	      "the upgrade left its scratch table");
	CHECK(count_rows(db, "SELECT count(*) FROM devices WHERE role = 'eventlog' AND vdev = 'xvdp3'") == 1,
	      "the eventlog device row");
	CHECK(reads_back(db, id, 0x77, err, sizeof(err)), "after the upgrade: %s", err);
	/* The trigger was made again: a deleted run's chunks go. */
	REQUIRE(sqlite3_open(db, &raw) == SQLITE_OK, "sqlite3_open");
	sqlite3_exec(raw, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	CHECK(sqlite3_exec(raw, "UPDATE devices SET role = 'bogus'", NULL, NULL, NULL) == SQLITE_CONSTRAINT,
	      "role CHECK lost in the upgrade");
	CHECK(sqlite3_exec(raw, "DELETE FROM runs", NULL, NULL, NULL) == SQLITE_OK, "delete run");
	sqlite3_close(raw);
	CHECK(count_rows(db, "SELECT count(*) FROM chunks") == 0, "cascade to chunks lost in the upgrade");
	free(db);
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

/* A saved domain restored continues its run (backend/control/runs.c): only a run
 * ended crashed with the writer's reason is opened again, for the new
 * domid, and its data takes more writes after the end's trim. */
static void test_run_reopen(void)
{
	static const char why[] = "saved; a restore continues it";
	char *db = tu_path("reopen.db");
	struct store *s = tu_open_store(db, STORE_OWNER);
	struct store_run a = {.domid = 5, .name = "g", .uuid = "1234-ab"};
	struct store_run b = {.domid = 6, .name = "g", .uuid = "1234-ab"};
	struct store_run other = {.domid = 7, .name = "h", .uuid = "99"};
	REQUIRE(store_run_begin(s, &a) == 0 && store_run_begin(s, &b) == 0 && store_run_begin(s, &other) == 0,
	        "%s", store_errmsg(s));
	int64_t id = 0;
	CHECK(store_latest_run_of_uuid(s, "1234-ab", &id) == 0 && id == b.run_id,
	      "newest run of the uuid: %lld, want %lld", (long long)id, (long long)b.run_id);
	CHECK(store_latest_run_of_uuid(s, "nope", &id) == STORE_ENOTFOUND, "an unknown uuid found a run");

	struct store_device *d;
	REQUIRE(store_device_create(s, b.run_id, "xvdp2", 51954, 2048, &d) == 0, "%s", store_errmsg(s));
	uint8_t one[512], two[512], back[1024];
	memset(one, 'a', sizeof(one));
	memset(two, 'b', sizeof(two));
	struct store_segment seg = {0, 1, one};
	REQUIRE(store_batch_begin(s) == 0 && store_write(d, &seg, 1) == 0 && store_batch_commit(s) == 0, "%s",
	        store_errmsg(s));
	store_device_release(d);

	/* Running, complete, or crashed for another reason: never reopened. */
	CHECK(store_run_reopen(s, b.run_id, 9, why) == STORE_ENOTFOUND, "a running run reopened");
	REQUIRE(store_run_end_why(s, b.run_id, STORE_RUN_CRASHED, 0, "the domain ended") == 0, "%s",
	        store_errmsg(s));
	CHECK(store_run_reopen(s, b.run_id, 9, why) == STORE_ENOTFOUND, "a crashed run reopened");
	REQUIRE(store_run_end_why(s, other.run_id, STORE_RUN_COMPLETE, 0, NULL) == 0, "%s", store_errmsg(s));
	CHECK(store_run_reopen(s, other.run_id, 9, "") == STORE_ENOTFOUND, "a complete run reopened");

	/* Ended as saved (the end trims its chunk): reopened for domain 9. */
	REQUIRE(store_run_end_why(s, b.run_id, STORE_RUN_CRASHED, 0, why) == 0, "%s", store_errmsg(s));
	CHECK(store_run_reopen(s, b.run_id, 9, why) == 0, "saved run not reopened: %s", store_errmsg(s));
	struct store_run r;
	CHECK(store_get_run(s, b.run_id, &r) == 0 && r.state == STORE_RUN_RUNNING && r.domid == 9 &&
	          r.ended_us == 0 && r.end_reason[0] == '\0',
	      "reopened run: state %d domid %d ended %lld reason '%s'", r.state, r.domid, (long long)r.ended_us,
	      r.end_reason);
	CHECK(store_run_reopen(s, b.run_id, 9, why) == STORE_ENOTFOUND, "reopened twice");
	struct store_device_info info;
	REQUIRE(store_find_device(s, b.run_id, "xvdp2", &info) == 0 && store_device_open(s, info.device_id, &d) == 0,
	        "%s", store_errmsg(s));
	seg = (struct store_segment){1, 1, two};
	CHECK(store_batch_begin(s) == 0 && store_write(d, &seg, 1) == 0 && store_batch_commit(s) == 0,
	      "write after reopen: %s", store_errmsg(s));
	CHECK(store_read(d, 0, 2, back) == 0 && !memcmp(back, one, 512) && !memcmp(back + 512, two, 512),
	      "the data before and after the save do not read back as one");
	store_device_release(d);
	store_close(s);
	free(db);
}

/* ---- checksums: bit rot is seen -------------------------------------------- */

/* Flips one bit of byte `in` of chunk `chunk` of device dev, as bit rot
 * would: behind the store's back, its checksum left as it was. */
static void rot_inline(const char *db, int64_t dev, uint64_t chunk, int in)
{
	sqlite3 *raw;
	sqlite3_blob *b;
	uint8_t x;
	REQUIRE(sqlite3_open(db, &raw) == SQLITE_OK &&
	                sqlite3_blob_open(raw, "main", "chunks", "data", (int64_t)((uint64_t)dev << 32 | chunk), 1,
	                                  &b) == SQLITE_OK,
	        "%s", sqlite3_errmsg(raw));
	REQUIRE(sqlite3_blob_read(b, &x, 1, in) == SQLITE_OK, "read");
	x ^= 0x10;
	REQUIRE(sqlite3_blob_write(b, &x, 1, in) == SQLITE_OK, "write");
	sqlite3_blob_close(b);
	sqlite3_close(raw);
}

struct rot_seen {
	int n;
	struct store_damage last;
};

static int rot_cb(void *ctx, const struct store_damage *d)
{
	struct rot_seen *r = ctx;
	r->n++;
	r->last = *d;
	return 0;
}

/* What a read of [0, len) got: zeros counted, and the bytes. */
struct rot_read {
	uint8_t *buf;
	uint64_t holes;
};

static int rot_read_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct rot_read *r = ctx;
	if (data)
		memcpy(r->buf + off, data, len);
	else {
		memset(r->buf + off, 0, len);
		r->holes += len;
	}
	return 0;
}

static void test_sums(void)
{
	char *db = tu_path("sums.db");
	struct store *s = tu_open_store(db, STORE_OWNER);
	struct store_run run = {.domid = 9, .name = "rot"};
	struct store_device *hp, *tr;
	static uint8_t data[3 * 65536], back[3 * 65536], pkt[1000];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	memset(pkt, 'm', sizeof(pkt));
	REQUIRE(store_run_begin(s, &run) == 0 && store_device_create(s, run.run_id, "xvdp2", 51714, 4096, &hp) == 0 &&
	                store_device_create(s, run.run_id, STORE_TRACE_VDEV, 0, 4096, &tr) == 0,
	        "%s", store_errmsg(s));
	int64_t hp_id = store_device_id(hp), tr_id = store_device_id(tr);
	/* Written in 4 KiB pieces, a batch each, and chunk 0 again in part:
	 * rows of their own, summed at each commit. */
	for (int i = 0; i < 3 * 16; i++) {
		struct store_segment seg = {(uint64_t)i * 8, 8, data + i * 4096};
		REQUIRE(store_batch_begin(s) == 0 && store_write(hp, &seg, 1) == 0 && store_batch_commit(s) == 0, "%s",
		        store_errmsg(s));
	}
	struct store_segment again = {1, 1, data + 512};
	struct store_trace_packet p0 = {.seq = 0, .bytes = sizeof(pkt)}, p1 = {.seq = 1, .bytes = 700};
	REQUIRE(store_batch_begin(s) == 0 && store_write(hp, &again, 1) == 0 && store_trace_keep(tr, &p0, pkt) == 0 &&
	                store_trace_keep(tr, &p1, pkt) == 0 && store_batch_commit(s) == 0,
	        "%s", store_errmsg(s));
	store_device_release(hp);
	store_device_release(tr);
	store_close(s);
	CHECK(count_rows(db, "SELECT count(*) FROM chunks WHERE sum IS NULL") == 0 &&
	              count_rows(db, "SELECT count(*) FROM trace_packets WHERE sum IS NULL") == 0,
	      "a chunk without its sum");

	struct store_sums_report rep;
	s = tu_open_store(db, STORE_READ);
	CHECK(store_check_sums(s, NULL, NULL, &rep) == 0 && rep.chunks == 4 && rep.packets == 2 && rep.bad_chunks == 0 &&
	              rep.bad_packets == 0 && rep.unsummed == 0,
	      "a clean store: %llu chunks, %llu packets, %llu+%llu bad, %llu without: %s",
	      (unsigned long long)rep.chunks, (unsigned long long)rep.packets, (unsigned long long)rep.bad_chunks,
	      (unsigned long long)rep.bad_packets, (unsigned long long)rep.unsummed, store_errmsg(s));
	store_close(s);

	/* One bit flipped in the .hp's chunk 1 (a row), one in the trace's
	 * first packet. */
	rot_inline(db, hp_id, 1, 4000);
	rot_inline(db, tr_id, 0, 10);
	s = tu_open_store(db, STORE_READ);
	struct rot_seen seen = {0};
	CHECK(store_check_sums(s, rot_cb, &seen, &rep) == 0 && rep.bad_chunks == 2 && rep.bad_packets == 1 &&
	              seen.n == 3,
	      "check: %llu chunks and %llu packets bad, %d said", (unsigned long long)rep.bad_chunks,
	      (unsigned long long)rep.bad_packets, seen.n);
	char what[256];
	store_damage_describe(&seen.last, what, sizeof(what));
	CHECK(seen.last.run_id == run.run_id && seen.last.seq == 0 && seen.last.off == 0 && seen.last.len == 1000 &&
	              strstr(what, "bytes 0-999 (trace packet 0) fail their checksum"),
	      "the packet's damage: %s", what);
	/* A read refuses, naming run, device and bytes. */
	struct rot_read rr = {back, 0};
	CHECK(store_read_range(s, hp_id, 0, sizeof(back), rot_read_cb, &rr) == STORE_ECORRUPT &&
	              strstr(store_errmsg(s), "device xvdp2") && strstr(store_errmsg(s), "bytes 65536-131071 (chunk 1)"),
	      "a damaged read: %s", store_errmsg(s));
	char want[64];
	snprintf(want, sizeof(want), "run %lld,", (long long)run.run_id);
	CHECK(strstr(store_errmsg(s), want) != NULL, "the run is not named: %s", store_errmsg(s));
	/* Salvaged: what is sound, and zeros where it is not, said. */
	seen.n = 0;
	store_salvage_damage(s, rot_cb, &seen);
	rr.holes = 0;
	CHECK(store_read_range(s, hp_id, 0, sizeof(back), rot_read_cb, &rr) == 0 && seen.n == 1 &&
	              seen.last.chunk == 1 && rr.holes == 65536 && memcmp(back, data, 65536) == 0 &&
	              memcmp(back + 131072, data + 131072, 65536) == 0,
	      "salvaged read: %d said, %llu bytes of zeros: %s", seen.n, (unsigned long long)rr.holes, store_errmsg(s));
	store_salvage_damage(s, NULL, NULL);
	store_close(s);
	free(db);
}

int main(void)
{
	test_owner_lock();
	test_foreign_files();
	test_damage();
	test_snapshots();
	test_migration_v1();
	test_slot_reclaim();
	test_one_store();
	test_data_header_upgrade();
	test_migration_v7();
	test_run_reopen();
	test_sums();
	return tu_finish("test_concurrency");
}
