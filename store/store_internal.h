/*
 * store_internal.h - what the store's own modules share: the connection
 * object, device handles, the chunk layout and error plumbing.  Not for
 * users of the store.
 *
 * THE LAYERS.  The store's files stand in layers, and calls go one way:
 * down.  Bottom up:
 *   1. The connection and its identity: store_conn.c (errors, the cache of
 *      statements, the blob handle, the clock, the store's threads, the
 *      file the path names, the owner's mark); store_wal.c (the -wal
 *      file read as SQLite's recovery reads it); store_remote.c (a store
 *      read through the backend's read service, for a reader that may not
 *      open the files: the read functions above forward to it).
 *   2. The data file and the rows: store_checkpoint.c (the WAL's
 *      generations), store_writeback.c, store_data_file.c (the file, its
 *      header, the owner's open), store_slots.c (the slots in it),
 *      store_chunks.c (the writer's transactions, chunks, device rows),
 *      store_schema.c.
 *   3. The intake log: store_intake_rec.c, store_intake_fold.c,
 *      store_intake_recover.c, store_intake.c (store_intake_int.h).
 *   4. The data path: store_data.c (batches, requests, snapshot reads).
 *   5. The catalogue: store_catalog.c (runs), store_devices.c (devices,
 *      handles), store_space.c.
 *   6. Over the catalogue: store_trace.c, store_copy.c, store_export.c,
 *      store_check.c (an open store checked: integrity, -wal, checksums).
 *   7. The assembly: store_open.c (open and close: it starts, wires and
 *      stops what the layers below need).
 * store_watch.c, store_wire.c and store_wire_write.c (the read service's
 * protocol) stand apart: they use store.h and one another's headers alone.
 *
 * INVARIANTS (each file's opening comment names its layer and what it
 * may call; a change that needs another call changes the layers here
 * first):
 *   (1) A file calls only files of lower layers, and files of its own
 *       layer listed before it above.  No file calls one above it, so no
 *       two files call each other, however indirectly.
 *   (2) store_conn.c calls no other file of the store.  Where its
 *       messages go on a thread of the store's own is registered with it
 *       (store_errbuf_redirect), not looked up above it.
 *   (3) Nothing calls store_open.c: it is the one place that assembles the
 *       store (the owner's lock, the schema, the data file, the
 *       checkpointer, the write-behind, then the intake log; the log is
 *       closed first).
 *   (4) Layers 1-3 run SQL inside a transaction they own (store_txn_*),
 *       one their caller has open, or for store_open.c before the store
 *       serves.  Layers 4 and up run SQL after STORE_NEED_SQL
 *       (store_data.c), which keeps the intake's folder off the
 *       connection meanwhile.
 *   (5) The folder (layer 3) and the writer's thread never use the
 *       connection at once (store_intake.c says how).
 */
#ifndef PROFSVC_STORE_INTERNAL_H
#define PROFSVC_STORE_INTERNAL_H

#include <sqlite3.h>
#include <sys/types.h>

#include "store.h"

/*
 * Data layout.  A device's bytes live in fixed 64 KiB chunks, one row each
 * in table `chunks`, keyed by (device_id << 32 | chunk number) so that the
 * rowid alone finds a chunk and a device's chunks are one contiguous rowid
 * range (no index, ordered scans for export).
 *
 * Why fixed chunks rather than one row per write: the HaLVM writer rewrites
 * the 512-byte status block after every 4 KiB of data.  Rows per write would
 * either pile that up as history or force interval-splitting; and a 4 KiB
 * blob in a 4 KiB page spills into an overflow page with ~12% waste.  A
 * 64 KiB chunk is an overflow chain of 16 pages with <1% waste, and
 * sqlite3_blob_write() rewrites only the pages a write touches, so a
 * status-block rewrite dirties two pages, in place.
 *
 * A chunk's blob may be shorter than 64 KiB (a whole number of sectors):
 * the missing tail reads as zeros.  Chunks are created full-size; when a run
 * ends the device's last chunk is trimmed to the end of the written data, so
 * a small profile does not keep up to 64 KiB of zeros.  A write past the end
 * of a short chunk rewrites it full-size (rare: only after a trim).
 */
#define STORE_CHUNK_SHIFT 32
#define STORE_MAX_DEVICE_ID ((int64_t)INT32_MAX)

static inline int64_t store_chunk_key(int64_t device_id, uint64_t chunk)
{
	return (int64_t)(((uint64_t)device_id << STORE_CHUNK_SHIFT) | chunk);
}

