/*
 * store_catalog.c - the run catalogue: runs, their listing and states,
 * roles and their names.  (Devices and their handles: store_devices.c.)
 * Every statement binds its parameters; guest-controlled strings (domain
 * names, uuids) never become SQL text.
 *
 * Layer 5 (store_internal.h).  May call: store_data.c (batches),
 * store_chunks.c (device rows), store_checkpoint.c, store_conn.c,
 * store_remote.c (a store read through the backend: its reads forward),
 * util/grow.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"
#include "util/grow.h"

static const char *const role_names[STORE_ROLES] = {"raw", "prof", "hp", "trace", "samples", "eventlog"};
static const char *const state_names[] = {"running", "complete", "crashed"};

uint64_t store_device_written_bytes(const struct store_device_info *d)
{
	return d->written_end_sector > 1 ? (d->written_end_sector - 1) * (uint64_t)STORE_SECTOR_SIZE : 0;
}

int store_device_profile_whole(const struct store_device_info *d)
{
	return d->status == STORE_STATUS_OK && d->closed && d->file_size >= 0 &&
	       (uint64_t)d->file_size <= store_device_written_bytes(d);
}

const char *store_role_name(enum store_role r)
{
	return (unsigned)r < STORE_ROLES ? role_names[r] : "raw";
}

const char *store_run_state_name(enum store_run_state st)
{
	return (unsigned)st < 3 ? state_names[st] : "unknown";
}

int store_run_state_parse(const char *s, enum store_run_state *out)
{
	/* NULL: a damaged row (the schema says NOT NULL; a damaged file
	 * need not agree).  Found by tests/fuzz/fuzz_store_open. */
	if (!s)
		return STORE_EINVAL;
	for (int i = 0; i < 3; i++)
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum store_run_state)i;
			return 0;
		}
	return STORE_EINVAL;
}

enum store_role store_role_parse(const char *s)
{
	for (int i = 0; i < STORE_ROLES; i++)
		if (s && strcmp(s, role_names[i]) == 0)
			return (enum store_role)i;
	return STORE_ROLE_RAW;
}

enum store_role store_role_for_vdev(const char *vdev)
{
	if (strcmp(vdev, "xvdp1") == 0)
		return STORE_ROLE_PROF;
	if (strcmp(vdev, "xvdp2") == 0)
		return STORE_ROLE_HP;
	if (strcmp(vdev, "xvdp3") == 0)
		return STORE_ROLE_EVENTLOG;
	if (strcmp(vdev, STORE_TRACE_VDEV) == 0)
		return STORE_ROLE_TRACE;
	if (strcmp(vdev, STORE_SAMPLES_VDEV) == 0)
		return STORE_ROLE_SAMPLES;
	return STORE_ROLE_RAW;
}

const char *store_profile_vdev(enum store_role r)
{
	return r == STORE_ROLE_PROF ? "xvdp1" : r == STORE_ROLE_HP ? "xvdp2" : r == STORE_ROLE_EVENTLOG ? "xvdp3" : NULL;
}

const char *store_profile_ext(enum store_role r)
{
	return r == STORE_ROLE_PROF ? "prof" : r == STORE_ROLE_HP ? "hp" : r == STORE_ROLE_EVENTLOG ? "eventlog" : NULL;
}

uint64_t store_max_capacity(void)
{
	/* 2^32 chunks per device (the chunk number's share of the key). */
	return (uint64_t)STORE_CHUNK_SECTORS << 32;
}

void store_copy_text(char *dst, size_t len, const unsigned char *src)
{
	size_t n = src ? strnlen((const char *)src, len - 1) : 0;
	memcpy(dst, src ? (const char *)src : "", n);
	dst[n] = '\0';
}

