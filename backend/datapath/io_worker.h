/*
 * io_worker.h - the data path's pipeline, as the rest of the backend sees
 * it: batches are pipelined, while the commit worker stores and commits
 * one, the loop takes and copies in the next.  io_worker.c calls io.c.
 */
#ifndef PROFSVC_BE_IO_WORKER_H
#define PROFSVC_BE_IO_WORKER_H

#include "backend/common/state.h"

int io_start(struct backend *b);
void io_stop(struct backend *b);
/* Prepares a batch from the devices on b->work and hands it to the worker
 * (or keeps it ready while the worker is busy). */
void io_run_batch(struct backend *b);
/* 1 when io_run_batch() could make progress now. */
int io_can_run(struct backend *b);
/* The worker's completion fd (readable when a batch is committed). */
int io_event_fd(struct backend *b);
/* Answers the committed batch and hands over the next. */
void io_completed(struct backend *b);
/* Completes everything in flight: before any device is set up or torn
 * down, the worker is idle and no batch refers to a device. */
void io_quiesce(struct backend *b);

#endif
