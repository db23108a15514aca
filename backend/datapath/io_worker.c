/*
 * io_worker.c - the commit worker: steps 4-5 of a batch (the store) run on
 * a thread of their own while the loop prepares the next batch, so that
 * the guests' next requests are taken and copied in while the previous
 * ones commit.  A small batch with nothing queued behind it is committed
 * on the loop's thread instead (nothing to overlap; two wake-ups saved in
 * the HaLVM writer's round trip).  The worker is the only user of the
 * store while it works: io_quiesce() waits for it before anything else
 * touches the store or tears a device down.
 *
 * May call: io.c, log.c, common/ (state.h) and the store; the daemon and
 * the control plane call it.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backend/common/log.h"
#include "backend/datapath/io.h"
#include "backend/datapath/io_worker.h"

struct io_pipe {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch *job;   /* with the worker */
	int job_done;
	int stop;
	int efd;             /* signalled when job_done */
	struct batch *ready; /* prepared while the worker was busy */
};


static void *worker_main(void *arg)
{
	struct backend *b = arg;
	struct io_pipe *io = b->io;

	pthread_mutex_lock(&io->lock);
	for (;;) {
		while (!io->stop && (!io->job || io->job_done))
			pthread_cond_wait(&io->cond, &io->lock);
		if (io->stop)
			break;
		struct batch *bt = io->job;
		pthread_mutex_unlock(&io->lock);
		io_commit(b, bt);
		pthread_mutex_lock(&io->lock);
		io->job_done = 1;
		pthread_cond_broadcast(&io->cond);
		uint64_t one = 1;
		if (write(io->efd, &one, sizeof(one)) != sizeof(one)) {
			/* the counter only overflows after 2^64 batches */
		}
	}
	pthread_mutex_unlock(&io->lock);
	return NULL;
}

static void submit(struct io_pipe *io, struct batch *bt)
{
	pthread_mutex_lock(&io->lock);
	io->job = bt;
	io->job_done = 0;
	pthread_cond_broadcast(&io->cond);
	pthread_mutex_unlock(&io->lock);
}

int io_start(struct backend *b)
{
	struct io_pipe *io = calloc(1, sizeof(*io));

	io_fault_injection_init();
	if (!io)
		return -1;
	io->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&io->lock, NULL);
	pthread_cond_init(&io->cond, NULL);
	b->io = io;
	if (io->efd < 0 || pthread_create(&io->thread, NULL, worker_main, b) != 0) {
		if (io->efd >= 0)
			close(io->efd);
		free(io);
		b->io = NULL;
		return -1;
	}
	return 0;
}

void io_stop(struct backend *b)
{
	struct io_pipe *io = b->io;

	if (!io)
		return;
	io_quiesce(b);
	pthread_mutex_lock(&io->lock);
	io->stop = 1;
	pthread_cond_broadcast(&io->cond);
	pthread_mutex_unlock(&io->lock);
	pthread_join(io->thread, NULL);
	close(io->efd);
	pthread_mutex_destroy(&io->lock);
	pthread_cond_destroy(&io->cond);
	free(io);
	b->io = NULL;
}

int io_event_fd(struct backend *b)
{
	return b->io->efd;
}

int io_can_run(struct backend *b)
{
	return b->work && (!b->io->job || !b->io->ready);
}

void io_run_batch(struct backend *b)
{
	struct io_pipe *io = b->io;

	if (!io->job) {
		struct batch *bt = io_prepare(b);
		if (!bt)
			return;
		/*
		 * Nothing else to take meanwhile (the HaLVM writer: one request
		 * outstanding, its next one only after our answer): handing the
		 * batch to the worker would overlap nothing and cost two thread
		 * wake-ups in the guest's round trip, so commit it here.  With
		 * more work queued the worker commits while we take it in.
		 */
		if (!b->work && bt->n <= INLINE_COMMIT_MAX_ITEMS) {
			io_commit(b, bt);
			io_finish(b, bt);
			b->inline_commits++;
			return;
		}
		submit(io, bt);
	} else if (!io->ready) {
		io->ready = io_prepare(b);
	}
}

/* Waits for the worker's job; then answers it and hands over the next. */
static void complete(struct backend *b, int wait)
{
	struct io_pipe *io = b->io;
	uint64_t v;

	pthread_mutex_lock(&io->lock);
	while (wait && io->job && !io->job_done)
		pthread_cond_wait(&io->cond, &io->lock);
	struct batch *done = io->job && io->job_done ? io->job : NULL;
	if (done)
		io->job = NULL;
	pthread_mutex_unlock(&io->lock);
	if (read(io->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled yet */
	}
	if (!done)
		return;
	io_finish(b, done);
	if (io->ready) {
		submit(io, io->ready);
		io->ready = NULL;
	}
}

void io_completed(struct backend *b)
{
	complete(b, 0);
}

void io_quiesce(struct backend *b)
{
	struct io_pipe *io = b->io;

	while (io && (io->job || io->ready)) {
		if (!io->job && io->ready) {
			submit(io, io->ready);
			io->ready = NULL;
		}
		complete(b, 1);
	}
}
