/*
 * store.h - the profsvc store: a SQLite catalogue of runs and the disk data
 * of their devices.  Used by profile-backend (writer) and profdb (reader).
 * Nothing here knows about Xen.
 *
 * Model
 *   run     one guest boot (domid, name, uuid, start/end, state)
 *   device  one virtual disk of a run (xvdp1 = .prof, xvdp2 = .hp,
 *           xvdp3 = GHC's eventlog, else raw)
 *   data    a device behaves exactly like a disk: sector-addressed,
 *           last write wins, never-written sectors read as zeros.
 *
 * Writing
 *   A writer groups any number of requests, from any number of devices,
 *   into one batch (one SQLite transaction, or with the owner's intake log
 *   one record of it, folded into one later).  Nothing in a batch is
 *   durable until store_batch_commit() returns 0; if it fails, none of the
 *   batch is.  A request (store_write with all its segments) is therefore
 *   atomic.  The backend acknowledges a guest request only after the
 *   commit of its batch.  Readers see a batch once it is in SQLite.
 *
 * ERRORS.  One convention, SQLite's: a code and a message getter.
 *   A function that can fail returns 0 or a negative STORE_E* code (enum
 *   store_err, never a bare -1 of its own), and store_errmsg(s) then
 *   gives the failure's one-line message, naming the problem and, where
 *   there is one, the fix (the last failure's, until the next).  The
 *   exceptions, each said at its declaration:
 *   - store_open has no store to keep a message in: its code comes with
 *     the message in the caller's err buffer;
 *   - a walk with a callback (store_list_runs, store_list_devices,
 *     store_device_chunks, store_read_range, store_trace_packets, the
 *     checksum walks) stops at the callback's first non-zero return and
 *     returns that value as it is: a positive one is the caller's, not
 *     the store's, and store_errmsg says nothing of it;
 *   - store_trace_keep returns 1 when the packet was kept before;
 *   - a question returns 1 or 0 (store_is_remote), a count or a size its
 *     value (-1 where its declaration says: store_files_usage), a getter
 *     what it gets.
 */
#ifndef PROFSVC_STORE_H
#define PROFSVC_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define STORE_SECTOR_SIZE 512u
/* The schema version this build creates and understands. */
/* The unit of storage: a device's data is kept in chunks of this many
 * bytes, allocated whole on the first write that touches them (what a
 * write costs in dom0's disk; backend/common/quota.c). */
#define STORE_CHUNK_SECTORS 128u
#define STORE_CHUNK_BYTES (STORE_CHUNK_SECTORS * STORE_SECTOR_SIZE)
#define STORE_SCHEMA_VERSION 9
#define STORE_SCHEMA_READABLE_FROM 1 /* read-only opens take these as they are */

enum store_err {
	STORE_OK = 0,
	STORE_EIO = -1,         /* I/O or unexpected SQLite failure */
	STORE_ENOSPC = -2,      /* disk full: the batch was not committed */
	STORE_ELOCKED = -3,     /* another writer owns the database */
	STORE_ECORRUPT = -4,    /* damaged database or data */
	STORE_ENEWER = -5,      /* schema newer than this build */
	STORE_ENOTDB = -6,      /* not a profsvc database */
	STORE_EREADONLY = -7,   /* database or directory not writable */
	STORE_ENOTFOUND = -8,   /* no such run/device/file */
	STORE_EINVAL = -9,      /* bad argument (range, size, state) */
	STORE_ENOMEM = -10,
	STORE_EBUSY = -11,      /* a reader or writer held a lock too long */
	STORE_EPERM = -12,      /* permission denied */
};

enum store_open_mode {
	STORE_READ,      /* read-only snapshot reader (profdb queries) */
	STORE_WRITE,     /* short-lived writer (profdb import-disk); creates */
	STORE_OWNER,     /* the long-lived writer (profile-backend); exclusive */
};

enum store_durability {
	STORE_DURABLE_PROCESS, /* survives a crash of the process (default) */
	STORE_DURABLE_POWER,   /* survives power loss: fsync before commit returns */
};

enum store_run_state { STORE_RUN_RUNNING, STORE_RUN_COMPLETE, STORE_RUN_CRASHED };

