/*
 * store_open.c - opening and closing a store: file creation with root-only
 * permissions, one real path, the single-owner lock, connection pragmas,
 * schema checks.  (The checks of an open store: store_check.c.)
 *
 * Layer 7 (store_internal.h), the assembly: the one place that opens the
 * layers below and wires them together (the owner's lock, the schema, the
 * data file, the checkpointer, the write-behind, the intake log), and
 * closes them.  May call: any file of the store (store/), util/private_dir;
 * none calls it.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "store_intake.h"
#include "store_internal.h"
#include "util/private_dir.h"

static int exec_sql(struct store *s, const char *sql, const char *what)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, what);
	return 0;
}

/* Creates the database file (and its directory) root-only before SQLite
 * does, so it never exists with the process umask's permissions. */
static int create_db_file(struct store *s)
{
	char dir[PATH_MAX];
	struct stat st;
	int fd;

	if (stat(s->path, &st) == 0)
		return 0;
	if (strlen(s->path) >= sizeof(dir))
		return store_fail(s, STORE_EINVAL, "database path too long: %s", s->path);
	strcpy(dir, s->path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (stat(dir, &st) != 0) {
			/* Only the last component: we do not invent directory trees. */
			if (mkdir(dir, 0700) != 0)
				return store_fail(s, errno == EACCES ? STORE_EPERM : STORE_EIO,
				                  "cannot create directory %s for the database: %s", dir,
				                  strerror(errno));
		}
	}
	fd = open(s->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, store_file_mode(s->path));
	if (fd < 0 && errno != EEXIST)
		return store_fail(s, errno == EACCES ? STORE_EPERM : STORE_EIO,
		                  "cannot create database %s: %s", s->path, strerror(errno));
	if (fd >= 0) {
		(void)fchmod(fd, store_file_mode(s->path)); /* whatever the umask */
		close(fd);
	}
	return 0;
}

/*
 * One path for every file of the store.  SQLite resolves symbolic links
 * itself (its -wal and -shm follow the target), so the store does too:
 * with --db a link, the data file was once put beside the link while the
 * WAL went beside the target, and a restore of one without the other
 * split the store.
 */
static int resolve_path(struct store *s)
{
	char real[PATH_MAX];

	if (!realpath(s->path, real))
		return store_fail(s, errno == EACCES ? STORE_EPERM : STORE_EIO, "cannot resolve %s: %s",
		                  s->path, strerror(errno));
	char *copy = strdup(real);
	if (!copy)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	free(s->path);
	s->path = copy;
	return 0;
}

/*
 * A writer runs as root and creates files beside the database (-wal,
 * -shm, -data).  In a directory another user can write, that user could
 * put a link there first, to any file, and root would write through it;
 * so a writer refuses such a directory instead.
 */
static int check_private_dir(struct store *s)
{
	char dir[PATH_MAX], why[sizeof(s->errmsg)];

	snprintf(dir, sizeof(dir), "%s", s->path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (private_dir_check(dir, "the database's directory", why, sizeof(why)) != 0)
		return store_fail(s, STORE_EPERM, "%s", why);
	return 0;
}

/* Who holds the flock on the file st describes, from /proc/locks (0:
 * nobody, or unknown). */
static long flock_holder_of(const struct stat *st)
{
	char line[256];
	long who = 0;

	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!who && fgets(line, sizeof(line), f)) {
		char kind[16];
		long pid;
		unsigned maj, min;
		unsigned long long ino;
		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &maj, &min, &ino) != 5)
			continue;
		if (strcmp(kind, "FLOCK") == 0 && maj == major(st->st_dev) && min == minor(st->st_dev) &&
		    ino == (unsigned long long)st->st_ino)
			who = pid;
	}
	fclose(f);
	return who;
}

static long flock_holder(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? flock_holder_of(&st) : 0;
}

