/*
 * store_space.c - the store's disk space: giving back what deleted runs
 * held (store_reclaim) and saying where the space goes (store_space,
 * store_runs_space).  See store.h.
 *
 * Why a non-owner may punch holes here: store_slots.c gives a freed
 * slot back only once no reader can still see a row naming it, which
 * the owner learns by counting WAL restarts.  A writer that is not the
 * owner (profdb delete) learns the same from one passive checkpoint that
 * copied every frame of the WAL: SQLite copies no frame past the oldest
 * reader's snapshot, and none at all while a reader reads the database
 * file alone, so a whole copy means every reader started after the
 * delete committed.  A slot freed so is free for the owner to reuse
 * (store_slots.c, invariant 2), and marked so in the same transaction
 * that punches it, under the write lock: no batch takes it meanwhile.
 * A passive checkpoint takes no lock a writer waits for: the backend's
 * guests never wait for it.
 *
 * The owner uses the same proof when its guests are quiet
 * (store_give_back): inside its batches slots come back by the WAL's
 * generations, which advance only while it commits, so what a guest
 * freed last, or what waited when the backend stopped, would otherwise
 * stay held until the next write.
 *
 * Also the store's files: their names, their removal and their usage.
 * Layer 5 (store_internal.h).  May call: store_data.c (batches),
 * store_slots.c, store_checkpoint.c (what the owner gave back no longer
 * waits), store_conn.c, store_remote.c (a store read through the
 * backend), util/grow.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"
#include "util/grow.h"

static int64_t query_int(struct store *s, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return INT64_MIN;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		v = INT64_MIN;
	sqlite3_finalize(st);
	return v;
}

/* Has every reader moved past everything committed so far? */
static int wal_all_copied(struct store *s)
{
	int nlog = -1, nckpt = -1;
	int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt);
	return rc == SQLITE_OK && nlog >= 0 && nlog == nckpt;
}

#define WAITING_SLOTS "SELECT count(*) FROM dead_slots WHERE freed_gen != -2"
#define PROOF_MAX 65536 /* slots one proof frees (512 KiB of ids); the rest next time */

/* The slots waiting now, lowest first (at most PROOF_MAX).  Listed before
 * the proof: a slot another writer frees between the proof and our batch
 * (profdb delete beside the backend) may still be seen by a reader that
 * started before that commit, so only slots freed before the proof began
 * are freed by it; and should another connection commit anything in
 * between (PRAGMA data_version), the round is dropped, so that a listed
 * slot cannot have been taken and freed again meanwhile. */
static int waiting_slots(struct store *s, int64_t **out, size_t *n)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT slot FROM dead_slots WHERE freed_gen != -2 ORDER BY slot LIMIT ?1", -1,
	                       &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "listing freed data slots");
	sqlite3_bind_int64(st, 1, PROOF_MAX);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (GROW_FROM(*out, cap, *n + 1, 256) != 0) {
			sqlite3_finalize(st);
			free(*out);
			*out = NULL;
			return store_fail(s, STORE_ENOMEM, "out of memory listing freed data slots");
		}
		(*out)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		return store_sqlite_fail(s, "listing freed data slots");
	}
	return 0;
}

/* One try: the slots waiting now are given back if a checkpoint proves no
 * reader can see them (wal_all_copied), and the free end of the data file
 * is cut off.  *proven: the proof held (or nothing waited). */
static int give_back_proven(struct store *s, int64_t *punched, int *proven)
{
	int64_t *slots, cut = 0;
	size_t n;
	int rc;

	*proven = 0;
	int64_t version = query_int(s, "PRAGMA data_version", INT64_MIN);
	if ((rc = waiting_slots(s, &slots, &n)))
		return rc;
	if (n == 0 || version == INT64_MIN || !wal_all_copied(s)) {
		*proven = n == 0;
		free(slots);
		return 0;
	}
	if (!(rc = store_batch_begin_sql(s))) {
		if (query_int(s, "PRAGMA data_version", INT64_MIN) != version)
			store_batch_abort(s); /* another commit came between: next time */
		else if ((rc = store_slots_free(s, slots, n, punched)) || (rc = store_slots_trim(s, &cut)))
			store_batch_abort(s);
		else if (!(rc = store_batch_commit(s))) {
			*proven = 1;
			if (n < PROOF_MAX) /* every slot waiting was listed */
				store_checkpointer_given_back(s);
		}
	}
	free(slots);
	return rc;
}

int store_reclaim(struct store *s, int wait_ms, struct store_reclaim *out)
{
	int rc;
	STORE_NEED_SQL(s);

	memset(out, 0, sizeof(*out));
	if (s->mode == STORE_READ)
		return store_fail(s, STORE_EREADONLY, "the store was opened read-only");
	out->page_size = query_int(s, "PRAGMA page_size", 0);
	int64_t before = query_int(s, "PRAGMA page_count", 0);
	/* the store is created with auto_vacuum = INCREMENTAL (store_open.c):
	 * free pages stay in the file until this gives them back */
	if ((rc = store_batch_begin(s)))
		return rc;
	if (sqlite3_exec(s->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL) != SQLITE_OK) {
		rc = store_sqlite_fail(s, "giving free database pages back");
		store_batch_abort(s);
		return rc;
	}
	if ((rc = store_batch_commit(s)))
		return rc;
	int64_t after = query_int(s, "PRAGMA page_count", 0);
	out->db_pages_freed = before > after ? before - after : 0;

	for (int waited = 0;; waited += 50) {
		int proven;
		if ((rc = give_back_proven(s, &out->slots_punched, &proven)))
			return rc;
		if (query_int(s, WAITING_SLOTS, 0) == 0 || waited >= wait_ms)
			break;
		if (!proven)
			nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
	}
	int64_t waiting = query_int(s, WAITING_SLOTS, 0);
	out->slots_waiting = waiting > 0 ? waiting : 0;
	return 0;
}

