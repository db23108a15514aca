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
 *  - Reuse: a slot given back stays on `dead_slots` as *free*
 *    (freed_gen = SLOT_FREE) and the next slot a batch needs is the
 *    lowest free one; only when none is free does the file grow.  Free
 *    slots at the end of the file are cut off it (ftruncate).  Without
 *    reuse a guest rewriting 4 MiB 500 times grew the file to 2 GB of
 *    holes, and space came back only as fast as the WAL restarted.
 *
 * THE SLOTS' INVARIANTS (why each is enough is said where it is kept):
 *   (1) A slot is in exactly one state: the header (slot 0), named by one
 *       chunk row, waiting on dead_slots (freed_gen >= 0, or SLOT_ADOPT),
 *       free on dead_slots (SLOT_FREE), or past meta.data_slots.
 *   (2) A slot becomes free only once no reader's snapshot has a row
 *       naming it: by the generation rule (store_slots_reclaim, the owner's
 *       WAL restarts), or because a checkpoint copied the whole WAL, which
 *       no reader behind its newest commit allows (store_space.c, and the
 *       owner's writer itself: store_checkpoint.c).  Once free it stays
 *       invisible: snapshots taken later are newer.
 *   (3) Only a free slot, or one past meta.data_slots, is written into,
 *       punched or cut off the file; a waiting slot keeps its bytes and
 *       stays inside the file (a reader may still read it).
 *   (4) A free slot is taken, and the file cut, only inside a write
 *       transaction: what the batch wrote into a slot it took is
 *       unreachable until its COMMIT, and if the batch fails the slot is
 *       free again (its bytes garbage no row names).
 *   (5) Free survives restarts: the owner's open re-arms waiting slots
 *       only (their readers' snapshots are unknown), never free ones.
 *   (6) What the owner's freed slots hold of the file is bounded whatever
 *       the load: past 16 MiB waiting the writer proves them unseen itself
 *       at the end of its commit (store_checkpoint.c, invariant 4), and
 *       only a reader behind the newest commit holds them longer.  Why:
 *       the generations come from the checkpointer's restarts, and its
 *       thread runs at nice 19; on a busy host it waited for a CPU through
 *       85-98% of each checkpoint, generations came up to a second apart,
 *       and a guest rewriting 4 MiB held 93 MiB of the file in CI (7 MiB
 *       idle); a guest whose batches come back to back left the writer
 *       mid-batch at 78 of 84 restarts and held 1.3-2 GiB for 32 MiB.
 *       Now 20-24 MiB for the first, 56 MiB for the second
 *       (docs/performance.md).
 *  - Identity: slot 0 is the data file's header, naming the store it
 *    belongs to (meta.store_id).  Without it a data file that went missing
 *    was recreated empty by the next bulk write, and every older chunk
 *    read back as zeros with `check` saying ok; one of another store put
 *    beside the database would have been read, or overwritten.  So the
 *    owner refuses, at open, a data file that is missing while chunks name
 *    slots, or whose header names another store; readers check the header
 *    when they first open the file.  A data file written before headers
 *    (schema 3) gets one at its owner's first open: slot 0's chunk moves to
 *    a new slot first (meta.data_header: 'moved', then 'ok').
 *
 * The file itself (its path, opening it, the header, the owner's open):
 * store_data_file.c.
 *
 * Layer 2 (store_internal.h).  May call: store_checkpoint.c,
 * store_writeback.c, store_data_file.c, store_conn.c, util/xxh.h,
 * util/grow.h.
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

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include "util/grow.h"
#include "util/xxh.h"

#include "store_internal.h"

#define SLOT_ADOPT (-1) /* dead_slots.freed_gen: generation not known yet */
#define SLOT_FREE (-2)  /* dead_slots.freed_gen: given back, no reader sees it: reusable */

void store_slots_close(struct store *s)
{
	if (s->data_fd >= 0)
		close(s->data_fd);
	s->data_fd = -1;
	free(s->slot_buf);
	s->slot_buf = NULL;
	free(s->taken);
	s->taken = NULL;
	s->taken_n = s->taken_cap = 0;
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
		s->slot_reuse = 0; /* free slots above 0 (the header) first */
		/* Slot 0 is the header (stores with an identity). */
		if (s->slot_next == 0 && s->store_id[0])
			s->slot_next = 1;
	}
	/* The lowest free slot first (invariants 3 and 4): the file stays as
	 * small as the live data and what still waits, and its tail free to
	 * be cut off.  The batch goes up from the last one it took, so each
	 * search passes over the waiting slots below it once. */
	if (s->slot_reuse >= 0) {
		sqlite3_stmt *st = store_stmt(s, ST_FREE_TAKE);
		if (!st)
			return STORE_EIO;
		sqlite3_bind_int64(st, 1, s->slot_reuse);
		sqlite3_bind_int64(st, 2, s->slot_next); /* inside the file as this batch leaves it */
		int rc = sqlite3_step(st);
		int64_t got = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
		while (rc == SQLITE_ROW)
			rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return store_sqlite_fail(s, "allocating a data slot");
		if (got > 0) {
			if (GROW_FROM(s->taken, s->taken_cap, s->taken_n + 1, 64) != 0)
				return store_fail(s, STORE_ENOMEM, "out of memory");
			s->taken[s->taken_n++] = got;
			s->slot_reuse = got;
			*slot = got;
			return 0;
		}
		s->slot_reuse = -1; /* none left: append */
	}
	*slot = s->slot_next++;
	return 0;
}

/* Was slot taken by the open transaction (appended, or free before it)? */
static int taken_now(const struct store *s, int64_t slot)
{
	if (s->slot_next < 0)
		return 0;
	if (slot >= s->slot_committed)
		return 1;
	for (size_t i = 0; i < s->taken_n; i++)
		if (s->taken[i] == slot)
			return 1;
	return 0;
}

static void punch(struct store *s, int64_t slot);

/* Puts a slot on the dead list (inside the batch that stops using it). */
static int slot_dead(struct store *s, int64_t slot)
{
	sqlite3_stmt *st = store_stmt(s, ST_DEAD_ADD);
	if (!st)
		return STORE_EIO;
	/* A slot this transaction took and now frees was never named by a
	 * committed row: no reader can see it, so it is free at once
	 * (invariant 2), and the batch may take it again.  The intake's
	 * folder replays many batches in one transaction, and a guest
	 * rewriting a region rewrites its chunks within it: each such slot
	 * used to wait two WAL generations. */
	int now = taken_now(s, slot);
	sqlite3_bind_int64(st, 1, slot);
	sqlite3_bind_int64(st, 2, now ? SLOT_FREE : s->checkpointer ? s->wal_gen : SLOT_ADOPT);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "freeing a data slot");
	if (now) {
		if (s->slot_reuse < 0 || s->slot_reuse >= slot)
			s->slot_reuse = slot - 1;
		punch(s, slot);
		return 0;
	}
	store_checkpointer_want_restarts(s, 1);
	return 0;
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

/* The chunk's checksum (store_sum), over its pieces. */
static int64_t iov_sum(const struct iovec *iov, int iovcnt)
{
	XXH3_state_t st;

	XXH3_INITSTATE(&st);
	XXH3_64bits_reset(&st);
	for (int i = 0; i < iovcnt; i++)
		XXH3_64bits_update(&st, iov[i].iov_base, iov[i].iov_len);
	return (int64_t)XXH3_64bits_digest(&st);
}

int store_slot_write(struct store *s, int64_t key, const struct iovec *iov, int iovcnt)
{
	int64_t slot = -1, old = -1;
	int rc;

	if ((rc = store_data_file_open(s, 1)) || (rc = next_slot(s, &slot)))
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
			return store_slot_io_fail(s, "writing the data file", w < 0 ? errno : EIO);
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
	store_writeback_note(s, off, (off_t)STORE_CHUNK_BYTES);
	if ((rc = store_slot_of(s, key, &old)))
		return rc;
	store_blob_release(s);
	sqlite3_stmt *st = store_stmt(s, ST_SLOT_UPSERT);
	if (!st)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, key);
	sqlite3_bind_int64(st, 2, slot);
	sqlite3_bind_int64(st, 3, iov_sum(iov, iovcnt));
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "writing data");
	return old >= 0 ? slot_dead(s, old) : 0;
}

