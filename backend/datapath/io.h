/*
 * io.h - the data path's batch (io.c): devices queued for service, and the
 * batch's steps, which io_worker.c runs (prepare and finish on the loop's
 * thread, commit on whichever thread commits).
 * io.c calls batch.c, sink.c, journal.c, raw_mirror.c, storm.c, blkif/,
 * quota.c and log.c.
 */
#ifndef PROFSVC_BE_IO_H
#define PROFSVC_BE_IO_H

#include "backend/common/state.h"
#include "backend/datapath/batch.h"

/* The device has requests to take: on the backend's FIFO (b->work). */
void io_schedule(struct device *d);
void io_unschedule(struct device *d);

/* io.c: the batch's steps.  io_prepare (steps 1-3) and io_finish (step 6)
 * run on the loop's thread, io_commit (steps 4-5) on whichever thread
 * commits. */
struct batch *io_prepare(struct backend *b);
void io_commit(struct backend *b, struct batch *bt);
void io_finish(struct backend *b, struct batch *bt);
/* The commit histogram's bounds (struct backend's commit_le), in us. */
extern const int64_t commit_buckets_us[COMMIT_BUCKETS];
/* PROFSVC_FAULT_KILL_BEFORE_PUSH (tests), read once at start. */
void io_fault_injection_init(void);

#endif
