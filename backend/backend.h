/*
 * backend.h - profile-backend's parts and what they share.
 *
 *   main.c       command line: start, stop, status, create, attach, detach
 *   daemon.c     the event loop, pid file, control socket, signals
 *   xenbus.c     device discovery and the per-device XenbusState machine
 *   io.c         the data path: drain rings, grant copy, one store batch,
 *                responses, notify
 *   runs.c       runs: one per guest boot, ended when the domain dies
 *   toolstack.c  writing device nodes as libxl does (create/attach/detach)
 *   vdev.c       xvdp1 <-> 51953
 *   blkif.c, ring.c   the protocol and the shared ring
 *   journal.c    responses recorded before they touch the ring (restart)
 *   mirror_raw.c the optional raw-image mirror (--mirror-raw); the raw
 *                sink's image is opened the same way
 *   sink.c       the benchmark baselines (--sink null|raw|raw-direct)
 *   trace.c      MirageOS guests' mirage-profile trace buffers, kept
 *                packet by packet in their runs
 *   log.c        one line per event, syslog or stderr
 */
#ifndef PROFSVC_BACKEND_H
#define PROFSVC_BACKEND_H

#include <stdint.h>
#include <stdio.h>
#include <syslog.h> /* LOG_ERR .. LOG_DEBUG, the priorities of log.c */

#include "../platform/platform.h"
#include "../store/store.h"
#include "ring.h"

#define BACKEND_TYPE "profsvc"
#define BACKEND_ROOT "/local/domain/0/backend/" BACKEND_TYPE
/* Disks of stock xl (libxl writes them, as kind vbd): ours when their
 * hotplug script is XL_HOTPLUG_SCRIPT (docs: profile-backend(8)). */
#define VBD_ROOT "/local/domain/0/backend/vbd"
#define XL_HOTPLUG_SCRIPT "block-profsvc"
#define MAX_RING_PAGE_ORDER 4u     /* up to 16 ring pages */
#define DEFAULT_CAPACITY (1ull << 31) /* 1 TiB of sparse sectors */
#define DEFAULT_MAX_RUN_BYTES (4ull << 30)
#define REQUESTS_PER_TURN 64u      /* per device per loop turn: nobody starves */
#define BATCH_BYTES_MAX (4u << 20) /* data per batch (two in flight: RSS) */
#define INLINE_COMMIT_MAX_ITEMS 4u
#define DEFAULT_MAX_TRACE_PAGES 1024u /* 4 MiB: mirage-profile's examples share 1 MB */
#define DEFAULT_TRACE_POLL_MS 10u /* io.c: a batch this small, alone, commits inline */

enum { XB_UNKNOWN, XB_INITIALISING, XB_INITWAIT, XB_INITIALISED, XB_CONNECTED, XB_CLOSING,
       XB_CLOSED };

/* --sink: the store, or a baseline for `make bench` that records nothing
 * in the store but the run catalogue. */
enum sink {
	SINK_STORE,
	SINK_NULL,        /* data discarded after the grant copy: the transport */
	SINK_RAW,         /* a raw image in the page cache (QEMU qdisk) */
	SINK_RAW_DIRECT,  /* a raw image, O_DIRECT + libaio (tapdisk) */
};

struct options {
	const char *db;
	enum plat_kind platform;
	const char *sim_dir;
	const char *run_dir;          /* pid file and control socket */
	int foreground;
	int verbose;
	int log_fields;              /* --log-format=fields (tests: the journal fields on stderr) */
	enum store_durability durability;
	uint64_t max_run_bytes;
	uint64_t max_store_bytes;    /* 0: no limit but the disk */
	int dry_run;                 /* create: print what would be done */
	int json;                    /* status: the backend object (docs/json.md) */
	int no_intake;               /* --intake off: commit each batch to SQLite before answering */
	uint64_t capacity;
	const char *mirror_raw;       /* NULL: no raw images */
	enum sink sink;               /* where the data goes (benchmarks) */
	const char *sink_dir;         /* SINK_RAW*: the images */
	uint32_t max_trace_pages;     /* a guest's trace buffer, at most */
	unsigned trace_poll_ms;       /* trace headers looked at, at least this often */
	const char *sync_url;         /* --sync: the fleet catalogue runs are pushed to as they end */
};

struct run;
struct mirror;

