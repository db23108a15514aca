/*
 * store_schema.c - the store's SQL schema and its forward migrations.
 *
 * PRAGMA user_version is the schema version; PRAGMA application_id marks the
 * file as a profsvc store so that some other SQLite file is never mistaken
 * for one (or migrated!).  Migrations only ever go forward, one version per
 * transaction; a database newer than this build is refused untouched.
 * To change the schema: append a step to `migrations` and bump
 * STORE_SCHEMA_VERSION in store.h.  Never edit a released step.
 *
 * Layer 2 (store_internal.h).  May call: store_slots.c, store_conn.c.
 * (The sums a migration to version 9 leaves to compute are computed by
 * store_open.c, with store_chunks.c.)
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "store_internal.h"

/* "PROF" */
#define STORE_APPLICATION_ID 0x50524f46

/*
 * The columns of the devices table after its role, as the steps that
 * rebuild the table (1 -> 2, 4 -> 5) create them: spelled once, string
 * literals joined by the compiler, so each step's SQL is the same text it
 * always was.
 */
#define DEVICES_COLUMNS_AFTER_ROLE \
	"  capacity_sectors   INTEGER NOT NULL CHECK (capacity_sectors > 0)," \
	"  write_requests     INTEGER NOT NULL DEFAULT 0," \
	"  write_bytes        INTEGER NOT NULL DEFAULT 0," \
	"  read_requests      INTEGER NOT NULL DEFAULT 0," \
	"  read_bytes         INTEGER NOT NULL DEFAULT 0," \
	"  flush_requests     INTEGER NOT NULL DEFAULT 0," \
	"  discard_requests   INTEGER NOT NULL DEFAULT 0," \
	"  errors             INTEGER NOT NULL DEFAULT 0," \
	"  written_end_sector INTEGER NOT NULL DEFAULT 0," \
	"  status             TEXT NOT NULL DEFAULT 'none'" \
	"                     CHECK (status = 'none' OR status = 'ok' OR status = 'corrupt')," \
	"  file_size          INTEGER," \
	"  closed             INTEGER," \
	"  word_size          INTEGER," \
	"  status_updated_us  INTEGER," \
	"  UNIQUE (run_id, vdev)" \
	");"

/*
 * The trigger that deletes a deleted device's chunks and frees their
 * slots, as 2 -> 3 made it and 4 -> 5 made it again after rebuilding the
 * table: spelled once, the same way as DEVICES_COLUMNS_AFTER_ROLE.
 */
#define DEVICES_DROP_CHUNKS_TRIGGER \
	"CREATE TRIGGER devices_drop_chunks AFTER DELETE ON devices BEGIN" \
	"  INSERT OR IGNORE INTO dead_slots(slot, freed_gen)" \
	"    SELECT slot, -1 FROM chunks WHERE key BETWEEN OLD.device_id * 4294967296" \
	"                                 AND OLD.device_id * 4294967296 + 4294967295" \
	"                                 AND slot IS NOT NULL;" \
	"  DELETE FROM chunks WHERE key BETWEEN OLD.device_id * 4294967296" \
	"                                  AND OLD.device_id * 4294967296 + 4294967295;" \
	"END;"