/* Copies at most len-1 bytes without cutting a UTF-8 sequence in half. */
static void copy_bounded(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len) {
		n = len - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int store_run_begin(struct store *s, struct store_run *run)
{
	sqlite3_stmt *st;
	int rc;
	STORE_NEED_SQL(s);

	rc = sqlite3_prepare_v2(s->db,
	                        "INSERT INTO runs(domid, name, uuid, started_us, state, host, "
	                        "backend_version, source) VALUES (?1, ?2, ?3, ?4, 'running', ?5, "
	                        "?6, ?7)",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_sqlite_fail(s, "creating a run");
	copy_bounded(run->name, sizeof(run->name), run->name);
	sqlite3_bind_int(st, 1, run->domid);
	sqlite3_bind_text(st, 2, run->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, run->uuid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, run->started_us ? run->started_us : store_now_us());
	sqlite3_bind_text(st, 5, run->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, run->backend_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, run->source[0] ? run->source : "capture", -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "creating a run");
	run->run_id = sqlite3_last_insert_rowid(s->db);
	run->state = STORE_RUN_RUNNING;
	return 0;
}

/* Trims each device's last chunk to the end of the written data: a finished
 * run keeps no padding (see store_internal.h), and incremental vacuum gives
 * the freed pages back to the filesystem. */
static int trim_run_devices(struct store *s, int64_t run_id)
{
	sqlite3_stmt *sel, *upd;
	int rc;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT device_id, written_end_sector FROM devices "
	                       "WHERE run_id = ?1 AND written_end_sector > 0",
	                       -1, &sel, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "finishing a run");
	if (sqlite3_prepare_v2(s->db,
	                       "UPDATE chunks SET data = substr(data, 1, ?2), sum = xxh3(substr(data, 1, ?2)) "
	                       "WHERE key = ?1 AND length(data) > ?2",
	                       -1, &upd, NULL) != SQLITE_OK) {
		sqlite3_finalize(sel);
		return store_sqlite_fail(s, "finishing a run");
	}
	sqlite3_bind_int64(sel, 1, run_id);
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(sel, 0);
		uint64_t end = (uint64_t)sqlite3_column_int64(sel, 1);
		uint64_t chunk = (end - 1) / STORE_CHUNK_SECTORS;
		uint64_t keep = (end - chunk * STORE_CHUNK_SECTORS) * STORE_SECTOR_SIZE;
		sqlite3_bind_int64(upd, 1, store_chunk_key(dev, chunk));
		sqlite3_bind_int64(upd, 2, (int64_t)keep);
		if (sqlite3_step(upd) != SQLITE_DONE) {
			rc = SQLITE_ERROR;
			break;
		}
		sqlite3_reset(upd);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "finishing a run");
	if (sqlite3_exec(s->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "finishing a run");
	return 0;
}

/* Ends a batch a catalogue function began for itself: committed if rc is
 * 0, else aborted (rc is kept). */
static int end_own_batch(struct store *s, int rc)
{
	if (rc) {
		store_batch_abort(s);
		return rc;
	}
	return store_batch_commit(s);
}

int store_run_delete(struct store *s, int64_t run_id)
{
	sqlite3_stmt *st;
	int rc, own = !s->in_batch;

	if ((rc = own ? store_batch_begin_sql(s) : store_promote(s)))
		return rc;
	store_blob_release(s);
	rc = sqlite3_prepare_v2(s->db, "DELETE FROM runs WHERE run_id = ?1", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_DONE)
		rc = store_sqlite_fail(s, "deleting a run");
	else if (sqlite3_changes(s->db) != 1)
		rc = store_fail(s, STORE_ENOTFOUND, "no run %lld", (long long)run_id);
	else
		rc = 0;
	if (!rc)
		store_checkpointer_want_restarts(s, 0); /* its slots, if it had any */
	return own ? end_own_batch(s, rc) : rc;
}

int store_run_end(struct store *s, int64_t run_id, enum store_run_state state, int64_t ended_us)
{
	return store_run_end_why(s, run_id, state, ended_us, NULL);
}

int store_run_end_why(struct store *s, int64_t run_id, enum store_run_state state, int64_t ended_us,
                      const char *why)
{
	sqlite3_stmt *st;
	int rc, own = !s->in_batch;

	if (state == STORE_RUN_RUNNING)
		return store_fail(s, STORE_EINVAL, "a run cannot end in state running");
	if ((rc = own ? store_batch_begin_sql(s) : store_promote(s)))
		return rc;
	store_blob_release(s); /* the trim rewrites chunk rows */
	rc = sqlite3_prepare_v2(s->db,
	                        "UPDATE runs SET state = ?2, ended_us = ?3, end_reason = ?4 WHERE run_id = ?1",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK) {
		rc = store_sqlite_fail(s, "ending a run");
		goto out;
	}
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, store_run_state_name(state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, ended_us ? ended_us : store_now_us());
	sqlite3_bind_text(st, 4, why ? why : "", -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rc = store_sqlite_fail(s, "ending a run");
		goto out;
	}
	if (sqlite3_changes(s->db) != 1) {
		rc = store_fail(s, STORE_ENOTFOUND, "no run %lld", (long long)run_id);
		goto out;
	}
	/* The trim reads written_end_sector: bring the rows up to date. */
	if (!(rc = store_flush_device_rows(s)))
		rc = trim_run_devices(s, run_id);
out:
	return own ? end_own_batch(s, rc) : rc;
}

/*
 * A saved domain restored (xl save/restore, xl migrate) is the same boot:
 * its guest goes on writing where it was.  The run that its save ended is
 * opened again for the restored domain's new domid, so that the whole
 * profile stays in one run.  Only a crashed run whose reason is the
 * writer's saved_why is reopened, in one statement, so that a run another
 * writer ended otherwise (or a reader's view of it) is never undone.
 */
int store_run_reopen(struct store *s, int64_t run_id, int32_t domid, const char *saved_why)
{
	sqlite3_stmt *st;
	int rc, own = !s->in_batch;

	if ((rc = own ? store_batch_begin_sql(s) : store_promote(s)))
		return rc;
	rc = sqlite3_prepare_v2(s->db,
	                        "UPDATE runs SET state = 'running', ended_us = NULL, end_reason = '', "
	                        "domid = ?2 WHERE run_id = ?1 AND state = 'crashed' AND end_reason = ?3",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK) {
		rc = store_sqlite_fail(s, "reopening a run");
		goto out;
	}
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, domid);
	sqlite3_bind_text(st, 3, saved_why, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rc = store_sqlite_fail(s, "reopening a run");
		goto out;
	}
	rc = sqlite3_changes(s->db) == 1
	             ? 0
	             : store_fail(s, STORE_ENOTFOUND, "run %lld is not a saved run", (long long)run_id);
out:
	return own ? end_own_batch(s, rc) : rc;
}