enum store_role {
	STORE_ROLE_RAW,
	STORE_ROLE_PROF,
	STORE_ROLE_HP,
	STORE_ROLE_TRACE,
	STORE_ROLE_SAMPLES,
	STORE_ROLE_EVENTLOG, /* GHC's eventlog (+RTS -l), written as the .hp is */
};
#define STORE_ROLES 6
/* The vdev name of a run's MirageOS trace (never a guest's disk name). */
#define STORE_TRACE_VDEV "mprof"
/* A trace run whose buffer was never mapped ends with this before the
 * reason as its end reason (the backend's trace.c; profdb show says so). */
#define STORE_TRACE_NOT_CAPTURED "trace not captured: "
/* The vdev name of a run's stack samples, taken from dom0: its bytes are
 * the samples stream of profile/samples/samples.h, from sector 0. */
#define STORE_SAMPLES_VDEV "samples"
/* A HaLVM profile device: sector 0 is its status block (the .prof, the
 * .hp, and the eventlog, which the guest writes the same way). */
static inline int store_role_is_profile(enum store_role r)
{
	return r == STORE_ROLE_PROF || r == STORE_ROLE_HP || r == STORE_ROLE_EVENTLOG;
}
/* The vdev a profile role is served on ("xvdp1", "xvdp2", "xvdp3"), NULL
 * for the others. */
const char *store_profile_vdev(enum store_role r);
/* The file name extension of a profile role's file ("prof", "hp",
 * "eventlog"), NULL for the others. */
const char *store_profile_ext(enum store_role r);

/* What the last status block written to sector 0 said. */
enum store_status {
	STORE_STATUS_NONE,    /* sector 0 never written */
	STORE_STATUS_OK,      /* valid block: size and closed are meaningful */
	STORE_STATUS_CORRUPT, /* written but the XOR copies disagree */
};

struct store;
struct store_device;

struct store_open_opts {
	enum store_open_mode mode;
	/* Readers: the backend's read service (<run-dir>/read.sock,
	 * store_wire.h).  A reader that may not open the database (EACCES:
	 * the store is root's, 0600) reads it through that socket instead:
	 * the read functions below work the same (each request its own
	 * snapshot), the others fail with STORE_EPERM, "needs root: ...".
	 * NULL: no such fallback. */
	const char *read_socket;
	enum store_durability durability;
	int busy_timeout_ms; /* 0: default (5000) */
	/* Writers: chunks written whole go to the data file <path>-data
	 * (store_write_many; see store_slots.c).  The backend sets it; without
	 * it (imports) everything stays in the one database file. */
	int bulk_file;
	/* Readers: a connection kept open while the store grows (profdb
	 * serve's event streams): no mmap, since SQLite maps the grown file
	 * again in every read transaction (munmap and TLB shootdowns took a
	 * fifth of the server's CPU with 64 guests writing). */
	int follows_growth;
	/* The owner: acknowledge a batch once it is appended to the intake log
	 * <path>-intake and fold it into SQLite on a thread of the store
	 * (store_intake.c).  A batch of writes then costs about one pwrite;
	 * readers see it a millisecond or so later. */
	int intake;
	/* Where the intake log goes (NULL: <path>-intake).  It only has to
	 * outlive the process under STORE_DURABLE_PROCESS: profile-backend
	 * keeps it in its run directory (tmpfs, like its response journals),
	 * off the disk the store may fill. */
	const char *intake_path;
	/* Another place an earlier open may have left one (the run directory,
	 * when this one keeps it beside the database): applied, then removed.
	 * <path>-intake is always looked at too. */
	const char *intake_other;
};

/* Opens (and for writers creates and migrates) the store at path.  On
 * failure returns a STORE_E* code and writes a one-line message to err. */
/* Readers that open, read and exit (a profdb command) may tidy: opened
 * read-write under query_only when they can, so that the last close
 * removes the -wal and -shm WAL mode made beside the store.  Off by
 * default: a long-lived reader (profdb serve, watch) opens read-only and
 * never writes a byte of the store, whatever happens to the files under
 * it.  Process-wide; set before the first open. */