int store_slot_read(struct store *s, int64_t key, int64_t slot, size_t in, void *buf, size_t len)
{
	int rc;

	if ((rc = store_data_file_open(s, 0)))
		return rc;
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(s->data_fd, (uint8_t *)buf + got, len - got,
		                  (off_t)slot * (off_t)STORE_CHUNK_BYTES + (off_t)(in + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return store_slot_io_fail(s, "reading the data file", errno);
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
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "freeing data slots");
	if (sqlite3_changes(s->db) > 0)
		store_checkpointer_want_restarts(s, sqlite3_changes(s->db));
	return 0;
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
		return store_slot_io_fail(s, "syncing the data file", errno);
	return 0;
}

void store_slots_after_batch(struct store *s)
{
	s->slot_next = -1; /* re-read: another writer may append next */
	s->slot_reuse = -1;
	s->taken_n = 0;
	s->slots_written = 0;
}

int store_slots_sync(struct store *s)
{
	if (s->data_fd >= 0 && fdatasync(s->data_fd) != 0)
		return store_slot_io_fail(s, "syncing the data file", errno);
	return 0;
}

int store_slots_open_data(struct store *s)
{
	return store_data_file_open(s, 0);
}

/* ---- reclaiming (the owner) --------------------------------------------------- */

/* Inside a write transaction: free slots at the end of the file are cut
 * off it (invariant 3: free ones only, so every slot a reader may read
 * stays inside).  Walks down from the end while the slots are free. */
int store_slots_trim(struct store *s, int64_t *cut)
{
	sqlite3_stmt *st = store_stmt(s, ST_META_GET_SLOTS), *q;
	int64_t top = 0;
	int rc;

	*cut = 0;
	if (!st)
		return STORE_EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		top = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlite_fail(s, "trimming the data file");
	if (top <= 1)
		return 0;
	if (sqlite3_prepare_v2(s->db, "SELECT slot, freed_gen FROM dead_slots WHERE slot < ?1 ORDER BY slot DESC",
	                       -1, &q, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "trimming the data file");
	sqlite3_bind_int64(q, 1, top);
	int64_t end = top;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && sqlite3_column_int64(q, 0) == end - 1 &&
	       sqlite3_column_int64(q, 1) == SLOT_FREE && end - 1 > 0)
		end--;
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlite_fail(s, "trimming the data file");
	if (end == top)
		return 0;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM dead_slots WHERE slot >= ?1", -1, &q, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "trimming the data file");
	sqlite3_bind_int64(q, 1, end);
	rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "trimming the data file");
	if (!(st = store_stmt(s, ST_META_SET_SLOTS)))
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, end);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "trimming the data file");
	/* Cut before the commit: should it fail, the slots are listed free
	 * again past the end of the file, which the next batch that takes one
	 * extends (a write past the end), and nothing reads. */
	if ((rc = store_data_file_open(s, 0)) == 0 && ftruncate(s->data_fd, (off_t)end * (off_t)STORE_CHUNK_BYTES) != 0)
		return store_slot_io_fail(s, "trimming the data file", errno);
	if (rc)
		return rc;
	*cut = top - end;
	return 0;
}

