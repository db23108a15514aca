/*
 * store_data.c - device data: batches (one SQLite transaction each), writes
 * into 64 KiB chunks, reads, discards, snapshot reads, and the status-block
 * decoding that makes a run's progress visible while it runs.
 *
 * A write to an existing chunk goes through sqlite3_blob_write(), which
 * rewrites only the overflow pages under the written bytes; a write that
 * creates a chunk inserts it whole (zeros around the data).  Counters and
 * the decoded status block are kept per device in memory during a batch and
 * written once per device at commit, so a batch of N requests costs N data
 * writes plus one small UPDATE per device, not N.
 */
#include "config.h"

#include <string.h>
#include <sys/uio.h>

#include "profile/status_block.h"
#include "store_intake.h"
#include "store_internal.h"

/* ---- batches -------------------------------------------------------------- */

int store_in_batch(const struct store *s)
{
	return s->in_batch;
}

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
	store_blob_release(s);
	int rc = store_slots_before_commit(s);
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
	store_blob_release(s);
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	store_slots_after_batch(s);
}

static int batch_open_check(struct store *s)
{
	if (s->mode == STORE_READ)
		return store_fail(s, STORE_EREADONLY, "the store was opened read-only");
	if (s->in_batch)
		return store_fail(s, STORE_EINVAL, "a batch is already open");
	if (s->in_read)
		store_read_end(s);
	return 0;
}

/* A batch that is an SQL transaction from the start (the store's own
 * functions that run SQL in a batch of their own). */
int store_batch_begin_sql(struct store *s)
{
	int rc = batch_open_check(s);
	if (!rc)
		rc = store_quiet(s);
	if (!rc)
		rc = store_txn_begin(s);
	if (rc)
		return rc;
	s->in_batch = 1;
	s->batch_direct = 1;
	return 0;
}

int store_batch_begin(struct store *s)
{
	if (!s->intake)
		return store_batch_begin_sql(s);
	/* With an intake log a batch is taken in memory and appended at
	 * commit (store_intake.c).  The path must still name our database
	 * (see store_check_identity): checked here, by the thread that
	 * acknowledges, so that no write is acknowledged after a replacement. */
	int rc = batch_open_check(s);
	if (!rc)
		rc = store_check_identity(s);
	if (!rc)
		rc = store_intake_check(s);
	if (!rc)
		rc = store_intake_begin(s);
	if (rc)
		return rc;
	s->in_batch = 1;
	s->batch_direct = 0;
	return 0;
}

int store_promote(struct store *s)
{
	if (!s->in_batch || s->batch_direct)
		return 0;
	int rc = store_quiet(s);
	if (!rc)
		rc = store_txn_begin(s);
	if (rc)
		return rc;
	s->batch_direct = 1;
	return store_intake_replay(s);
}

int store_need_sql(struct store *s)
{
	if (!s->intake)
		return 0;
	return s->in_batch ? store_promote(s) : store_quiet(s);
}

static const char *status_name(enum store_status st)
{
	return st == STORE_STATUS_OK ? "ok" : st == STORE_STATUS_CORRUPT ? "corrupt" : "none";
}

void store_device_bind_update(sqlite3_stmt *st, const struct store_device_info *d)
{
	sqlite3_bind_int64(st, 1, d->device_id);
	sqlite3_bind_int64(st, 2, d->write_requests);
	sqlite3_bind_int64(st, 3, d->write_bytes);
	sqlite3_bind_int64(st, 4, d->read_requests);
	sqlite3_bind_int64(st, 5, d->read_bytes);
	sqlite3_bind_int64(st, 6, d->flush_requests);
	sqlite3_bind_int64(st, 7, d->discard_requests);
	sqlite3_bind_int64(st, 8, d->errors);
	sqlite3_bind_int64(st, 9, (int64_t)d->written_end_sector);
	sqlite3_bind_text(st, 10, status_name(d->status), -1, SQLITE_STATIC);
	if (d->status == STORE_STATUS_NONE) {
		sqlite3_bind_null(st, 11);
		sqlite3_bind_null(st, 12);
		sqlite3_bind_null(st, 13);
		sqlite3_bind_null(st, 14);
	} else {
		sqlite3_bind_int64(st, 11, d->file_size);
		sqlite3_bind_int(st, 12, d->closed);
		sqlite3_bind_int(st, 13, d->word_size);
		sqlite3_bind_int64(st, 14, d->status_updated_us);
	}
}

