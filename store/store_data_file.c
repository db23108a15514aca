/*
 * store_data_file.c - the data file itself, <db>-data beside the
 * database: its path, opening it (root-only, never through a link), the
 * header in slot 0 that names the store it belongs to, and the owner's
 * open, which settles that header with meta.data_header (a schema-3 file
 * gets one: slot 0's chunk moved first), refuses a missing, empty or
 * foreign file while rows name slots, and cuts a failed batch's bytes.
 * The slots inside it: store_slots.c ("Identity" there says why the
 * header exists).
 *
 * Layer 2 (store_internal.h), before store_slots.c.  May call:
 * store_conn.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

int store_data_file_path(const struct store *s, char *buf, size_t len)
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
int store_data_file_open(struct store *s, int create)
{
	char path[4200], other[64];

	if (s->data_fd >= 0)
		return 0;
	if (store_data_file_path(s, path, sizeof(path)) != 0)
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
		 * (store_data_file_owner_open); until then it is read as it is. */
		if (s->data_header_ok)
			return store_fail(s, STORE_ECORRUPT,
			                  "data file %s has no header although this store's data files have "
			                  "one: it is damaged or not this store's; restore it from the same "
			                  "backup as %s",
			                  path, s->path);
		return 0;
	}
}

int store_slot_io_fail(struct store *s, const char *what, int err)
{
	if (err == ENOSPC || err == EDQUOT)
		return store_fail(s, STORE_ENOSPC, "%s: the disk is full (free space under %s)", what,
		                  s->path);
	return store_fail(s, STORE_EIO, "%s: %s", what, strerror(err));
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

int store_data_file_read_identity(struct store *s)
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
			return store_slot_io_fail(s, "moving slot 0 of the data file for its header", errno);
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
		return store_slot_io_fail(s, "syncing the data file", errno);
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

int store_data_file_owner_open(struct store *s)
{
	char path[4200], state[16], other[64];
	struct stat st;
	int64_t slots = 0;
	sqlite3_stmt *q;
	int rc;

	if (store_data_file_path(s, path, sizeof(path)) != 0)
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
	if ((rc = store_data_file_open(s, 0)))
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
		rc = store_slot_io_fail(s, "trimming the data file", errno);
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