int store_latest_run_of_uuid(struct store *s, const char *uuid, int64_t *run_id)
{
	sqlite3_stmt *st;
	STORE_NEED_SQL(s);

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT run_id FROM runs WHERE uuid = ?1 AND source = 'capture' "
	                       "ORDER BY run_id DESC LIMIT 1",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "finding a domain's runs");
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*run_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return store_fail(s, STORE_ENOTFOUND, "no run of domain %s", uuid);
	return store_sqlite_fail(s, "finding a domain's runs");
}

/*
 * A run as a listing shows it: its row, and what its devices add (the
 * .prof, .hp and eventlog sizes from xvdp1, xvdp2 and xvdp3, a MirageOS
 * trace's bytes from its mprof device and its packets and events from
 * the trace's index, the stack samples' bytes, how many devices).  Two
 * scans, both in run_id order, merged here: the runs (the table's own
 * order) and their devices (the UNIQUE (run_id, vdev) index's), each row
 * read once.  One query that joined them and grouped by run copied every
 * run's columns into an aggregate per run and built the list of the
 * newest ids in a temporary table: 380 million instructions for
 * `profdb query runs` over 10,000 runs, 27,000 of SQLite's per run.
 */
/* The runs table's own columns (end_reason came with schema 6: readers
 * open older stores as they are). */
#define RUN_ROW_COLUMNS                                                                      \
	"run_id, domid, name, uuid, started_us, ended_us, state, host, backend_version, source, "
/* What a device adds to its run.  A profile's size as a listing shows it:
 * what its status block claims, never more than the guest wrote (a block
 * may claim 1 TiB).  A trace's packets and events: a range of the trace's
 * primary key, only for a trace (the table came with schema 5). */
#define RUN_DEVICE_COLUMNS                                                                   \
	"run_id, vdev, role, CASE WHEN status = 'ok' THEN "                                   \
	"min(file_size, max(written_end_sector - 1, 0) * 512) ELSE -1 END, "                  \
	"written_end_sector, write_bytes, "