static void mark_dirty(struct store_device *d)
{
	if (!d->dirty) {
		d->dirty = 1;
		d->next_dirty = d->s->dirty;
		d->s->dirty = d;
	}
}

static void drop_dirty(struct store *s, int keep_pending)
{
	while (s->dirty) {
		struct store_device *d = s->dirty;
		s->dirty = d->next_dirty;
		d->dirty = 0;
		d->next_dirty = NULL;
		if (keep_pending)
			d->committed = d->pending;
		else
			d->pending = d->committed;
	}
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
static int drop_chunks(struct store *s, int64_t lo, int64_t hi, const char *what)
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
	return drop_chunks(s, store_chunk_key(dev, 0), store_chunk_key(dev, 0xffffffffu),
	                   "removing the data of a deleted device");
}

void store_device_mark_gone(struct store *s, int64_t device_id)
{
	for (struct store_device *d = s->devices; d; d = d->next)
		if (d->pending.device_id == device_id)
			d->gone = 1;
}

int store_flush_device_rows(struct store *s)
{
	for (struct store_device *d = s->dirty; d; d = d->next_dirty) {
		int changed, rc = store_device_row_write(s, &d->pending, &changed);
		if (!rc && !changed && !(rc = store_device_data_drop(s, d->pending.device_id)))
			d->gone = 1;
		if (rc)
			return rc;
	}
	return 0;
}

int store_device_gone(const struct store_device *d)
{
	return d->gone;
}

/* Writes to a device whose run was deleted fail (STORE_ENOTFOUND). */
static int check_gone(struct store_device *d)
{
	if (!d->gone)
		return 0;
	return store_fail(d->s, STORE_ENOTFOUND,
	                  "device %lld's run was deleted while the guest wrote (profdb delete or prune "
	                  "--force): its writes are refused",
	                  (long long)d->pending.device_id);
}

int store_batch_commit(struct store *s)
{
	int rc;

	if (!s->in_batch)
		return store_fail(s, STORE_EINVAL, "no batch is open");
	if (!s->batch_direct) {
		/* appended to the intake log: acknowledged, folded later */
		rc = store_intake_commit(s, s->dirty);
		if (rc)
			store_intake_abort(s);
	} else {
		store_blob_release(s);
		rc = store_flush_device_rows(s);
		if (rc)
			store_txn_rollback(s);
		else
			rc = store_txn_commit(s);
	}
	drop_dirty(s, rc == 0);
	s->in_batch = 0;
	s->batch_direct = 0;
	return rc;
}

void store_batch_abort(struct store *s)
{
	if (!s->in_batch)
		return;
	if (s->batch_direct)
		store_txn_rollback(s);
	else
		store_intake_abort(s);
	drop_dirty(s, 0);
	s->in_batch = 0;
	s->batch_direct = 0;
}

int store_sync(struct store *s)
{
	sqlite3_file *wal = NULL;

	if (s->durability == STORE_DURABLE_POWER)
		return 0; /* every commit is synced (and every intake append) */
	/* What the intake log holds is folded first: then the WAL and the
	 * data file hold everything acknowledged. */
	int qrc = store_quiet(s);
	if (qrc)
		return qrc;
	/* The WAL is the journal of a WAL-mode database. */
	if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
	    !wal || !wal->pMethods)
		return 0; /* no WAL open yet: nothing committed to sync */
	/* Slots first: the WAL that names them must not outlive them. */
	int rc = store_slots_sync(s);
	if (rc)
		return rc;
	if (wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL) != SQLITE_OK)
		return store_fail(s, STORE_EIO, "syncing the WAL of %s failed", s->path);
	return 0;
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
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "writing data");
	return 0;
}