struct device {
	struct backend *b;
	uint32_t domid, devid;
	char vdev[16];
	char bpath[96];               /* our directory */
	int xl_managed;               /* under VBD_ROOT: libxl made it and removes it */
	char fpath[96];               /* the frontend's, as the toolstack wrote it */
	int bstate;                   /* what we last wrote */
	int fstate;                   /* what the frontend last said */
	int initialised;              /* features published, store device open */
	int online;
	/* connection */
	int connected;
	struct blk_ring ring;
	void *ring_mem;
	uint32_t ring_pages;
	uint32_t remote_port, local_port;
	int port_masked;              /* unmask after draining */
	enum work_state {
		WORK_IDLE,            /* nothing known to do */
		WORK_QUEUED,          /* on the backend's FIFO of devices to serve */
		WORK_MORE,            /* taken this turn, requests left: queue it again */
	} work;
	unsigned turn_taken;          /* requests of its turn taken in batches the size cut short */
	int ring_broken;              /* io.c found the ring bogus: xenbus_fail_broken() */
	uint32_t spurious;            /* wake-ups without requests, this second */
	int64_t spurious_since_us;
	int64_t unmask_at_us;         /* rate-limited: unmask later */
	/* Its frontend's xenstore events, rate-limited (xenbus.c): */
	double fe_tokens;             /* events it may still have looked at now */
	int64_t fe_tokens_us;         /* when fe_tokens was last topped up */
	int64_t fe_deferred;          /* events came while out of tokens: since when (us) */
	int fe_flood_logged;
	/* data */
	uint64_t capacity;            /* sectors; cached: the commit worker owns sdev */
	struct run *run;
	struct store_device *sdev;
	struct mirror *mirror;
	void *journal;                /* journal.c: responses not yet published */
	/* counters for status */
	uint64_t requests, bytes, errors;
	char last_error[160];
	struct device *next;
	struct device *next_work;
};

/* The chunks a run has touched (quota.c). */
struct chunk_set {
	uint64_t *keys;
	size_t n, cap;
};

struct run {
	uint32_t domid;
	char uuid[40];
	char name[STORE_NAME_MAX];
	int64_t run_id;
	int ndevices;
	struct chunk_set chunks;      /* what it costs in the store (--max-run-bytes) */
	int over_limit_logged;
	int saved;                    /* its domain was shut down to be saved */
	int64_t end_retry_at_us;      /* its domain is gone but the store could not end it
	                               * (a full disk): retried then (0: not ending) */
	int end_failures;
	char end_error[256];          /* why the store refused, the last time */
	struct run *next;
};

struct control_client;

struct backend {
	struct options opt;
	struct control_client *control; /* control.c: status clients */
	int control_ep;
	int64_t store_usage;          /* store_disk_usage(), for --max-store-bytes */
	int64_t store_usage_at_us;    /* when it was read (refreshed every 100 ms) */
	int store_full_logged;
	struct plat *plat;
	struct xs_handle *xs;
	struct plat_evtchn *evt;
	struct plat_gnttab *gnt;
	struct store *store;
	struct device *devices;
	struct run *runs;
	struct device *work, *work_tail; /* devices with requests to take (FIFO) */
	struct io_pipe *io;           /* the commit worker (io.c) */
	int stopping;
	int64_t started_us;
	uint64_t batches, commits_failed;
	uint64_t inline_commits; /* batches committed on the loop thread (io.c) */
	/* xenstore watch events (xenbus.c): seen, deferred by the frontends'
	 * rate limit, and rounds that drained the pipeline to act on some. */
	uint64_t xs_events, xs_deferred, xs_rounds;
	struct alive_cache *alive;    /* domains.c: liveness asked this round (NULL: none) */
	const struct xenbus_listener *listener; /* xenbus.c: whom it tells (the daemon wires it) */
	struct trace *traces;         /* trace.c: every domain's trace node */
	int trace_scan_due;           /* @introduceDomain fired */
	struct fleet_pusher *fleet;   /* fleet_push.c: --sync */
};

/* log.c */
/* fields: --log-format=fields, the journal's fields on stderr (tests). */
void log_open(int foreground, int verbose, int fields);
/* The last line logged at LOG_ERR or worse, NULL if none. */
const char *log_last_error(void);
/* prio: LOG_ERR the backend or store failed, LOG_WARNING a guest
 * misbehaved or was refused, LOG_NOTICE runs and devices coming and going,
 * LOG_INFO the rest, LOG_DEBUG per-request detail (only with -v). */
