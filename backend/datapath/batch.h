/*
 * batch.h - a batch of guest requests, the data path's unit of work: what
 * io.c takes from the rings and answers, io_worker.c commits and sink.c
 * stands in for the store on.  batch.c owns refusing an item; it calls
 * only log.c.
 */
#ifndef PROFSVC_BE_BATCH_H
#define PROFSVC_BE_BATCH_H

#include <stdint.h>

#include "backend/common/state.h"

/* One guest request in a batch (Linux's blkback calls it pending_req). */
struct be_pending_req {
	struct be_device *d;
	struct be_blk_req req;
	struct be_blk_seg *ind_segs; /* an indirect request's segments; else req.seg */
	uint8_t *ind_pages;
	unsigned nsegs;
	uint64_t nsect;
	uint8_t *data;
	int16_t status;
	uint8_t kind;          /* effective operation */
	uint8_t pending;       /* still to be done */
	uint8_t noted;         /* its error is counted in the store */
	uint8_t run_gone;      /* the store says its device's run was deleted */
	uint64_t charged;      /* chunks it took from the run's quota (be_quota_admit) */
};

struct be_batch {
	struct be_pending_req *items;
	unsigned n, cap;
	int need_sync;
	int failed;
	int64_t commit_us;   /* be_io_commit's time in the store (the commit histogram) */
};

/* What an item does, whatever its operation code says. */
enum { K_NONE, K_READ, K_WRITE, K_FLUSH, K_DISCARD };

/* Derived, never stored: items live in an array that grows (realloc). */
static inline const struct be_blk_seg *be_item_segs(const struct be_pending_req *it)
{
	return it->ind_segs ? it->ind_segs : it->req.seg;
}

/* The request is answered with status (and done with).  Also runs on the
 * worker: only the item is touched. */
void be_batch_fail(struct be_pending_req *it, int16_t status, const char *why);

#endif
