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
struct store;

/* Its state: the thread, the batch it commits and the one ready next. */
struct be_worker;

/* The commit worker's thread, committing io's batches to store; NULL
 * when it cannot start (errno). */
struct be_worker *be_worker_start(struct be_io *io, struct store *store);
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
/* The store's freed data-file slots given back (store_give_back) once the
 * guests have been quiet for a second, after a run's end (runs_ended:
 * be_runs_ended() grew), after batches, and at once (at most every
 * 200 ms) when a write was refused over --max-store-bytes; while a reader
 * holds some, again later, backing off to every 30 s.  Returns the ms
 * until it wants to run again, -1: nothing waits. */
int be_worker_give_back(struct be_worker *w, uint64_t runs_ended);
/* Slots may wait (what the store's open could not give back): a try once
 * the guests have been quiet for a second from now. */
void be_worker_give_back_due(struct be_worker *w);

#endif
