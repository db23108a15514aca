/*
 * store_slots.c - bulk chunks in the data file beside the database.
 *
 * Why: a chunk stored in SQLite is copied four times (into the page cache
 * of the WAL, out of it and into the database at checkpoint) and
 * checksummed on the way; a Linux-like guest streaming 1 MiB requests ran
 * at a third of a plain raw image.  A chunk that a batch writes whole
 * (64 KiB, aligned) instead goes to a fresh 64 KiB *slot* of <db>-data with
 * one pwritev, and its row in `chunks` just names the slot (data = x'',
 * slot = N).  Small writes, and so everything the HaLVM writer sends, stay
 * in SQLite: a store without bulk writes has no data file at all.
 *
 * What keeps the guarantees:
 *  - Atomicity: slots are written before the batch commits and are only
 *    reachable through rows the commit makes visible.  A batch that fails
 *    leaves unreferenced bytes past meta.data_slots, which the next batch
 *    overwrites (and the owner truncates at open).
 *  - Durability: with --durability process the pwritev is in the OS when it
 *    returns, like a WAL frame; with power the data file is fdatasync'ed
 *    before the COMMIT that points at it.
 *  - Snapshots: a slot is never rewritten while a row may name it.  A chunk
 *    rewritten whole gets a new slot; one rewritten in part moves back into
 *    SQLite.  The old slot goes on `dead_slots`, and its space is returned
 *    (a hole punched) only once no reader can still see it: after the WAL
 *    has restarted twice since (a restart needs every reader to be past
 *    every checkpointed transaction; twice, because the transaction that
 *    freed it may itself be the first of a generation).  A generation is
 *    counted by the owner's WAL hook; slots freed by other writers, or
 *    before the owner started, are adopted with the current generation.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "store_internal.h"

#define SLOT_ADOPT (-1) /* dead_slots.freed_gen: generation not known yet */

static int data_path(const struct store *s, char *buf, size_t len)
{
	return snprintf(buf, len, "%s-data", s->path) < (int)len ? 0 : -1;
}

/* Opens <db>-data: writers create it (root-only, like the database);
 * readers need it only when a row names a slot. */
static int open_data(struct store *s, int create)
{
	char path[4200];

	if (s->data_fd >= 0)
		return 0;
	if (data_path(s, path, sizeof(path)) != 0)
		return store_fail(s, STORE_EINVAL, "database path too long: %s", s->path);
	if (s->mode == STORE_READ)
		s->data_fd = open(path, O_RDONLY | O_CLOEXEC);
	else
		s->data_fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	if (s->data_fd < 0) {
		if (errno == ENOENT)
			return store_fail(s, STORE_ECORRUPT,
			                  "data file %s is missing but the database stores chunks in it; "
			                  "restore it from the same backup as %s",
			                  path, s->path);
		return store_fail(s, errno == EACCES ? STORE_EPERM : STORE_EIO, "cannot open data file %s: %s",
		                  path, strerror(errno));
	}
	return 0;
}

void store_slots_close(struct store *s)
{
	if (s->data_fd >= 0)
		close(s->data_fd);
	s->data_fd = -1;
	free(s->slot_buf);
	s->slot_buf = NULL;
}

static int slot_io_fail(struct store *s, const char *what, int err)
{
	if (err == ENOSPC || err == EDQUOT)
		return store_fail(s, STORE_ENOSPC, "%s: the disk is full (free space under %s)", what,
		                  s->path);
	return store_fail(s, STORE_EIO, "%s: %s", what, strerror(err));
}

/* The next free slot of this batch: meta.data_slots as committed, read
 * once per batch that allocates (the write lock is held: it cannot move). */
static int next_slot(struct store *s, int64_t *slot)
{
	if (s->slot_next < 0) {
		sqlite3_stmt *st = store_stmt(s, ST_META_GET_SLOTS);
		if (!st)
			return STORE_EIO;
		int rc = sqlite3_step(st);
		s->slot_next = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_reset(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return store_sqlite_fail(s, "allocating a data slot");
		if (s->slot_next < 0)
			return store_fail(s, STORE_ECORRUPT, "meta.data_slots is negative; the database is damaged");
		s->slot_committed = s->slot_next;
	}
	*slot = s->slot_next++;
	return 0;
}

/* Puts a slot on the dead list (inside the batch that stops using it). */
static int slot_dead(struct store *s, int64_t slot)
{
	sqlite3_stmt *st = store_stmt(s, ST_DEAD_ADD);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, slot);
	sqlite3_bind_int64(st, 2, s->checkpointer ? s->wal_gen : SLOT_ADOPT);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "freeing a data slot");
}