static const char *const migrations[] = {
	/* 0 -> 1: the initial schema. */
	"CREATE TABLE meta ("
	"  key   TEXT PRIMARY KEY,"
	"  value TEXT NOT NULL"
	") WITHOUT ROWID;"
	/* AUTOINCREMENT: a run id, once shown to a user, never names another run. */
	"CREATE TABLE runs ("
	"  run_id          INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  domid           INTEGER NOT NULL,"
	"  name            TEXT NOT NULL,"
	"  uuid            TEXT NOT NULL DEFAULT '',"
	"  started_us      INTEGER NOT NULL,"
	"  ended_us        INTEGER,"
	"  state           TEXT NOT NULL CHECK (state IN ('running', 'complete', 'crashed')),"
	"  host            TEXT NOT NULL DEFAULT '',"
	"  backend_version TEXT NOT NULL DEFAULT '',"
	"  source          TEXT NOT NULL DEFAULT 'capture' CHECK (source IN ('capture', 'import'))"
	");"
	"CREATE INDEX runs_by_started ON runs(started_us);"
	"CREATE INDEX runs_running ON runs(state) WHERE state = 'running';"
	"CREATE TABLE devices ("
	"  device_id          INTEGER PRIMARY KEY CHECK (device_id BETWEEN 1 AND 2147483647),"
	"  run_id             INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
	"  vdev               TEXT NOT NULL,"
	"  devid              INTEGER NOT NULL,"
	"  role               TEXT NOT NULL CHECK (role IN ('prof', 'hp', 'raw')),"
	"  capacity_sectors   INTEGER NOT NULL CHECK (capacity_sectors > 0),"
	"  write_requests     INTEGER NOT NULL DEFAULT 0,"
	"  write_bytes        INTEGER NOT NULL DEFAULT 0,"
	"  read_requests      INTEGER NOT NULL DEFAULT 0,"
	"  read_bytes         INTEGER NOT NULL DEFAULT 0,"
	"  flush_requests     INTEGER NOT NULL DEFAULT 0,"
	"  discard_requests   INTEGER NOT NULL DEFAULT 0,"
	"  errors             INTEGER NOT NULL DEFAULT 0,"
	"  written_end_sector INTEGER NOT NULL DEFAULT 0,"
	"  status             TEXT NOT NULL DEFAULT 'none' CHECK (status IN ('none', 'ok', 'corrupt')),"
	"  file_size          INTEGER,"
	"  closed             INTEGER,"
	"  word_size          INTEGER,"
	"  status_updated_us  INTEGER,"
	"  UNIQUE (run_id, vdev)"
	");"
	/* key = device_id << 32 | chunk number; see store_internal.h. */
	"CREATE TABLE chunks ("
	"  key  INTEGER PRIMARY KEY,"
	"  data BLOB NOT NULL"
	");"
	/* The chunk key is derived, so a foreign key cannot express the
	 * cascade; this trigger does, as one rowid range delete. */
	"CREATE TRIGGER devices_drop_chunks AFTER DELETE ON devices BEGIN"
	"  DELETE FROM chunks WHERE key BETWEEN OLD.device_id * 4294967296"
	"                                  AND OLD.device_id * 4294967296 + 4294967295;"
	"END;",

	/* 1 -> 2: the device row is updated by every commit, and a CHECK with
	 * an IN list is compiled into an ephemeral table built anew on each
	 * UPDATE that sets the column: 40% of a HaLVM request's instructions
	 * (callgrind).  The same constraint as comparisons costs nothing.
	 * SQLite cannot alter a constraint: the table is rebuilt (the trigger
	 * first, so that dropping the old table deletes no chunks). */
	"DROP TRIGGER devices_drop_chunks;"
	"CREATE TABLE devices_v2 ("
	"  device_id          INTEGER PRIMARY KEY CHECK (device_id BETWEEN 1 AND 2147483647),"
	"  run_id             INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
	"  vdev               TEXT NOT NULL,"
	"  devid              INTEGER NOT NULL,"
	"  role               TEXT NOT NULL CHECK (role = 'prof' OR role = 'hp' OR role = 'raw'),"
	DEVICES_COLUMNS_AFTER_ROLE
	"INSERT INTO devices_v2 SELECT * FROM devices;"
	"DROP TABLE devices;"
	"ALTER TABLE devices_v2 RENAME TO devices;"
	"CREATE TRIGGER devices_drop_chunks AFTER DELETE ON devices BEGIN"
	"  DELETE FROM chunks WHERE key BETWEEN OLD.device_id * 4294967296"
	"                                  AND OLD.device_id * 4294967296 + 4294967295;"
	"END;",

	/* 2 -> 3: bulk chunks in the data file (store_slots.c): a chunk row may
	 * name a 64 KiB slot of <db>-data instead of holding the bytes; slots
	 * no longer named wait in dead_slots until no reader can see them.
	 * meta.data_slots counts the slots ever allocated. */
	"ALTER TABLE chunks ADD COLUMN slot INTEGER CHECK (slot IS NULL OR slot >= 0);"
	"CREATE TABLE dead_slots ("
	"  slot      INTEGER PRIMARY KEY,"
	"  freed_gen INTEGER NOT NULL"
	");"
	"DROP TRIGGER devices_drop_chunks;"
	DEVICES_DROP_CHUNKS_TRIGGER,

	/* 3 -> 4: the store's identity, which <db>-data carries too in its
	 * header (slot 0; store_slots.c): a data file that went missing, or
	 * one of another store put beside this database, is refused instead
	 * of read as zeros or overwritten.  The header of a data file written
	 * before this version is added by its owner at open
	 * (meta.data_header says where that stands). */
	"INSERT INTO meta(key, value) VALUES ('store_id', lower(hex(randomblob(16))));",

	/* 4 -> 5: MirageOS traces.  A device may have the role 'trace' (the
	 * guest's mirage-profile buffer, vdev "mprof"): its sectors hold the
	 * trace packets kept, back to back, and trace_packets says which
	 * packet lies where.  seq is the guest's 16-bit stream_packet_count
	 * extended past its wrap: a seq missing below the largest is a packet
	 * the guest overwrote before the backend could keep it.  final marks
	 * the packet that was still being written when the trace ended (the
	 * guest died or withdrew the buffer): it may stop mid-event.  The
	 * devices table is rebuilt for its role constraint (as in 1 -> 2). */
	"DROP TRIGGER devices_drop_chunks;"
	"CREATE TABLE devices_v5 ("
	"  device_id          INTEGER PRIMARY KEY CHECK (device_id BETWEEN 1 AND 2147483647),"
	"  run_id             INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
	"  vdev               TEXT NOT NULL,"
	"  devid              INTEGER NOT NULL,"
	"  role               TEXT NOT NULL"
	"                     CHECK (role = 'prof' OR role = 'hp' OR role = 'raw' OR role = 'trace'),"
	DEVICES_COLUMNS_AFTER_ROLE
	"INSERT INTO devices_v5 SELECT * FROM devices;"
	"DROP TABLE devices;"
	"ALTER TABLE devices_v5 RENAME TO devices;"
	DEVICES_DROP_CHUNKS_TRIGGER
	"CREATE TABLE trace_packets ("
	"  device_id INTEGER NOT NULL REFERENCES devices(device_id) ON DELETE CASCADE,"
	"  seq       INTEGER NOT NULL CHECK (seq >= 0),"
	"  sector    INTEGER NOT NULL CHECK (sector >= 0),"
	"  bytes     INTEGER NOT NULL CHECK (bytes > 0),"
	"  events    INTEGER NOT NULL DEFAULT 0,"
	"  first_ts  INTEGER,"
	"  last_ts   INTEGER,"
	"  final     INTEGER NOT NULL DEFAULT 0,"
	"  kept_us   INTEGER NOT NULL,"
	"  PRIMARY KEY (device_id, seq)"
	") WITHOUT ROWID;",

	/* 5 -> 6: why a run ended, when the backend knows better than its
	 * state says (a run whose domain died while no backend ran). */
	"ALTER TABLE runs ADD COLUMN end_reason TEXT NOT NULL DEFAULT '';",

	/* 6 -> 7: stack samples taken from dom0.  A device may have the role
	 * 'samples' (vdev "samples"): its sectors hold the samples stream of
	 * profile/samples/samples.h, appended as the sampler takes them.  The devices
	 * table is rebuilt for its role constraint (as in 4 -> 5). */
	"DROP TRIGGER devices_drop_chunks;"
	"CREATE TABLE devices_v7 ("
	"  device_id          INTEGER PRIMARY KEY CHECK (device_id BETWEEN 1 AND 2147483647),"
	"  run_id             INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
	"  vdev               TEXT NOT NULL,"
	"  devid              INTEGER NOT NULL,"
	"  role               TEXT NOT NULL"
	"                     CHECK (role IN ('prof', 'hp', 'raw', 'trace', 'samples')),"
	DEVICES_COLUMNS_AFTER_ROLE
	"INSERT INTO devices_v7 SELECT * FROM devices;"
	"DROP TABLE devices;"
	"ALTER TABLE devices_v7 RENAME TO devices;"
	DEVICES_DROP_CHUNKS_TRIGGER,

	/* 7 -> 8: GHC's eventlog.  A device may have the role 'eventlog'
	 * (vdev "xvdp3"): the guest writes it as it writes the .hp, a status
	 * block in sector 0 and the file from sector 1.  The devices table is
	 * rebuilt for its role constraint (as in 6 -> 7). */
	"DROP TRIGGER devices_drop_chunks;"
	"CREATE TABLE devices_v8 ("
	"  device_id          INTEGER PRIMARY KEY CHECK (device_id BETWEEN 1 AND 2147483647),"
	"  run_id             INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
	"  vdev               TEXT NOT NULL,"
	"  devid              INTEGER NOT NULL,"
	"  role               TEXT NOT NULL"
	"                     CHECK (role IN ('prof', 'hp', 'raw', 'trace', 'samples', 'eventlog')),"
	DEVICES_COLUMNS_AFTER_ROLE
	"INSERT INTO devices_v8 SELECT * FROM devices;"
	"DROP TABLE devices;"
	"ALTER TABLE devices_v8 RENAME TO devices;"
	DEVICES_DROP_CHUNKS_TRIGGER,

	/* 8 -> 9: checksums.  Every chunk carries the XXH3-64 of its bytes
	 * as stored (the row's, or its slot's 64 KiB), every trace packet
	 * that of its p->bytes bytes, so that bit rot is seen on every read
	 * (store_read_range) and by 'profdb check'.  The data already stored
	 * is summed once, at the writer's open that finds meta.sums =
	 * 'pending' (store_open.c: the data file may be needed, which the
	 * migration's transaction does not open). */
	"ALTER TABLE chunks ADD COLUMN sum INTEGER;"
	"ALTER TABLE trace_packets ADD COLUMN sum INTEGER;"
	"INSERT INTO meta(key, value) VALUES ('sums', 'pending');",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == STORE_SCHEMA_VERSION,
               "one migration step per schema version");

