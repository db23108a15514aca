/*
 * store_chunks.c - layer 2 (the data file and the rows): the writer's
 * transactions (begin, commit with the data file's slots first, roll
 * back), a device's bytes in 64 KiB chunks (SQLite blobs or slots of the
 * data file), and device rows written as they stand.  What the open batch
 * (store_data.c) and the intake's folder (store_intake_fold.c) both write
 * with; each chunk's checksum (schema 9), kept true by every write, and
 * computed once for a store migrated from before.
 * May call: store_conn.c, store_slots.c, util/grow.h.  Called from layers
 * 3 and up.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "store_internal.h"
#include "util/grow.h"

/* ---- transactions ----------------------------------------------------------- */

int store_txn_begin_unchecked(struct store *s)
{
	if (store_exec_stmt(s, ST_BEGIN) != SQLITE_OK)
		return store_sqlite_fail(s, "starting a batch");
	if (s->reclaim_due) {
		int rc = store_slots_reclaim(s);
		if (rc) {
			store_txn_rollback(s);
			return rc;
		}
	}
	return 0;
}

int store_txn_begin(struct store *s)
{
	int rc = store_check_identity(s);
	return rc ? rc : store_txn_begin_unchecked(s);
}

int store_txn_commit(struct store *s)
{
	int rc = store_sums_flush(s);
	store_blob_release(s);
	if (!rc)
		rc = store_slots_before_commit(s);
	if (!rc && store_exec_stmt(s, ST_COMMIT) != SQLITE_OK)
		rc = store_sqlite_fail(s, "committing a batch");
	store_slots_after_batch(s);
	/* A failed COMMIT may leave the transaction open (e.g. SQLITE_BUSY):
	 * roll back so the batch is entirely not stored. */
	if (rc && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

void store_txn_rollback(struct store *s)
{
	s->sum_dirty_n = 0;
	store_blob_release(s);
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	store_slots_after_batch(s);
}

/* ---- device rows ---------------------------------------------------------------- */

static const char *status_name(enum store_status st)
{
	return st == STORE_STATUS_OK ? "ok" : st == STORE_STATUS_CORRUPT ? "corrupt" : "none";
}

void store_device_bind_counters(sqlite3_stmt *st, int first, const struct store_device_info *d)
{
	sqlite3_bind_int64(st, first, d->write_requests);
	sqlite3_bind_int64(st, first + 1, d->write_bytes);
	sqlite3_bind_int64(st, first + 2, d->read_requests);
	sqlite3_bind_int64(st, first + 3, d->read_bytes);
	sqlite3_bind_int64(st, first + 4, d->flush_requests);
	sqlite3_bind_int64(st, first + 5, d->discard_requests);
	sqlite3_bind_int64(st, first + 6, d->errors);
	sqlite3_bind_int64(st, first + 7, (int64_t)d->written_end_sector);
	sqlite3_bind_text(st, first + 8, status_name(d->status), -1, SQLITE_STATIC);
	if (d->status == STORE_STATUS_NONE) {
		sqlite3_bind_null(st, first + 9);
		sqlite3_bind_null(st, first + 10);
		sqlite3_bind_null(st, first + 11);
		sqlite3_bind_null(st, first + 12);
	} else {
		sqlite3_bind_int64(st, first + 9, d->file_size);
		sqlite3_bind_int(st, first + 10, d->closed);
		sqlite3_bind_int(st, first + 11, d->word_size);
		sqlite3_bind_int64(st, first + 12, d->status_updated_us);
	}
}

void store_device_bind_update(sqlite3_stmt *st, const struct store_device_info *d)
{
	sqlite3_bind_int64(st, 1, d->device_id);
	store_device_bind_counters(st, 2, d);
}

int store_device_row_write(struct store *s, const struct store_device_info *info, int *changed)
{
	sqlite3_stmt *st = store_stmt(s, ST_DEVICE_UPDATE);
	if (!st)
		return STORE_EIO;
	store_device_bind_update(st, info);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "updating device counters");
	*changed = sqlite3_changes(s->db) != 0;
	return 0;
}

/*
 * A device's row is gone: another process deleted its run while we wrote
 * (profdb delete/prune --force).  What the batch wrote for it is removed
 * again in the same transaction (chunk rows would otherwise be left
 * naming a device nobody can reach, and their space never given back),
 * and its handles refuse every later write.
 */
/* Removes the chunk rows [lo, hi] of one device, their slots freed. */
int store_chunks_drop(struct store *s, int64_t lo, int64_t hi, const char *what)
{
	int rc = s->schema_version >= 3 ? store_slots_free_range(s, lo, hi) : 0;
	if (rc)
		return rc;
	sqlite3_stmt *st = store_stmt(s, ST_CHUNK_DELETE_RANGE);
	store_blob_release(s); /* a DELETE may hit the handle's row */
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, hi);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, what);
}

