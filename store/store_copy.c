/*
 * store_copy.c - a run copied into a store as it was in another one: its
 * row, its devices' rows with their counters and status, their chunks and
 * trace packets, written as rows rather than as requests.
 *
 * Why rows and not store_write(): a copy must read exactly as the original
 * does (an export byte for byte, a salvage that finds what the original's
 * finds, the same counters in `show`), and replaying writes would count
 * them again and decode status blocks again.  profdb uses it to bring a
 * run out of a fleet's PostgreSQL catalogue into a private store, where
 * every viewing command reads it through the same code as a host's own.
 *
 * Ids are kept when they are free (a run shown as run 12 on its host is run
 * 12 here); a second copy with a taken id gets the next free one.
 *
 * Layer 6 (store_internal.h).  May call: store_catalog.c,
 * store_chunks.c (a device row's counters), store_conn.c.
 */
#include "config.h"

#include <string.h>

#include "store_internal.h"

const char *store_identity(const struct store *s)
{
	return s->store_id;
}

static int id_free(struct store *s, enum store_stmt_id taken, int64_t id, int *is_free)
{
	sqlite3_stmt *st = store_stmt(s, taken);

	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlite_fail(s, "copying a run");
	*is_free = rc == SQLITE_DONE;
	return 0;
}

int store_copy_run(struct store *s, struct store_run *r)
{
	sqlite3_stmt *st;
	int is_free = 0, rc;
	STORE_NEED_SQL(s);

	if (r->run_id > 0 && (rc = id_free(s, ST_COPY_RUN_TAKEN, r->run_id, &is_free)))
		return rc;
	if (!(st = store_stmt(s, ST_COPY_RUN_INSERT)))
		return STORE_EIO;
	if (is_free)
		sqlite3_bind_int64(st, 1, r->run_id);
	sqlite3_bind_int(st, 2, r->domid);
	sqlite3_bind_text(st, 3, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, r->uuid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, r->started_us);
	if (r->ended_us)
		sqlite3_bind_int64(st, 6, r->ended_us);
	sqlite3_bind_text(st, 7, store_run_state_name(r->state), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, r->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, r->backend_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, strcmp(r->source, "import") == 0 ? "import" : "capture", -1,
	                  SQLITE_STATIC);
	sqlite3_bind_text(st, 11, r->end_reason, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "copying a run");
	r->run_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_copy_device(struct store *s, struct store_device_info *d)
{
	sqlite3_stmt *st;
	int is_free = 0, rc;
	STORE_NEED_SQL(s);

	if (d->capacity_sectors == 0 || d->capacity_sectors > store_max_capacity() || !d->vdev[0])
		return store_fail(s, STORE_EINVAL, "a copied device of run %lld is out of range",
		                  (long long)d->run_id);
	if (d->device_id > 0 && d->device_id <= STORE_MAX_DEVICE_ID &&
	    (rc = id_free(s, ST_COPY_DEVICE_TAKEN, d->device_id, &is_free)))
		return rc;
	if (!(st = store_stmt(s, ST_COPY_DEVICE_INSERT)))
		return STORE_EIO;
	if (is_free)
		sqlite3_bind_int64(st, 1, d->device_id);
	sqlite3_bind_int64(st, 2, d->run_id);
	sqlite3_bind_text(st, 3, d->vdev, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, d->devid);
	sqlite3_bind_text(st, 5, store_role_name(d->role), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, (int64_t)d->capacity_sectors);
	store_device_bind_counters(st, 7, d);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "copying a device");
	d->device_id = sqlite3_last_insert_rowid(s->db);
	if (d->device_id > STORE_MAX_DEVICE_ID)
		return store_fail(s, STORE_EINVAL, "device ids exhausted");
	return 0;
}

int store_copy_chunk(struct store *s, int64_t device_id, uint64_t chunk, const void *data, size_t len)
{
	sqlite3_stmt *st;
	int rc;
	STORE_NEED_SQL(s);

	if (len == 0 || len > STORE_CHUNK_BYTES || chunk > UINT32_MAX)
		return store_fail(s, STORE_EINVAL, "a copied chunk of device %lld is out of range",
		                  (long long)device_id);
	rc = sqlite3_prepare_v2(s->db, "INSERT INTO chunks(key, data, sum) VALUES (?1, ?2, xxh3(?2))", -1, &st,
	                        NULL);
	if (rc != SQLITE_OK)
		return store_sqlite_fail(s, "copying a chunk");
	sqlite3_bind_int64(st, 1, store_chunk_key(device_id, chunk));
	sqlite3_bind_blob(st, 2, data, (int)len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "copying a chunk");
	return 0;
}

int store_copy_trace_packet(struct store *s, int64_t device_id, const struct store_trace_packet *p)
{
	sqlite3_stmt *st;
	int rc;
	STORE_NEED_SQL(s);

	if (p->bytes == 0 || p->seq > INT64_MAX || p->sector > INT64_MAX)
		return store_fail(s, STORE_EINVAL, "a copied trace packet of device %lld is out of range",
		                  (long long)device_id);
	rc = sqlite3_prepare_v2(s->db,
	                        "INSERT INTO trace_packets(device_id, seq, sector, bytes, events, "
	                        "first_ts, last_ts, final, kept_us, sum) "
	                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_sqlite_fail(s, "copying a trace packet");
	sqlite3_bind_int64(st, 1, device_id);
	sqlite3_bind_int64(st, 2, (int64_t)p->seq);
	sqlite3_bind_int64(st, 3, (int64_t)p->sector);
	sqlite3_bind_int64(st, 4, p->bytes);
	sqlite3_bind_int64(st, 5, (int64_t)p->events);
	if (p->events) {
		sqlite3_bind_int64(st, 6, (int64_t)p->first_ts);
		sqlite3_bind_int64(st, 7, (int64_t)p->last_ts);
	}
	sqlite3_bind_int(st, 8, p->final ? 1 : 0);
	sqlite3_bind_int64(st, 9, p->kept_us);
	if (p->has_sum)
		sqlite3_bind_int64(st, 10, (int64_t)p->sum);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "copying a trace packet");
	return 0;
}
