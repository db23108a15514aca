/*
 * store_conn.c - what every other store file uses on an open connection:
 * errors (s->errmsg, and SQLite's codes turned into messages a user can act
 * on), the cache of prepared statements, the cached blob handle, the clock,
 * how the store's own threads run, and the store's identity: whether the
 * path still names the database the writer has open, and the owner's mark
 * that tells readers a backend owns the store.
 * Its own file so that the store's files depend on it, not on the code
 * that opens a store.
 *
 * Layer 1 (store_internal.h): calls no other file of the store; every
 * other one may call it.  May call: util/xxh.h (the chunks' sums), SQLite,
 * libc.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/xxh.h"

#include "store_internal.h"

/*
 * The owner's threads of its own (the intake's folder, the checkpointer,
 * the data file's write-behind) do work that may wait: nothing a guest is
 * told waits for them.  They run at the lowest priority (nice 19, this
 * thread only), so that when one of them holds a core, a guest's round
 * trip (the backend's loop, its commit worker, xensim or the guest itself)
 * takes the core back at once, instead of after the scheduler's slice.
 * On the 2-core bench VM a fold or checkpoint at normal priority put the
 * HaLVM round trip's p99 at 2-3x the page cache's in one round of three
 * (make bench); at nice 19, at most 1.0x.  They still get the cores
 * whenever the guests leave them idle, which a HaLVM guest, one request
 * at a time, always does; and a writer that has to wait for one of them
 * (a full intake ring) sleeps, which gives it the core.
 */
void store_thread_background(const char *name)
{
	pthread_setname_np(pthread_self(), name); /* as top -H and perf show it */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
}

/* Where the folder's thread writes its messages (store_errbuf_redirect). */
static _Thread_local struct store_errbuf_to errbuf_to;

char *store_errbuf(struct store *s)
{
	return errbuf_to.owner == s->intake && errbuf_to.owner ? errbuf_to.buf : s->errmsg;
}

struct store_errbuf_to store_errbuf_redirect(struct store_errbuf_to to)
{
	struct store_errbuf_to was = errbuf_to;
	errbuf_to = to;
	return was;
}