int store_device_data_drop(struct store *s, int64_t dev)
{
	return store_chunks_drop(s, store_chunk_key(dev, 0), store_chunk_key(dev, 0xffffffffu),
	                   "removing the data of a deleted device");
}

void store_device_mark_gone(struct store *s, int64_t device_id)
{
	for (struct store_device *d = s->devices; d; d = d->next)
		if (d->pending.device_id == device_id)
			d->gone = 1;
}

/* ---- chunk I/O ------------------------------------------------------------- */

/* blob_seek found a row whose chunk lives in a slot (s->row_slot). */
#define SLOT_ROW 1000

/* Points s->blob at chunk key; SQLITE_OK, SLOT_ROW, or SQLITE_ERROR when
 * the row does not exist (any other code is a real failure).  Sets
 * s->blob_len. */
static int blob_seek(struct store *s, int64_t key, int writable)
{
	int rc;

	if (s->blob && s->blob_writable >= writable) {
		rc = sqlite3_blob_reopen(s->blob, key);
		if (rc != SQLITE_OK) {
			/* A failed reopen aborts the handle for good. */
			store_blob_release(s);
			if (rc != SQLITE_ERROR && rc != SQLITE_ABORT)
				return rc;
			rc = SQLITE_ERROR;
		}
	} else {
		store_blob_release(s);
		rc = sqlite3_blob_open(s->db, "main", "chunks", "data", key, writable, &s->blob);
		if (rc != SQLITE_OK) {
			s->blob = NULL;
			return rc;
		}
		s->blob_writable = writable;
	}
	if (rc != SQLITE_OK)
		return rc;
	s->blob_len = sqlite3_blob_bytes(s->blob);
	if (s->blob_len == 0 && s->schema_version >= 3) {
		/* No bytes of its own: a chunk in the data file, or damage. */
		int64_t slot;
		store_blob_release(s);
		if (store_slot_of(s, key, &slot) != 0 || slot < 0)
			return SQLITE_CORRUPT;
		s->row_slot = slot;
		return SLOT_ROW;
	}
	if (s->blob_len <= 0 || s->blob_len > (int)STORE_CHUNK_BYTES ||
	    s->blob_len % (int)STORE_SECTOR_SIZE) {
		store_blob_release(s);
		return SQLITE_CORRUPT;
	}
	return SQLITE_OK;
}

static int blob_fail(struct store *s, int rc, const char *what, int64_t key)
{
	if (rc == SQLITE_CORRUPT)
		return store_fail(s, STORE_ECORRUPT,
		                  "%s: chunk %lld of device %lld has an impossible size; the "
		                  "database is damaged",
		                  what, (long long)(key & 0xffffffffLL), (long long)(key >> 32));
	return store_sqlite_fail(s, what);
}

/* ---- checksums ------------------------------------------------------------- */

/*
 * A chunk rewritten whole (chunk_put, a slot) gets its sum with the row.
 * One written in part in place (sqlite3_blob_write: the status block's
 * rewrites, a HaLVM writer's 4 KiB pieces) is noted here, and the
 * transaction's commit computes its sum once, whatever number of requests
 * wrote into it: one statement per chunk touched per batch, none per
 * request.
 */