void blog_at(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dlog_at(int prio, const struct device *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "domD run R: ..." with DOMID= and RUN= in the journal. */
void rlog_at(int prio, int64_t domid, int64_t run_id, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A line that names its domain and run itself (-1: none), with the fields. */
void elog_at(int prio, int64_t domid, int64_t run_id, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* LOG_INFO (kept for callers that have no better priority). */
void blog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bdebug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dlog(const struct device *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* vdev.c */
/* "xvdp1" -> 51953; -1 if not a vdev name we accept. */
int64_t vdev_to_devid(const char *vdev);
int devid_to_vdev(uint32_t devid, char *out, size_t len);

/* domains.c: 1 if the domain lives; within a round of watch events
 * (b->alive set) each domain is asked once. */
struct alive_cache {
	struct alive_cache_entry {
		uint32_t domid;
		int alive;
	} v[256];
	size_t n;
};
int domain_alive(struct backend *b, uint32_t domid);

/* xenbus.c */
/* What xenbus tells the rest of the control plane (runs, traces) in a
 * round of watch events; the daemon wires it, so that xenbus calls none of
 * them by name.  note_event: a watch of theirs fired (tokens "intro",
 * "mprof"), 1 to act this round; domains_changed: some domain died (after
 * its devices went); round: the round's end, when note_event asked. */
struct xenbus_listener {
	int (*note_event)(struct backend *b, const char *path, const char *token);
	void (*domains_changed)(struct backend *b);
	void (*round)(struct backend *b);
};
int xenbus_init(struct backend *b, const struct xenbus_listener *l);
/* xl_disks.c: stock xl's vbds with our hotplug script */
int xl_disk_is_ours(struct backend *b, const char *bpath);
void xl_claim(struct device *d);
void xl_release_kernel(struct device *d, int wait);
/* Watches fired: every event queued now is noted (path and token as
 * xenstore gave them), then acted on once per device, domain or kind. */
void xenbus_watch_events(struct backend *b);
/* Re-reads everything (at start and after @releaseDomain). */
void xenbus_scan(struct backend *b);
void xenbus_shutdown(struct backend *b);
/* Tears a connected device down to Closed (ring bogus, fatal error). */
void xenbus_fail(struct device *d, const char *why);
struct device *device_by_port(struct backend *b, uint32_t port);

/* io.c: batches are pipelined: while the commit worker stores and commits
 * one, the loop takes and copies in the next. */
int io_start(struct backend *b);
void io_stop(struct backend *b);
/* Prepares a batch from the devices on b->work and hands it to the worker
 * (or keeps it ready while the worker is busy). */
void io_run_batch(struct backend *b);
/* 1 when io_run_batch() could make progress now. */
int io_can_run(struct backend *b);
/* The worker's completion fd (readable when a batch is committed). */
int io_event_fd(struct backend *b);
/* Answers the committed batch and hands over the next. */
void io_completed(struct backend *b);
/* Completes everything in flight: before any device is set up or torn
 * down, the worker is idle and no batch refers to a device. */
void io_quiesce(struct backend *b);
void io_schedule(struct device *d);
void io_unschedule(struct device *d);

/* runs.c */
/* The run of the domain's current boot, resumed or started; NULL with
 * *gone set when the domain is already being torn down. */
struct run *run_for_domain(struct backend *b, uint32_t domid, int *gone);
void run_device_gone(struct backend *b, struct run *r, int domain_dead);
/* At start: runs still marked running whose domains are gone are ended. */
void runs_reconcile(struct backend *b);
/* After @releaseDomain: runs without devices whose domain died end. */
void runs_domains_changed(struct backend *b);
/* Retries ending the runs the store could not end; the milliseconds until
 * the next try, or -1 when none waits. */
int runs_retry_ends(struct backend *b);

/* journal.c: responses recorded before they touch the ring */
int journal_open(struct device *d, uint32_t ring_ref0);
void journal_close(struct device *d);
void journal_remove(struct device *d);
void journal_recover(struct device *d);
void journal_begin(struct device *d, uint32_t start, uint32_t n, const uint64_t *ids,
                   const uint8_t *ops, const int16_t *status);
void journal_end(struct device *d);

/* mirror_raw.c: the --mirror-raw copy of a device, a raw image; with sink
 * set, mirror_open opens the raw sink's image instead (sink.c writes it). */
int mirror_open(struct device *d, const char *dir, int direct, int sink);
void mirror_write(struct device *d, uint64_t sector, const void *data, uint32_t nsect);
void mirror_close(struct device *d);

/* sink.c: the benchmark baselines (--sink) */
const char *sink_name(enum sink s);

/* daemon.c */
int daemon_start(struct options *o);
int daemon_stop(const struct options *o);
int daemon_status(const struct options *o);

/* toolstack.c */
int toolstack_create(const struct options *o, const char *cfg, int argc, char **argv);
int toolstack_attach(const struct options *o, const char *domain, int nvdev, char **vdevs);
int toolstack_detach(const struct options *o, const char *domain, const char *vdev);

/* trace.c: MirageOS trace buffers.  trace_init watches @introduceDomain
 * and each domain's data/mprof/ring-ref; trace_note_event takes watch
 * events (1: act this round); trace_round acts on them (pipeline
 * quiesced); trace_poll snapshots the buffers and returns the ms until the
 * next poll (-1: none mapped); trace_domains_changed takes the last
 * packets of dead domains. */
int trace_init(struct backend *b);
void trace_scan_domains(struct backend *b);
int trace_note_event(struct backend *b, const char *path, const char *token);
int trace_pending(const struct backend *b);
void trace_round(struct backend *b);
int trace_poll(struct backend *b);
void trace_domains_changed(struct backend *b);
void trace_shutdown(struct backend *b);
void trace_status(struct backend *b, FILE *f);
/* The same as a JSON array (control.c's status --json).  jansson's own
 * typedef, repeated so that this header needs no jansson flags. */
typedef struct json_t json_t;
json_t *trace_status_json(struct backend *b);

/* fleet_push.c: --sync URL, runs pushed to the fleet catalogue as they end,
 * from a thread of its own (never in a guest's way). */
int fleet_push_start(struct backend *b);
void fleet_push_run_ended(struct backend *b, int64_t run_id);
void fleet_push_stop(struct backend *b);
void fleet_push_status(struct backend *b, FILE *f);
/* Its part of status --json (null without --sync). */
json_t *fleet_push_status_json(struct backend *b);

/* quota.c: --max-run-bytes charges 64 KiB per chunk a run touches. */
/* Admits a write of nsect sectors at sector of device devid if the chunks
 * it touches for the first time fit under limit; *added says which (for
 * quota_release).  0 admitted, -1 refused. */
int quota_admit(struct chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect, uint64_t limit,
                uint64_t *added);
/* Gives back what quota_admit added (the write failed). */
void quota_release(struct chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t added);
/* A chunk the store already holds (a restarted backend, a disk back). */
int quota_note_stored(struct chunk_set *cs, uint32_t devid, uint64_t chunk);
/* Bytes of new chunks a write would take (0: it rewrites held ones). */
uint64_t quota_fresh(const struct chunk_set *cs, uint32_t devid, uint64_t sector, uint64_t nsect);
uint64_t quota_charged(const struct chunk_set *cs);
void quota_free(struct chunk_set *cs);

/* xenbus.c: frontends' xenstore events past their rate, looked at later.
 * xenbus_deferred_run acts on those that are due and returns the ms until
 * the next one is, or -1. */
int xenbus_deferred_run(struct backend *b);

/* storm.c: event channel storms (XSA-332).  A wake-up that found no
 * request; and the unmask of drained ports (ms to the next delayed one,
 * or -1). */
void storm_empty_wakeup(struct device *d);
int storm_unmask_ports(struct backend *b);
/* xenbus.c: disconnects the devices whose ring io.c found bogus. */
void xenbus_fail_broken(struct backend *b);

/* control.c: the control socket's clients, never blocking the loop.
 * Their epoll events carry SRC_CONTROL_CLIENT + their index. */
#define SRC_CONTROL_CLIENT 100u
#define CONTROL_CLIENTS_MAX 16
void control_init(struct backend *b, int ep);
void control_shutdown(struct backend *b);
void control_accept(struct backend *b, int listen_fd);
void control_event(struct backend *b, unsigned idx);
/* Drops clients past their time; ms until the next deadline, or -1. */
int control_expire(struct backend *b);

#endif