int store_fail(struct store *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(store_errbuf(s), sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	return code;
}

int store_sqlite_fail(struct store *s, const char *what)
{
	int rc = sqlite3_errcode(s->db);
	int sys = sqlite3_system_errno(s->db);
	const char *msg = sqlite3_errmsg(s->db);

	switch (rc & 0xff) {
	case SQLITE_FULL:
		return store_fail(s, STORE_ENOSPC,
		                  "%s: the filesystem holding %s is full; free space and retry", what,
		                  s->path);
	case SQLITE_IOERR:
		if (sys == ENOSPC || sys == EDQUOT)
			return store_fail(s, STORE_ENOSPC,
			                  "%s: no space left for %s (%s); free space and retry", what,
			                  s->path, strerror(sys));
		return store_fail(s, STORE_EIO, "%s: I/O error on %s: %s%s%s", what, s->path, msg,
		                  sys ? ": " : "", sys ? strerror(sys) : "");
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return store_fail(s, STORE_EBUSY, "%s: %s is locked by another process; retry", what,
		                  s->path);
	case SQLITE_READONLY:
		if (s->mode == STORE_READ)
			return store_fail(s, STORE_EPERM,
			                  "%s: cannot read %s without write access to its directory: "
			                  "SQLite keeps its WAL index in %s-shm there and it is missing; "
			                  "run as root (a store shared with a group is root's, 0600, and "
			                  "read through profile-backend)",
			                  what, s->path, s->path);
		return store_fail(s, STORE_EREADONLY,
		                  "%s: %s is read-only (check the file's and its directory's permissions)",
		                  what, s->path);
	case SQLITE_CORRUPT:
		return store_fail(s, STORE_ECORRUPT,
		                  "%s: %s is damaged (%s); run 'profdb check' and restore from a backup",
		                  what, s->path, msg);
	case SQLITE_NOTADB:
		return store_fail(s, STORE_ENOTDB, "%s: %s is not a profsvc database", what, s->path);
	case SQLITE_NOMEM:
		return store_fail(s, STORE_ENOMEM, "%s: out of memory", what);
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return store_fail(s, STORE_EPERM, "%s: permission denied on %s", what, s->path);
	case SQLITE_CANTOPEN:
		return store_fail(s, STORE_EIO, "%s: cannot open %s: %s", what, s->path,
		                  sys ? strerror(sys) : msg);
	default:
		return store_fail(s, STORE_EIO, "%s: %s (SQLite error %d)", what, msg, rc);
	}
}

const char *store_errmsg(const struct store *s)
{
	return s->errmsg;
}

const char *store_path(const struct store *s)
{
	return s->path;
}

int store_schema(const struct store *s)
{
	return s->schema_version;
}

int64_t store_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char *const stmt_sql[ST__COUNT] = {
	[ST_CHUNK_INSERT] = "INSERT INTO chunks(key, data, sum) VALUES (?1, ?2, ?3)",
	[ST_CHUNK_UPDATE] = "UPDATE chunks SET data = ?2, slot = NULL, sum = ?3 WHERE key = ?1",
	[ST_CHUNK_DELETE_RANGE] = "DELETE FROM chunks WHERE key BETWEEN ?1 AND ?2",
	[ST_CHUNK_SELECT_RANGE] = "SELECT key, data, slot, sum FROM chunks WHERE key BETWEEN ?1 AND ?2 "
	                          "ORDER BY key",
	[ST_DEVICE_UPDATE] =
		"UPDATE devices SET write_requests = ?2, write_bytes = ?3, read_requests = ?4, "
		"read_bytes = ?5, flush_requests = ?6, discard_requests = ?7, errors = ?8, "
		"written_end_sector = ?9, status = ?10, file_size = ?11, closed = ?12, "
		"word_size = ?13, status_updated_us = ?14 WHERE device_id = ?1",
	[ST_DEVICE_SELECT] =
		"SELECT device_id, run_id, vdev, devid, role, capacity_sectors, write_requests, "
		"write_bytes, read_requests, read_bytes, flush_requests, discard_requests, errors, "
		"written_end_sector, status, file_size, closed, word_size, status_updated_us "
		"FROM devices WHERE device_id = ?1",
	/* the readers that follow live runs (profdb serve, watch) ask these
	 * on every change of the store: kept prepared */
	[ST_DEVICE_FIND] =
		"SELECT device_id, run_id, vdev, devid, role, capacity_sectors, write_requests, "
		"write_bytes, read_requests, read_bytes, flush_requests, discard_requests, errors, "
		"written_end_sector, status, file_size, closed, word_size, status_updated_us "
		"FROM devices WHERE run_id = ?1 AND (vdev = ?2 OR role = ?2) "
		"ORDER BY vdev = ?2 DESC, device_id LIMIT 1",
	/* a run's stamp: its devices' last status block, or the time its
	 * MirageOS trace's last packet was kept (a trace has no status
	 * block; its last packet by the primary key, not a scan) */
	[ST_RUNNING_ACTIVITY] =
		"SELECT r.run_id, COALESCE(MAX(MAX(COALESCE(d.status_updated_us, 0), COALESCE((SELECT t.kept_us "
		"FROM trace_packets t WHERE t.device_id = d.device_id ORDER BY t.seq DESC LIMIT 1), 0))), 0) "
		"FROM runs r LEFT JOIN devices d ON d.run_id = r.run_id WHERE r.state = 'running' "
		"GROUP BY r.run_id ORDER BY r.run_id",
	/* IMMEDIATE: take the write lock at once, so a commit never has to
	 * upgrade a read lock and fail with SQLITE_BUSY half-way. */
	/* a reader's snapshot: BEGIN is deferred, so the touch starts it now */
	[ST_READ_BEGIN] = "BEGIN",
	[ST_READ_TOUCH] = "SELECT 1 FROM runs LIMIT 1",
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_SLOT_OF] = "SELECT slot FROM chunks WHERE key = ?1",
	[ST_SLOT_UPSERT] = "INSERT INTO chunks(key, data, slot, sum) VALUES (?1, x'', ?2, ?3) "
	                   "ON CONFLICT(key) DO UPDATE SET data = x'', slot = excluded.slot, sum = excluded.sum",
	[ST_DEAD_ADD] = "INSERT OR IGNORE INTO dead_slots(slot, freed_gen) VALUES (?1, ?2)",
	[ST_DEAD_RANGE] = "INSERT OR IGNORE INTO dead_slots(slot, freed_gen) SELECT slot, ?3 FROM chunks "
	                  "WHERE key BETWEEN ?1 AND ?2 AND slot IS NOT NULL",
	/* the lowest free slot above ?1 and below ?2 (the batch's end of the file) */
	[ST_FREE_TAKE] = "DELETE FROM dead_slots WHERE slot = (SELECT slot FROM dead_slots WHERE slot > ?1 "
	                 "AND slot < ?2 AND freed_gen = -2 ORDER BY slot LIMIT 1) RETURNING slot",
	[ST_META_GET_SLOTS] = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'data_slots'",
	[ST_META_SET_SLOTS] = "INSERT INTO meta(key, value) VALUES ('data_slots', ?1) "
	                      "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
	[ST_TRACE_INSERT] = "INSERT INTO trace_packets(device_id, seq, sector, bytes, events, first_ts, "
	                    "last_ts, final, kept_us, sum) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_DEVICE_CAPACITY] = "SELECT capacity_sectors FROM devices WHERE device_id = ?1",
	[ST_META_GET_INTAKE] = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'intake_seq'",
	[ST_META_SET_INTAKE] = "INSERT INTO meta(key, value) VALUES ('intake_seq', ?1) "
	                       "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
	/* a chunk written in part: its sum again, once per transaction */
	[ST_CHUNK_SUM] = "UPDATE chunks SET sum = xxh3(data) WHERE key = ?1 AND slot IS NULL",
	/* store_copy.c: a catalogue mirror copies a million runs' rows at a
	 * start, so these are prepared once, not per row */
	[ST_COPY_RUN_TAKEN] = "SELECT 1 FROM runs WHERE run_id = ?1",
	[ST_COPY_RUN_INSERT] = "INSERT INTO runs(run_id, domid, name, uuid, started_us, ended_us, state, "
	                       "host, backend_version, source, end_reason) "
	                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[ST_COPY_DEVICE_TAKEN] = "SELECT 1 FROM devices WHERE device_id = ?1",
	[ST_COPY_DEVICE_INSERT] =
		"INSERT INTO devices(device_id, run_id, vdev, devid, role, capacity_sectors, "
		"write_requests, write_bytes, read_requests, read_bytes, flush_requests, "
		"discard_requests, errors, written_end_sector, status, file_size, closed, word_size, "
		"status_updated_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
		"?15, ?16, ?17, ?18, ?19)",
};

