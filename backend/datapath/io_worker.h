/*
 * io_worker.h - the data path's pipeline, as the rest of the backend sees
 * it: batches are pipelined, while the commit worker stores and commits
 * one, the loop takes and copies in the next.  io_worker.c calls io.c.
 */
#ifndef PROFSVC_BE_IO_WORKER_H
#define PROFSVC_BE_IO_WORKER_H

#include "backend/common/state.h"

int be_io_start(struct be_backend *b);
void be_io_stop(struct be_backend *b);
/* Prepares a batch from the devices on b->work and hands it to the worker
 * (or keeps it ready while the worker is busy). */
void be_io_run_batch(struct be_backend *b);
/* 1 when be_io_run_batch() could make progress now. */
int be_io_can_run(struct be_backend *b);
/* The worker's completion fd (readable when a batch is committed). */
int be_io_event_fd(struct be_backend *b);
/* Answers the committed batch and hands over the next. */
void be_io_completed(struct be_backend *b);
/* Completes everything in flight: before any device is set up or torn
 * down, the worker is idle and no batch refers to a device. */
void be_io_quiesce(struct be_backend *b);

#endif
