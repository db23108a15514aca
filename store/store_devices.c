/*
 * store_devices.c - the catalogue's devices: a run's devices created,
 * loaded, listed and found by vdev or role, the handles the writer holds
 * open on them, their chunks listed, and which running devices changed.
 * Every statement binds its parameters; a guest-chosen vdev never becomes
 * SQL text.
 *
 * Layer 5 (store_internal.h), after store_catalog.c.  May call:
 * store_catalog.c (roles by name, text copied out of a row),
 * store_data.c (batches), store_chunks.c (device rows), store_conn.c,
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

/* ---- devices -------------------------------------------------------------- */

static void load_device(sqlite3_stmt *st, struct store_device_info *d)
{
	memset(d, 0, sizeof(*d));
	d->device_id = sqlite3_column_int64(st, 0);
	d->run_id = sqlite3_column_int64(st, 1);
	store_copy_text(d->vdev, sizeof(d->vdev), sqlite3_column_text(st, 2));
	d->devid = sqlite3_column_int(st, 3);
	d->role = store_role_parse((const char *)sqlite3_column_text(st, 4));
	d->capacity_sectors = (uint64_t)sqlite3_column_int64(st, 5);
	d->write_requests = sqlite3_column_int64(st, 6);
	d->write_bytes = sqlite3_column_int64(st, 7);
	d->read_requests = sqlite3_column_int64(st, 8);
	d->read_bytes = sqlite3_column_int64(st, 9);
	d->flush_requests = sqlite3_column_int64(st, 10);
	d->discard_requests = sqlite3_column_int64(st, 11);
	d->errors = sqlite3_column_int64(st, 12);
	d->written_end_sector = (uint64_t)sqlite3_column_int64(st, 13);
	const char *status = (const char *)sqlite3_column_text(st, 14);
	d->status = !status || strcmp(status, "none") == 0 ? STORE_STATUS_NONE
	            : strcmp(status, "ok") == 0           ? STORE_STATUS_OK
	                                                  : STORE_STATUS_CORRUPT;
	d->file_size = sqlite3_column_int64(st, 15);
	d->closed = sqlite3_column_int(st, 16);
	d->word_size = sqlite3_column_int(st, 17);
	d->status_updated_us = sqlite3_column_int64(st, 18);
}

#define DEVICE_COLUMNS                                                                       \
	"device_id, run_id, vdev, devid, role, capacity_sectors, write_requests, write_bytes, " \
	"read_requests, read_bytes, flush_requests, discard_requests, errors, "               \
	"written_end_sector, status, file_size, closed, word_size, status_updated_us"

int store_device_load(struct store *s, int64_t device_id, struct store_device_info *info)
{
	sqlite3_stmt *st = store_stmt(s, ST_DEVICE_SELECT);
	int rc;

	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, device_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		load_device(st, info);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return store_fail(s, STORE_ENOTFOUND, "no device %lld", (long long)device_id);
	if (rc != SQLITE_ROW)
		return store_sqlite_fail(s, "reading a device");
	return 0;
}

static int new_handle(struct store *s, const struct store_device_info *info,
                      struct store_device **out)
{
	struct store_device *d = calloc(1, sizeof(*d));

	if (!d)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	d->s = s;
	d->committed = *info;
	d->pending = *info;
	d->next = s->devices;
	if (s->devices)
		s->devices->prev = d;
	s->devices = d;
	*out = d;
	return 0;
}

int store_device_create(struct store *s, int64_t run_id, const char *vdev, int32_t devid,
                        uint64_t capacity_sectors, struct store_device **out)
{
	struct store_device_info info;
	sqlite3_stmt *st;
	int rc;
	STORE_NEED_SQL(s);

	*out = NULL;
	if (capacity_sectors == 0 || capacity_sectors > store_max_capacity())
		return store_fail(s, STORE_EINVAL,
		                  "capacity of %llu sectors is out of range (1 to %llu)",
		                  (unsigned long long)capacity_sectors,
		                  (unsigned long long)store_max_capacity());
	if (strlen(vdev) == 0 || strlen(vdev) >= sizeof(info.vdev))
		return store_fail(s, STORE_EINVAL, "bad vdev name '%s'", vdev);
	rc = sqlite3_prepare_v2(s->db,
	                        "INSERT INTO devices(run_id, vdev, devid, role, capacity_sectors) "
	                        "VALUES (?1, ?2, ?3, ?4, ?5)",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_sqlite_fail(s, "adding a device");
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, vdev, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, devid);
	sqlite3_bind_text(st, 4, store_role_name(store_role_for_vdev(vdev)), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (int64_t)capacity_sectors);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY)
			return store_fail(s, STORE_ENOTFOUND, "no run %lld", (long long)run_id);
		if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE)
			return store_fail(s, STORE_EINVAL, "run %lld already has a device %s",
			                  (long long)run_id, vdev);
		return store_sqlite_fail(s, "adding a device");
	}
	int64_t id = sqlite3_last_insert_rowid(s->db);
	if (id > STORE_MAX_DEVICE_ID)
		return store_fail(s, STORE_EINVAL, "device ids exhausted");
	if ((rc = store_device_load(s, id, &info)))
		return rc;
	return new_handle(s, &info, out);
}