/* Version-2 stores (read as they are by readers) have no slots, and
 * stores before version 9 no checksums. */
static const char chunk_select_v2[] =
	"SELECT key, data, NULL, NULL FROM chunks WHERE key BETWEEN ?1 AND ?2 ORDER BY key";
static const char chunk_select_v8[] =
	"SELECT key, data, slot, NULL FROM chunks WHERE key BETWEEN ?1 AND ?2 ORDER BY key";

int64_t store_sum(const void *data, size_t len)
{
	return (int64_t)XXH3_64bits(data, len);
}

static void sql_xxh3(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	const void *p = sqlite3_value_blob(argv[0]);
	int n = sqlite3_value_bytes(argv[0]);
	sqlite3_result_int64(ctx, store_sum(p ? p : "", (size_t)n));
}

int store_sql_functions(struct store *s)
{
	if (sqlite3_create_function(s->db, "xxh3", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
	                            NULL, sql_xxh3, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "opening the database");
	return 0;
}

sqlite3_stmt *store_stmt(struct store *s, enum store_stmt_id id)
{
	if (!s->stmt[id]) {
		const char *sql = id != ST_CHUNK_SELECT_RANGE || s->schema_version >= 9 ? stmt_sql[id]
		                  : s->schema_version < 3                               ? chunk_select_v2
		                                                                        : chunk_select_v8;
		if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[id], NULL) !=
		    SQLITE_OK) {
			store_sqlite_fail(s, "preparing a statement");
			return NULL;
		}
	}
	sqlite3_reset(s->stmt[id]);
	sqlite3_clear_bindings(s->stmt[id]);
	return s->stmt[id];
}

