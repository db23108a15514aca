/*
 * fleet_schema.c - the fleet catalogue's tables in PostgreSQL, versioned and
 * migrated as the SQLite store's are (store_schema.c): profsvc_meta holds
 * schema_version; migrations[i] takes version i to i + 1, each in the
 * transaction that records the new version.  Two writers starting at once
 * are kept in turn by an advisory lock; a reader never migrates, and
 * anything newer than this build is refused rather than misread.
 *
 * The host's rows as they were (store_schema.c names the columns), plus
 * what a listing needs without a join: a run's profile sizes and device
 * count, its host's number (a listing row names its host by it), and its
 * stamp (a hash of everything a sync compares: a run whose
 * stamp is unchanged is not sent again).
 *
 * Also fleet_open: the connection (fleet_pg.c), then the schema checked,
 * or made and migrated by a writer.
 *
 * May call: fleet_pg.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fleet_internal.h"

/* pg_advisory_xact_lock key for schema changes: "profsvc" in ASCII. */
#define FLEET_SCHEMA_LOCK "7342666913145699"

static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE profsvc_meta ("
	"  key   text PRIMARY KEY,"
	"  value text NOT NULL"
	");"
	"CREATE TABLE hosts ("
	"  host_id       text PRIMARY KEY CHECK (host_id ~ '^[0-9a-f]{32}$'),"
	"  host_no       integer GENERATED ALWAYS AS IDENTITY UNIQUE,"
	"  hostname      bytea NOT NULL,"
	"  first_sync_us bigint NOT NULL,"
	"  last_sync_us  bigint NOT NULL"
	");"
	"CREATE TABLE runs ("
	"  host_id         text NOT NULL REFERENCES hosts(host_id) ON DELETE CASCADE,"
	"  host_no         integer NOT NULL REFERENCES hosts(host_no) ON DELETE CASCADE,"
	"  run_id          bigint NOT NULL CHECK (run_id > 0),"
	"  domid           integer NOT NULL,"
	"  name            bytea NOT NULL,"
	"  uuid            bytea NOT NULL,"
	"  started_us      bigint NOT NULL,"
	"  ended_us        bigint,"
	"  state           text NOT NULL CHECK (state IN ('running', 'complete', 'crashed')),"
	"  host            bytea NOT NULL,"
	"  backend_version bytea NOT NULL,"
	"  source          text NOT NULL CHECK (source IN ('capture', 'import')),"
	"  end_reason      bytea NOT NULL,"
	"  prof_bytes      bigint NOT NULL,"
	"  hp_bytes        bigint NOT NULL,"
	"  trace_bytes     bigint NOT NULL,"
	"  ndevices        integer NOT NULL,"
	"  stamp           text NOT NULL,"
	"  synced_us       bigint NOT NULL,"
	"  PRIMARY KEY (host_id, run_id)"
	");"
	/* the listing's columns, in its order: query runs reads the index
	 * alone (fleet_list.c) */
	"CREATE INDEX runs_listing ON runs(started_us, host_no, run_id) "
	"  INCLUDE (domid, name, ended_us, state, prof_bytes, hp_bytes);"
	"CREATE TABLE devices ("
	"  host_id            text NOT NULL,"
	"  device_id          bigint NOT NULL CHECK (device_id > 0),"
	"  run_id             bigint NOT NULL,"
	"  vdev               bytea NOT NULL,"
	"  devid              integer NOT NULL,"
	"  role               text NOT NULL CHECK (role IN ('prof', 'hp', 'raw', 'trace')),"
	"  capacity_sectors   bigint NOT NULL CHECK (capacity_sectors > 0),"
	"  write_requests     bigint NOT NULL,"
	"  write_bytes        bigint NOT NULL,"
	"  read_requests      bigint NOT NULL,"
	"  read_bytes         bigint NOT NULL,"
	"  flush_requests     bigint NOT NULL,"
	"  discard_requests   bigint NOT NULL,"
	"  errors             bigint NOT NULL,"
	"  written_end_sector bigint NOT NULL,"
	"  status             text NOT NULL CHECK (status IN ('none', 'ok', 'corrupt')),"
	"  file_size          bigint,"
	"  closed             integer,"
	"  word_size          integer,"
	"  status_updated_us  bigint,"
	"  PRIMARY KEY (host_id, device_id),"
	"  FOREIGN KEY (host_id, run_id) REFERENCES runs(host_id, run_id) ON DELETE CASCADE"
	");"
	"CREATE INDEX devices_of_run ON devices(host_id, run_id);"
	/* chunk: the device's 64 KiB chunk number; data: its bytes, a short
	 * last one reading as zeros after its end (as in the store) */
	"CREATE TABLE chunks ("
	"  host_id   text NOT NULL,"
	"  device_id bigint NOT NULL,"
	"  chunk     bigint NOT NULL CHECK (chunk >= 0),"
	"  data      bytea NOT NULL CHECK (length(data) BETWEEN 1 AND 65536 AND length(data) % 512 = 0),"
	"  PRIMARY KEY (host_id, device_id, chunk),"
	"  FOREIGN KEY (host_id, device_id) REFERENCES devices(host_id, device_id) ON DELETE CASCADE"
	");"
	"CREATE TABLE trace_packets ("
	"  host_id   text NOT NULL,"
	"  device_id bigint NOT NULL,"
	"  seq       bigint NOT NULL CHECK (seq >= 0),"
	"  sector    bigint NOT NULL CHECK (sector >= 0),"
	"  bytes     bigint NOT NULL CHECK (bytes > 0),"
	"  events    bigint NOT NULL,"
	"  first_ts  bigint,"
	"  last_ts   bigint,"
	"  final     integer NOT NULL,"
	"  kept_us   bigint NOT NULL,"
	"  PRIMARY KEY (host_id, device_id, seq),"
	"  FOREIGN KEY (host_id, device_id) REFERENCES devices(host_id, device_id) ON DELETE CASCADE"
	");"
	"INSERT INTO profsvc_meta(key, value) VALUES ('schema_version', '0');",
	/* 1 -> 2: the listing's columns packed into one (fleet_internal.h,
	 * FLEET_LISTING_FIXED): a COPY row of one bytea costs the server a
	 * memcpy where nine columns cost nine output functions, half of a
	 * 100,000-run listing.  Generated, so no writer can let it disagree
	 * with the columns it is made of; the index keeps it for the listing. */
	"ALTER TABLE runs ADD COLUMN listing bytea NOT NULL GENERATED ALWAYS AS ("
	"  int4send(host_no) || int8send(run_id) || int4send(domid) || int8send(started_us) ||"
	"  int8send(coalesce(ended_us, -1)) || int8send(prof_bytes) || int8send(hp_bytes) ||"
	"  CASE state WHEN 'running' THEN '\\x00'::bytea WHEN 'complete' THEN '\\x01'::bytea"
	"             ELSE '\\x02'::bytea END ||"
	"  name) STORED;"
	"DROP INDEX runs_listing;"
	"CREATE INDEX runs_listing ON runs(started_us, host_no, run_id) INCLUDE (state, listing);",

	/* 2 -> 3: stack samples taken from dom0 (a device of role 'samples'). */
	"ALTER TABLE devices DROP CONSTRAINT devices_role_check;"
	"ALTER TABLE devices ADD CONSTRAINT devices_role_check"
	"  CHECK (role IN ('prof', 'hp', 'raw', 'trace', 'samples'));",

	/* 3 -> 4: GHC's eventlog (a device of role 'eventlog', xvdp3). */
	"ALTER TABLE devices DROP CONSTRAINT devices_role_check;"
	"ALTER TABLE devices ADD CONSTRAINT devices_role_check"
	"  CHECK (role IN ('prof', 'hp', 'raw', 'trace', 'samples', 'eventlog'));",

	/* 4 -> 5: checksums, as the store's (store schema 9): a chunk's sum
	 * is the XXH3-64 of its bytes as the catalogue holds them, a trace
	 * packet's that of its own bytes, both computed by the sync from
	 * data it verified in the host's store, and verified by every read
	 * of a run from the catalogue (fleet_read.c).  PostgreSQL cannot
	 * compute them: the rows synced before carry none (NULL: not
	 * verified), and every run is sent again, with them, by its host's
	 * next sync (its stamp matches no run's any more); the chunks of a
	 * host that never syncs again get theirs from any host's sync
	 * (fleet_sync.c, backfill_sums). */
	"ALTER TABLE chunks ADD COLUMN sum bigint;"
	"ALTER TABLE trace_packets ADD COLUMN sum bigint;"
	"UPDATE runs SET stamp = '';",

	/* 5 -> 6: a run pushed without a device whose bytes failed their
	 * checksum on its host (fleet_sync.c): the device's row is there and
	 * says why (damaged), none of its bytes are; the run's damaged says
	 * which devices were left out.  NULL: whole. */
	("ALTER TABLE runs ADD COLUMN damaged bytea;"
	 "ALTER TABLE devices ADD COLUMN damaged bytea;"),
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == FLEET_SCHEMA_VERSION,
               "one migration step per schema version");