int store_device_open(struct store *s, int64_t device_id, struct store_device **out)
{
	struct store_device_info info;
	int rc;
	STORE_NEED_SQL(s);

	*out = NULL;
	if ((rc = store_device_load(s, device_id, &info)))
		return rc;
	return new_handle(s, &info, out);
}

void store_device_release(struct store_device *d)
{
	struct store *s;

	if (!d)
		return;
	s = d->s;
	if (d->dirty) {
		/* Unlink from the batch's dirty list; its changes still commit
		 * or roll back with the batch, only the handle goes. */
		for (struct store_device **p = &s->dirty; *p; p = &(*p)->next_dirty)
			if (*p == d) {
				*p = d->next_dirty;
				break;
			}
		if (s->in_batch && store_promote(s) == 0) {
			/* Write the counters now so the batch still carries them. */
			sqlite3_stmt *st = store_stmt(s, ST_DEVICE_UPDATE);
			if (st) {
				store_device_bind_update(st, &d->pending);
				sqlite3_step(st);
				sqlite3_reset(st);
			}
		}
	}
	if (d->prev)
		d->prev->next = d->next;
	else
		s->devices = d->next;
	if (d->next)
		d->next->prev = d->prev;
	free(d);
}

int64_t store_device_id(const struct store_device *d)
{
	return d->committed.device_id;
}

void store_device_get_info(const struct store_device *d, struct store_device_info *out)
{
	*out = d->pending;
}

int store_device_chunks(struct store *s, int64_t device_id, int (*cb)(void *ctx, uint64_t chunk),
                        void *ctx)
{
	sqlite3_stmt *st;
	int rc, cbrc = 0;
	STORE_NEED_SQL(s);

	store_blob_release(s);
	if (sqlite3_prepare_v2(s->db, "SELECT key FROM chunks WHERE key BETWEEN ?1 AND ?2", -1, &st, NULL) !=
	    SQLITE_OK)
		return store_sqlite_fail(s, "listing a device's chunks");
	sqlite3_bind_int64(st, 1, store_chunk_key(device_id, 0));
	sqlite3_bind_int64(st, 2, store_chunk_key(device_id, 0xffffffffu));
	while (!cbrc && (rc = sqlite3_step(st)) == SQLITE_ROW)
		cbrc = cb(ctx, (uint64_t)sqlite3_column_int64(st, 0) & 0xffffffffu);
	sqlite3_finalize(st);
	if (cbrc)
		return cbrc;
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "listing a device's chunks");
}

int store_list_devices(struct store *s, int64_t run_id, store_device_cb cb, void *ctx)
{
	if (s->remote)
		return store_remote_list_devices(s, run_id, cb, ctx);
	sqlite3_stmt *st;
	int rc, cbrc = 0;
	STORE_NEED_SQL(s);

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT " DEVICE_COLUMNS " FROM devices WHERE run_id = ?1 "
	                       "ORDER BY devid, device_id",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "listing devices");
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_device_info d;
		load_device(st, &d);
		if ((cbrc = cb(ctx, &d)) != 0)
			break;
	}
	sqlite3_finalize(st);
	if (cbrc)
		return cbrc;
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "listing devices");
	return 0;
}

int store_find_device(struct store *s, int64_t run_id, const char *vdev_or_role,
                      struct store_device_info *out)
{
	if (s->remote)
		return store_remote_find_device(s, run_id, vdev_or_role, out);
	sqlite3_stmt *st = store_stmt(s, ST_DEVICE_FIND);
	int rc;
	STORE_NEED_SQL(s);

	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, vdev_or_role, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		load_device(st, out);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return store_fail(s, STORE_ENOTFOUND, "run %lld has no device %s", (long long)run_id,
		                  vdev_or_role);
	if (rc != SQLITE_ROW)
		return store_sqlite_fail(s, "finding a device");
	return 0;
}

int store_running_activity(struct store *s, struct store_activity **out, size_t *n)
{
	if (s->remote)
		return store_remote_activity(s, out, n);
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;
	STORE_NEED_SQL(s);

	*out = NULL;
	*n = 0;
	/* The partial index runs_running keeps this to the live runs' rows. */
	if (!(st = store_stmt(s, ST_RUNNING_ACTIVITY)))
		return STORE_EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (GROW(*out, cap, *n + 1) != 0) {
			sqlite3_reset(st);
			free(*out);
			*out = NULL;
			*n = 0;
			return store_fail(s, STORE_ENOMEM, "out of memory listing runs");
		}
		(*out)[*n].run_id = sqlite3_column_int64(st, 0);
		(*out)[*n].stamp = sqlite3_column_int64(st, 1);
		(*n)++;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return store_sqlite_fail(s, "listing running runs");
	}
	return 0;
}
