/*
 * options.h - profile-backend's command-line options and the constants
 * every part shares (xenstore roots, limits, defaults).  Declares no
 * function; includes only the platform's and the store's enums.
 *
 * May call: platform/ (platform.h's types), store/ (store.h's types).
 */
#ifndef PROFSVC_BE_OPTIONS_H
#define PROFSVC_BE_OPTIONS_H

#include <stdint.h>

#include "platform/platform.h"
#include "store/store.h"

#define BACKEND_TYPE "profsvc"
#define BACKEND_ROOT "/local/domain/0/backend/" BACKEND_TYPE
/* Disks of stock xl (libxl writes them, as kind vbd): ours when their
 * hotplug script is XL_HOTPLUG_SCRIPT (docs: profile-backend(8)). */
#define VBD_ROOT "/local/domain/0/backend/vbd"
#define XL_HOTPLUG_SCRIPT "block-profsvc"
/* KERNEL_ROOT/DOMID: the ELF `create` started the domain from (its
 * config's kernel, an absolute path), the sampler's symbols for it.
 * dom0's own node: no guest can write it. */
#define KERNEL_ROOT "/local/domain/0/profsvc/kernel"
#define MAX_RING_PAGE_ORDER 4u     /* up to 16 ring pages */
#define DEFAULT_CAPACITY (1ull << 31) /* 1 TiB of sparse sectors */
#define DEFAULT_MAX_RUN_BYTES (4ull << 30)
#define REQUESTS_PER_TURN 64u      /* per device per loop turn: nobody starves */
#define BATCH_BYTES_MAX (4u << 20) /* data per batch (two in flight: RSS) */
#define INLINE_COMMIT_MAX_ITEMS 4u
#define DEFAULT_MAX_TRACE_PAGES 1024u /* 4 MiB: mirage-profile's examples share 1 MB */
#define DEFAULT_TRACE_POLL_MS 10u /* io.c: a batch this small, alone, commits inline */

/* --sink: the store, or a baseline for `make bench` that records nothing
 * in the store but the run catalogue. */
enum be_sink {
	SINK_STORE,
	SINK_NULL,        /* data discarded after the grant copy: the transport */
	SINK_RAW,         /* a raw image in the page cache (QEMU qdisk) */
	SINK_RAW_DIRECT,  /* a raw image, O_DIRECT + libaio (tapdisk) */
};

struct be_options {
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
	int force;                   /* detach: remove the device without the frontend's Closed */
	int json;                    /* status: the backend object (docs/json.md) */
	int no_intake;               /* --intake off: commit each batch to SQLite before answering */
	uint64_t capacity;
	const char *mirror_raw;       /* NULL: no raw images */
	enum be_sink sink;               /* where the data goes (benchmarks) */
	const char *sink_dir;         /* SINK_RAW*: the images */
	uint32_t max_trace_pages;     /* a guest's trace buffer, at most */
	unsigned trace_poll_ms;       /* trace headers looked at, at least this often */
	const char *sync_url;         /* --sync: the fleet catalogue runs are pushed to as they end */
	uint32_t sample_hz;           /* sample --hz (0: the default) */
	uint64_t sample_us;           /* sample --seconds, in us (0: until the domain ends) */
	const char *symbols;          /* sample --symbols: the program's ELF */
	const char *kernel_symbols;   /* sample --kernel-symbols: a PV guest kernel's System.map */
	uint32_t start_sample_hz;     /* start --sample-hz: every new domain sampled (0: none) */
};

#endif