void store_readers_tidy(int on);
int store_open(struct store **out, const char *path, const struct store_open_opts *opts,
               char *err, size_t errlen);
void store_close(struct store *s);
/* store_close, and note (len bytes) says what the close could not do as it
 * should ("" when all went well): a -wal left with frames (a reader held
 * its snapshot past the wait), for the owner's log. */
void store_close_note(struct store *s, char *note, size_t len);
/* 1 when the store is read through the backend's read service. */
int store_is_remote(const struct store *s);
const char *store_errmsg(const struct store *s);
const char *store_path(const struct store *s);
/* The schema version of the store as opened (readers read older ones). */
int store_schema(const struct store *s);

/* ---- runs ----------------------------------------------------------------- */

#define STORE_NAME_MAX 256 /* domain names are cut (not refused) at this */

struct store_run {
	int64_t run_id;
	int32_t domid;                 /* -1 when unknown (imported) */
	char name[STORE_NAME_MAX];
	char uuid[40];
	int64_t started_us;            /* UTC microseconds since the epoch */
	int64_t ended_us;              /* 0 while running */
	enum store_run_state state;
	char host[STORE_NAME_MAX];
	char backend_version[64];
	char source[16];               /* "capture" or "import" */
	/* Filled by store_list_runs / store_get_run from the devices: */
	int64_t prof_bytes;            /* -1: no valid status block */
	int64_t hp_bytes;
	int64_t eventlog_bytes;        /* GHC's eventlog (xvdp3), as prof_bytes */
	int64_t trace_bytes;           /* a MirageOS trace's packets kept; -1: none */
	int64_t trace_packets;         /* how many packets kept, and their events; -1: */
	int64_t trace_events;          /*   no trace (or not in a fleet's listing) */
	int64_t samples_bytes;         /* the stack samples stream's bytes; -1: none */
	/* Not the store's: how many stack samples, when the view layer
	 * counted them (view_samples.h); -1 as the store fills it. */
	int64_t samples;
	int ndevices;
	/* Why it ended, when the writer said ("" for most runs; e.g. a run
	 * whose domain died while no backend ran).  Schema 6 on. */
	char end_reason[256];
	/* A running capture run whose backend is not running (it was killed
	 * or stopped while the guest lived): nothing is being added to it
	 * and its end is not known yet.  0 while a backend holds the store,
	 * and when that cannot be told from here (the run is another
	 * host's). */
	int backend_gone;
};

int store_run_begin(struct store *s, struct store_run *run); /* sets run_id */
int store_run_end(struct store *s, int64_t run_id, enum store_run_state state,
                  int64_t ended_us);
/* store_run_end with the reason kept and shown with the run (NULL: none). */
int store_run_end_why(struct store *s, int64_t run_id, enum store_run_state state,
                      int64_t ended_us, const char *why);
/* Opens a run ended crashed with reason saved_why again, for domid: a
 * saved domain that was restored goes on with its run.  STORE_ENOTFOUND
 * when the run is not such a run. */
int store_run_reopen(struct store *s, int64_t run_id, int32_t domid, const char *saved_why);
/* The newest capture run of the domain with this uuid, or STORE_ENOTFOUND. */
int store_latest_run_of_uuid(struct store *s, const char *uuid, int64_t *run_id);
/* Removes a run with its devices and data (their data-file slots wait to
 * be given back like any freed slot).  In the caller's batch, or its own. */
int store_run_delete(struct store *s, int64_t run_id);
int store_get_run(struct store *s, int64_t run_id, struct store_run *out);
/* The newest run, or STORE_ENOTFOUND. */
int store_latest_run(struct store *s, int64_t *run_id);
/* Runs still marked running (for a restarted backend to reconcile). */
int store_list_running(struct store *s, int64_t **ids, size_t *n);

/* Every running run, in run order, with a stamp that moves whenever one
 * of its devices' status blocks is rewritten (the guest flushed): one
 * query for a reader that follows many runs (profdb serve). */
