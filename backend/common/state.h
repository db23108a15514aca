/*
 * state.h - the state profile-backend's parts share: a device (its
 * xenstore side, its ring, its data), a run (one per guest boot) and the
 * backend that holds them.  Each field says which part owns it.  Declares
 * no function; includes the options, the quota's chunk set and the shared
 * ring (backend/blkif/).
 *
 * May call: blkif/ (ring.h), options.h, quota.c.
 */
#ifndef PROFSVC_BE_STATE_H
#define PROFSVC_BE_STATE_H

#include <stdint.h>

#include "backend/blkif/ring.h"
#include "backend/common/options.h"
#include "backend/common/quota.h"

/* XenbusState, as the frontend and we write it (control/xenbus_state.c). */
enum { XB_UNKNOWN, XB_INITIALISING, XB_INITWAIT, XB_INITIALISED, XB_CONNECTED, XB_CLOSING,
       XB_CLOSED };

struct run;
struct raw_mirror;
struct alive_cache;
struct xs_domain;
struct xenbus_listener;

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
	/* Its frontend's state node is watched (token "fe"); not while its
	 * domain floods xenstore (xenbus.c polls it instead). */
	int fe_watched;
	int run_closed;               /* its run was closed to be deleted: never connects again */
	int run_gone;                 /* io.c found its run deleted: xenbus_fail_broken() closes it */
	/* data */
	uint64_t capacity;            /* sectors; cached: the commit worker owns sdev */
	struct run *run;
	struct store_device *sdev;
	struct raw_mirror *mirror;    /* datapath/raw_mirror.c: --mirror-raw, or the raw sink */
	void *journal;                /* journal.c: responses not yet published */
	/* counters for status */
	uint64_t requests, bytes, errors;
	char last_error[160];
	struct device *next;
	struct device *next_work;
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
	int closed;                   /* ended to be deleted (run_close): kept only while
	                               * its devices, trace or sampler still point at it */
	char lost_why[384];           /* what of it was not captured, and why: its end
	                               * reason (a trace never mapped: trace.c) */
	struct run *next;
};

struct control_client;
struct read_service;

struct backend {
	struct options opt;
	struct control_client *control; /* daemon/control_socket.c: status clients */
	int control_ep;
	int64_t store_usage;          /* store_disk_usage(), for --max-store-bytes */
	int64_t store_usage_at_us;    /* when it was read (refreshed every 100 ms) */
	int store_full_logged;
	/* daemon.c: the data file's freed slots given back when the guests
	 * are quiet, at run end and when the store is over its limit
	 * (store_give_back); io.c and runs.c ask for it. */
	uint64_t give_back_batches;   /* b->batches when last looked */
	int64_t give_back_quiet_us;   /* since when no batch ran (or the last try) */
	int64_t give_back_last_us;    /* the last try */
	int give_back_due;            /* slots may wait: try once quiet */
	int give_back_urgent;         /* io.c: a write was refused over --max-store-bytes */
	int give_back_backoff_ms;     /* how long quiet before the next try */
	struct plat *plat;
	struct xs_handle *xs;
	struct plat_evtchn *evt;
	struct plat_gnttab *gnt;
	struct store *store;
	struct device *devices;
	struct run *runs;
	struct device *work, *work_tail; /* devices with requests to take (FIFO) */
	struct io_pipe *io;           /* the commit worker (io_worker.c) */
	int stopping;
	int64_t started_us;
	uint64_t batches, commits_failed;
	uint64_t inline_commits; /* batches committed on the loop thread (io.c) */
	/* How long batches took in the store, begin to commit (and sync):
	 * counts at or under each of COMMIT_BUCKETS_US (cumulative, as
	 * Prometheus has them), all of them, and their sum (io.c; metrics.c). */
#define COMMIT_BUCKETS 12
	uint64_t commit_le[COMMIT_BUCKETS], commit_count, commit_sum_us;
	/* xenstore watch events (xenbus.c): seen, deferred by the frontends'
	 * rate limit, and rounds that drained the pipeline to act on some. */
	uint64_t xs_events, xs_deferred, xs_rounds;
	uint64_t xs_unwatched;        /* times a flooding domain's watches were dropped for polling */
	struct xs_domain *xs_domains; /* xenbus.c: each domain's budget of xenstore events */
	struct alive_cache *alive;    /* control/domains.c: liveness asked this round (NULL: none) */
	const struct xenbus_listener *listener; /* xenbus.c: whom it tells (the daemon wires it) */
	struct trace *traces;         /* trace.c: every domain's trace node */
	int trace_scan_due;           /* @introduceDomain fired */
	struct sync_pusher *sync;     /* control/sync_push.c: --sync */
	struct read_service *reads;   /* daemon/read_service.c: read.sock (NULL: none) */
};

#endif
