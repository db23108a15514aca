/*
 * store_data.c - device data: batches (one SQLite transaction each, or one
 * record of the intake log), writes, reads, discards, snapshot reads, and
 * the status-block decoding that makes a run's progress visible while it
 * runs.  The bytes go into 64 KiB chunks through store_chunks.c.
 *
 * A write to an existing chunk goes through sqlite3_blob_write(), which
 * rewrites only the overflow pages under the written bytes; a write that
 * creates a chunk inserts it whole (zeros around the data).  Counters and
 * the decoded status block are kept per device in memory during a batch and
 * written once per device at commit, so a batch of N requests costs N data
 * writes plus one small UPDATE per device, not N.
 *
 * Layer 4 (store_internal.h): what a batch is (an SQL transaction, or a
 * record of the intake log) is decided here.  May call: store_intake*.c
 * (through store_intake.h), store_chunks.c, store_slots.c, store_conn.c,
 * store_remote.c (a store read through the backend: its reads forward, the
 * rest is refused), profile/disk/status_block.h (sector 0 decoded as it
 * is written).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "profile/disk/status_block.h"
#include "store_intake.h"
#include "store_internal.h"

/* ---- batches -------------------------------------------------------------- */

int store_in_batch(const struct store *s)
{
	return s->in_batch;
}

static int batch_open_check(struct store *s)
{
	if (s->remote)
		return store_remote_refuse(s);
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
	if (s->remote)
		return store_remote_refuse(s);
	if (!s->intake)
		return 0;
	return s->in_batch ? store_promote(s) : store_quiet(s);
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
	rc = store_chunk_read(s, d->pending.device_id, sector * STORE_SECTOR_SIZE, buf,
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
		rc = store_chunk_write(s, dev, sector * STORE_SECTOR_SIZE, NULL, nsect * STORE_SECTOR_SIZE,
		                 0);
	} else {
		uint64_t head = first * STORE_CHUNK_SECTORS - sector;
		uint64_t tail = sector + nsect - last * STORE_CHUNK_SECTORS;
		rc = head ? store_chunk_write(s, dev, sector * STORE_SECTOR_SIZE, NULL,
		                        head * STORE_SECTOR_SIZE, 0)
		          : 0;
		if (!rc && tail)
			rc = store_chunk_write(s, dev, last * STORE_CHUNK_BYTES, NULL, tail * STORE_SECTOR_SIZE,
			                 0);
		if (!rc)
			rc = store_chunks_drop(s, store_chunk_key(dev, first), store_chunk_key(dev, last - 1), "discarding data");
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
	if (s->remote)
		return 0; /* each request is its own snapshot (store_remote.c, (3)) */
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
	if (s->remote)
		return store_remote_read_range(s, device_id, byte_off, len, cb, ctx);
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
		if (sqlite3_column_type(st, 3) != SQLITE_NULL &&
		    store_sum(data, (size_t)bytes) != sqlite3_column_int64(st, 3)) {
			/* Bit rot: these bytes are not what was written. */
			struct store_damage dmg = {.device_id = device_id, .off = cstart, .len = (uint64_t)bytes,
			                           .chunk = (int64_t)chunk, .seq = -1};
			char what[200];
			store_damage_fill(s, &dmg);
			if (!s->damage_cb) {
				store_damage_describe(&dmg, what, sizeof(what));
				rc = store_fail(s, STORE_ECORRUPT,
				                "%s: the stored data is damaged (run 'profdb check'; 'profdb "
				                "export --salvage' writes what is sound)",
				                what);
				break;
			}
			if ((rc = s->damage_cb(s->damage_ctx, &dmg)))
				break;
			data = NULL; /* read as zeros, said above */
		}
		if (cstart > pos && (rc = cb(ctx, pos, NULL, (size_t)(cstart - pos))))
			break;
		uint64_t from = cstart > pos ? cstart : pos;
		uint64_t cend = cstart + (uint64_t)bytes; /* the rest of the chunk is zeros */
		uint64_t to = cend < end ? cend : end;
		if (from < to && (rc = cb(ctx, from, data ? data + (from - cstart) : NULL, (size_t)(to - from))))
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

/* ---- checksums ---------------------------------------------------------------- */

void store_salvage_damage(struct store *s, store_damage_cb cb, void *ctx)
{
	s->damage_cb = cb;
	s->damage_ctx = ctx;
}

void store_damage_fill(struct store *s, struct store_damage *d)
{
	if (s->remote) {
		store_remote_damage_fill(s, d);
		return;
	}
	sqlite3_stmt *st;

	d->run_id = 0;
	snprintf(d->vdev, sizeof(d->vdev), "?");
	if (sqlite3_prepare_v2(s->db, "SELECT run_id, vdev FROM devices WHERE device_id = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, d->device_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		d->run_id = sqlite3_column_int64(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		snprintf(d->vdev, sizeof(d->vdev), "%s", v ? v : "?");
	}
	sqlite3_finalize(st);
}

void store_damage_describe(const struct store_damage *d, char *buf, size_t len)
{
	char where[64];

	if (d->seq >= 0)
		snprintf(where, sizeof(where), "trace packet %lld", (long long)d->seq);
	else
		snprintf(where, sizeof(where), "chunk %lld", (long long)d->chunk);
	snprintf(buf, len, "run %lld, device %s (id %lld): bytes %llu-%llu (%s) " STORE_DAMAGE_WORDS,
	         (long long)d->run_id, d->vdev, (long long)d->device_id, (unsigned long long)d->off,
	         (unsigned long long)(d->off + d->len - (d->len ? 1 : 0)), where);
}