int store_give_back(struct store *s, int64_t *waiting)
{
	int rc;
	STORE_NEED_SQL(s);

	*waiting = 0;
	if (s->mode == STORE_READ)
		return store_fail(s, STORE_EREADONLY, "the store was opened read-only");
	if (s->in_batch)
		return store_fail(s, STORE_EINVAL, "a batch is open");
	/* A reader behind the newest commit: they wait (the caller asks again). */
	int64_t punched = 0;
	int proven;
	if ((rc = give_back_proven(s, &punched, &proven)))
		return rc;
	int64_t n = query_int(s, WAITING_SLOTS, 0);
	if (n == INT64_MIN)
		return store_sqlite_fail(s, "counting freed data slots");
	*waiting = n > 0 ? n : 0;
	return 0;
}

static void file_space(const char *path, const char *suffix, struct store_file_space *f)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	if (stat(p, &st) != 0) {
		f->apparent = -1;
		f->allocated = 0;
		return;
	}
	f->apparent = (int64_t)st.st_size;
	f->allocated = (int64_t)st.st_blocks * 512;
}

int store_space(struct store *s, struct store_space *out)
{
	if (s->remote)
		return store_remote_space(s, out);
	STORE_NEED_SQL(s);
	memset(out, 0, sizeof(*out));
	file_space(s->path, "", &out->db);
	file_space(s->path, "-wal", &out->wal);
	file_space(s->path, "-data", &out->data);
	out->page_size = query_int(s, "PRAGMA page_size", 0);
	out->page_count = query_int(s, "PRAGMA page_count", 0);
	out->free_pages = query_int(s, "PRAGMA freelist_count", 0);
	out->data_slots = query_int(s, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'data_slots'", 0);
	out->slots_in_use = query_int(s, "SELECT count(slot) FROM chunks", 0);
	out->slots_freed = query_int(s, WAITING_SLOTS, 0);
	if (out->page_size == INT64_MIN || out->page_count == INT64_MIN || out->free_pages == INT64_MIN ||
	    out->data_slots == INT64_MIN || out->slots_in_use == INT64_MIN || out->slots_freed == INT64_MIN)
		return store_sqlite_fail(s, "measuring the store");
	return 0;
}

int store_runs_space(struct store *s, int64_t limit, struct store_run_space **out, size_t *n)
{
	if (s->remote)
		return store_remote_runs_space(s, limit, out, n);
	STORE_NEED_SQL(s);
	/* chunks of a device are the keys device_id << 32 | chunk: one range
	 * scan of the primary key per device */
	static const char sql[] =
		"SELECT d.run_id, coalesce(sum(length(c.data)), 0), "
		"       coalesce(sum(c.slot IS NOT NULL), 0) * ?2 AS slots, "
		"       coalesce(sum(length(c.data)), 0) + coalesce(sum(c.slot IS NOT NULL), 0) * ?2 AS total "
		"FROM runs r JOIN devices d ON d.run_id = r.run_id "
		"LEFT JOIN chunks c ON c.key BETWEEN d.device_id * 4294967296 "
		"                            AND d.device_id * 4294967296 + 4294967295 "
		"GROUP BY d.run_id ORDER BY total DESC, d.run_id LIMIT ?1";
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "measuring the runs");
	sqlite3_bind_int64(st, 1, limit > 0 ? limit : -1);
	sqlite3_bind_int64(st, 2, (int64_t)STORE_CHUNK_BYTES);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (GROW(*out, cap, *n + 1) != 0) {
			sqlite3_finalize(st);
			return store_fail(s, STORE_ENOMEM, "out of memory measuring the runs");
		}
		(*out)[*n] = (struct store_run_space){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
		                                      sqlite3_column_int64(st, 2)};
		(*n)++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store_sqlite_fail(s, "measuring the runs");
}

/* ---- the store's files ------------------------------------------------------------------ */

const char *const store_file_suffixes[] = {"", "-wal", "-shm", "-data", "-intake", NULL};

void store_remove_files(const char *path)
{
	char p[PATH_MAX + 8];
	for (int i = 0; store_file_suffixes[i]; i++) {
		snprintf(p, sizeof(p), "%s%s", path, store_file_suffixes[i]);
		unlink(p);
	}
	/* A rollback journal exists only while a schema upgrade runs (or
	 * after one was interrupted), but one left behind would be played
	 * back into the next file at this path. */
	snprintf(p, sizeof(p), "%s-journal", path);
	unlink(p);
}

int64_t store_files_usage(const char *path)
{
	char p[PATH_MAX + 8];
	int64_t total = 0;

	for (int i = 0; store_file_suffixes[i]; i++) {
		struct stat st;
		if (!strcmp(store_file_suffixes[i], "-shm") || !strcmp(store_file_suffixes[i], "-intake"))
			continue; /* a few pages of shared memory; the intake log's fixed ring */
		snprintf(p, sizeof(p), "%s%s", path, store_file_suffixes[i]);
		if (stat(p, &st) == 0)
			total += (int64_t)st.st_blocks * 512;
		else if (i == 0)
			return -1;
	}
	return total;
}

int64_t store_disk_usage(struct store *s)
{
	return store_files_usage(s->path);
}

int64_t store_memory_used(void)
{
	return (int64_t)sqlite3_memory_used();
}