int store_exec_stmt(struct store *s, enum store_stmt_id id)
{
	sqlite3_stmt *st = store_stmt(s, id);
	int rc;

	if (!st)
		return SQLITE_ERROR;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

void store_blob_release(struct store *s)
{
	if (s->blob) {
		sqlite3_blob_close(s->blob);
		s->blob = NULL;
	}
}

/* ---- identity: the file the path names, the owner's mark ---------------------------- */

/*
 * A writer keeps its database open for days.  If someone replaces or
 * removes the file meanwhile (mv, restore from backup, rm), SQLite goes on
 * writing into the old inode, which nobody will ever read again: every
 * write acknowledged from then on would be lost.  So each batch first
 * checks that the path still names the file we have open; if not, writes
 * are refused with a message saying what happened and what to do.
 *
 * The check is on every guest request's path, and a stat() of the path
 * cost a microsecond there.  The owner therefore watches the file with
 * inotify (its links, a move, and a move of its directory), and stats the
 * path only when something was reported, once a second whatever happened
 * (a rename further up the tree), and on every batch while the path is not
 * ours.  A rename or unlink queues its event before it returns, so the
 * next batch sees it.
 */
int store_identity_stat(struct store *s)
{
	struct stat st;

	if (!s->have_ident)
		return 0;
	int found = stat(s->path, &st) == 0;
	if (found && st.st_dev == s->db_dev && st.st_ino == s->db_ino)
		return 0;
	return store_fail(s, STORE_EIO,
	                  "database %s was %s while open: writes are refused so that nothing is "
	                  "acknowledged into a file nobody will read; restart the writer "
	                  "(profile-backend stop, then start) to use the file now at that path",
	                  s->path, found ? "replaced" : "removed");
}

static int64_t coarse_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

int store_check_identity(struct store *s)
{
	if (!s->have_ident)
		return 0;
	if (s->ident_fd >= 0 && !s->ident_bad) {
		char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		ssize_t n = read(s->ident_fd, ev, sizeof(ev));
		int64_t now = coarse_us();
		if (n < 0 && errno == EAGAIN && now < s->ident_next_us)
			return 0; /* nothing happened to it */
		while (n > 0) /* what happened is read again by stat() */
			n = read(s->ident_fd, ev, sizeof(ev));
		s->ident_next_us = now + 1000000;
	}
	int rc = store_identity_stat(s);
	s->ident_bad = rc != 0;
	return rc;
}

/* The owner's inotify watch of its database (store_check_identity). */
void store_identity_watch(struct store *s)
{
	char dir[PATH_MAX];

	s->ident_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ident_fd < 0)
		return; /* every batch stats the path */
	snprintf(dir, sizeof(dir), "%s", s->path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (inotify_add_watch(s->ident_fd, s->path, IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF) < 0 ||
	    inotify_add_watch(s->ident_fd, slash && *dir ? dir : "/", IN_MOVE_SELF | IN_DELETE_SELF) < 0) {
		close(s->ident_fd);
		s->ident_fd = -1;
	}
}

/*
 * The owner's mark for readers: beside its flock, the owner holds an
 * open-file-description read lock on one byte of the database file far
 * past anything SQLite locks (its bytes are at 1 GiB) or any store grows
 * to.  A reader asks with F_OFD_GETLK whether that byte could be written
 * (store_owner_alive): a question, not a lock, so a backend starting at
 * that instant is never refused, and the kernel drops the mark whatever
 * kills the owner (kill -9 included); a pid kept in the store could be
 * reused or another boot's.  Not the flock itself: flock has no test but
 * taking it, and reading /proc/locks stalls every file lock on the host
 * while it is read (the kernel takes a global lock for it), the backend's
 * SQLite locks included: readers polling it cost a tracing guest packets.
 * OFD locks belong to the open file, not the process, so SQLite closing
 * its own descriptors never drops the mark.
 */
#define OWNER_MARK_BYTE ((off_t)0x4000000000000000LL)

void store_owner_mark(struct store *s)
{
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = OWNER_MARK_BYTE, .l_len = 1};
	/* Without the mark readers only miss that the backend is down. */
	(void)fcntl(s->lock_fd, F_OFD_SETLK, &fl);
}