/*
 * The owner lock: an flock on the database file itself, so that it is one
 * lock per store whatever name the store is reached by (two hard links
 * once made two owners, two WALs and two data files, and a fully
 * acknowledged run was lost).  The descriptor stays open until
 * store_close, after SQLite's own: closing any descriptor of the file
 * would drop the POSIX locks SQLite holds on it (they are per process, per
 * file).  flock and POSIX locks do not interact on local filesystems.
 */
static int take_owner_lock(struct store *s)
{
	s->lock_fd = open(s->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (s->lock_fd < 0)
		return store_fail(s, errno == EACCES ? STORE_EPERM : STORE_EIO, "cannot open %s: %s",
		                  s->path, strerror(errno));
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		long pid = flock_holder(s->lock_fd);
		char who[32] = "unknown";
		if (pid > 0)
			snprintf(who, sizeof(who), "%ld", pid);
		return store_fail(s, STORE_ELOCKED,
		                  "database %s is already owned by another writer (pid %s); only one "
		                  "profile-backend may write a database: stop it or use another --db",
		                  s->path, who);
	}
	store_owner_mark(s);
	return 0;
}

/*
 * Waiting for the write lock: SQLite's own busy handler sleeps 1, 2, 5,
 * 10 ... 100 ms between tries, so a writer that commits in a loop (an
 * import) takes the lock again and again while the backend sleeps, and
 * live guests waited as long as the whole import.  Polling every 200 us
 * instead finds each gap between two of its transactions.
 */
static int busy_wait(void *ctx, int tries)
{
	struct store *s = ctx;
	if ((int64_t)tries * 200 >= (int64_t)s->busy_ms * 1000)
		return 0;
	usleep(200);
	return 1;
}

/* Settings that write nothing: safe before we know whose file this is. */

static int configure_reader(struct store *s, int busy_ms, int follows_growth)
{
	int rc;

	sqlite3_extended_result_codes(s->db, 1);
	s->busy_ms = busy_ms;
	sqlite3_busy_handler(s->db, busy_wait, s);
	/* Reads of exported data go through mmap: no syscall per page (but
	 * not for a connection that lives while the file grows). */
	if ((rc = exec_sql(s, follows_growth ? "PRAGMA mmap_size = 0" : "PRAGMA mmap_size = 268435456",
	                   "configuring the database")))
		return rc;
	if ((rc = exec_sql(s, "PRAGMA foreign_keys = ON", "configuring the database")))
		return rc;
	if (s->mode == STORE_READ)
		return exec_sql(s, "PRAGMA query_only = ON", "configuring the database");
	return 0;
}

/*
 * SQLite treats a file shorter than one page as an empty database: a
 * writer would then create a new store over what is left of a truncated
 * one (tests/fuzz/fuzz_store_open: a 109-byte header became a fresh page
 * 1).  A non-empty file must hold the SQLite header and at least the one
 * page its header names; anything shorter is damaged, and left alone.
 */
static int check_not_truncated(struct store *s)
{
	uint8_t h[100];
	struct stat st;
	/* Not a descriptor of our own, closed after: that would drop the
	 * locks SQLite holds on the file in this process (store_raw_fd). */
	int fd = store_raw_fd(s->path);

	if (fd < 0)
		return 0; /* SQLite will say why */
	ssize_t n = fstat(fd, &st) == 0 && st.st_size > 0 ? pread(fd, h, sizeof(h), 0) : 0;
	if (n <= 0)
		return 0; /* empty: a new database */
	if (n < (ssize_t)sizeof(h) || memcmp(h, "SQLite format 3", 16) != 0)
		return store_fail(s, STORE_ENOTDB,
		                  "%s is not a profsvc database (not even an SQLite file): refusing to "
		                  "touch it",
		                  s->path);
	uint32_t page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	if ((uint64_t)st.st_size < page)
		return store_fail(s, STORE_ECORRUPT,
		                  "database %s is %lld bytes, less than the %u-byte page its header "
		                  "names: truncated; restore it from a backup (it was left as it is)",
		                  s->path, (long long)st.st_size, page);
	return 0;
}