/*
 * A chunk written whole by a batch may instead live in a 64 KiB slot of the
 * data file <db>-data (store_slots.c): its row then has data = x'' and
 * slot = N.  Only bulk writes do that; see store_slots.c for why and how.
 */

enum store_stmt_id {
	ST_CHUNK_INSERT,
	ST_CHUNK_UPDATE,
	ST_CHUNK_DELETE_RANGE,
	ST_CHUNK_SELECT_RANGE,
	ST_DEVICE_UPDATE,
	ST_DEVICE_SELECT,
	ST_DEVICE_FIND,
	ST_RUNNING_ACTIVITY,
	ST_READ_BEGIN,
	ST_READ_TOUCH,
	ST_BEGIN,
	ST_COMMIT,
	ST_SLOT_OF,
	ST_SLOT_UPSERT,
	ST_DEAD_ADD,
	ST_DEAD_RANGE,
	ST_FREE_TAKE,
	ST_META_GET_SLOTS,
	ST_META_SET_SLOTS,
	ST_TRACE_INSERT,
	ST_DEVICE_CAPACITY,
	ST_META_GET_INTAKE,
	ST_META_SET_INTAKE,
	ST_CHUNK_SUM,
	ST_COPY_RUN_TAKEN,
	ST_COPY_RUN_INSERT,
	ST_COPY_DEVICE_TAKEN,
	ST_COPY_DEVICE_INSERT,
	ST__COUNT
};

struct store_device {
	struct store *s;
	struct store_device_info committed; /* as in the database */
	struct store_device_info pending;   /* committed + the open batch */
	int dirty;                          /* pending differs: on dirty list */
	int gone;                           /* its row was deleted under us: writes refused */
	struct store_device *next_dirty;
	struct store_device *prev, *next;   /* all handles of the store */
};

struct store {
	sqlite3 *db;
	char *path;
	enum store_open_mode mode;
	enum store_durability durability;
	int lock_fd;          /* STORE_OWNER: the database file, flock()ed (the owner lock) */
	dev_t db_dev;         /* writers: the file opened (store_check_identity) */
	ino_t db_ino;
	int have_ident;
	int ident_fd;         /* the owner: inotify on the database and its directory */
	int ident_bad;        /* the last check failed: stat every time until it passes */
	int64_t ident_next_us; /* the next check that stats the path anyway */
	int empty_file;       /* the database file was empty (or absent) at open */
	int busy_ms;          /* how long to wait for a lock (busy_wait) */
	int settle_wal;       /* may empty the -wal when it closes (store_open.c) */
	int in_batch;
	int in_read;
	sqlite3_stmt *stmt[ST__COUNT];
	sqlite3_blob *blob;   /* cached incremental-blob handle on `chunks` */
	int blob_writable;
	int blob_len;         /* bytes in the chunk s->blob points at */
	struct store_device *dirty;    /* devices changed by the open batch */
	struct store_device *devices;  /* every live handle */
	uint8_t *scratch;              /* one chunk, for building new rows */
	struct store_checkpointer *checkpointer; /* STORE_OWNER only */
	struct store_writeback *writeback;       /* STORE_OWNER only */
	int schema_version;            /* as opened (readers may read older ones) */
	int bulk_file;                 /* whole chunks may go to the data file */
	/* the data file (store_slots.c) */
	int data_fd;                   /* -1 until needed */
	uint8_t *slot_buf;             /* one chunk read from a slot */
	int64_t row_slot;              /* the slot blob_seek found a row naming */
	int64_t slot_next;             /* next free slot in this batch; -1: not read */
	int64_t slot_committed;        /* meta.data_slots when the batch began allocating */
	int64_t slot_reuse;            /* free slots above this one may be taken; -1: none left */
	int64_t *taken;                /* free slots the open transaction took */
	size_t taken_n, taken_cap;
	int slots_written;
	char store_id[33];             /* meta.store_id ("" before schema 4) */
	int data_header_ok;            /* meta.data_header = 'ok': the data file has one */
	int64_t wal_gen;               /* WAL generations seen by the owner (store_checkpoint.c) */
	int64_t slots_proven_end;      /* slots freed in a generation below it: no reader sees them */
	int reclaim_due;
	/* The owner's intake log (store_intake.c), or NULL. */
	struct store_intake *intake;
	int batch_direct;              /* the open batch is an SQL transaction */
	uint64_t intake_recovered;     /* records the open applied from the log */
	const char *intake_path;       /* store_open_opts.intake_path and _other, during the open */
	const char *intake_other;
	/* Checksums (schema 9): chunks the open transaction wrote in part
	 * (sqlite3_blob_write), whose sums its commit computes again, once
	 * each (store_chunks.c) */
	int64_t *sum_dirty;
	size_t sum_dirty_n, sum_dirty_cap;
	store_damage_cb damage_cb;     /* store_salvage_damage */
	void *damage_ctx;
	char open_note[256];           /* store_open_note */
	/* Read through the backend's read service (store_remote.c): no
	 * connection of SQLite's (db NULL), the read functions forward. */
	struct store_remote *remote;
	char errmsg[1024];
};

