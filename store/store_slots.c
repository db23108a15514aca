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
 * Layer 2 (store_internal.h).  May call: store_checkpoint.c,
 * store_writeback.c, store_conn.c, util/xxh.h.
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
#include "util/xxh.h"

#include "store_internal.h"

#define SLOT_ADOPT (-1) /* dead_slots.freed_gen: generation not known yet */
#define SLOT_FREE (-2)  /* dead_slots.freed_gen: given back, no reader sees it: reusable */

static int data_path(const struct store *s, char *buf, size_t len)
{
	return snprintf(buf, len, "%s-data", s->path) < (int)len ? 0 : -1;
}

/* The header in slot 0: magic, then the store's id (32 hex digits). */
#define DATA_MAGIC "profsvc data file of store "
#define DATA_MAGIC_LEN (sizeof(DATA_MAGIC) - 1)
#define DATA_HEADER_LEN (DATA_MAGIC_LEN + 32 + 1)

enum header_state { HEADER_OURS, HEADER_FOREIGN, HEADER_NONE, HEADER_EMPTY };

/* What slot 0 of the open data file says; *other: the foreign id. */
static enum header_state read_header(struct store *s, char *other, size_t olen)
{
	char h[DATA_HEADER_LEN + 1] = "";
	struct stat st;

	if (fstat(s->data_fd, &st) == 0 && st.st_size == 0)
		return HEADER_EMPTY;
	ssize_t n = pread(s->data_fd, h, DATA_HEADER_LEN, 0);
	if (n != (ssize_t)DATA_HEADER_LEN || memcmp(h, DATA_MAGIC, DATA_MAGIC_LEN) != 0 ||
	    h[DATA_HEADER_LEN - 1] != '\n')
		return HEADER_NONE;
	h[DATA_HEADER_LEN - 1] = '\0';
	snprintf(other, olen, "%s", h + DATA_MAGIC_LEN);
	return s->store_id[0] && strcmp(h + DATA_MAGIC_LEN, s->store_id) == 0 ? HEADER_OURS
	                                                                       : HEADER_FOREIGN;
}

static int write_header(struct store *s)
{
	char h[DATA_HEADER_LEN + 1];

	snprintf(h, sizeof(h), "%s%s\n", DATA_MAGIC, s->store_id);
	if (pwrite(s->data_fd, h, DATA_HEADER_LEN, 0) != (ssize_t)DATA_HEADER_LEN)
		return store_fail(s, errno == ENOSPC ? STORE_ENOSPC : STORE_EIO,
		                  "writing the data file's header: %s", strerror(errno));
	return 0;
}

static int foreign_data(struct store *s, const char *path, const char *other)
{
	return store_fail(s, STORE_ECORRUPT,
	                  "data file %s belongs to another store (%s, not %s): it is not this "
	                  "database's; put back the data file that was beside %s (restore both "
	                  "from the same backup)",
	                  path, other, s->store_id, s->path);
}

/* Opens <db>-data: writers create it (root-only, like the database, and
 * never through a link), with its header; readers need it only when a row
 * names a slot, and check that it is this store's. */
static int open_data(struct store *s, int create)
{
	char path[4200], other[64];

	if (s->data_fd >= 0)
		return 0;
	if (data_path(s, path, sizeof(path)) != 0)
		return store_fail(s, STORE_EINVAL, "database path too long: %s", s->path);
	if (s->mode == STORE_READ)
		s->data_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	else
		s->data_fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0),
		                  store_file_mode(s->path));
	if (s->data_fd < 0) {
		if (errno == ENOENT)
			return store_fail(s, STORE_ECORRUPT,
			                  "data file %s is missing but the database stores chunks in it; "
			                  "restore it from the same backup as %s",
			                  path, s->path);
		if (errno == ELOOP)
			return store_fail(s, STORE_EPERM,
			                  "data file %s is a symbolic link: refused (the store's files are "
			                  "never opened through links); replace it by the file itself",
			                  path);
		return store_fail(s, errno == EACCES ? STORE_EPERM : STORE_EIO, "cannot open data file %s: %s",
		                  path, strerror(errno));
	}
	struct stat st;
	mode_t want = store_file_mode(s->path);
	if (s->mode != STORE_READ && fstat(s->data_fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 0777) != want)
		(void)fchmod(s->data_fd, want); /* 0600 (store_conn.c says why) */
	if (!s->store_id[0])
		return 0; /* a schema-3 store read as it is: no header to check */
	switch (read_header(s, other, sizeof(other))) {
	case HEADER_OURS:
		return 0;
	case HEADER_FOREIGN:
		return foreign_data(s, path, other);
	case HEADER_EMPTY:
		/* Created just now (or by a batch that failed before its first
		 * slot): the header first, so that no slot is ever written
		 * into a file that does not say whose it is. */
		return create ? write_header(s) : 0;
	case HEADER_NONE:
	default:
		/* Written before headers: the owner adds one at open
		 * (store_slots_owner_open); until then it is read as it is. */
		if (s->data_header_ok)
			return store_fail(s, STORE_ECORRUPT,
			                  "data file %s has no header although this store's data files have "
			                  "one: it is damaged or not this store's; restore it from the same "
			                  "backup as %s",
			                  path, s->path);
		return 0;
	}
}

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
			if (s->taken_n == s->taken_cap) {
				size_t cap = s->taken_cap ? 2 * s->taken_cap : 64;
				int64_t *v = realloc(s->taken, cap * sizeof(*v));
				if (!v)
					return store_fail(s, STORE_ENOMEM, "out of memory");
				s->taken = v;
				s->taken_cap = cap;
			}
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
		return slot_io_fail(s, "syncing the data file", errno);
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
		return slot_io_fail(s, "syncing the data file", errno);
	return 0;
}