/* A database with no tables at all: one we are about to create. */
static int no_tables(struct store *s)
{
	sqlite3_stmt *st;
	int empty = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL) == SQLITE_OK) {
		empty = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0;
		sqlite3_finalize(st);
	}
	return empty;
}

/* Writer settings; these write to the file, so only once it is known to be
 * ours (or empty). */
static int configure_writer(struct store *s, int version)
{
	char sql[256];

	/*
	 * auto_vacuum first, and only on a new database: it only takes on a
	 * database with no pages yet.  On an existing one it is not a no-op:
	 * it rewrites the header's vacuum field if that differs, a committed
	 * write before we know whether the file is sound
	 * (tests/fuzz/fuzz_store_open found it).
	 * synchronous: NORMAL never corrupts the database on power loss and
	 * keeps every commit once the process is gone (the data is in the OS);
	 * FULL additionally fsyncs the WAL before a commit returns, which is
	 * what --durability power promises.
	 * Memory: a writer reads little (the pages it is about to rewrite), so
	 * no mmap (mapped pages of a growing database count against the
	 * daemon) and a 4 MiB page cache; readers keep mmap for export speed.
	 */
	snprintf(sql, sizeof(sql), "%sPRAGMA synchronous = %s; PRAGMA temp_store = MEMORY; "
	         "PRAGMA cache_size = -4096; PRAGMA mmap_size = 0",
	         version == 0 && s->empty_file && no_tables(s) ? "PRAGMA auto_vacuum = INCREMENTAL; " : "",
	         s->durability == STORE_DURABLE_POWER ? "FULL" : "NORMAL");
	return exec_sql(s, sql, "configuring the database");
}

/*
 * WAL: readers keep a consistent snapshot while the backend commits.  Set
 * last, once the schema is known good and current: on a file not in WAL
 * mode yet (new, or switched back by hand) the switch rewrites the
 * header's version bytes, a committed write that a writer which then
 * refuses the file must not have made (fuzz_store_open found it).  Until
 * then an upgrade runs in a rollback journal, which restores the file if
 * the upgrade fails.
 */
static int enter_wal(struct store *s)
{
	sqlite3_stmt *st;
	char mode[16] = "";
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "switching the database to WAL");
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(mode, sizeof(mode), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return store_sqlite_fail(s, "switching the database to WAL");
	if (strcmp(mode, "wal") != 0)
		return store_fail(s, STORE_EIO,
		                  "database %s stays in journal mode '%s' and cannot switch to WAL (is "
		                  "its directory writable, and on a local filesystem?)",
		                  s->path, mode);
	return 0;
}

/* A store object for path, nothing opened yet; NULL (err says why) when
 * memory is short. */
static struct store *store_new(const char *path, const struct store_open_opts *opts, char *err,
                               size_t errlen)
{
	struct store *s = calloc(1, sizeof(*s));

	if (!s || !(s->path = strdup(path)) || !(s->scratch = malloc(STORE_CHUNK_BYTES))) {
		if (s) {
			free(s->path);
			free(s);
		}
		snprintf(err, errlen, "out of memory opening %s", path);
		return NULL;
	}
	s->mode = opts->mode;
	s->durability = opts->durability;
	s->lock_fd = -1;
	s->ident_fd = -1;
	s->data_fd = -1;
	s->slot_next = -1;
	s->slot_reuse = -1;
	s->bulk_file = opts->bulk_file && opts->mode != STORE_READ;
	return s;
}

/*
 * A one-shot reader (store_readers_tidy: a profdb command, not serve or
 * watch) opens the database read-write when it may (query_only keeps it
 * a reader: configure_reader), for one reason: the -wal and -shm files
 * that WAL mode needs beside the database are then removed by the last
 * connection to close, as a writer's are.  A SQLITE_OPEN_READONLY
 * connection may not remove them, so every `profdb query` of an idle
 * store left two files behind.  The close of the last connection may
 * checkpoint what a backend that died left in its WAL: committed data,
 * written where it belongs.  Without write access to the file and its
 * directory (another user's store, a read-only filesystem) the reader
 * opens read-only, files left as SQLite needs them.
 */