/* Where store_fail() writes: s->errmsg, or on the intake's folder thread
 * the folder's own buffer (the writer's thread owns s->errmsg). */
char *store_errbuf(struct store *s);
/* The calling thread's messages for the store whose s->intake is owner go
 * to buf from now on ({NULL, NULL}: to s->errmsg); returns the previous. */
struct store_intake;
struct store_errbuf_to {
	const struct store_intake *owner;
	char *buf;
};
struct store_errbuf_to store_errbuf_redirect(struct store_errbuf_to to);
/* Names the calling thread, one of the store's own, and puts it at the
 * lowest priority (store_conn.c says why). */
void store_thread_background(const char *name);
/* Sets s->errmsg (printf-style) and returns code. */
/* Writers: the path still names the database we have open (0), else
 * STORE_EIO with a message.  The writer's thread only (its inotify watch);
 * store_identity_stat() is the same check by stat() alone, for any thread. */
int store_check_identity(struct store *s);
int store_identity_stat(struct store *s);
/* The owner's inotify watch of its database (store_check_identity). */
void store_identity_watch(struct store *s);
/* The owner's mark for readers, beside its lock (store_owner_alive). */
void store_owner_mark(struct store *s);
int store_fail(struct store *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Maps the connection's last SQLite error to a STORE_E* code with a
 * message naming what was being done. */
int store_sqlite_fail(struct store *s, const char *what);
/* Lazily prepared, cached statements. */
sqlite3_stmt *store_stmt(struct store *s, enum store_stmt_id id);
/* Closes the cached blob handle (before COMMIT, DELETE, reads by SELECT). */
void store_blob_release(struct store *s);

/* Checksums (store_conn.c): the XXH3-64 of a chunk's or a packet's bytes
 * as stored (an SQLite integer), and the SQL function xxh3(blob) that
 * computes the same on the connection. */
int64_t store_sum(const void *data, size_t len);
int store_sql_functions(struct store *s);

/* The data file itself (store_data_file.c): meta.store_id and
 * meta.data_header into s; its path (0, or -1 when too long); opening it
 * (create: a writer's first slot), checking its header; an I/O failure on
 * it as the store's error (a full disk said as such); the owner's open. */
int store_data_file_read_identity(struct store *s);
int store_data_file_path(const struct store *s, char *buf, size_t len);
int store_data_file_open(struct store *s, int create);
int store_slot_io_fail(struct store *s, const char *what, int err);

/* The owner's write-behind of the data file (store_writeback.c): once the
 * slots written since the last hand-over span this much, their writeback
 * is started, and the range before is waited for and dropped from the
 * page cache. */
#define STORE_WRITEBACK_BYTES ((off_t)4 << 20)
int store_writeback_start(struct store *s);
void store_writeback_stop(struct store *s);
void store_writeback_note(struct store *s, off_t off, off_t len);

/* The -wal read as SQLite's recovery reads it (store_wal.c). */
struct store_wal_report {
	int64_t bytes;         /* the file's size (0: none) */
	int64_t frames;        /* whole frames in it */
	uint32_t page_size;
	int header_bad;        /* its header fails its checksum (or is not a WAL's) */
	int64_t kept;          /* frames recovery keeps (to the last commit among them) */
	int64_t kept_commits;
	int64_t recovered;     /* the last frame recovery replays */
	int64_t first_bad;     /* the frame where recovery stops (1-based), 0: none */
	int64_t sound_after;   /* sound frames of the same generation after it */
	int64_t commits_after; /* commits among them: what recovery drops */
	int damaged;           /* commits_after > 0: silent loss */
	int stale;             /* damaged: 1 every page they hold is the database's already, 0 not, -1 unknown */
};
/* Reads <db_path>-wal into r (all zeros when there is none); 0, or -1
 * when it cannot be read. */
int store_wal_scan(const char *db_path, struct store_wal_report *r);
/* What a damaged r means, and the fix, in one line into out. */
void store_wal_describe(const char *db_path, const struct store_wal_report *r, char *out, size_t len);

/* The owner's background WAL checkpointer (store_checkpoint.c). */
int store_checkpointer_start(struct store *s);
void store_checkpointer_stop(struct store *s);
/* freed slots were freed: ask the checkpointer for the WAL restarts they
 * wait for (store_checkpoint.c). */
void store_checkpointer_want_restarts(struct store *s, int64_t freed);
/* Every slot waiting was given back other than by the WAL's generations
 * (store_give_back's proof). */
void store_checkpointer_given_back(struct store *s);
/* Runs a cached one-step statement (BEGIN, COMMIT); SQLite result code. */
int store_exec_stmt(struct store *s, enum store_stmt_id id);

/* Schema: applies forward migrations up to STORE_SCHEMA_VERSION. */
int store_schema_migrate(struct store *s);
/* 0 if the open database is usable at STORE_SCHEMA_VERSION by this mode. */
int store_schema_check(struct store *s, int *version);
/* 1: a profile-backend owns the store now; 0: none does; -1: unknown. */
int store_owner_alive(struct store *s);
/* This process's read-only descriptor of the database file at path, never
 * closed (store_conn.c says why), or -1. */
int store_raw_fd(const char *path);
/* The directory holding the file at path, into dir (cap bytes): 0, or -1
 * if it does not fit. */
int store_dir_of(const char *path, char *dir, size_t cap);
/* The mode of the store's files: 0600, whatever the directory (store_conn.c
 * says why). */
mode_t store_file_mode(const char *path);

/*
 * The read service's client (store_remote.c): a store whose s->remote is
 * set has no SQLite connection; each read function of the store calls its
 * store_remote_* twin first thing, and everything else is refused
 * (store_remote_refuse: STORE_EPERM, "needs root: ...") by store_need_sql
 * and the batch's begin.
 */
struct stat;
int store_remote_open(struct store *s, const char *sock, const struct stat *st);
void store_remote_close(struct store *s);
int store_remote_refuse(struct store *s);
int store_remote_get_run(struct store *s, int64_t run_id, struct store_run *out);
int store_remote_latest_run(struct store *s, int64_t *run_id);
int store_remote_count_runs(struct store *s, int64_t counts[3]);
int store_remote_activity(struct store *s, struct store_activity **out, size_t *n);
int store_remote_list_runs(struct store *s, const struct store_run_filter *f, store_run_cb cb, void *ctx);
int store_remote_list_devices(struct store *s, int64_t run_id, store_device_cb cb, void *ctx);
int store_remote_find_device(struct store *s, int64_t run_id, const char *vdev_or_role,
                             struct store_device_info *out);
void store_remote_damage_fill(struct store *s, struct store_damage *d);
int store_remote_read_range(struct store *s, int64_t device_id, uint64_t byte_off, uint64_t len,
                            store_range_cb cb, void *ctx);
int store_remote_trace_packets(struct store *s, int64_t device_id, uint64_t from_seq, store_trace_cb cb,
                               void *ctx);
int store_remote_space(struct store *s, struct store_space *out);
int store_remote_runs_space(struct store *s, int64_t limit, struct store_run_space **out, size_t *n);

/* Transactions of the writer's connection, whoever runs them: begin
 * (checking that the path still names our database; _unchecked for the
 * folder, which folds what was acknowledged whatever happened to the
 * path), commit (the data file's slots first), roll back. */
int store_txn_begin(struct store *s);
int store_txn_begin_unchecked(struct store *s);
int store_txn_commit(struct store *s);
void store_txn_rollback(struct store *s);
/* Writes the data of segments (runs of adjacent ones together) into the
 * open transaction: no checks, no counting (the batch did both). */
int store_apply_writes(struct store *s, int64_t device_id, const struct store_segment *segs, unsigned n);
/* Writes a device row as info has it; *changed = 0 when the row is gone. */
int store_device_row_write(struct store *s, const struct store_device_info *info, int *changed);
/* Removes every chunk of a device (its row is gone), slots freed. */
int store_device_data_drop(struct store *s, int64_t device_id);
/* Removes the chunk rows [lo, hi] of one device, their slots freed; what:
 * the doing a failure's message names. */
int store_chunks_drop(struct store *s, int64_t lo, int64_t hi, const char *what);
/* Checksums of the writer (store_chunks.c): the sums of the chunks the
 * open transaction wrote in part, before its COMMIT; and, once, those of
 * a store migrated from before schema 9 (meta.sums = 'pending'), inside
 * the caller's transaction (*chunks, *packets: how many were computed). */
int store_sums_flush(struct store *s);
int store_sums_backfill(struct store *s, int64_t *chunks, int64_t *packets);
/* Writes len bytes at byte offset off of a device; data == NULL writes
 * zeros.  With create == 0 a missing chunk is left missing and a short one
 * is not extended (zeros there already read as zeros). */
int store_chunk_write(struct store *s, int64_t dev, uint64_t off, const uint8_t *data, size_t len, int create);
/* Reads len bytes at byte offset off; holes read as zeros. */
int store_chunk_read(struct store *s, int64_t dev, uint64_t off, uint8_t *buf, size_t len);
/* Marks the handles of a device whose row is gone: writes are refused. */
void store_device_mark_gone(struct store *s, int64_t device_id);
/* With an intake log: before SQL outside a batch, waits until everything
 * acknowledged is folded and keeps the folder off the connection until
 * the next batch is appended (0, or the fold's error).  Without: 0. */
int store_quiet(struct store *s);
/* Before SQL inside a batch: a batch still in memory becomes an SQL
 * transaction (store_intake_replay); 0 when it already is one. */
int store_promote(struct store *s);
/* A batch that is an SQL transaction from its start (the store's own
 * functions that need SQL in a batch of their own). */
int store_batch_begin_sql(struct store *s);
/* At the top of every function that runs SQL on a connection that may
 * have an intake log: inside a batch it becomes SQL, outside the folder
 * is drained and held.  Readers and plain writers: nothing. */
int store_need_sql(struct store *s);
/* store_need_sql, returning its error from the function. */
#define STORE_NEED_SQL(s)                                                                                      \
	do {                                                                                                   \
		int need_sql_rc = store_need_sql(s);                                                           \
		if (need_sql_rc)                                                                                \
			return need_sql_rc;                                                                    \
	} while (0)

/* The catalogue's helpers that store_devices.c shares (store_catalog.c):
 * a role by its stored name (raw for any other), and a row's text copied
 * into a fixed buffer, cut to len - 1 bytes. */
enum store_role store_role_parse(const char *s);
void store_copy_text(char *dst, size_t len, const unsigned char *src);

/* The run and vdev of d->device_id into d (store_data.c). */
void store_damage_fill(struct store *s, struct store_damage *d);

/* Binds a device row's counters and status (write_requests through
 * status_updated_us, 13 columns in the table's order) from info, to the
 * parameters from number first on: the one place that spells them. */
void store_device_bind_counters(sqlite3_stmt *st, int first, const struct store_device_info *info);
/* Binds ST_DEVICE_UPDATE's parameters from info. */
void store_device_bind_update(sqlite3_stmt *st, const struct store_device_info *info);
/* Writes the open batch's device counters to their rows (before COMMIT,
 * and before SQL that reads them). */
int store_flush_device_rows(struct store *s);
/* Loads a device row into info. */
int store_device_load(struct store *s, int64_t device_id, struct store_device_info *info);

/* The data file (store_slots.c). */
struct iovec;
/* Stores one whole chunk in a fresh slot (iov: 64 KiB in all) and points
 * its row at it; the chunk's previous slot, if any, is freed. */
int store_slot_write(struct store *s, int64_t key, const struct iovec *iov, int iovcnt);
/* The slot a row names, or -1. */
int store_slot_of(struct store *s, int64_t key, int64_t *slot);
int store_slot_read(struct store *s, int64_t key, int64_t slot, size_t in, void *buf, size_t len);
/* The whole chunk in a slot, in a buffer valid until the next call. */
int store_slot_chunk(struct store *s, int64_t key, int64_t slot, const uint8_t **out);
/* A row stops naming slot (inside the batch that changes the row). */
int store_slot_release(struct store *s, int64_t slot);
/* Before rows [key_lo, key_hi] are deleted: their slots are freed. */
int store_slots_free_range(struct store *s, int64_t key_lo, int64_t key_hi);
int store_slots_before_commit(struct store *s);
void store_slots_after_batch(struct store *s);
int store_slots_sync(struct store *s);
int store_slots_reclaim(struct store *s);
/* Inside a write transaction: the n slots listed, those still waiting,
 * become free and are punched (*freed counts them), for a caller that
 * knows no reader can see them (store_space.c); free slots at the end of
 * the file are cut off (*cut counts them). */
int store_slots_free(struct store *s, const int64_t *slots, size_t n, int64_t *freed);
int store_slots_trim(struct store *s, int64_t *cut);
/* Opens the existing data file (store_space.c punches its freed slots). */
int store_slots_open_data(struct store *s);
int store_data_file_owner_open(struct store *s);
void store_slots_close(struct store *s);
int store_slots_check(struct store *s, char *report, size_t len, size_t *used);

#endif