int store_slot_of(struct store *s, int64_t key, int64_t *slot)
{
	sqlite3_stmt *st = store_stmt(s, ST_SLOT_OF);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, key);
	int rc = sqlite3_step(st);
	*slot = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_int64(st, 0)
	                                                                      : -1;
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlite_fail(s, "reading data");
	return 0;
}

int store_slot_write(struct store *s, int64_t key, const struct iovec *iov, int iovcnt)
{
	int64_t slot = -1, old = -1;
	int rc;

	if ((rc = open_data(s, 1)) || (rc = next_slot(s, &slot)))
		return rc;
	off_t off = (off_t)slot * (off_t)STORE_CHUNK_BYTES;
	size_t done = 0;
	struct iovec v[STORE_CHUNK_SECTORS];
	int n = iovcnt;
	memcpy(v, iov, (size_t)iovcnt * sizeof(*v));
	while (done < STORE_CHUNK_BYTES) {
		ssize_t w = pwritev(s->data_fd, v, n, off + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return slot_io_fail(s, "writing the data file", w < 0 ? errno : EIO);
		done += (size_t)w;
		/* A short write: skip what went out. */
		while (n > 0 && (size_t)w >= v[0].iov_len) {
			w -= (ssize_t)v[0].iov_len;
			memmove(v, v + 1, (size_t)--n * sizeof(*v));
		}
		if (n > 0) {
			v[0].iov_base = (uint8_t *)v[0].iov_base + w;
			v[0].iov_len -= (size_t)w;
		}
	}
	s->slots_written = 1;
	if ((rc = store_slot_of(s, key, &old)))
		return rc;
	store_blob_release(s);
	sqlite3_stmt *st = store_stmt(s, ST_SLOT_UPSERT);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, key);
	sqlite3_bind_int64(st, 2, slot);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "writing data");
	return old >= 0 ? slot_dead(s, old) : 0;
}

int store_slot_read(struct store *s, int64_t key, int64_t slot, size_t in, void *buf, size_t len)
{
	int rc;

	if ((rc = open_data(s, 0)))
		return rc;
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(s->data_fd, (uint8_t *)buf + got, len - got,
		                  (off_t)slot * (off_t)STORE_CHUNK_BYTES + (off_t)(in + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return slot_io_fail(s, "reading the data file", errno);
		if (r == 0)
			return store_fail(s, STORE_ECORRUPT,
			                  "chunk %lld of device %lld names slot %lld past the end of the data "
			                  "file; the store is damaged",
			                  (long long)(key & 0xffffffffLL), (long long)(key >> 32), (long long)slot);
		got += (size_t)r;
	}
	return 0;
}

int store_slot_chunk(struct store *s, int64_t key, int64_t slot, const uint8_t **out)
{
	int rc;

	if (!s->slot_buf && !(s->slot_buf = malloc(STORE_CHUNK_BYTES)))
		return store_fail(s, STORE_ENOMEM, "out of memory");
	if ((rc = store_slot_read(s, key, slot, 0, s->slot_buf, STORE_CHUNK_BYTES)))
		return rc;
	*out = s->slot_buf;
	return 0;
}

int store_slot_release(struct store *s, int64_t slot)
{
	return slot_dead(s, slot);
}

int store_slots_free_range(struct store *s, int64_t key_lo, int64_t key_hi)
{
	sqlite3_stmt *st = store_stmt(s, ST_DEAD_RANGE);
	if (!st)
		return STORE_EIO;
	store_blob_release(s);
	sqlite3_bind_int64(st, 1, key_lo);
	sqlite3_bind_int64(st, 2, key_hi);
	sqlite3_bind_int64(st, 3, s->checkpointer ? s->wal_gen : SLOT_ADOPT);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "freeing data slots");
}

int store_slots_before_commit(struct store *s)
{
	if (s->slot_next < 0 || s->slot_next == s->slot_committed)
		return 0;
	sqlite3_stmt *st = store_stmt(s, ST_META_SET_SLOTS);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, s->slot_next);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "allocating data slots");
	/* The data before the commit that makes it reachable. */
	if (s->durability == STORE_DURABLE_POWER && s->slots_written && fdatasync(s->data_fd) != 0)
		return slot_io_fail(s, "syncing the data file", errno);
	return 0;
}

void store_slots_after_batch(struct store *s)
{
	s->slot_next = -1; /* re-read: another writer may append next */
	s->slots_written = 0;
}

int store_slots_sync(struct store *s)
{
	if (s->data_fd >= 0 && fdatasync(s->data_fd) != 0)
		return slot_io_fail(s, "syncing the data file", errno);
	return 0;
}

/* ---- reclaiming (the owner) --------------------------------------------------- */

void store_slots_wal_restarted(struct store *s)
{
	s->wal_gen++;
	s->reclaim_due = 1;
}

/* Inside the owner's batch, once per WAL generation: adopt slots freed by
 * others, punch holes where no reader can look any more. */
