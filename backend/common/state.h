/*
 * state.h - the state profile-backend's parts share: a device (its
 * xenstore side, its ring, its data), a run (one per guest boot) and the
 * backend that holds them.  Each field says which part owns it; a part's
 * own state is its own struct, declared in its header.  Declares no
 * function; includes the options, the quota's chunk set and the shared
 * ring (backend/blkif/).
 *
 * Names in backend/: every type, function and global variable that a
 * header of backend/ declares begins with be_, then the module's own name
 * (struct be_run, enum be_sink, be_io_schedule(), be_trace_poll()); so do
 * those of its two libraries (libblkif: be_blkif_validate(), struct
 * be_blk_ring; libsampling: be_sampler_start(), be_walk_fp()).  A name
 * that never leaves its .c file (static) takes none; macros and enum
 * constants keep their capitals (XB_CONNECTED, SINK_STORE).
 *
 * May call: blkif/ (ring.h), options.h, quota.c.
 */
#ifndef PROFSVC_BE_STATE_H
#define PROFSVC_BE_STATE_H

#include <stdint.h>

#include "backend/blkif/ring.h"
#include "options.h"
#include "quota.h"

/* XenbusState, as the frontend and we write it (control/xenbus_state.c). */
enum { XB_UNKNOWN, XB_INITIALISING, XB_INITWAIT, XB_INITIALISED, XB_CONNECTED, XB_CLOSING,
       XB_CLOSED };

struct be_run;
struct be_raw_mirror;
struct be_runs;
struct be_domains;
struct be_io;
struct be_worker;
struct be_sampling;
struct be_traces;
struct be_xenbus_listener;

struct be_device {
	struct be_backend *b;
	struct be_io *io;             /* its data path (io.c's FIFO) */
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
	struct be_blk_ring ring;
	void *ring_mem;
	uint32_t ring_pages;
	uint32_t remote_port, local_port;
	int port_masked;              /* unmask after draining */
	enum be_work_state {
		WORK_IDLE,            /* nothing known to do */
		WORK_QUEUED,          /* on its data path's FIFO of devices to serve */
		WORK_MORE,            /* taken this turn, requests left: queue it again */
	} work;
	unsigned turn_taken;          /* requests of its turn taken in batches the size cut short */
	int ring_broken;              /* io.c found the ring bogus: be_xenbus_fail_broken() */
	uint32_t spurious;            /* wake-ups without requests, this second */
	int64_t spurious_since_us;
	int64_t unmask_at_us;         /* rate-limited: unmask later */
	/* Its frontend's state node is watched (token "fe"); not while its
	 * domain floods xenstore (xenbus.c polls it instead). */
	int fe_watched;
	int run_closed;               /* its run was closed to be deleted: never connects again */
	int run_gone;                 /* io.c found its run deleted: be_xenbus_fail_broken() closes it */
	/* data */
	uint64_t capacity;            /* sectors; cached: the commit worker owns sdev */
	struct be_run *run;
	struct store_device *sdev;
	struct be_raw_mirror *mirror;    /* datapath/raw_mirror.c: --mirror-raw, or the raw sink */
	void *journal;                /* journal.c: responses not yet published */
	/* counters for status */
	uint64_t requests, bytes, errors;
	char last_error[160];
	struct be_device *next;
	struct be_device *next_work;
};

struct be_run {
	uint32_t domid;
	char uuid[40];
	char name[STORE_NAME_MAX];
	int64_t run_id;
	int ndevices;
	struct be_chunk_set chunks;      /* what it costs in the store (--max-run-bytes) */
	int over_limit_logged;
	int saved;                    /* its domain was shut down to be saved */
	int64_t end_retry_at_us;      /* its domain is gone but the store could not end it
	                               * (a full disk): retried then (0: not ending) */
	int end_failures;
	char end_error[256];          /* why the store refused, the last time */
	int closed;                   /* ended to be deleted (be_run_close): kept only while
	                               * its devices, trace or sampler still point at it */
	char lost_why[384];           /* what of it was not captured, and why: its end
	                               * reason (a trace never mapped: trace.c) */
	struct be_run *next;
};

/* What the daemon opened at its start, for every part to use: the
 * options, the platform's handles, the store.  daemon.c fills it; nobody
 * changes it after. */
struct be_env {
	struct be_options opt;
	struct plat *plat;
	struct xs_handle *xs;
	struct plat_evtchn *evt;
	struct plat_gnttab *gnt;
	struct store *store;
	int64_t started_us;           /* when the daemon started (store_now_us) */
};

struct be_control;
struct be_read_service;

/* What the daemon holds (daemon.c makes and frees each part): every
 * part's own state, declared in the part's header, and the devices. */
struct be_backend {
	struct be_env env;            /* daemon.c: what it opened for every part */
	struct be_control *control;   /* daemon/control_socket.c: status clients */
	struct be_device *devices;    /* control/xenbus_state.c: every device, newest first */
	struct be_runs *runs;            /* control/runs.c: the runs being captured */
	struct be_domains *domains;      /* control/domains.c: liveness, xenstore budgets */
	struct be_io *io;             /* datapath/io.c: the batches' state */
	struct be_worker *worker;     /* datapath/io_worker.c: the commit worker */
	int stopping;                 /* daemon.c: a signal, or the host gone */
	const struct be_xenbus_listener *listener; /* xenbus.c: whom it tells (the daemon wires it) */
	struct be_sampling *sampling; /* control/sampling.c: the domains sampled */
	struct be_traces *traces;     /* control/trace.c: every domain's trace node */
	struct be_sync_push *sync;     /* control/sync_push.c: --sync */
	struct be_read_service *reads;   /* daemon/read_service.c: read.sock (NULL: none) */
};

#endif