int store_owner_alive(struct store *s)
{
	if (s->mode == STORE_OWNER)
		return 1;
	int fd = store_raw_fd(s->path);
	if (fd < 0)
		return -1;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = OWNER_MARK_BYTE, .l_len = 1};
	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return -1;
	return fl.l_type != F_UNLCK;
}

/*
 * Invariant: this process never closes a descriptor of a database file
 * while SQLite may have it open.  Closing ANY descriptor of a file drops
 * every POSIX lock the process holds on it, SQLite's included: the SHARED
 * lock each connection in WAL mode keeps on the database is how another
 * process's writer, closing, learns that it is not the last connection.
 * With those gone it checkpoints and deletes the -wal and -shm under this
 * process's open connections, whose next reads then take a WAL index that
 * is no longer the file's ("database disk image is malformed").  profdb
 * serve, with connections of many requests and streams open at once, did
 * (a store opened for each request looked at the file's header through a
 * descriptor of its own, and closed it).  So our own reads of the file
 * (its header, the owner's mark) go through one read-only descriptor per
 * file (device and inode), opened once per process and kept: a file
 * replaced since is a new inode and gets its own.  At most RAW_FDS files:
 * one removed since gives its place back, else -1 (callers do without).
 */
#define RAW_FDS 64
static struct {
	dev_t dev;
	ino_t ino;
	int fd;
} raw_fds[RAW_FDS];
static int nraw_fds;
static pthread_mutex_t raw_fds_mu = PTHREAD_MUTEX_INITIALIZER;

int store_raw_fd(const char *path)
{
	struct stat st;
	int fd = -1;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	pthread_mutex_lock(&raw_fds_mu);
	for (int i = 0; i < nraw_fds; i++)
		if (raw_fds[i].dev == st.st_dev && raw_fds[i].ino == st.st_ino) {
			fd = raw_fds[i].fd;
			break;
		}
	if (fd < 0 && nraw_fds == RAW_FDS) {
		/* Full: a file removed since (no name left: nothing can open it
		 * again, and a writer that still has it open shares no lock
		 * with a file now at its name) gives its place back. */
		for (int i = 0; i < nraw_fds; i++) {
			struct stat old;
			if (fstat(raw_fds[i].fd, &old) == 0 && old.st_nlink == 0) {
				close(raw_fds[i].fd);
				raw_fds[i] = raw_fds[--nraw_fds];
				break;
			}
		}
	}
	if (fd < 0 && nraw_fds < RAW_FDS) {
		struct stat got;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		/* Kept only if it is the file looked up (not one that replaced
		 * it meanwhile); a file we may not keep is not looked at (a
		 * descriptor of it closed here could drop SQLite's locks). */
		if (fd >= 0 && fstat(fd, &got) == 0 && got.st_dev == st.st_dev && got.st_ino == st.st_ino)
		{
			raw_fds[nraw_fds].dev = st.st_dev;
			raw_fds[nraw_fds].ino = st.st_ino;
			raw_fds[nraw_fds++].fd = fd;
		}
		else if (fd >= 0)
			fd = -1; /* leaked, not closed: see above (a race with a rename; rare) */
	}
	pthread_mutex_unlock(&raw_fds_mu);
	return fd;
}

/*
 * The store's files are their owner's alone, 0600, whatever their
 * directory (store_file_mode).  Read access to a live SQLite WAL store is
 * lock access: a read-only descriptor of the -shm may take SQLite's WAL
 * write lock (byte 120), one of the database its locks or an flock, and a
 * member of the store's group holding one (when they were 0640 for the
 * group's readers) stalled a 16 MB guest stream from 0.29 s to 39.6 s,
 * then failed its writes.  A directory shared with a group (2750
 * root:profsvc, systemd/profsvc.conf) still lets its members traverse it
 * and watch it (store_watch.c watches the directory, never opens the
 * files); they read the store through the backend's read service
 * (store_remote.c).
 */
int store_dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return snprintf(dir, cap, ".") < (int)cap ? 0 : -1;
	if ((size_t)(slash - path) >= cap)
		return -1;
	snprintf(dir, cap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	return 0;
}

mode_t store_file_mode(const char *path)
{
	(void)path;
	return 0600;
}