static int readers_tidy;

void store_readers_tidy(int on)
{
	readers_tidy = on;
}

static int reader_can_clean_up(const char *path)
{
	char dir[4096];

	if (store_dir_of(path, dir, sizeof(dir)) != 0)
		return 0;
	return access(path, W_OK) == 0 && access(dir, W_OK) == 0;
}

/*
 * A store on a read-only filesystem (a snapshot, a read-only bind mount, a
 * backup) with no -wal beside it: SQLite cannot create the -shm that WAL
 * mode's readers share, and refuses to open it.  Nobody can write it
 * either, so it is opened "immutable" (no locks, no -shm): exact, as
 * nothing it ignores can exist.  With a -wal there, its committed pages
 * would be ignored: opened as usual, and SQLite says what it needs.
 */
static int reader_on_frozen_fs(const char *path)
{
	char wal[4200];
	struct statvfs vfs;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	return statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY) && access(wal, F_OK) != 0 &&
	       errno == ENOENT;
}

/* path as an SQLite URI that opens it immutable, in out (cap bytes): every
 * byte but the unreserved ones and '/' percent-encoded.  -1 if too long. */
static int immutable_uri(const char *path, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = (size_t)snprintf(out, cap, "file:");

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (n + 4 >= cap)
			return -1;
		if (isalnum(*p) || strchr("/-._~", *p))
			out[n++] = (char)*p;
		else
			out[n++] = '%', out[n++] = hex[*p >> 4], out[n++] = hex[*p & 15];
	}
	return snprintf(out + n, cap - n, "?immutable=1") < (int)(cap - n) ? 0 : -1;
}

/* The file at path as the mode needs it: a reader's there, regular and
 * readable; a writer's created if absent.  *flags: how SQLite opens it. */
static int check_file(struct store *s, const char *path, int *flags)
{
	struct stat st;
	int rc;

	if (s->mode == STORE_READ) {
		if (stat(path, &st) != 0)
			return store_fail(s, errno == EACCES ? STORE_EPERM : STORE_ENOTFOUND,
			                  errno == EACCES ? "cannot open database %s: permission denied "
			                                    "(the store is root-only: run as root)"
			                                  : "no database at %s (start profile-backend or "
			                                    "run 'profdb import-disk' first, or pass --db)",
			                  path);
		if (!S_ISREG(st.st_mode))
			return store_fail(s, STORE_ENOTDB, "%s is not a regular file", path);
		if (access(path, R_OK) != 0)
			return store_fail(s, STORE_EPERM,
			                  "cannot read database %s: %s (the store is root-only: run as root)",
			                  path, strerror(errno));
		*flags = readers_tidy && reader_can_clean_up(path) ? SQLITE_OPEN_READWRITE
		         : reader_on_frozen_fs(path) ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
		                                     : SQLITE_OPEN_READONLY;
		return 0;
	}
	if ((rc = create_db_file(s)))
		return rc;
	*flags = SQLITE_OPEN_READWRITE;
	if (stat(path, &st) != 0)
		return 0; /* SQLite will say why */
	if (!S_ISREG(st.st_mode))
		return store_fail(s, STORE_ENOTDB, "%s is not a regular file", path);
	if (st.st_uid != geteuid() && access(path, W_OK) != 0 && errno == EACCES)
		return store_fail(s, STORE_EPERM,
		                  "needs root: database %s is read-only for this user (it is another's, "
		                  "uid %u): run this as root (or as its owner)",
		                  path, (unsigned)st.st_uid);
	return 0;
}

/* The database at this build's schema: readers read every version from
 * STORE_SCHEMA_READABLE_FROM on as it is (later versions changed
 * constraints, not what readers read: a user who upgraded profsvc can
 * query before the backend restarts); writers migrate it. */