/* A version past this is no later profsvc's but a damaged row: ten
 * thousand schema changes are more than this project will make. */
#define FLEET_SCHEMA_VERSION_MAX 10000

/* The schema version, 0 without our tables, -1 on failure.  The value is
 * another host's word: anything but a small positive number is refused
 * here, so that no caller ever indexes migrations[] by it. */
static int read_version(struct fleet *f, int *version)
{
	PGresult *r = fleet_exec(f, "reading the catalogue's schema version",
	                         "SELECT to_regclass('profsvc_meta') IS NOT NULL", NULL, PGRES_TUPLES_OK);
	if (!r)
		return -1;
	int have = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 1;
	PQclear(r);
	*version = 0;
	if (!have)
		return 0;
	r = fleet_exec(f, "reading the catalogue's schema version",
	               "SELECT value FROM profsvc_meta WHERE key = 'schema_version'", NULL,
	               PGRES_TUPLES_OK);
	if (!r)
		return -1;
	char v[64] = "";
	if (PQntuples(r) == 1)
		fleet_get_str(r, 0, 0, v, sizeof(v));
	PQclear(r);
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!v[0] || *end || n < 1)
		return fleet_fail(f, "%s holds a profsvc_meta table that is not profsvc's (schema_version "
		                     "'%.40s'); give the catalogue a database of its own",
		                  f->where, v);
	if (errno == ERANGE || n > FLEET_SCHEMA_VERSION_MAX)
		return fleet_fail(f, "%s claims catalogue schema %.40s, which no profsvc writes (this profdb "
		                     "knows up to %d): the catalogue is damaged or was changed by hand; fix "
		                     "profsvc_meta.schema_version there, or give this host another catalogue",
		                  f->where, v, FLEET_SCHEMA_VERSION);
	*version = (int)n;
	return 0;
}