static int pragma_int(struct store *s, const char *sql, int *out)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "reading the database header");
	rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlite_fail(s, "reading the database header");
	return 0;
}

int store_schema_check(struct store *s, int *version)
{
	int app, tables, rc;

	if ((rc = pragma_int(s, "PRAGMA application_id", &app)) ||
	    (rc = pragma_int(s, "PRAGMA user_version", version)) ||
	    (rc = pragma_int(s, "SELECT count(*) FROM sqlite_schema", &tables)))
		return rc;
	/* Only a file that was empty when we opened it may be made a store:
	 * a damaged one can read as having no tables and no id
	 * (tests/fuzz/fuzz_store_open), and is not ours to initialise. */
	if (app != STORE_APPLICATION_ID && (app != 0 || tables != 0 || *version != 0 || !s->empty_file))
		return store_fail(s, STORE_ENOTDB,
		                  "%s is an SQLite database but not a profsvc store (application_id "
		                  "%#x); refusing to touch it",
		                  s->path, (unsigned)app);
	/* user_version is any 32-bit integer in a damaged header; a negative
	 * one indexed the migrations (tests/fuzz/fuzz_store_open). */
	if (*version < 0)
		return store_fail(s, STORE_ECORRUPT,
		                  "database %s has schema version %d, which no profsvc writes: the "
		                  "file is damaged; run 'profdb check' and restore from a backup",
		                  s->path, *version);
	if (*version > STORE_SCHEMA_VERSION)
		return store_fail(s, STORE_ENEWER,
		                  "database %s has schema version %d, newer than this profsvc "
		                  "(version %s understands up to %d): upgrade profsvc",
		                  s->path, *version, PACKAGE_VERSION, STORE_SCHEMA_VERSION);
	return 0;
}