static int settle_schema(struct store *s, int version)
{
	int rc;

	if (version < STORE_SCHEMA_VERSION &&
	    !(s->mode == STORE_READ && version >= STORE_SCHEMA_READABLE_FROM)) {
		if (s->mode == STORE_READ)
			return version == 0
				       ? store_fail(s, STORE_ENOTFOUND,
				                    "database %s is empty (nothing has been captured or "
				                    "imported yet)",
				                    s->path)
				       : store_fail(s, STORE_EINVAL,
				                    "database %s has schema version %d, older than this "
				                    "profdb's %d; start profile-backend (or run 'profdb "
				                    "import-disk') once to upgrade it",
				                    s->path, version, STORE_SCHEMA_VERSION);
		if ((rc = store_schema_migrate(s)))
			return rc;
		version = STORE_SCHEMA_VERSION;
	}
	s->schema_version = version;
	return version >= 4 ? store_data_file_read_identity(s) : 0;
}

/* A store migrated from before schema 9 (meta.sums = 'pending'): the sums
 * of what it holds, computed once by the first writer that opens it, in
 * one transaction; the open's note says so (store_open_note). */
static int settle_sums(struct store *s)
{
	sqlite3_stmt *st;
	int64_t chunks, packets;
	int rc, pending;

	if (s->mode == STORE_READ || s->schema_version < 9)
		return 0;
	if (sqlite3_prepare_v2(s->db, "SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'sums')", -1, &st, NULL) !=
	    SQLITE_OK)
		return store_sqlite_fail(s, "opening the database");
	pending = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (!pending)
		return 0;
	if ((rc = exec_sql(s, "BEGIN IMMEDIATE", "computing checksums")))
		return rc;
	if ((rc = store_sums_backfill(s, &chunks, &packets)) ||
	    (rc = exec_sql(s, "DELETE FROM meta WHERE key = 'sums'", "computing checksums")) ||
	    (rc = exec_sql(s, "COMMIT", "computing checksums"))) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	if (chunks || packets)
		snprintf(s->open_note, sizeof(s->open_note),
		         "%s: upgraded to checksums: computed those of %lld stored chunks and %lld trace "
		         "packets",
		         s->path, (long long)chunks, (long long)packets);
	return 0;
}

const char *store_open_note(const struct store *s)
{
	return s->open_note;
}

/*
 * A reader that may not open the database (EACCES: the store is root's,
 * 0600, in a directory its group may enter) reads it through the
 * backend's read service when its caller named one (opts->read_socket:
 * store_remote.c).  Why not the files: read access to a live SQLite WAL
 * store is lock access, and a reader holding SQLite's locks stalls and
 * then fails every guest's writes.
 */
static int wants_read_service(const char *path, const struct store_open_opts *opts, struct stat *st)
{
	return opts->mode == STORE_READ && opts->read_socket && stat(path, st) == 0 && S_ISREG(st->st_mode) &&
	       access(path, R_OK) != 0 && errno == EACCES;
}