static int schema_ensure(struct fleet *f, int writer)
{
	int version;

	if (read_version(f, &version) != 0)
		return -1;
	if (version > FLEET_SCHEMA_VERSION)
		return fleet_fail(f, "%s holds catalogue schema %d, newer than this profdb's %d: upgrade "
		                     "profsvc on this host",
		                  f->where, version, FLEET_SCHEMA_VERSION);
	if (version == FLEET_SCHEMA_VERSION)
		return 0;
	if (!writer)
		return version == 0
		               ? fleet_fail(f, "%s holds no profsvc catalogue yet: push a host's runs "
		                               "there first (profdb sync --to URL)",
		                            f->where)
		               : fleet_fail(f, "%s holds catalogue schema %d; a sync from this host "
		                               "(profdb sync --to URL) upgrades it to %d",
		                            f->where, version, FLEET_SCHEMA_VERSION);
	if (fleet_cmd(f, "upgrading the catalogue",
	              "BEGIN; SELECT pg_advisory_xact_lock(" FLEET_SCHEMA_LOCK ")", NULL) != 0)
		return -1;
	/* again under the lock: another writer may have done it meanwhile */
	if (read_version(f, &version) != 0)
		goto fail;
	for (; version < FLEET_SCHEMA_VERSION; version++) {
		struct fleet_params p = {0};
		fleet_param_i64(&p, version + 1);
		if (fleet_cmd(f, "upgrading the catalogue", migrations[version], NULL) != 0 ||
		    fleet_cmd(f, "upgrading the catalogue",
		              "UPDATE profsvc_meta SET value = $1 WHERE key = 'schema_version'", &p) != 0)
			goto fail;
	}
	if (fleet_cmd(f, "upgrading the catalogue", "COMMIT", NULL) != 0)
		goto fail;
	return 0;
fail:;
	PGresult *r = PQexec(f->conn, "ROLLBACK");
	PQclear(r);
	return -1;
}

int fleet_open(struct fleet **out, const char *url, int writer, char *err, size_t len)
{
	if (fleet_connect(out, url, writer, err, len) != 0)
		return -1;
	if (schema_ensure(*out, writer) != 0) {
		snprintf(err, len, "%s", (*out)->err);
		fleet_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
