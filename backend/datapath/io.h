/*
 * io.h - the data path's batch (io.c): devices queued for service, and the
 * batch's steps, which io_worker.c runs (prepare and finish on the loop's
 * thread, commit on whichever thread commits).  struct be_io is its
 * state.  io.c may call batch.c, sink.c, journal.c, raw_mirror.c, storm.c,
 * blkif/, quota.c, log.c, the store and the platform.
 */
#ifndef PROFSVC_BE_IO_H
#define PROFSVC_BE_IO_H

#include "backend/common/state.h"
#include "batch.h"

/* Its state: the devices queued, the batches' counts, what
 * --max-store-bytes last read of the store. */
struct be_io;

/* NULL without memory.  Reads PROFSVC_FAULT_KILL_BEFORE_PUSH (tests). */
struct be_io *be_io_new(const struct be_env *env);
void be_io_free(struct be_io *io);

/* The device has requests to take: on its data path's FIFO (d->io). */
void be_io_schedule(struct be_device *d);
void be_io_unschedule(struct be_device *d);
/* 1 when a device waits on the FIFO. */
int be_io_has_work(const struct be_io *io);

/* io.c: the batch's steps.  be_io_prepare (steps 1-3) and be_io_finish
 * (step 6) run on the loop's thread, be_io_commit (steps 4-5) on
 * whichever thread commits. */
struct be_batch *be_io_prepare(struct be_io *io);
void be_io_commit(struct be_io *io, struct be_batch *bt);
void be_io_finish(struct be_io *io, struct be_batch *bt);

/* What it counted, for status and metrics: batches, those whose commit
 * failed, and how long batches took in the store, begin to commit (and
 * sync): counts at or under each of be_io_commit_buckets_us (cumulative,
 * as Prometheus has them), all of them, and their sum. */
#define BE_IO_COMMIT_BUCKETS 12
struct be_io_stats {
	uint64_t batches, commits_failed;
	uint64_t commit_le[BE_IO_COMMIT_BUCKETS], commit_count, commit_sum_us;
};
void be_io_stats(const struct be_io *io, struct be_io_stats *out);
uint64_t be_io_batches(const struct be_io *io);
/* The commit histogram's bounds, in us. */
extern const int64_t be_io_commit_buckets_us[BE_IO_COMMIT_BUCKETS];
/* 1 when a write was refused over --max-store-bytes since the last call
 * (the space freed is to be asked back at once). */
int be_io_take_store_full(struct be_io *io);
/* Space was given back: the store's usage is read again at the next
 * write. */
void be_io_usage_stale(struct be_io *io);

#endif