int store_slots_reclaim(struct store *s)
{
	sqlite3_stmt *st;
	int rc;

	s->reclaim_due = 0;
	if (sqlite3_prepare_v2(s->db, "UPDATE dead_slots SET freed_gen = ?1 WHERE freed_gen = -1", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "reclaiming data slots");
	sqlite3_bind_int64(st, 1, s->wal_gen);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "reclaiming data slots");
	if (s->wal_gen < 2)
		return 0;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM dead_slots WHERE freed_gen <= ?1 RETURNING slot", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "reclaiming data slots");
	sqlite3_bind_int64(st, 1, s->wal_gen - 2);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t slot = sqlite3_column_int64(st, 0);
		if (open_data(s, 0) == 0)
			fallocate(s->data_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			          (off_t)slot * (off_t)STORE_CHUNK_BYTES, (off_t)STORE_CHUNK_BYTES);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "reclaiming data slots");
	return 0;
}

/* At the owner's open, under the write lock: bytes past the last committed
 * slot are a failed batch's and go; dead slots of earlier processes start
 * their wait again (their readers' snapshots are unknown). */
int store_slots_owner_open(struct store *s)
{
	char path[4200];
	struct stat st;
	int64_t slots = 0;
	sqlite3_stmt *q;
	int rc;

	if (data_path(s, path, sizeof(path)) != 0 || stat(path, &st) != 0)
		return 0; /* no bulk data yet */
	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "opening the data file");
	if (sqlite3_prepare_v2(s->db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'data_slots'", -1,
	                       &q, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			slots = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	rc = 0;
	if (st.st_size > slots * (int64_t)STORE_CHUNK_BYTES && open_data(s, 0) == 0 &&
	    ftruncate(s->data_fd, (off_t)(slots * (int64_t)STORE_CHUNK_BYTES)) != 0)
		rc = slot_io_fail(s, "trimming the data file", errno);
	if (!rc && sqlite3_exec(s->db, "UPDATE dead_slots SET freed_gen = -1", NULL, NULL, NULL) != SQLITE_OK)
		rc = store_sqlite_fail(s, "opening the data file");
	if (sqlite3_exec(s->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !rc)
		rc = store_sqlite_fail(s, "opening the data file");
	return rc;
}

/* ---- integrity ------------------------------------------------------------------ */

int store_slots_check(struct store *s, char *report, size_t len, size_t *used)
{
	static const char *const checks[] = {
		/* a slot row holds no bytes of its own, and names a slot in range */
		"SELECT 'chunk ' || (key & 4294967295) || ' of device ' || (key >> 32) || "
		"' names slot ' || slot || ' outside the data file' FROM chunks WHERE slot IS NOT NULL "
		"AND (slot < 0 OR slot >= coalesce((SELECT CAST(value AS INTEGER) FROM meta "
		"WHERE key = 'data_slots'), 0) "
		"OR length(data) != 0)",
		"SELECT 'slot ' || slot || ' is named by ' || count(*) || ' chunks' FROM chunks "
		"WHERE slot IS NOT NULL GROUP BY slot HAVING count(*) > 1",
		"SELECT 'slot ' || d.slot || ' is both free and in use' FROM dead_slots d JOIN chunks c "
		"ON c.slot = d.slot",
	};
	int bad = 0;

	for (size_t c = 0; c < sizeof(checks) / sizeof(checks[0]); c++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s->db, checks[c], -1, &st, NULL) != SQLITE_OK)
			return store_sqlite_fail(s, "checking the data file");
		int rc, n = 0;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			bad = 1;
			if (n++ < 5 && *used + 2 < len)
				*used += (size_t)snprintf(report + *used, len - *used, "%sdata file: %s",
				                          *used ? "; " : "", (const char *)sqlite3_column_text(st, 0));
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return store_sqlite_fail(s, "checking the data file");
	}
	/* Every slot in use must be inside the file. */
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT max(slot) FROM chunks", -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "checking the data file");
	int64_t max = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL
	                      ? sqlite3_column_int64(st, 0)
	                      : -1;
	sqlite3_finalize(st);
	if (max >= 0) {
		struct stat sb;
		char path[4200];
		data_path(s, path, sizeof(path));
		if (stat(path, &sb) != 0 || sb.st_size < (max + 1) * (int64_t)STORE_CHUNK_BYTES) {
			bad = 1;
			if (*used + 2 < len)
				*used += (size_t)snprintf(report + *used, len - *used,
				                          "%sdata file: %s is %s but slot %lld is in use",
				                          *used ? "; " : "", path,
				                          stat(path, &sb) != 0 ? "missing" : "too short",
				                          (long long)max);
		}
	}
	return bad ? STORE_ECORRUPT : 0;
}
