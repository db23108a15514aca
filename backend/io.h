/*
 * io.h - the data path's own types, shared by its parts: io.c (the
 * batch: take, check, copy, store, answer), io_worker.c (the commit
 * worker that runs the store step while the loop prepares the next
 * batch), sink.c (the benchmark sinks that stand in for the store) and
 * mirror_raw.c (a device's raw image, which the mirror and the raw sink
 * write).
 */
#ifndef PROFSVC_IO_H
#define PROFSVC_IO_H

#include <stdint.h>

#ifdef HAVE_AIO
#include <libaio.h>
#endif

#include "backend.h"

/* One guest request in a batch (Linux's blkback calls it pending_req). */
struct pending_req {
	struct device *d;
	struct blk_req req;
	struct blk_seg *ind_segs; /* an indirect request's segments; else req.seg */
	uint8_t *ind_pages;
	unsigned nsegs;
	uint64_t nsect;
	uint8_t *data;
	int16_t status;
	uint8_t kind;          /* effective operation */
	uint8_t pending;       /* still to be done */
	uint8_t noted;         /* its error is counted in the store */
	uint64_t charged;      /* chunks it took from the run's quota (quota_admit) */
};

struct batch {
	struct pending_req *items;
	unsigned n, cap;
	int need_sync;
	int failed;
};

/* What an item does, whatever its operation code says. */
enum { K_NONE, K_READ, K_WRITE, K_FLUSH, K_DISCARD };

/* Derived, never stored: items live in an array that grows (realloc). */
static inline const struct blk_seg *item_segs(const struct pending_req *it)
{
	return it->ind_segs ? it->ind_segs : it->req.seg;
}

/* The request is answered with status (and done with). */
void io_fail(struct pending_req *it, int16_t status, const char *why);

/* io.c: the batch's steps.  io_prepare (steps 1-3) and io_finish (step 6)
 * run on the loop's thread, io_commit (steps 4-5) on whichever thread
 * commits. */
struct batch *io_prepare(struct backend *b);
void io_commit(struct backend *b, struct batch *bt);
void io_finish(struct backend *b, struct batch *bt);
/* PROFSVC_FAULT_KILL_BEFORE_PUSH (tests), read once at start. */
void io_fault_injection_init(void);

/* sink.c: steps 4-5 with the store replaced (--sink null|raw|raw-direct). */
void sink_batch(struct backend *b, struct batch *bt);

/* mirror_raw.c: a device's raw image (d->mirror), opened by mirror_open. */
#define MIRROR_DEPTH 64 /* writes in flight per image */
struct mirror {
	int fd;
	int direct;
	int sink;          /* the sink: writes waited for, buffers not ours */
#ifdef HAVE_AIO
	io_context_t ctx;  /* 0: no libaio, writes are pwrite */
	unsigned inflight;
#endif
	char path[512];
};
#ifdef HAVE_AIO
/* Reaps the image's completed writes, waiting for at least min; -1 if any
 * failed.  A sink's write (iocb data: its int16_t status) that failed is
 * marked -1; a mirror's buffer (iocb data) is freed. */
int mirror_reap(struct device *d, long min);
#endif

#endif
