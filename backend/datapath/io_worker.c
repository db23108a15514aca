/*
 * io_worker.c - the commit worker: steps 4-5 of a batch (the store) run on
 * a thread of their own while the loop prepares the next batch, so that
 * the guests' next requests are taken and copied in while the previous
 * ones commit.  A small batch with nothing queued behind it is committed
 * on the loop's thread instead (nothing to overlap; two wake-ups saved in
 * the HaLVM writer's round trip).  The worker is the only user of the
 * store while it works: be_worker_quiesce() waits for it before anything else
 * touches the store or tears a device down.
 *
 * Owns struct be_worker: the thread, the batch it commits, the one ready
 * next, the count of batches committed inline.  It knows the data path
 * only as struct be_io.
 *
 * May call: io.c.  The daemon and the control plane call it.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backend/datapath/io.h"
#include "backend/datapath/io_worker.h"

struct be_worker {
	struct be_io *io;    /* the batches' state (io.c) */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct be_batch *job; /* with the worker */
	int job_done;
	int stop;
	int efd;             /* signalled when job_done */
	struct be_batch *ready; /* prepared while the worker was busy */
	uint64_t inline_commits; /* batches committed on the loop's thread */
};

static void *worker_main(void *arg)
{
	struct be_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && (!w->job || w->job_done))
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		struct be_batch *bt = w->job;
		pthread_mutex_unlock(&w->lock);
		be_io_commit(w->io, bt);
		pthread_mutex_lock(&w->lock);
		w->job_done = 1;
		pthread_cond_broadcast(&w->cond);
		uint64_t one = 1;
		if (write(w->efd, &one, sizeof(one)) != sizeof(one)) {
			/* the counter only overflows after 2^64 batches */
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void submit(struct be_worker *w, struct be_batch *bt)
{
	pthread_mutex_lock(&w->lock);
	w->job = bt;
	w->job_done = 0;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

struct be_worker *be_worker_start(struct be_io *io)
{
	struct be_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->io = io;
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (w->efd < 0 || pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		if (w->efd >= 0)
			close(w->efd);
		free(w);
		return NULL;
	}
	return w;
}

void be_worker_stop(struct be_worker *w)
{
	if (!w)
		return;
	be_worker_quiesce(w);
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	close(w->efd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}

int be_worker_event_fd(struct be_worker *w)
{
	return w->efd;
}

int be_worker_can_run(struct be_worker *w)
{
	return be_io_has_work(w->io) && (!w->job || !w->ready);
}

uint64_t be_worker_inline_commits(const struct be_worker *w)
{
	return w->inline_commits;
}

void be_worker_run_batch(struct be_worker *w)
{
	if (!w->job) {
		struct be_batch *bt = be_io_prepare(w->io);
		if (!bt)
			return;
		/*
		 * Nothing else to take meanwhile (the HaLVM writer: one request
		 * outstanding, its next one only after our answer): handing the
		 * batch to the worker would overlap nothing and cost two thread
		 * wake-ups in the guest's round trip, so commit it here.  With
		 * more work queued the worker commits while we take it in.
		 */
		if (!be_io_has_work(w->io) && bt->n <= INLINE_COMMIT_MAX_ITEMS) {
			be_io_commit(w->io, bt);
			be_io_finish(w->io, bt);
			w->inline_commits++;
			return;
		}
		submit(w, bt);
	} else if (!w->ready) {
		w->ready = be_io_prepare(w->io);
	}
}

/* Waits for the worker's job; then answers it and hands over the next. */
static void complete(struct be_worker *w, int wait)
{
	uint64_t v;

	pthread_mutex_lock(&w->lock);
	while (wait && w->job && !w->job_done)
		pthread_cond_wait(&w->cond, &w->lock);
	struct be_batch *done = w->job && w->job_done ? w->job : NULL;
	if (done)
		w->job = NULL;
	pthread_mutex_unlock(&w->lock);
	if (read(w->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled yet */
	}
	if (!done)
		return;
	be_io_finish(w->io, done);
	if (w->ready) {
		submit(w, w->ready);
		w->ready = NULL;
	}
}

void be_worker_completed(struct be_worker *w)
{
	complete(w, 0);
}

void be_worker_quiesce(struct be_worker *w)
{
	while (w && (w->job || w->ready)) {
		if (!w->job && w->ready) {
			submit(w, w->ready);
			w->ready = NULL;
		}
		complete(w, 1);
	}
}