/* PRAGMA quick_check: every page of every b-tree readable and well
 * formed (not the index contents, which integrity_check compares). */
static int quick_check(struct store *s)
{
	sqlite3_stmt *st;
	char first[200] = "";
	int rc, rows = 0, ok = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "checking the database before upgrading it");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *row = (const char *)sqlite3_column_text(st, 0);
		if (!rows++) {
			snprintf(first, sizeof(first), "%s", row ? row : "");
			ok = row && strcmp(row, "ok") == 0;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "checking the database before upgrading it");
	if (!ok)
		return store_fail(s, STORE_ECORRUPT,
		                  "database %s is damaged (%s); it was not upgraded and is left as it "
		                  "is: run 'profdb check' and restore it from a backup",
		                  s->path, first);
	return 0;
}

int store_schema_migrate(struct store *s)
{
	char sql[128];
	int version, rc;

	/*
	 * Every step in one transaction: a database that fails half-way (a
	 * damaged one: tests/fuzz/fuzz_store_open found a v1 file left at v2
	 * when the second step hit a bad page) is left exactly as it was.
	 */
	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "upgrading the schema");
	/* Re-read inside the write lock: another process may have migrated
	 * while we waited. */
	if ((rc = store_schema_check(s, &version)))
		goto rollback;
	/* An upgrade writes, so it must not start on a file that would then
	 * be refused: a damaged store was once upgraded, and then refused
	 * when its settings could not be read, and closing it checkpointed
	 * the upgrade into the file (tests/fuzz/fuzz_store_open).  Upgrades
	 * are rare; the file is checked first, and the store's identity read
	 * before the upgrade commits. */
	if (version > 0 && (rc = quick_check(s)))
		goto rollback;
	for (; version < STORE_SCHEMA_VERSION; version++) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; PRAGMA application_id = %d",
		         version + 1, STORE_APPLICATION_ID);
		if (sqlite3_exec(s->db, migrations[version], NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			rc = store_sqlite_fail(s, "upgrading the schema");
			goto rollback;
		}
	}
	if ((rc = store_data_file_read_identity(s)))
		goto rollback;
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rc = store_sqlite_fail(s, "upgrading the schema");
		goto rollback;
	}
	return 0;
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