struct store_activity {
	int64_t run_id;
	int64_t stamp;
};
int store_running_activity(struct store *s, struct store_activity **out, size_t *n);
struct store_run_filter {
	int state;              /* -1: any, else enum store_run_state */
	const char *name_glob;  /* NULL: any (SQLite GLOB syntax) */
	int64_t since_us;       /* 0: any; runs started at or after */
	int64_t limit;          /* 0: no limit; else the newest N */
	int64_t before_id;      /* 0: any; else runs with a smaller id (the page before) */
	int64_t after_id;       /* 0: any; else, of those, the ones with a larger id (a
	                         * listing read a page at a time: the read service) */
};
/* How many runs the store holds in each state (indexed by enum
 * store_run_state; a row in no known state is not counted): one grouped
 * scan of the runs table (profdb serve's /metrics). */
int store_count_runs_by_state(struct store *s, int64_t counts[3]);
typedef int (*store_run_cb)(void *ctx, const struct store_run *run);
int store_list_runs(struct store *s, const struct store_run_filter *f, store_run_cb cb,
                    void *ctx);

/* ---- devices -------------------------------------------------------------- */

struct store_device_info {
	int64_t device_id;
	int64_t run_id;
	char vdev[32];                 /* "xvdp1" */
	int32_t devid;                 /* 51953 */
	enum store_role role;
	uint64_t capacity_sectors;
	/* counters (committed values) */
	int64_t write_requests, write_bytes;
	int64_t read_requests, read_bytes;
	int64_t flush_requests, discard_requests, errors;
	uint64_t written_end_sector;   /* highest written sector + 1 */
	/* decoded status block (profile roles only) */
	enum store_status status;
	int64_t file_size;
	int closed;
	int word_size;                 /* 8 or 4; 0 when status != OK */
	int64_t status_updated_us;
};

/* Bytes of the profile file the guest actually wrote: everything from
 * sector 1 up to the highest sector written. */
uint64_t store_device_written_bytes(const struct store_device_info *d);
/* A profile device whose file is whole: its status block is sound, says
 * closed, and claims no more bytes than the guest wrote (a block claiming
 * 2^40 bytes once made a "complete" run that exported a terabyte of
 * zeros).  What makes a run complete. */
int store_device_profile_whole(const struct store_device_info *d);

/* Role from the vdev name: xvdp1 -> prof, xvdp2 -> hp, xvdp3 -> eventlog,
 * else raw. */
enum store_role store_role_for_vdev(const char *vdev);
const char *store_role_name(enum store_role r);
const char *store_run_state_name(enum store_run_state st);
int store_run_state_parse(const char *s, enum store_run_state *out);

/* Largest capacity the store can address (sectors). */
uint64_t store_max_capacity(void);

/* Adds a device to a run and returns a handle for writing.  Not batched:
 * it commits at once (devices are rare, data is not). */
int store_device_create(struct store *s, int64_t run_id, const char *vdev, int32_t devid,
                        uint64_t capacity_sectors, struct store_device **out);
/* A handle to an existing device (a restarted backend, or a reader). */
int store_device_open(struct store *s, int64_t device_id, struct store_device **out);
void store_device_release(struct store_device *d);
int64_t store_device_id(const struct store_device *d);
/* 1 once a commit found the device's row deleted (its run was deleted by
 * another process while we wrote): writes to it then fail with
 * STORE_ENOTFOUND, and what the batch had written for it is not kept. */
int store_device_gone(const struct store_device *d);
/* Current view of the device: committed values plus the open batch. */
void store_device_get_info(const struct store_device *d, struct store_device_info *out);

/* Calls cb for every chunk (64 KiB of device space) the store holds for
 * a device, in order; a non-zero return stops and is returned. */
int store_device_chunks(struct store *s, int64_t device_id, int (*cb)(void *ctx, uint64_t chunk),
                        void *ctx);

typedef int (*store_device_cb)(void *ctx, const struct store_device_info *dev);
int store_list_devices(struct store *s, int64_t run_id, store_device_cb cb, void *ctx);
/* Finds a device of a run by vdev name ("xvdp1") or role name ("prof"). */
int store_find_device(struct store *s, int64_t run_id, const char *vdev_or_role,
                      struct store_device_info *out);

/* ---- traces (MirageOS) ---------------------------------------------------- */

