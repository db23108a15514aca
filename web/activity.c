/*
 * activity.c - which runs changed (activity.h).
 *
 * A run's count also moves when the store cannot be read (every count
 * does): the streams then look themselves and say what is wrong.
 *
 * May call: store/store.h, store/store_watch.h, util/deadline.h, util/grow.h,
 * view/view_backend.h (the read service's socket), pthreads.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "store/store_watch.h"
#include "util/deadline.h"
#include "util/grow.h"
#include "view/view_backend.h"
#include "activity.h"

struct run_count {
	int64_t run_id;
	int64_t stamp;
	uint64_t count;
	int running;
};

/* A stream waiting for its run: woken alone, not with every other page. */
struct waiter {
	int64_t run_id;
	pthread_cond_t cond;
	struct waiter *next;
};

struct activity {
	pthread_mutex_t lock;
	struct waiter *waiters;
	pthread_t thread;
	struct store_watch *w;
	char *db;
	struct run_count *runs; /* in run order */
	size_t n, cap;
	uint64_t all;           /* added to every count: the store failed */
};

static struct run_count *find(struct activity *a, int64_t id)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a->runs[mid].run_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->n && a->runs[lo].run_id == id ? &a->runs[lo] : NULL;
}

static struct run_count *add(struct activity *a, int64_t id)
{
	size_t at = 0;
	while (at < a->n && a->runs[at].run_id < id)
		at++;
	if (GROW_FROM(a->runs, a->cap, a->n + 1, 64) != 0)
		return NULL;
	memmove(a->runs + at + 1, a->runs + at, (a->n - at) * sizeof(*a->runs));
	a->n++;
	a->runs[at] = (struct run_count){id, -1, 0, 0};
	return &a->runs[at];
}

/* Under the lock: the streams of run id (every stream when id < 0). */
static void wake(struct activity *a, int64_t id)
{
	for (struct waiter *w = a->waiters; w; w = w->next)
		if (id < 0 || w->run_id == id)
			pthread_cond_signal(&w->cond);
}

/* One look at the running runs: counts moved where stamps did. */
static int look(struct activity *a, struct store **s)
{
	struct store_activity *act;
	size_t n;
	char err[256];
	if (!*s && store_open(s, a->db,
	                      &(struct store_open_opts){.mode = STORE_READ, .follows_growth = 1,
	                                                .read_socket = view_read_socket()},
	                      err, sizeof(err)) != 0) {
		*s = NULL;
		return -1;
	}
	if (store_running_activity(*s, &act, &n) != 0) {
		store_close(*s);
		*s = NULL;
		return -1;
	}
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->n; i++)
		a->runs[i].running = 0;
	for (size_t i = 0; i < n; i++) {
		struct run_count *r = find(a, act[i].run_id);
		if (!r && !(r = add(a, act[i].run_id)))
			continue;
		r->running = 1;
		if (r->stamp != act[i].stamp) {
			r->stamp = act[i].stamp;
			r->count++;
			wake(a, r->run_id);
		}
	}
	/* runs that ended (or went): one last change, then kept as gone */
	size_t keep = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (!a->runs[i].running && a->runs[i].stamp != -2) {
			a->runs[i].stamp = -2;
			a->runs[i].count++;
			wake(a, a->runs[i].run_id);
		}
		if (a->runs[i].running || a->runs[i].stamp == -2)
			a->runs[keep++] = a->runs[i];
	}
	a->n = keep;
	pthread_mutex_unlock(&a->lock);
	free(act);
	return 0;
}

static void *follow(void *arg)
{
	struct activity *a = arg;
	struct store *s = NULL;
	uint64_t gen = store_watch_generation(a->w);
	while (!store_watch_stopping(a->w)) {
		if (look(a, &s) != 0) {
			pthread_mutex_lock(&a->lock);
			a->all++;
			wake(a, -1);
			pthread_mutex_unlock(&a->lock);
		}
		gen = store_watch_wait(a->w, gen, 1000);
	}
	if (s)
		store_close(s);
	pthread_mutex_lock(&a->lock);
	wake(a, -1);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct activity *activity_start(const char *db, struct store_watch *w)
{
	struct activity *a = calloc(1, sizeof(*a));
	if (!a || !(a->db = strdup(db))) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	a->w = w;
	pthread_mutex_init(&a->lock, NULL);
	if (pthread_create(&a->thread, NULL, follow, a) != 0) {
		free(a->db);
		free(a);
		return NULL;
	}
	return a;
}

void activity_free(struct activity *a)
{
	if (!a)
		return;
	pthread_join(a->thread, NULL); /* store_watch_stop() has woken it */
	pthread_mutex_destroy(&a->lock);
	free(a->runs);
	free(a->db);
	free(a);
}

static uint64_t count_locked(struct activity *a, int64_t id)
{
	struct run_count *r = find(a, id);
	return a->all + (r ? r->count : 0);
}

uint64_t activity_count(struct activity *a, int64_t run_id)
{
	pthread_mutex_lock(&a->lock);
	uint64_t c = count_locked(a, run_id);
	pthread_mutex_unlock(&a->lock);
	return c;
}

uint64_t activity_wait(struct activity *a, int64_t run_id, uint64_t seen, int timeout_ms)
{
	struct timespec until = deadline_after_ms(timeout_ms);
	struct waiter me = {.run_id = run_id};
	deadline_cond_init(&me.cond);
	pthread_mutex_lock(&a->lock);
	me.next = a->waiters;
	a->waiters = &me;
	uint64_t c;
	while ((c = count_locked(a, run_id)) == seen && !store_watch_stopping(a->w))
		if (pthread_cond_timedwait(&me.cond, &a->lock, &until) == ETIMEDOUT)
			break;
	for (struct waiter **p = &a->waiters; *p; p = &(*p)->next)
		if (*p == &me) {
			*p = me.next;
			break;
		}
	pthread_mutex_unlock(&a->lock);
	pthread_cond_destroy(&me.cond);
	return c;
}
