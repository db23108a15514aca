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
void be_io_schedule(struct be_device *d);
void be_io_unschedule(struct be_device *d);

/* io.c: the batch's steps.  be_io_prepare (steps 1-3) and be_io_finish (step 6)
 * run on the loop's thread, be_io_commit (steps 4-5) on whichever thread
 * commits. */
struct be_batch *be_io_prepare(struct be_backend *b);
void be_io_commit(struct be_backend *b, struct be_batch *bt);
void be_io_finish(struct be_backend *b, struct be_batch *bt);
/* The commit histogram's bounds (struct be_backend's commit_le), in us. */
extern const int64_t be_commit_buckets_us[COMMIT_BUCKETS];
/* PROFSVC_FAULT_KILL_BEFORE_PUSH (tests), read once at start. */
void be_io_fault_injection_init(void);

#endif