int store_slots_open_data(struct store *s)
{
	return open_data(s, 0);
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
	if ((rc = open_data(s, 0)) == 0 && ftruncate(s->data_fd, (off_t)end * (off_t)STORE_CHUNK_BYTES) != 0)
		return slot_io_fail(s, "trimming the data file", errno);
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
	if (slot > 0 && open_data(s, 0) == 0)
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

static int meta_get(struct store *s, const char *key, char *out, size_t len)
{
	sqlite3_stmt *q;
	out[0] = '\0';
	if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?1", -1, &q, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "reading the store's settings");
	sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && sqlite3_column_text(q, 0))
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "reading the store's settings");
}

static int meta_set(struct store *s, const char *key, const char *value)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO "
	                               "UPDATE SET value = excluded.value",
	                       -1, &q, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "writing the store's settings");
	sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, value, -1, SQLITE_STATIC);
	int rc = sqlite3_step(q);
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "writing the store's settings");
}

/* Does any chunk live in the data file?  (Stops at the first.) */
static int chunks_in_data_file(struct store *s)
{
	sqlite3_stmt *q;
	int used = 1; /* if we cannot tell, assume so: refusing is safe */
	if (sqlite3_prepare_v2(s->db, "SELECT EXISTS (SELECT 1 FROM chunks WHERE slot IS NOT NULL)", -1, &q,
	                       NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			used = sqlite3_column_int(q, 0);
		sqlite3_finalize(q);
	}
	return used;
}

int store_slots_read_identity(struct store *s)
{
	char v[64];
	int rc;

	if ((rc = meta_get(s, "store_id", v, sizeof(v))))
		return rc;
	if (v[0] && (strlen(v) != 32 || strspn(v, "0123456789abcdef") != 32))
		return store_fail(s, STORE_ECORRUPT,
		                  "database %s names its identity '%.40s', which no profsvc writes: the "
		                  "file is damaged; run 'profdb check' and restore from a backup",
		                  s->path, v);
	snprintf(s->store_id, sizeof(s->store_id), "%s", v);
	if ((rc = meta_get(s, "data_header", v, sizeof(v))))
		return rc;
	s->data_header_ok = strcmp(v, "ok") == 0;
	return 0;
}

/* A schema-3 data file gets its header: slot 0's chunk (live or dead)
 * moves to a new slot, durably, before the header overwrites it. */
static int add_header(struct store *s, int64_t *slots, const char *state)
{
	int rc;

	if (strcmp(state, "moved") != 0 && *slots > 0) {
		uint8_t *buf = calloc(1, STORE_CHUNK_BYTES);
		if (!buf)
			return store_fail(s, STORE_ENOMEM, "out of memory");
		ssize_t n = pread(s->data_fd, buf, STORE_CHUNK_BYTES, 0);
		int64_t to = *slots;
		if (n < 0 || pwrite(s->data_fd, buf, STORE_CHUNK_BYTES, (off_t)to * (off_t)STORE_CHUNK_BYTES) !=
		                     (ssize_t)STORE_CHUNK_BYTES ||
		    fdatasync(s->data_fd) != 0) {
			free(buf);
			return slot_io_fail(s, "moving slot 0 of the data file for its header", errno);
		}
		free(buf);
		char sql[200], n_slots[24];
		snprintf(sql, sizeof(sql),
		         "UPDATE chunks SET slot = %lld WHERE slot = 0; "
		         "UPDATE dead_slots SET slot = %lld WHERE slot = 0",
		         (long long)to, (long long)to);
		snprintf(n_slots, sizeof(n_slots), "%lld", (long long)to + 1);
		if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
			return store_sqlite_fail(s, "moving slot 0 of the data file for its header");
		if ((rc = meta_set(s, "data_slots", n_slots)) || (rc = meta_set(s, "data_header", "moved")))
			return rc;
		/* On stable storage (the owner's open commits with synchronous
		 * FULL) before the header overwrites the slot. */
		if (sqlite3_exec(s->db, "COMMIT; BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			return store_sqlite_fail(s, "moving slot 0 of the data file for its header");
		*slots = to + 1;
	} else if (*slots == 0) {
		*slots = 1;
		if ((rc = meta_set(s, "data_slots", "1")))
			return rc;
	}
	if ((rc = write_header(s)))
		return rc;
	if (fdatasync(s->data_fd) != 0)
		return slot_io_fail(s, "syncing the data file", errno);
	return meta_set(s, "data_header", "ok");
}

/* At the owner's open, under the write lock: the data file is this store's
 * (or gets its header), bytes past the last committed slot are a failed
 * batch's and go, and dead slots of earlier processes start their wait
 * again (their readers' snapshots are unknown; free ones stay free,
 * invariant 5).  store_give_back, right after, frees them at once when
 * no reader is behind. */
/* The owner's data file at path has the header hs says (other: the
 * store it names): meta.data_header (state) is brought in line, or a
 * header added, or the file refused. */
static int settle_header(struct store *s, enum header_state hs, const char *path, const char *state,
                         const char *other, int64_t *slots)
{
	int rc = 0;

	switch (hs) {
	case HEADER_OURS:
		if (strcmp(state, "ok") != 0)
			rc = meta_set(s, "data_header", "ok");
		break;
	case HEADER_FOREIGN:
		rc = foreign_data(s, path, other);
		break;
	case HEADER_EMPTY:
	case HEADER_NONE:
	default:
		if (strcmp(state, "ok") == 0)
			rc = store_fail(s, STORE_ECORRUPT,
			                "data file %s has no header although this store's data files have "
			                "one: it is damaged or not this store's; restore it from the same "
			                "backup as %s",
			                path, s->path);
		else
			rc = add_header(s, slots, state);
		break;
	}
	return rc;
}

int store_slots_owner_open(struct store *s)
{
	char path[4200], state[16], other[64];
	struct stat st;
	int64_t slots = 0;
	sqlite3_stmt *q;
	int rc;

	if (data_path(s, path, sizeof(path)) != 0)
		return store_fail(s, STORE_EINVAL, "database path too long: %s", s->path);
	/* Once per open: every commit here durable (add_header needs it). */
	if (sqlite3_exec(s->db, "PRAGMA synchronous = FULL; BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "opening the data file");
	if (sqlite3_prepare_v2(s->db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'data_slots'", -1,
	                       &q, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			slots = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	if ((rc = meta_get(s, "data_header", state, sizeof(state))))
		goto out;
	if (lstat(path, &st) != 0) {
		/* No data file: fine while no chunk names a slot. */
		rc = slots > 0 && chunks_in_data_file(s) ? store_fail(s, STORE_ECORRUPT,
		                       "data file %s is missing but chunks of %s are stored in it: refusing "
		                       "to start (new writes would recreate it empty and older runs would "
		                       "read as zeros); restore it from the same backup as the database, or "
		                       "move the database away to start a new store",
		                       path, s->path)
		          : 0;
		goto out;
	}
	if ((rc = open_data(s, 0)))
		goto out;
	enum header_state hs = read_header(s, other, sizeof(other));
	if (hs == HEADER_EMPTY && slots > 0 && chunks_in_data_file(s)) {
		rc = store_fail(s, STORE_ECORRUPT,
		                "data file %s is empty but chunks of %s are stored in it: refusing to "
		                "start; restore it from the same backup as the database",
		                path, s->path);
		goto out;
	}
	rc = settle_header(s, hs, path, state, other, &slots);
	if (!rc)
		s->data_header_ok = 1;
	int64_t keep = slots > 0 ? slots : 1; /* never below the header */
	if (!rc && st.st_size > keep * (int64_t)STORE_CHUNK_BYTES &&
	    ftruncate(s->data_fd, (off_t)(keep * (int64_t)STORE_CHUNK_BYTES)) != 0)
		rc = slot_io_fail(s, "trimming the data file", errno);
	if (!rc && sqlite3_exec(s->db, "UPDATE dead_slots SET freed_gen = -1 WHERE freed_gen != -2", NULL,
	                         NULL, NULL) != SQLITE_OK)
		rc = store_sqlite_fail(s, "opening the data file");
out:
	if (sqlite3_exec(s->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !rc)
		rc = store_sqlite_fail(s, "opening the data file");
	if (sqlite3_exec(s->db, s->durability == STORE_DURABLE_POWER ? "PRAGMA synchronous = FULL"
	                                                             : "PRAGMA synchronous = NORMAL",
	                 NULL, NULL, NULL) != SQLITE_OK && !rc)
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
	/* The data file is this store's (its header). */
	if (s->store_id[0] && s->data_fd < 0) {
		char path[4200];
		struct stat sb;
		data_path(s, path, sizeof(path));
		if (lstat(path, &sb) == 0) {
			int rc = open_data(s, 0);
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