#define RUN_TRACE_COLUMNS                                                                    \
	"CASE WHEN role = 'trace' THEN (SELECT count(*) FROM trace_packets t"                   \
	"  WHERE t.device_id = devices.device_id) END, "                                        \
	"CASE WHEN role = 'trace' THEN (SELECT coalesce(sum(t.events), 0) FROM trace_packets t" \
	"  WHERE t.device_id = devices.device_id) END"

static int64_t col_or(sqlite3_stmt *st, int i, int64_t none)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? none : sqlite3_column_int64(st, i);
}

static void load_run(sqlite3_stmt *st, struct store_run *r)
{
	memset(r, 0, sizeof(*r));
	r->run_id = sqlite3_column_int64(st, 0);
	r->domid = sqlite3_column_int(st, 1);
	store_copy_text(r->name, sizeof(r->name), sqlite3_column_text(st, 2));
	store_copy_text(r->uuid, sizeof(r->uuid), sqlite3_column_text(st, 3));
	r->started_us = sqlite3_column_int64(st, 4);
	r->ended_us = sqlite3_column_int64(st, 5);
	enum store_run_state state = STORE_RUN_CRASHED;
	store_run_state_parse((const char *)sqlite3_column_text(st, 6), &state);
	r->state = state;
	store_copy_text(r->host, sizeof(r->host), sqlite3_column_text(st, 7));
	store_copy_text(r->backend_version, sizeof(r->backend_version), sqlite3_column_text(st, 8));
	store_copy_text(r->source, sizeof(r->source), sqlite3_column_text(st, 9));
	store_copy_text(r->end_reason, sizeof(r->end_reason), sqlite3_column_text(st, 10));
	r->prof_bytes = r->hp_bytes = r->eventlog_bytes = r->trace_bytes = -1;
	r->trace_packets = r->trace_events = r->samples_bytes = r->samples = -1;
}

/* Device row st (RUN_DEVICE_COLUMNS, then RUN_TRACE_COLUMNS or NULLs)
 * added to its run r, as one query's max() over them once did. */
static void add_device(sqlite3_stmt *st, struct store_run *r)
{
	const char *vdev = (const char *)sqlite3_column_text(st, 1);
	const char *role = (const char *)sqlite3_column_text(st, 2);
	int64_t file_bytes = col_or(st, 3, -1), end = sqlite3_column_int64(st, 4);
	vdev = vdev ? vdev : "";
	role = role ? role : "";
	r->ndevices++;
	if (!strcmp(vdev, "xvdp1") && !strcmp(role, "prof"))
		r->prof_bytes = file_bytes;
	else if (!strcmp(vdev, "xvdp2") && !strcmp(role, "hp"))
		r->hp_bytes = file_bytes;
	else if (!strcmp(vdev, "xvdp3") && !strcmp(role, "eventlog"))
		r->eventlog_bytes = file_bytes;
	if (!strcmp(vdev, "mprof") && !strcmp(role, "trace"))
		r->trace_bytes = sqlite3_column_int64(st, 5);
	if (!strcmp(role, "trace")) {
		int64_t p = col_or(st, 6, -1), e = col_or(st, 7, -1);
		r->trace_packets = p > r->trace_packets ? p : r->trace_packets;
		r->trace_events = e > r->trace_events ? e : r->trace_events;
	}
	if (!strcmp(role, "samples") && end * 512 > r->samples_bytes)
		r->samples_bytes = end * 512;
}

/* The devices of runs from lo on (and below hi, 0: no bound), in run_id
 * order, for add_device. */
static int prepare_devices(struct store *s, int64_t lo, int64_t hi, sqlite3_stmt **st)
{
	char sql[1024];
	snprintf(sql, sizeof(sql), "SELECT " RUN_DEVICE_COLUMNS "%s FROM devices"
	         " WHERE run_id >= ?1 AND (?2 IS NULL OR run_id < ?2) ORDER BY run_id",
	         s->schema_version >= 5 ? RUN_TRACE_COLUMNS : "NULL, NULL");
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(*st, 1, lo);
	if (hi > 0)
		sqlite3_bind_int64(*st, 2, hi);
	return 0;
}

