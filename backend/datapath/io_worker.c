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
 * The data file's freed slots are given back from here too, when the
 * guests have been quiet (be_worker_give_back): only the worker knows the
 * store is idle.
 *
 * Owns struct be_worker: the thread, the batch it commits, the one ready
 * next, the count of batches committed inline, the give-back's timing.
 * It knows the data path only as struct be_io, and the store.
 *
 * May call: io.c, log.c, util/clock, common/ and the store
 * (store_give_back); the daemon and the control plane call it.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backend/common/log.h"
#include "io.h"
#include "io_worker.h"
#include "util/clock.h"

/* The data file's freed slots given back (be_worker_give_back). */
struct give_back {
	uint64_t runs_ended;  /* be_runs_ended() when last looked */
	uint64_t batches;     /* be_io_batches() when last looked */
	int64_t quiet_us;     /* since when no batch ran (or the last try) */
	int64_t last_us;      /* the last try */
	int due;              /* slots may wait: try once quiet */
	int urgent;           /* io.c: a write was refused over --max-store-bytes */
	int backoff_ms;       /* how long quiet before the next try */
};

struct be_worker {
	struct be_io *io;    /* the batches' state (io.c) */
	struct store *store; /* io's store, for the give-back */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct be_batch *job; /* with the worker */
	int job_done;
	int stop;
	int efd;             /* signalled when job_done */
	struct be_batch *ready; /* prepared while the worker was busy */
	uint64_t inline_commits; /* batches committed on the loop's thread */
	struct give_back give_back;
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

struct be_worker *be_worker_start(struct be_io *io, struct store *store)
{
	struct be_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->io = io;
	w->store = store;
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

/* The data file's freed slots.  Inside the guests' batches they come
 * back as the WAL's generations pass, which happens only while guests
 * write: what the last rewrites freed, what waited when a run ended and
 * what a reader held were kept (76 MiB for a guest that rewrote 4 MiB)
 * until the next write.  So once the guests have been quiet for a second
 * the store gives back what no reader can see (store_give_back: a
 * checkpoint of the WAL proves it); while a reader holds some, it tries
 * again later, backing off to every GIVE_BACK_MAX_MS.  A write refused
 * over --max-store-bytes asks for a try at once (at most every 200 ms):
 * the space a rewrite freed may be all it needs.  The worker decides,
 * being the one that knows when the store is idle. */
#define GIVE_BACK_QUIET_MS 1000
#define GIVE_BACK_MAX_MS 30000
#define GIVE_BACK_URGENT_US 200000

int be_worker_give_back(struct be_worker *w, uint64_t runs_ended)
{
	struct give_back *g = &w->give_back;
	int64_t now = clock_mono_us();

	if (runs_ended != g->runs_ended) {
		/* what a run's last rewrites freed goes back once the guests
		 * are quiet, not at some later guest's write */
		g->runs_ended = runs_ended;
		g->due = 1;
		g->backoff_ms = 0;
	}
	if (be_io_take_store_full(w->io))
		g->urgent = 1;
	if (be_io_batches(w->io) != g->batches) {
		g->batches = be_io_batches(w->io);
		g->quiet_us = now;
		g->due = 1;
		g->backoff_ms = GIVE_BACK_QUIET_MS;
	}
	if (!g->due && !g->urgent)
		return -1;
	if (g->backoff_ms < GIVE_BACK_QUIET_MS)
		g->backoff_ms = GIVE_BACK_QUIET_MS;
	int64_t at = g->quiet_us + (int64_t)g->backoff_ms * 1000;
	if (g->urgent) {
		int64_t soon = g->last_us + GIVE_BACK_URGENT_US;
		at = soon < at ? soon : at;
	}
	if (now < at)
		return (int)((at - now + 999) / 1000);
	if (!g->urgent && be_worker_can_run(w))
		return GIVE_BACK_QUIET_MS; /* not quiet after all */
	be_worker_quiesce(w);
	int64_t waiting = 0;
	g->last_us = now;
	g->urgent = 0;
	if (store_give_back(w->store, &waiting) != 0) {
		be_blog_at(LOG_WARNING, "cannot give freed data-file space back: %s (tried again later)",
		        store_errmsg(w->store));
		waiting = 1;
	}
	be_io_usage_stale(w->io); /* --max-store-bytes: read the usage again */
	if (waiting == 0) {
		g->due = 0;
		return -1;
	}
	g->quiet_us = now;
	g->backoff_ms = g->backoff_ms * 2 < GIVE_BACK_MAX_MS ? g->backoff_ms * 2 : GIVE_BACK_MAX_MS;
	return g->backoff_ms;
}

void be_worker_give_back_due(struct be_worker *w)
{
	w->give_back.due = 1;
	w->give_back.quiet_us = clock_mono_us();
}