/* The connection: opened, configured for the mode, its schema settled. */
static int open_connection(struct store *s, int flags, const struct store_open_opts *opts)
{
	int rc, version;

	char uri[3 * 4096 + 32];
	const char *name = s->path;
	if (flags & SQLITE_OPEN_URI) {
		if (immutable_uri(s->path, uri, sizeof(uri)) != 0)
			return store_fail(s, STORE_EINVAL, "database path %s is too long", s->path);
		name = uri;
	}
	if (sqlite3_open_v2(name, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		return s->db ? store_sqlite_fail(s, "opening the database")
		             : store_fail(s, STORE_ENOMEM, "out of memory opening %s", s->path);
	if ((rc = store_sql_functions(s)))
		return rc;
	if (s->mode != STORE_READ && sqlite3_db_readonly(s->db, "main") == 1)
		return store_fail(s, STORE_EREADONLY,
		                  "database %s is read-only: make it writable (chmod u+w) or use another "
		                  "--db",
		                  s->path);
	if ((rc = configure_reader(s, opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : 5000,
	                           opts->follows_growth)))
		return rc;
	if ((rc = store_schema_check(s, &version)))
		return rc;
	if (s->mode != STORE_READ && (rc = configure_writer(s, version)))
		return rc;
	return settle_schema(s, version);
}

/* What only the owner runs: the data file, the checkpointer, the
 * write-behind, and the intake log (which may apply records at once). */
static int start_owner(struct store *s, const struct store_open_opts *opts)
{
	int rc;

	if ((rc = store_data_file_owner_open(s)) || (rc = store_checkpointer_start(s)) ||
	    (rc = store_writeback_start(s)))
		return rc;
	s->intake_path = opts->intake_path;
	s->intake_other = opts->intake_other;
	if (opts->intake && (rc = store_intake_open(s, &s->intake_recovered)))
		return rc;
	s->intake_path = s->intake_other = NULL;
	/* Slots freed before a restart waited for the next process's writes
	 * (store_data_file_owner_open re-arms them): given back now when no reader
	 * is behind.  Not fatal: the backend asks again when idle. */
	int64_t waiting;
	(void)store_give_back(s, &waiting);
	s->errmsg[0] = '\0';
	return 0;
}

/*
 * A -wal that SQLite's recovery would read only in part (store_wal.c): a
 * frame in the middle that fails its checksum, and sound commits after
 * it.  Readers then see the store without those commits, and the first
 * connection that writes, or merely checkpoints as it closes (a one-shot
 * reader opened read-write to tidy), copies the older pages before the
 * damage over the newer ones of the database: the loss becomes
 * permanent.  So a writer refuses such a store (`profdb check` says what
 * it is and the fix), and a one-shot reader opens it read-only.  Looked
 * at only when no backend owns the store (its -wal is live then, and its
 * own start looked at it), which after clean stops is an empty file.
 */
static int wal_guard(struct store *s, int *flags)
{
	struct store_wal_report r;
	char why[sizeof(s->errmsg)];

	if (s->mode == STORE_READ && !(*flags & SQLITE_OPEN_READWRITE))
		return 0; /* never writes a byte of the store */
	if (s->mode != STORE_OWNER && store_owner_alive(s) == 1)
		return 0;
	if (store_wal_scan(s->path, &r) != 0 || !r.damaged) {
		s->settle_wal = -1; /* once the open succeeds: a file refused is left untouched */
		return 0;
	}
	if (s->mode == STORE_READ) {
		*flags = SQLITE_OPEN_READONLY;
		return 0;
	}
	store_wal_describe(s->path, &r, why, sizeof(why));
	return store_fail(s, STORE_ECORRUPT, "%s", why);
}

/*
 * A clean close leaves no frames in the -wal.  A -wal kept after its last
 * connection (once a shared store's, for its group's readers; or one a
 * connection could not remove) kept every frame that connection
 * checkpointed, hundreds of them already in the database; one flipped bit
 * in the middle of them, and recovery stopped there with the older pages
 * before it shadowing newer ones of the database (3 of 7 runs listed,
 * `check` ok, and the loss permanent once a writer started).  So every
 * connection that may write empties it as it closes (a TRUNCATE
 * checkpoint: every frame copied, the database synced, the file cut to
 * nothing), unless a
 * backend owns the store (it does so when it stops).  A reader in a
 * snapshot holds the checkpoint up: the owner waits for it up to its busy
 * timeout, a short-lived writer 2 s, a one-shot reader (it wrote nothing)
 * not at all; frames left then are what the next close empties.  A crash
 * leaves frames, rightly: the next open replays them.
 */
static void settle_wal(struct store *s, char *note, size_t len)
{
	int log = -1, done = -1;

	if (s->mode != STORE_OWNER && store_owner_alive(s) != 0)
		return;
	if (s->mode == STORE_WRITE && s->busy_ms > 2000)
		s->busy_ms = 2000;
	else if (s->mode == STORE_READ)
		s->busy_ms = 0;
	int rc = sqlite3_wal_checkpoint_v2(s->db, "main", SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
	if (rc != SQLITE_OK && note && len)
		snprintf(note, len,
		         "%s-wal keeps %d frames after the stop (%s: a reader held its snapshot past %d ms); the next "
		         "writer to stop empties it",
		         s->path, log, sqlite3_errmsg(s->db), s->busy_ms);
}

/* The owner makes the database, its WAL files and the data file 0600
 * (store_file_mode, store_conn.c says why): a store its group read under
 * the old rule (0640) becomes root's alone.  By path: no descriptor of the
 * database may be closed here (store_conn.c).  Only files the owner owns;
 * failures leave the files as they were. */
static void share_files(struct store *s)
{
	static const char *const suffix[] = {"", "-wal", "-shm", "-data"};
	mode_t want = store_file_mode(s->path);
	char path[4200];
	struct stat st;

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", s->path, suffix[i]);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    (st.st_mode & 0777) != want)
			(void)chmod(path, want);
	}
}

int store_open(struct store **out, const char *path, const struct store_open_opts *opts,
               char *err, size_t errlen)
{
	struct store_open_opts def = {.mode = STORE_READ};
	struct store *s;
	struct stat st;
	int rc, flags = 0;

	*out = NULL;
	if (!opts)
		opts = &def;
	if (!(s = store_new(path, opts, err, errlen)))
		return STORE_ENOMEM;
	if (wants_read_service(path, opts, &st)) {
		if ((rc = resolve_path(s)) || (rc = store_remote_open(s, opts->read_socket, &st)))
			goto fail;
		*out = s;
		return 0;
	}
	if ((rc = check_file(s, path, &flags)) || (rc = resolve_path(s)))
		goto fail;
	path = s->path;
	if (s->mode != STORE_READ && (rc = check_private_dir(s)))
		goto fail;
	if (s->mode == STORE_OWNER && (rc = take_owner_lock(s)))
		goto fail;
	if ((rc = check_not_truncated(s)))
		goto fail;
	s->empty_file = stat(path, &st) != 0 || st.st_size == 0;
	if ((rc = wal_guard(s, &flags)) || (rc = open_connection(s, flags, opts)))
		goto fail;
	if (s->mode != STORE_READ && (rc = enter_wal(s)))
		goto fail;
	if (s->mode == STORE_OWNER)
		share_files(s);
	if ((rc = settle_sums(s)))
		goto fail;
	if (s->mode != STORE_READ && stat(path, &st) == 0) {
		s->db_dev = st.st_dev;
		s->db_ino = st.st_ino;
		s->have_ident = 1;
		if (s->mode == STORE_OWNER)
			store_identity_watch(s);
	}
	if (s->mode == STORE_OWNER && (rc = start_owner(s, opts)))
		goto fail;
	s->settle_wal = s->settle_wal != 0;
	*out = s;
	return 0;
fail:
	snprintf(err, errlen, "%s", s->errmsg);
	store_close(s);
	return rc;
}

void store_close(struct store *s)
{
	store_close_note(s, NULL, 0);
}

void store_close_note(struct store *s, char *note, size_t len)
{
	if (note && len)
		note[0] = '\0';
	if (!s)
		return;
	store_remote_close(s);
	if (s->in_batch)
		store_batch_abort(s);
	if (s->in_read)
		store_read_end(s);
	/* everything acknowledged into SQLite before the handles go */
	store_intake_close(s);
	while (s->devices)
		store_device_release(s->devices);
	store_blob_release(s);
	store_checkpointer_stop(s);
	store_writeback_stop(s);
	store_slots_close(s);
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	if (s->db && s->settle_wal == 1)
		settle_wal(s, note, len);
	if (s->db)
		sqlite3_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* releases the owner lock */
	if (s->ident_fd >= 0)
		close(s->ident_fd);
	free(s->scratch);
	free(s->sum_dirty);
	free(s->path);
	free(s);
}

void store_tune_for_threads(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