/* Writes len bytes at byte offset off of a device; data == NULL writes
 * zeros.  With create == 0 a missing chunk is left missing and a short one
 * is not extended (zeros there already read as zeros). */
static int chunk_write(struct store *s, int64_t dev, uint64_t off, const uint8_t *data,
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
static int chunk_read(struct store *s, int64_t dev, uint64_t off, uint8_t *buf, size_t len)
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

/* ---- requests -------------------------------------------------------------- */

static int check_range(struct store_device *d, uint64_t sector, uint64_t nsect)
{
	uint64_t cap = d->pending.capacity_sectors;

	if (nsect == 0 || sector >= cap || nsect > cap - sector)
		return store_fail(d->s, STORE_EINVAL,
		                  "sectors %llu+%llu are outside device %lld (%llu sectors)",
		                  (unsigned long long)sector, (unsigned long long)nsect,
		                  (long long)d->pending.device_id, (unsigned long long)cap);
	return 0;
}

static void note_status_block(struct store_device *d, const uint8_t *sector0)
{
	struct status_block sb;
	struct store_device_info *p = &d->pending;

	switch (status_block_decode(sector0, &sb)) {
	case STATUS_BLOCK_VALID:
		p->status = STORE_STATUS_OK;
		p->file_size = sb.size > INT64_MAX ? INT64_MAX : (int64_t)sb.size;
		p->closed = sb.closed != 0;
		p->word_size = sb.word_size;
		break;
	case STATUS_BLOCK_EMPTY:
	case STATUS_BLOCK_CORRUPT:
		p->status = STORE_STATUS_CORRUPT;
		p->file_size = 0;
		p->closed = 0;
		p->word_size = 0;
		break;
	}
	p->status_updated_us = store_now_us();
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
				rc = chunk_write(s, dev, p, data, len, 1);
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

/* requests: how many guest requests the segments are (1 for store_write). */
static int write_segments(struct store_device *d, const struct store_segment *segs, unsigned nsegs,
                          unsigned requests)
{
	struct store *s = d->s;
	uint64_t bytes = 0, end = d->pending.written_end_sector;
	const uint8_t *sector0 = NULL;
	int rc;

	if (!s->in_batch)
		return store_fail(s, STORE_EINVAL, "store_write outside a batch");
	if ((rc = check_gone(d)))
		return rc;
	if (nsegs == 0)
		return store_fail(s, STORE_EINVAL, "a write needs at least one segment");
	/* Validate the whole request before touching anything. */
	for (unsigned i = 0; i < nsegs; i++) {
		if ((rc = check_range(d, segs[i].sector, segs[i].nsect)))
			return rc;
		bytes += (uint64_t)segs[i].nsect * STORE_SECTOR_SIZE;
		if (segs[i].sector + segs[i].nsect > end)
			end = segs[i].sector + segs[i].nsect;
		if (segs[i].sector == 0)
			sector0 = segs[i].data; /* the last write of sector 0 wins */
	}
	/* Big batches gain nothing from the intake log (their bytes would be
	 * written twice): such a batch becomes an SQL transaction. */
	if (!s->batch_direct && store_intake_batch_bytes(s) + bytes > INTAKE_BATCH_MAX && (rc = store_promote(s)))
		return rc;
	if (!s->batch_direct)
		rc = store_intake_add_writes(s, d->pending.device_id, segs, nsegs);
	else
		rc = store_apply_writes(s, d->pending.device_id, segs, nsegs);
	if (rc)
		return rc;
	d->pending.write_requests += requests;
	d->pending.write_bytes += (int64_t)bytes;
	d->pending.written_end_sector = end;
	if (sector0 && store_role_is_profile(d->pending.role))
		note_status_block(d, sector0);
	mark_dirty(d);
	return 0;
}

int store_write(struct store_device *d, const struct store_segment *segs, unsigned nsegs)
{
	return write_segments(d, segs, nsegs, 1);
}

int store_write_many(struct store_device *d, const struct store_segment *reqs, unsigned n)
{
	return write_segments(d, reqs, n, n);
}

int store_read(struct store_device *d, uint64_t sector, uint32_t nsect, void *buf)
{
	struct store *s = d->s;
	int rc;

	if ((rc = check_range(d, sector, nsect)))
		return rc;
	/* What it reads may still be in the intake log: folded first.  When
	 * folding fails (a full disk), what SQLite has and then the records
	 * not folded yet, so that everything acknowledged still reads back. */
	int degraded = 0;
	if ((rc = s->in_batch ? store_promote(s) : store_quiet(s))) {
		if (!s->intake || !store_intake_folding_fails(s))
			return rc;
		degraded = 1;
		store_intake_hold(s, 1);
	}
	rc = chunk_read(s, d->pending.device_id, sector * STORE_SECTOR_SIZE, buf,
	                (size_t)nsect * STORE_SECTOR_SIZE);
	if (!rc && degraded)
		rc = store_intake_overlay(s, d->pending.device_id, sector, nsect, buf);
	if (!s->in_batch && !s->in_read)
		store_blob_release(s); /* do not pin a snapshot between calls */
	if (degraded)
		store_intake_hold(s, 0); /* (after the release: the folder may write then) */
	if (rc)
		return rc;
	d->pending.read_requests++;
	d->pending.read_bytes += (int64_t)nsect * STORE_SECTOR_SIZE;
	if (s->in_batch) {
		mark_dirty(d);
	} else {
		/* Counted now, stored with the device's next batch. */
		d->committed.read_requests = d->pending.read_requests;
		d->committed.read_bytes = d->pending.read_bytes;
	}
	return 0;
}

int store_discard(struct store_device *d, uint64_t sector, uint64_t nsect)
{
	static const uint8_t zero_sector[STORE_SECTOR_SIZE];
	struct store *s = d->s;
	int64_t dev = d->pending.device_id;
	uint64_t first, last;
	int rc;

	if (!s->in_batch)
		return store_fail(s, STORE_EINVAL, "store_discard outside a batch");
	if ((rc = check_gone(d)) || (rc = check_range(d, sector, nsect)) || (rc = store_promote(s)))
		return rc;
	first = (sector + STORE_CHUNK_SECTORS - 1) / STORE_CHUNK_SECTORS;
	last = (sector + nsect) / STORE_CHUNK_SECTORS; /* exclusive */
	if (first >= last) {
		/* Entirely inside one chunk (or two partial ones). */
		rc = chunk_write(s, dev, sector * STORE_SECTOR_SIZE, NULL, nsect * STORE_SECTOR_SIZE,
		                 0);
	} else {
		uint64_t head = first * STORE_CHUNK_SECTORS - sector;
		uint64_t tail = sector + nsect - last * STORE_CHUNK_SECTORS;
		rc = head ? chunk_write(s, dev, sector * STORE_SECTOR_SIZE, NULL,
		                        head * STORE_SECTOR_SIZE, 0)
		          : 0;
		if (!rc && tail)
			rc = chunk_write(s, dev, last * STORE_CHUNK_BYTES, NULL, tail * STORE_SECTOR_SIZE,
			                 0);
		if (!rc)
			rc = drop_chunks(s, store_chunk_key(dev, first), store_chunk_key(dev, last - 1), "discarding data");
	}
	if (rc)
		return rc;
	d->pending.discard_requests++;
	if (sector == 0 && store_role_is_profile(d->pending.role))
		note_status_block(d, zero_sector); /* sector 0 now reads as zeros */
	mark_dirty(d);
	return 0;
}

void store_note_flush(struct store_device *d)
{
	d->pending.flush_requests++;
	if (d->s->in_batch)
		mark_dirty(d);
	else
		d->committed.flush_requests = d->pending.flush_requests;
}

void store_note_error(struct store_device *d)
{
	d->pending.errors++;
	if (d->s->in_batch)
		mark_dirty(d);
	else
		d->committed.errors = d->pending.errors;
}

/* ---- snapshot reads ----------------------------------------------------------- */

int store_read_begin(struct store *s)
{
	if (s->in_batch || s->in_read)
		return 0; /* already inside a transaction: its view is consistent */
	int qrc = store_quiet(s);
	if (qrc)
		return qrc;
	/* Prepared once: readers that follow live runs begin one every time
	 * the store changes. */
	if (store_exec_stmt(s, ST_READ_BEGIN) != SQLITE_OK)
		return store_sqlite_fail(s, "starting a read");
	/* BEGIN is deferred: touch the schema so the snapshot starts now. */
	sqlite3_stmt *st = store_stmt(s, ST_READ_TOUCH);
	int step = st ? sqlite3_step(st) : SQLITE_ERROR;
	if (st)
		sqlite3_reset(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		int rc = store_sqlite_fail(s, "starting a read");
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	s->in_read = 1;
	return 0;
}

void store_read_end(struct store *s)
{
	if (!s->in_read)
		return;
	store_blob_release(s);
	if (store_exec_stmt(s, ST_COMMIT) != SQLITE_OK)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_read = 0;
}

int store_read_range(struct store *s, int64_t device_id, uint64_t byte_off, uint64_t len,
                     store_range_cb cb, void *ctx)
{
	sqlite3_stmt *st;
	uint64_t pos = byte_off, end = byte_off + len;
	int rc = 0, step;

	if (len == 0)
		return 0;
	if (end < byte_off)
		return store_fail(s, STORE_EINVAL, "read range overflows");
	if ((rc = s->in_batch ? store_promote(s) : s->in_read ? 0 : store_quiet(s)))
		return rc;
	store_blob_release(s);
	st = store_stmt(s, ST_CHUNK_SELECT_RANGE);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, store_chunk_key(device_id, byte_off / STORE_CHUNK_BYTES));
	sqlite3_bind_int64(st, 2, store_chunk_key(device_id, (end - 1) / STORE_CHUNK_BYTES));
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key = sqlite3_column_int64(st, 0);
		uint64_t chunk = (uint64_t)key & 0xffffffffu;
		uint64_t cstart = chunk * STORE_CHUNK_BYTES;
		const uint8_t *data = sqlite3_column_blob(st, 1);
		int bytes = sqlite3_column_bytes(st, 1);

		if (bytes == 0 && sqlite3_column_type(st, 2) != SQLITE_NULL) {
			/* In the data file. */
			if ((rc = store_slot_chunk(s, key, sqlite3_column_int64(st, 2), &data)))
				break;
			bytes = (int)STORE_CHUNK_BYTES;
		}
		if (bytes <= 0 || bytes > (int)STORE_CHUNK_BYTES || bytes % (int)STORE_SECTOR_SIZE ||
		    !data) {
			rc = store_fail(s, STORE_ECORRUPT,
			                "chunk %llu of device %lld holds %d bytes (not 1..%u whole "
			                "sectors); the database is damaged",
			                (unsigned long long)chunk, (long long)device_id, bytes,
			                STORE_CHUNK_BYTES);
			break;
		}
		if (cstart > pos && (rc = cb(ctx, pos, NULL, (size_t)(cstart - pos))))
			break;
		uint64_t from = cstart > pos ? cstart : pos;
		uint64_t cend = cstart + (uint64_t)bytes; /* the rest of the chunk is zeros */
		uint64_t to = cend < end ? cend : end;
		if (from < to && (rc = cb(ctx, from, data + (from - cstart), (size_t)(to - from))))
			break;
		pos = from < to ? to : from;
	}
	if (!rc && step != SQLITE_ROW && step != SQLITE_DONE)
		rc = store_sqlite_fail(s, "reading data");
	sqlite3_reset(st);
	if (!rc && pos < end)
		rc = cb(ctx, pos, NULL, (size_t)(end - pos));
	return rc;
}