/* run->backend_gone (see store.h).  *owner caches store_owner_alive over
 * a listing (-2: not read yet). */
static void mark_backend(struct store *s, struct store_run *r, int *owner)
{
	char host[STORE_NAME_MAX] = "";

	if (r->state != STORE_RUN_RUNNING || strcmp(r->source, "capture") != 0)
		return;
	if (gethostname(host, sizeof(host) - 1) != 0 || strcmp(host, r->host) != 0)
		return; /* another host's run: its backend cannot be seen from here */
	if (*owner == -2)
		*owner = store_owner_alive(s);
	r->backend_gone = *owner == 0;
}

/* The runs of a listing, and their devices, merged: each run is given to
 * cb whole.  runs yields RUN_ROW_COLUMNS in run_id order; devices, from
 * prepare_devices over at least those runs. */
static int merge_runs(struct store *s, sqlite3_stmt *runs, sqlite3_stmt *devices, store_run_cb cb, void *ctx,
                      int *cbrc)
{
	int owner = -2, rc, drc = sqlite3_step(devices);
	while ((rc = sqlite3_step(runs)) == SQLITE_ROW) {
		struct store_run r;
		load_run(runs, &r);
		while (drc == SQLITE_ROW && sqlite3_column_int64(devices, 0) < r.run_id)
			drc = sqlite3_step(devices);
		while (drc == SQLITE_ROW && sqlite3_column_int64(devices, 0) == r.run_id) {
			add_device(devices, &r);
			drc = sqlite3_step(devices);
		}
		if (drc != SQLITE_ROW && drc != SQLITE_DONE)
			return -1;
		mark_backend(s, &r, &owner);
		if ((*cbrc = cb(ctx, &r)) != 0)
			return 0;
	}
	return rc == SQLITE_DONE && (drc == SQLITE_ROW || drc == SQLITE_DONE) ? 0 : -1;
}

static int copy_one(void *ctx, const struct store_run *r)
{
	*(struct store_run *)ctx = *r;
	return 1;
}

int store_get_run(struct store *s, int64_t run_id, struct store_run *out)
{
	if (s->remote)
		return store_remote_get_run(s, run_id, out);
	sqlite3_stmt *runs = NULL, *devices = NULL;
	int cbrc = 0, rc = -1;
	STORE_NEED_SQL(s);

	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT " RUN_ROW_COLUMNS "%s FROM runs WHERE run_id = ?1",
	         s->schema_version >= 6 ? "end_reason" : "''");
	if (sqlite3_prepare_v2(s->db, sql, -1, &runs, NULL) == SQLITE_OK &&
	    prepare_devices(s, run_id, run_id + 1, &devices) == 0) {
		sqlite3_bind_int64(runs, 1, run_id);
		rc = merge_runs(s, runs, devices, copy_one, out, &cbrc);
	}
	sqlite3_finalize(runs);
	sqlite3_finalize(devices);
	if (rc != 0)
		return store_sqlite_fail(s, "reading a run");
	if (!cbrc)
		return store_fail(s, STORE_ENOTFOUND,
		                  "no run %lld in %s ('profdb query runs' lists them)",
		                  (long long)run_id, s->path);
	return 0;
}

int store_latest_run(struct store *s, int64_t *run_id)
{
	if (s->remote)
		return store_remote_latest_run(s, run_id);
	sqlite3_stmt *st;
	int rc;
	STORE_NEED_SQL(s);

	if (sqlite3_prepare_v2(s->db, "SELECT max(run_id) FROM runs", -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "finding the latest run");
	rc = sqlite3_step(st);
	int null = rc != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL;
	if (rc == SQLITE_ROW)
		*run_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return store_sqlite_fail(s, "finding the latest run");
	if (null)
		return store_fail(s, STORE_ENOTFOUND, "no runs in %s yet", s->path);
	return 0;
}

int store_list_running(struct store *s, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;
	STORE_NEED_SQL(s);

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT run_id FROM runs WHERE state = 'running' ORDER BY run_id",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "listing running runs");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (GROW(*ids, cap, *n + 1) != 0) {
			sqlite3_finalize(st);
			free(*ids);
			*ids = NULL;
			*n = 0;
			return store_fail(s, STORE_ENOMEM, "out of memory listing runs");
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return store_sqlite_fail(s, "listing running runs");
	}
	return 0;
}