/* One packet of a run's trace kept (store_trace.c). */
struct store_trace_packet {
	uint64_t seq;       /* the guest's packet count, extended past 16 bits */
	uint64_t sector;    /* where its bytes start in the trace device */
	uint32_t bytes;     /* the packet's size */
	uint64_t events;    /* sound events in it (profile/trace/mprof.h) */
	uint64_t first_ts, last_ts; /* their time span (ns, guest clock) */
	int final;          /* taken while still being written: the trace's end */
	int64_t kept_us;    /* when (0: now) */
	/* XXH3-64 of its p->bytes bytes as stored (schema 9); has_sum = 0:
	 * none (an older store, or a copy from one).  Set by the store:
	 * store_trace_keep computes it, store_trace_packets reads it,
	 * store_copy_trace_packet keeps it. */
	uint64_t sum;
	int has_sum;
};
/* In the caller's batch: p->bytes of packet at the end of the trace
 * device, recorded under p->seq (p->sector is chosen here).  Returns 1
 * when that seq was kept before (nothing written). */
int store_trace_keep(struct store_device *d, const struct store_trace_packet *p, const void *bytes);
typedef int (*store_trace_cb)(void *ctx, const struct store_trace_packet *p);
/* The packets kept, in seq order. */
int store_trace_packets(struct store *s, int64_t device_id, store_trace_cb cb, void *ctx);
/* The same from packet from_seq on. */
int store_trace_packets_from(struct store *s, int64_t device_id, uint64_t from_seq, store_trace_cb cb, void *ctx);
/* The packet's bytes as read (p->bytes of them) against its checksum: 0,
 * or STORE_ECORRUPT naming run, device, packet and byte range (with
 * store_salvage_damage set: said to its callback, and 0). */
int store_trace_verify(struct store *s, int64_t device_id, const struct store_trace_packet *p, const void *bytes);
struct store_trace_summary {
	uint64_t kept, lost;  /* lost: seqs from 0 to the last kept, not kept */
	uint64_t last_seq;
	uint64_t bytes, events;
	int have_time;
	uint64_t first_ts, last_ts;
	int final;            /* the trace ended (its active packet was taken) */
};
int store_trace_summary(struct store *s, int64_t device_id, struct store_trace_summary *out);

/* ---- batches and data ----------------------------------------------------- */

/* One contiguous piece of a request: nsect whole sectors at an absolute
 * sector of the device. */
struct store_segment {
	uint64_t sector;
	uint32_t nsect;
	const void *data; /* nsect * 512 bytes */
};

int store_batch_begin(struct store *s);
/* Commits the batch.  On failure (STORE_ENOSPC, STORE_EIO) nothing of the
 * batch is stored and the batch is closed. */
int store_batch_commit(struct store *s);
void store_batch_abort(struct store *s);
int store_in_batch(const struct store *s);

/* A write request: all segments, applied in order, atomically with the
 * rest of the batch.  Must be called inside a batch.  STORE_EINVAL (a
 * segment beyond capacity) leaves the batch usable; any other error means
 * the batch must be aborted. */
int store_write(struct store_device *d, const struct store_segment *segs, unsigned nsegs);
/* n write requests of one device at once, one segment each, as n
 * store_write calls in order (counted as n requests).  Adjacent requests
 * are stored together: chunks they cover whole between them go to the
 * data file in one write each (a Linux guest's stream of 44 KiB requests
 * becomes 64 KiB chunks). */
int store_write_many(struct store_device *d, const struct store_segment *reqs, unsigned n);
/* Reads nsect sectors (sees the open batch's writes). */
int store_read(struct store_device *d, uint64_t sector, uint32_t nsect, void *buf);
/* Makes a sector range read as zeros (inside a batch). */
int store_discard(struct store_device *d, uint64_t sector, uint64_t nsect);
/* Counts a flush request / an error response against the device (batched). */
void store_note_flush(struct store_device *d);
void store_note_error(struct store_device *d);

/* Makes everything committed so far durable against power loss (fsync of
 * the WAL): what a guest's FLUSH asks for under --durability process.
 * Under STORE_DURABLE_POWER every commit already is. */
