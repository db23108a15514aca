/*
 * store_internal.h - what the store's own modules share: the connection
 * object, device handles, the chunk layout and error plumbing.  Not for
 * users of the store.
 */
#ifndef PROFSVC_STORE_INTERNAL_H
#define PROFSVC_STORE_INTERNAL_H

#include <sqlite3.h>

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
#define STORE_CHUNK_SECTORS 128u
#define STORE_CHUNK_BYTES (STORE_CHUNK_SECTORS * STORE_SECTOR_SIZE)
#define STORE_CHUNK_SHIFT 32
#define STORE_MAX_DEVICE_ID ((int64_t)INT32_MAX)

static inline int64_t store_chunk_key(int64_t device_id, uint64_t chunk)
{
	return (int64_t)(((uint64_t)device_id << STORE_CHUNK_SHIFT) | chunk);
}

enum store_stmt_id {
	ST_CHUNK_INSERT,
	ST_CHUNK_UPDATE,
	ST_CHUNK_DELETE_RANGE,
	ST_CHUNK_SELECT_RANGE,
	ST_DEVICE_UPDATE,
	ST_DEVICE_SELECT,
	ST_BEGIN,
	ST_COMMIT,
	ST__COUNT
};

struct store_device {
	struct store *s;
	struct store_device_info committed; /* as in the database */
	struct store_device_info pending;   /* committed + the open batch */
	int dirty;                          /* pending differs: on dirty list */
	struct store_device *next_dirty;
	struct store_device *prev, *next;   /* all handles of the store */
};

struct store {
	sqlite3 *db;
	char *path;
	enum store_open_mode mode;
	enum store_durability durability;
	int lock_fd;          /* STORE_OWNER: flock()ed <path>.lock */
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
	char errmsg[512];
};

/* Sets s->errmsg (printf-style) and returns code. */
int store_fail(struct store *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Maps the connection's last SQLite error to a STORE_E* code with a
 * message naming what was being done. */
int store_sqlite_fail(struct store *s, const char *what);
/* Lazily prepared, cached statements. */
sqlite3_stmt *store_stmt(struct store *s, enum store_stmt_id id);
/* Closes the cached blob handle (before COMMIT, DELETE, reads by SELECT). */
void store_blob_release(struct store *s);

/* The owner's background WAL checkpointer (store_checkpoint.c). */
int store_checkpointer_start(struct store *s);
void store_checkpointer_stop(struct store *s);
/* Runs a cached one-step statement (BEGIN, COMMIT); SQLite result code. */
int store_exec_stmt(struct store *s, enum store_stmt_id id);

/* Schema: applies forward migrations up to STORE_SCHEMA_VERSION. */
int store_schema_migrate(struct store *s);
/* 0 if the open database is usable at STORE_SCHEMA_VERSION by this mode. */
int store_schema_check(struct store *s, int *version);

/* Binds ST_DEVICE_UPDATE's parameters from info. */
void store_device_bind_update(sqlite3_stmt *st, const struct store_device_info *info);
/* Writes the open batch's device counters to their rows (before COMMIT,
 * and before SQL that reads them). */
int store_flush_device_rows(struct store *s);
/* Loads a device row into info. */
int store_device_load(struct store *s, int64_t device_id, struct store_device_info *info);

#endif