/* A slot no reader can see any more becomes free (invariant 2): its
 * space goes back to the filesystem now (a hole), and the slot to the
 * next batch that needs one. */
static void punch(struct store *s, int64_t slot)
{
	/* slot 0 is the data file's header: never freed, never punched */
	if (slot > 0 && store_data_file_open(s, 0) == 0)
		(void)fallocate(s->data_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		                (off_t)slot * (off_t)STORE_CHUNK_BYTES, (off_t)STORE_CHUNK_BYTES);
}

int store_slots_free(struct store *s, const int64_t *slots, size_t n, int64_t *freed)
{
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(s->db, "UPDATE dead_slots SET freed_gen = ?1 WHERE slot = ?2 AND freed_gen != ?1",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "giving freed data slots back");
	/* punched before the commit: should the commit fail, the slot stays
	 * waiting and is punched again, which changes nothing */
	for (size_t i = 0; i < n && rc == SQLITE_DONE; i++) {
		sqlite3_bind_int64(st, 1, SLOT_FREE);
		sqlite3_bind_int64(st, 2, slots[i]);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc == SQLITE_DONE && sqlite3_changes(s->db) > 0) {
			punch(s, slots[i]);
			(*freed)++;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "giving freed data slots back");
	return 0;
}

/* Inside the owner's batch, once per WAL generation: adopt slots freed by
 * others, free (and punch) those no reader can look at any more, and cut
 * free slots off the end of the file. */
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
	/* Two generations since (a restart's), or a proof since
	 * (store_checkpoint.c, invariant 1). */
	int64_t upto = s->wal_gen - 2 > s->slots_proven_end - 1 ? s->wal_gen - 2 : s->slots_proven_end - 1;
	if (upto < 0)
		return 0;
	if (sqlite3_prepare_v2(s->db,
	                       "UPDATE dead_slots SET freed_gen = ?2 WHERE freed_gen >= 0 AND freed_gen <= ?1 "
	                       "RETURNING slot",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "reclaiming data slots");
	sqlite3_bind_int64(st, 1, upto);
	sqlite3_bind_int64(st, 2, SLOT_FREE);
	int64_t freed = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		punch(s, sqlite3_column_int64(st, 0));
		freed++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "reclaiming data slots");
	int64_t cut = 0;
	rc = freed ? store_slots_trim(s, &cut) : 0;
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
	/* The data file is this store's (its header). */
	if (s->store_id[0] && s->data_fd < 0) {
		char path[4200];
		struct stat sb;
		store_data_file_path(s, path, sizeof(path));
		if (lstat(path, &sb) == 0) {
			int rc = store_data_file_open(s, 0);
			if (rc && rc != STORE_ECORRUPT && rc != STORE_EPERM)
				return rc;
			if (rc) {
				bad = 1;
				if (*used + 2 < len)
					*used += (size_t)snprintf(report + *used, len - *used, "%sdata file: %s",
					                          *used ? "; " : "", s->errmsg);
			}
		}
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
		store_data_file_path(s, path, sizeof(path));
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