int store_sync(struct store *s);
/* The owner's write-behind of the data file (store_writeback.c): how many
 * ranges of it have been written out and dropped from the page cache (for
 * tests). */
uint64_t store_writeback_count(struct store *s);

/* ---- read transactions ---------------------------------------------------- */

/* A consistent snapshot for a sequence of reads (profdb). Nestable no. */
int store_read_begin(struct store *s);
void store_read_end(struct store *s);

/* Calls cb for each stored piece of [byte_off, byte_off+len) in order;
 * holes are passed with data == NULL (they read as zeros).  Used by export. */
typedef int (*store_range_cb)(void *ctx, uint64_t byte_off, const void *data, size_t len);
int store_read_range(struct store *s, int64_t device_id, uint64_t byte_off, uint64_t len,
                     store_range_cb cb, void *ctx);

/*
 * Checksums (schema 9): every chunk carries the XXH3-64 of its bytes and
 * every trace packet that of its own, computed as they are written.  Every
 * read of chunks (store_read_range) verifies them: a chunk whose bytes no
 * longer match fails the read with STORE_ECORRUPT and a message naming the
 * run, the device and the byte range, unless the store salvages (below).
 * A store of an older schema, read as it is, has none to verify.
 */
struct store_damage {
	int64_t run_id;
	int64_t device_id;
	char vdev[32];
	uint64_t off, len;  /* the bytes of the device that are not sound */
	int64_t chunk;      /* the chunk, or -1 for a trace packet */
	int64_t seq;        /* the trace packet, or -1 */
};
typedef int (*store_damage_cb)(void *ctx, const struct store_damage *d);
/* cb != NULL: reads pass a damaged chunk's bytes as zeros (data == NULL)
 * and tell cb what they were (export --salvage); NULL: they fail again. */
void store_salvage_damage(struct store *s, store_damage_cb cb, void *ctx);
/* The one-line description of a damage ("run 3, device xvdp2 (id 5):
 * bytes 0-65535 (chunk 0) fail their checksum"); every message about
 * damaged data holds STORE_DAMAGE_WORDS. */
#define STORE_DAMAGE_WORDS "fail their checksum"
void store_damage_describe(const struct store_damage *d, char *buf, size_t len);
/* Verifies every chunk's and trace packet's checksum, calling cb for each
 * mismatch (cb may stop it by returning non-zero); counts what was
 * verified and what was damaged.  0, or an error (not the damage). */
struct store_sums_report {
	uint64_t chunks, packets;    /* verified */
	uint64_t unsummed;           /* carried none (an older schema) */
	uint64_t bad_chunks, bad_packets;
};
int store_check_sums(struct store *s, store_damage_cb cb, void *ctx, struct store_sums_report *rep);
/* What the open did that its caller should log ("" when nothing): a
 * migration that computed checksums for an older store's data. */
const char *store_open_note(const struct store *s);

/* ---- copies (store_copy.c) ------------------------------------------------ */

/* A run brought in from another store (profdb over a fleet's PostgreSQL
 * catalogue), written as rows, in the caller's batch, so that it reads
 * exactly as the original: its state, end and reason, each device's
 * counters and status, chunks and trace packets as they were.  Ids are
 * kept when free, else the next free one is taken and set in the struct. */
int store_copy_run(struct store *s, struct store_run *r);
int store_copy_device(struct store *s, struct store_device_info *d);
/* A chunk's bytes (1 to STORE_CHUNK_BYTES; a shorter one reads as zeros
 * after its end), chunk number `chunk` of the device. */
int store_copy_chunk(struct store *s, int64_t device_id, uint64_t chunk, const void *data, size_t len);
int store_copy_trace_packet(struct store *s, int64_t device_id, const struct store_trace_packet *p);
/* The store's identity (meta.store_id, 32 hex digits; "" before schema 4):
 * what names this host's store in a fleet catalogue. */
const char *store_identity(const struct store *s);

/* ---- maintenance ---------------------------------------------------------- */