int store_count_runs_by_state(struct store *s, int64_t counts[3])
{
	if (s->remote)
		return store_remote_count_runs(s, counts);
	sqlite3_stmt *st;
	int rc;
	STORE_NEED_SQL(s);

	counts[0] = counts[1] = counts[2] = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT state, count(*) FROM runs GROUP BY state", -1, &st, NULL) !=
	    SQLITE_OK)
		return store_sqlite_fail(s, "counting runs");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		enum store_run_state state;
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (name && store_run_state_parse(name, &state) == 0 && (int)state >= 0 && (int)state < 3)
			counts[state] = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "counting runs");
}

/* Binds a listing's filter to st's ?1..?6 (see store_list_runs). */
static void bind_filter(sqlite3_stmt *st, const struct store_run_filter *f)
{
	if (f && f->state >= 0)
		sqlite3_bind_text(st, 1, store_run_state_name((enum store_run_state)f->state), -1, SQLITE_STATIC);
	if (f && f->name_glob)
		sqlite3_bind_text(st, 2, f->name_glob, -1, SQLITE_STATIC);
	if (f && f->since_us)
		sqlite3_bind_int64(st, 3, f->since_us);
	if (f && f->before_id > 0)
		sqlite3_bind_int64(st, 5, f->before_id);
	if (f && f->after_id > 0)
		sqlite3_bind_int64(st, 6, f->after_id);
}

#define RUN_FILTER                                                                           \
	" WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR name GLOB ?2)"                    \
	" AND (?3 IS NULL OR started_us >= ?3) AND (?5 IS NULL OR run_id < ?5)"                \
	" AND (?6 IS NULL OR run_id > ?6)"

/* The smallest run id of the listing's newest `limit` runs (0: no limit,
 * or fewer runs): where its scans begin.  -1 on failure. */
static int64_t newest_from(struct store *s, const struct store_run_filter *f)
{
	sqlite3_stmt *st;
	if (!f || f->limit <= 0)
		return 0;
	if (sqlite3_prepare_v2(s->db, "SELECT run_id FROM runs" RUN_FILTER " ORDER BY run_id DESC LIMIT 1 OFFSET ?4",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	bind_filter(st, f);
	sqlite3_bind_int64(st, 4, f->limit - 1);
	int rc = sqlite3_step(st);
	int64_t from = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? from : -1;
}

int store_list_runs(struct store *s, const struct store_run_filter *f, store_run_cb cb, void *ctx)
{
	if (s->remote)
		return store_remote_list_runs(s, f, cb, ctx);
	sqlite3_stmt *runs = NULL, *devices = NULL;
	int cbrc = 0, rc = -1;
	STORE_NEED_SQL(s);

	/* The newest `limit` runs, shown oldest first like a log: the id
	 * where they begin is found first (one seek down the table's end),
	 * then both scans go up from it in run_id order, and nothing is
	 * sorted or gathered into a temporary table. */
	int64_t from = newest_from(s, f);
	char sql[1024];
	snprintf(sql, sizeof(sql), "SELECT " RUN_ROW_COLUMNS "%s FROM runs" RUN_FILTER
	         " AND run_id >= ?4 ORDER BY run_id", s->schema_version >= 6 ? "end_reason" : "''");
	if (from >= 0 && sqlite3_prepare_v2(s->db, sql, -1, &runs, NULL) == SQLITE_OK &&
	    prepare_devices(s, from, f && f->before_id > 0 ? f->before_id : 0, &devices) == 0) {
		bind_filter(runs, f);
		sqlite3_bind_int64(runs, 4, from);
		rc = merge_runs(s, runs, devices, cb, ctx, &cbrc);
	}
	sqlite3_finalize(runs);
	sqlite3_finalize(devices);
	if (cbrc)
		return cbrc;
	if (rc != 0)
		return store_sqlite_fail(s, "listing runs");
	return 0;
}
