/*
 * io_worker.h - the data path's pipeline, as the rest of the backend sees
 * it: batches are pipelined, while the commit worker stores and commits
 * one, the loop takes and copies in the next.  struct be_worker is its
 * state; io_worker.c may call io.c.
 */
#ifndef PROFSVC_BE_IO_WORKER_H
#define PROFSVC_BE_IO_WORKER_H

#include <stdint.h>

struct be_io;

/* Its state: the thread, the batch it commits and the one ready next. */
struct be_worker;

/* The commit worker's thread, committing io's batches; NULL when it
 * cannot start (errno). */
struct be_worker *be_worker_start(struct be_io *io);
/* Completes what is in flight, stops the thread, frees w (NULL: nothing). */
void be_worker_stop(struct be_worker *w);
/* Prepares a batch from the devices queued and hands it to the worker
 * (or keeps it ready while the worker is busy). */
void be_worker_run_batch(struct be_worker *w);
/* 1 when be_worker_run_batch() could make progress now. */
int be_worker_can_run(struct be_worker *w);
/* The worker's completion fd (readable when a batch is committed). */
int be_worker_event_fd(struct be_worker *w);
/* Answers the committed batch and hands over the next. */
void be_worker_completed(struct be_worker *w);
/* Completes everything in flight: before any device is set up or torn
 * down, the worker is idle and no batch refers to a device (w NULL:
 * nothing runs). */
void be_worker_quiesce(struct be_worker *w);
/* Batches committed on the loop's thread (nothing else was queued). */
uint64_t be_worker_inline_commits(const struct be_worker *w);

#endif