/* PRAGMA integrity_check + foreign_key_check; 0 when clean. */
int store_check_integrity(struct store *s, char *report, size_t len);
/* Time helpers: UTC microseconds since the epoch. */
int64_t store_now_us(void);
/* For a process of many reading threads (profdb serve), before it opens
 * any store: SQLite keeps no global memory statistics (a mutex taken on
 * every allocation, by every thread); store_memory_used() then says 0. */
void store_tune_for_threads(void);
/* Bytes of heap the store's SQLite connections hold (page caches and
 * statements; bounded by the cache sizes), for status and leak checks. */
int64_t store_memory_used(void);
/* The files of a store at path: the database, then what SQLite and the
 * store keep beside it ("-wal", "-shm", "-data", "-intake");
 * NULL-terminated.  A
 * backup, a copy or a removal takes them all. */
extern const char *const store_file_suffixes[];
/* Removes every file of the store at path (tests and benchmarks). */
void store_remove_files(const char *path);
/* Bytes the store at path takes on disk: the database, its WAL and the
 * data file, as allocated (holes are free); not the owner's intake log, a
 * ring of fixed size (store_intake.c).  -1 without a database. */
int64_t store_files_usage(const char *path);
/* store_files_usage of an open store. */
int64_t store_disk_usage(struct store *s);

/* ---- space (store_space.c: profdb delete, prune, du) ------------------------ */

/* After runs were deleted (a writer, outside a batch): the database's
 * free pages go back to the filesystem (incremental vacuum), and the data
 * file's freed slots get holes punched as soon as no reader can see a row
 * that named them (a passive checkpoint that copied the whole WAL proves
 * every reader is at the newest snapshot; retried for up to wait_ms).
 * Slots still visible wait for the backend, which punches them later. */
struct store_reclaim {
	int64_t db_pages_freed;   /* database pages given back */
	int64_t page_size;
	int64_t slots_punched;    /* data-file slots given back now */
	int64_t slots_waiting;    /* freed slots given back later (a reader may see them) */
};
int store_reclaim(struct store *s, int wait_ms, struct store_reclaim *out);
/* The owner, outside a batch, when its guests are quiet (and at open): the
 * data file's freed slots that no reader can see any more are given back
 * (punched, reusable) and free ones at its end cut off, without waiting;
 * *waiting: how many a reader may still see (0: nothing left to do; the
 * caller asks again later).  Slots come back inside batches too, but
 * only as the WAL's generations pass, which they do only while the owner
 * commits. */
int store_give_back(struct store *s, int64_t *waiting);
/* The owner's writer proving freed slots unseen itself, when its
 * background checkpoints fall behind (store_checkpoint.c): what it did
 * since the store was opened.  All zeros for a store that is not the owner. */
struct store_slot_proofs {
	int64_t waiting;          /* slots the owner freed that wait now */
	int64_t proofs;           /* checkpoints the writer made for them */
	int64_t failed;           /* of which a reader behind (or another checkpoint) held up */
	int64_t given;            /* slots the proofs gave back */
	int64_t wait_us;          /* time the writer waited for the background checkpoint */
	int64_t prove_us;         /* time its own checkpoints took */
	int64_t max_us;           /* the longest of the two together, once */
};
int store_slot_proofs(struct store *s, struct store_slot_proofs *out);

/* Where the space of the store goes (profdb du). */
struct store_file_space {
	int64_t apparent;         /* st_size; -1: no such file */
	int64_t allocated;        /* st_blocks * 512 */
};
struct store_space {
	struct store_file_space db, wal, data;
	int64_t page_size, page_count, free_pages;
	int64_t data_slots;       /* slots ever allocated (slot 0: the header) */
	int64_t slots_in_use;     /* named by a chunk */
	int64_t slots_freed;      /* freed, not given back yet */
};
int store_space(struct store *s, struct store_space *out);
/* Bytes each run holds: chunk bytes in the database plus its data-file
 * slots (64 KiB each), biggest first, at most limit runs (0: all). */
struct store_run_space {
	int64_t run_id;
	int64_t db_bytes;         /* chunk bytes stored in the database */
	int64_t slot_bytes;       /* slots in the data file */
};
int store_runs_space(struct store *s, int64_t limit, struct store_run_space **out, size_t *n);

#endif