static int sum_dirty(struct store *s, int64_t key)
{
	/* The same few chunks over and over (data, status block): look back. */
	for (size_t i = s->sum_dirty_n, k = 0; i > 0 && k < 8; i--, k++)
		if (s->sum_dirty[i - 1] == key)
			return 0;
	if (GROW_FROM(s->sum_dirty, s->sum_dirty_cap, s->sum_dirty_n + 1, 64) != 0)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	s->sum_dirty[s->sum_dirty_n++] = key;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int store_sums_flush(struct store *s)
{
	size_t n = s->sum_dirty_n;
	int rc = 0;

	s->sum_dirty_n = 0;
	if (n == 0)
		return 0;
	store_blob_release(s); /* the UPDATE would expire it */
	qsort(s->sum_dirty, n, sizeof(*s->sum_dirty), cmp_key);
	for (size_t i = 0; i < n && !rc; i++) {
		if (i && s->sum_dirty[i] == s->sum_dirty[i - 1])
			continue;
		sqlite3_stmt *st = store_stmt(s, ST_CHUNK_SUM);
		if (!st)
			return STORE_EIO;
		/* A row deleted, or moved to a slot, since: nothing to do. */
		sqlite3_bind_int64(st, 1, s->sum_dirty[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = store_sqlite_fail(s, "writing data");
		sqlite3_reset(st);
	}
	return rc;
}

/* A trace packet's sum, from its bytes as stored. */
static int packet_sum(struct store *s, int64_t dev, int64_t sector, int64_t bytes, int64_t *sum)
{
	if (sector < 0 || bytes <= 0 || bytes > (1 << 30))
		return store_fail(s, STORE_ECORRUPT, "trace packet row of device %lld is damaged",
		                  (long long)dev);
	uint8_t *buf = malloc((size_t)bytes);
	if (!buf)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	int rc = store_chunk_read(s, dev, (uint64_t)sector * STORE_SECTOR_SIZE, buf, (size_t)bytes);
	if (!rc)
		*sum = store_sum(buf, (size_t)bytes);
	free(buf);
	return rc;
}

int store_sums_backfill(struct store *s, int64_t *chunks, int64_t *packets)
{
	sqlite3_stmt *sel = NULL, *upd = NULL;
	int rc = 0, step;

	*chunks = *packets = 0;
	/* Rows with their bytes: SQLite hashes them where they lie. */
	if (sqlite3_exec(s->db, "UPDATE chunks SET sum = xxh3(data) WHERE sum IS NULL AND slot IS NULL",
	                 NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "computing checksums");
	*chunks = sqlite3_changes(s->db);
	/* Chunks in the data file. */
	if (sqlite3_prepare_v2(s->db, "SELECT key, slot FROM chunks WHERE sum IS NULL AND slot IS NOT NULL",
	                       -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "UPDATE chunks SET sum = ?2 WHERE key = ?1", -1, &upd, NULL) != SQLITE_OK) {
		rc = store_sqlite_fail(s, "computing checksums");
		goto out;
	}
	while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
		const uint8_t *data;
		int64_t key = sqlite3_column_int64(sel, 0);
		if ((rc = store_slot_chunk(s, key, sqlite3_column_int64(sel, 1), &data)))
			goto out;
		sqlite3_bind_int64(upd, 1, key);
		sqlite3_bind_int64(upd, 2, store_sum(data, STORE_CHUNK_BYTES));
		if (sqlite3_step(upd) != SQLITE_DONE) {
			rc = store_sqlite_fail(s, "computing checksums");
			goto out;
		}
		sqlite3_reset(upd);
		++*chunks;
	}
	if (step != SQLITE_DONE) {
		rc = store_sqlite_fail(s, "computing checksums");
		goto out;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	sel = upd = NULL;
	/* Trace packets, from the bytes of their device. */
	if (sqlite3_prepare_v2(s->db, "SELECT device_id, seq, sector, bytes FROM trace_packets WHERE sum IS NULL",
	                       -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "UPDATE trace_packets SET sum = ?3 WHERE device_id = ?1 AND seq = ?2", -1,
	                       &upd, NULL) != SQLITE_OK) {
		rc = store_sqlite_fail(s, "computing checksums");
		goto out;
	}
	while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(sel, 0), sum = 0;
		if ((rc = packet_sum(s, dev, sqlite3_column_int64(sel, 2), sqlite3_column_int64(sel, 3), &sum)))
			goto out;
		sqlite3_bind_int64(upd, 1, dev);
		sqlite3_bind_int64(upd, 2, sqlite3_column_int64(sel, 1));
		sqlite3_bind_int64(upd, 3, sum);
		if (sqlite3_step(upd) != SQLITE_DONE) {
			rc = store_sqlite_fail(s, "computing checksums");
			goto out;
		}
		sqlite3_reset(upd);
		++*packets;
	}
	if (step != SQLITE_DONE)
		rc = store_sqlite_fail(s, "computing checksums");
out:
	store_blob_release(s);
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return rc;
}

/* Stores a whole chunk image (new row, or a rewrite of a short one). */
static int chunk_put(struct store *s, enum store_stmt_id id, int64_t key, const void *row)
{
	sqlite3_stmt *st;
	int rc;

	store_blob_release(s); /* an UPDATE would expire it anyway */
	st = store_stmt(s, id);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, key);
	sqlite3_bind_blob(st, 2, row, (int)STORE_CHUNK_BYTES, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, store_sum(row, STORE_CHUNK_BYTES));
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "writing data");
	return 0;
}

/* Writes len bytes at byte offset off of a device; data == NULL writes
 * zeros.  With create == 0 a missing chunk is left missing and a short one
 * is not extended (zeros there already read as zeros). */
int store_chunk_write(struct store *s, int64_t dev, uint64_t off, const uint8_t *data,
                       size_t len, int create)
{
	static const uint8_t zeros[STORE_CHUNK_BYTES];

	while (len > 0) {
		uint64_t chunk = off / STORE_CHUNK_BYTES;
		size_t in = (size_t)(off % STORE_CHUNK_BYTES);
		size_t n = len < STORE_CHUNK_BYTES - in ? len : STORE_CHUNK_BYTES - in;
		const uint8_t *src = data ? data : zeros;
		int64_t key = store_chunk_key(dev, chunk);
		int rc = blob_seek(s, key, 1);

		if (rc == SLOT_ROW) {
			/* Part of a chunk in a slot: the slot is never rewritten (a
			 * reader may be looking at it); the chunk moves back into
			 * the database with this write applied. */
			int64_t slot = s->row_slot;
			if ((rc = store_slot_read(s, key, slot, 0, s->scratch, STORE_CHUNK_BYTES)))
				return rc;
			memcpy(s->scratch + in, src, n);
			if ((rc = chunk_put(s, ST_CHUNK_UPDATE, key, s->scratch)) ||
			    (rc = store_slot_release(s, slot)))
				return rc;
		} else if (rc == SQLITE_OK && in + n <= (size_t)s->blob_len) {
			rc = sqlite3_blob_write(s->blob, src, (int)n, (int)in);
			if (rc != SQLITE_OK) {
				store_blob_release(s);
				return blob_fail(s, rc, "writing data", key);
			}
			if ((rc = sum_dirty(s, key)))
				return rc;
		} else if (rc == SQLITE_OK) {
			/* A trimmed chunk written past its stored end. */
			size_t have = (size_t)s->blob_len;
			if (!create) {
				/* Zeros: past the end they are zeros already. */
				if (in < have && (rc = sqlite3_blob_write(s->blob, zeros, (int)(have - in),
				                                          (int)in)) != SQLITE_OK) {
					store_blob_release(s);
					return blob_fail(s, rc, "writing data", key);
				}
				if (in < have && (rc = sum_dirty(s, key)))
					return rc;
			} else {
				/* Rewrite it whole, full-size again. */
				rc = sqlite3_blob_read(s->blob, s->scratch, (int)have, 0);
				if (rc != SQLITE_OK) {
					store_blob_release(s);
					return blob_fail(s, rc, "reading data", key);
				}
				memset(s->scratch + have, 0, STORE_CHUNK_BYTES - have);
				memcpy(s->scratch + in, src, n);
				if ((rc = chunk_put(s, ST_CHUNK_UPDATE, key, s->scratch)))
					return rc;
			}
		} else if (rc == SQLITE_ERROR) {
			if (create) {
				const void *row = src;
				if (n != STORE_CHUNK_BYTES) {
					memset(s->scratch, 0, STORE_CHUNK_BYTES);
					memcpy(s->scratch + in, src, n);
					row = s->scratch;
				}
				if ((rc = chunk_put(s, ST_CHUNK_INSERT, key, row)))
					return rc;
			}
		} else {
			return blob_fail(s, rc, "writing data", key);
		}
		off += n;
		len -= n;
		if (data)
			data += n;
	}
	return 0;
}

/* Reads len bytes at byte offset off; holes read as zeros. */
int store_chunk_read(struct store *s, int64_t dev, uint64_t off, uint8_t *buf, size_t len)
{
	/* Outside an SQL transaction a writable handle would start one. */
	int writable = s->in_batch && s->batch_direct;

	while (len > 0) {
		uint64_t chunk = off / STORE_CHUNK_BYTES;
		size_t in = (size_t)(off % STORE_CHUNK_BYTES);
		size_t n = len < STORE_CHUNK_BYTES - in ? len : STORE_CHUNK_BYTES - in;
		int64_t key = store_chunk_key(dev, chunk);
		int rc = blob_seek(s, key, writable);
		size_t stored = 0;

		if (rc == SLOT_ROW) {
			if ((rc = store_slot_read(s, key, s->row_slot, in, buf, n)))
				return rc;
			stored = n;
		} else if (rc == SQLITE_OK) {
			stored = in < (size_t)s->blob_len ? (size_t)s->blob_len - in : 0;
			stored = stored < n ? stored : n;
			if (stored && (rc = sqlite3_blob_read(s->blob, buf, (int)stored, (int)in))) {
				store_blob_release(s);
				return blob_fail(s, rc, "reading data", key);
			}
		} else if (rc != SQLITE_ERROR) {
			return blob_fail(s, rc, "reading data", key);
		}
		memset(buf + stored, 0, n - stored);
		off += n;
		len -= n;
		buf += n;
	}
	return 0;
}

/* Where a run of adjacent segments is being read from. */
struct seg_cursor {
	const struct store_segment *seg;
	size_t off; /* bytes into *seg */
};

/* The next piece of at most max bytes; advances the cursor. */
static const uint8_t *cursor_take(struct seg_cursor *c, size_t max, size_t *len)
{
	size_t left = (size_t)c->seg->nsect * STORE_SECTOR_SIZE - c->off;
	const uint8_t *p = (const uint8_t *)c->seg->data + c->off;

	*len = left < max ? left : max;
	c->off += *len;
	if (c->off == (size_t)c->seg->nsect * STORE_SECTOR_SIZE) {
		c->seg++;
		c->off = 0;
	}
	return p;
}

/* Stores n adjacent segments (each starts where the previous ends): the
 * chunks they cover whole between them go to fresh slots of the data file
 * in one pwritev each, the rest into chunk rows. */
static int write_span(struct store *s, int64_t dev, const struct store_segment *segs, unsigned n)
{
	uint64_t pos = segs[0].sector * STORE_SECTOR_SIZE;
	uint64_t end = (segs[n - 1].sector + segs[n - 1].nsect) * STORE_SECTOR_SIZE;
	struct seg_cursor c = {segs, 0};
	int rc;

	while (pos < end) {
		uint64_t cend = (pos / STORE_CHUNK_BYTES + 1) * STORE_CHUNK_BYTES;
		uint64_t to = cend < end ? cend : end;
		if (s->bulk_file && s->schema_version >= 3 && pos % STORE_CHUNK_BYTES == 0 && to == cend) {
			struct iovec iov[STORE_CHUNK_SECTORS];
			int k = 0;
			for (uint64_t p = pos; p < to; k++) {
				size_t len;
				iov[k].iov_base = (void *)cursor_take(&c, (size_t)(to - p), &len);
				iov[k].iov_len = len;
				p += len;
			}
			rc = store_slot_write(s, store_chunk_key(dev, pos / STORE_CHUNK_BYTES), iov, k);
		} else {
			rc = 0;
			for (uint64_t p = pos; p < to && !rc;) {
				size_t len;
				const uint8_t *data = cursor_take(&c, (size_t)(to - p), &len);
				rc = store_chunk_write(s, dev, p, data, len, 1);
				p += len;
			}
		}
		if (rc)
			return rc;
		pos = to;
	}
	return 0;
}

int store_apply_writes(struct store *s, int64_t dev, const struct store_segment *segs, unsigned n)
{
	/* In order, runs of adjacent segments together. */
	for (unsigned i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && segs[j].sector == segs[j - 1].sector + segs[j - 1].nsect; j++)
			;
		int rc = write_span(s, dev, segs + i, j - i);
		if (rc)
			return rc;
	}
	return 0;
}
