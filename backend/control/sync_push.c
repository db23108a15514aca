/*
 * fleet_push.c - profile-backend --sync URL: every run pushed into the fleet
 * catalogue (fleet/) when it ends, from a thread of its own with its own
 * PostgreSQL connection and its own read-only store connection.
 *
 * Why a thread that only reads: a slow or unreachable server must never
 * delay a guest.  The loop thread only notes a run's end in a queue (a
 * mutex held for a few instructions); a store reader never blocks the
 * owner's commits (WAL); and nothing here holds anything the data path
 * waits for.
 *
 * What could not be pushed waits: the queue keeps up to FLEET_QUEUE run ids
 * (a run that ends while it is full sets `catch_up` instead, so nothing is
 * lost, only looked for later), the connection is retried with a backoff
 * (250 ms doubling to 10 s), and after every (re)connection a catch-up pass
 * (fleet_sync: one query, then only the runs the catalogue lacks) pushes
 * whatever ended meanwhile, including before this start.  status shows the
 * queue, the last error and what was pushed.
 *
 * May call: the fleet/ library, log.c, the store (store.h: it reads the
 * run to push) and util/; runs.c calls it.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/common/log.h"
#include "store/store.h"
#include "sync_push.h"
#include "fleet/fleet.h"
#include "util/deadline.h"
#include "util/safe_text.h"

#define FLEET_QUEUE 1024
#define BACKOFF_FIRST_MS 250
#define BACKOFF_MAX_MS 10000

struct be_sync_push {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	/* under mu */
	int64_t queue[FLEET_QUEUE];
	unsigned head, n;
	int catch_up;              /* look for every run the catalogue lacks */
	int connected;
	struct fleet *active;      /* the thread's connection, for stop to cut */
	uint64_t pushed, pushed_bytes, failures;
	int64_t last_push_us;
	char last_error[1024];
	/* the thread's own */
	char url[1024];
	char where[512];
	char db[1024];
};

static void set_error(struct be_sync_push *p, const char *msg)
{
	pthread_mutex_lock(&p->mu);
	snprintf(p->last_error, sizeof(p->last_error), "%s", msg);
	p->failures++;
	p->connected = 0;
	pthread_mutex_unlock(&p->mu);
}

/* Waits for work or for ms (0: for work only); 1 when told to stop. */
static int wait_for(struct be_sync_push *p, unsigned ms)
{
	struct timespec until = deadline_after_ms((int)ms);
	pthread_mutex_lock(&p->mu);
	while (!p->stop && (ms || (!p->n && !p->catch_up))) {
		int r = ms ? pthread_cond_timedwait(&p->cv, &p->mu, &until) : pthread_cond_wait(&p->cv, &p->mu);
		if (r == ETIMEDOUT)
			break;
	}
	int stop = p->stop;
	pthread_mutex_unlock(&p->mu);
	return stop;
}

/* Connects to the catalogue (*f NULL): 0, or -1 with err set. */
static int push_connect(struct be_sync_push *p, struct fleet **f, char *err, size_t errlen, char *logged)
{
	if (fleet_open(f, p->url, 1, err, errlen) != 0) {
		*f = NULL;
		return -1;
	}
	pthread_mutex_lock(&p->mu);
	p->connected = 1;
	p->catch_up = 1; /* whatever ended while we could not push */
	p->active = *f;
	pthread_mutex_unlock(&p->mu);
	be_elog_at(logged[0] ? LOG_NOTICE : LOG_INFO, -1, -1,
	        "fleet catalogue %s: connected%s", p->where,
	        logged[0] ? " again, pushing what waited" : "");
	logged[0] = 0;
	return 0;
}

/* Every run the catalogue lacks: 0, or -1 with err set. */
static int push_catch_up(struct be_sync_push *p, struct fleet *f, struct store *s, char *err, size_t errlen)
{
	struct fleet_sync_opts o = {0};
	struct fleet_sync_report rep;

	if (fleet_sync(f, s, &o, &rep) != 0) {
		snprintf(err, errlen, "%s", fleet_errmsg(f));
		return -1;
	}
	pthread_mutex_lock(&p->mu);
	p->catch_up = 0;
	p->n = 0; /* every ended run is there now */
	p->pushed += (uint64_t)rep.pushed;
	p->pushed_bytes += (uint64_t)rep.bytes;
	if (rep.pushed)
		p->last_push_us = store_now_us();
	pthread_mutex_unlock(&p->mu);
	if (rep.pushed)
		be_elog_at(LOG_INFO, -1, -1, "fleet catalogue %s: %lld run%s pushed (%lld bytes)",
		        p->where, (long long)rep.pushed, rep.pushed == 1 ? "" : "s",
		        (long long)rep.bytes);
	if (rep.summed)
		be_elog_at(LOG_NOTICE, -1, -1,
		        "fleet catalogue %s: %lld chunk%s synced before its checksums given %s checksum",
		        p->where, (long long)rep.summed, rep.summed == 1 ? "" : "s",
		        rep.summed == 1 ? "its" : "their");
	return 0;
}

/* The run at the queue's head: 0 (taken off the queue), or -1 with err set. */
static int push_run(struct be_sync_push *p, struct fleet *f, struct store *s, int64_t run_id, char *err,
                    size_t errlen)
{
	int pushed;
	int64_t bytes;
	char damage[1024];

	if (fleet_sync_run(f, s, run_id, &pushed, &bytes, damage, sizeof(damage)) != 0) {
		snprintf(err, errlen, "%s", fleet_errmsg(f));
		return -1;
	}
	pthread_mutex_lock(&p->mu);
	if (p->n && p->queue[p->head] == run_id) {
		p->head = (p->head + 1) % FLEET_QUEUE;
		p->n--;
	}
	if (pushed) {
		p->pushed++;
		p->pushed_bytes += (uint64_t)bytes;
		p->last_push_us = store_now_us();
	}
	pthread_mutex_unlock(&p->mu);
	if (pushed && damage[0])
		be_elog_at(LOG_WARNING, -1, run_id,
		        "run %lld pushed to the fleet catalogue %s without what fails its checksum here (%s); "
		        "'profdb check' names it: repair or delete the run, and the next sync sends it whole",
		        (long long)run_id, p->where, damage);
	else if (pushed)
		be_elog_at(LOG_INFO, -1, run_id, "run %lld pushed to the fleet catalogue %s (%lld bytes)",
		        (long long)run_id, p->where, (long long)bytes);
	return 0;
}

/* A push failed: said (a warning when the reason changes, not at every
 * retry), the connection dropped. */
static void push_failed(struct be_sync_push *p, struct fleet **f, const char *err, char *logged, size_t loggedlen)
{
	set_error(p, err);
	if (strncmp(logged, err, loggedlen - 1) != 0) {
		pthread_mutex_lock(&p->mu);
		unsigned waiting = p->n;
		pthread_mutex_unlock(&p->mu);
		be_elog_at(LOG_WARNING, -1, -1,
		        "fleet catalogue %s: %s; retrying (guests are not affected; %u run%s waiting)",
		        p->where, err, waiting, waiting == 1 ? "" : "s");
		snprintf(logged, loggedlen, "%s", err);
	}
	pthread_mutex_lock(&p->mu);
	p->active = NULL;
	pthread_mutex_unlock(&p->mu);
	fleet_close(*f);
	*f = NULL;
}

static void *pusher_main(void *arg)
{
	struct be_sync_push *p = arg;
	struct fleet *f = NULL;
	struct store *s = NULL;
	struct store_open_opts so = {.mode = STORE_READ};
	unsigned backoff = 0;
	char err[1024], logged[1024] = "";

	for (;;) {
		if (backoff && wait_for(p, backoff))
			break;
		if (!backoff && wait_for(p, 0))
			break;
		int failed = 0;
		if (!s && store_open(&s, p->db, &so, err, sizeof(err)) != 0) {
			s = NULL;
			failed = 1;
		} else if (!f) {
			failed = push_connect(p, &f, err, sizeof(err), logged) != 0;
		}
		if (!failed) {
			pthread_mutex_lock(&p->mu);
			int catch_up = p->catch_up;
			int64_t run_id = p->n ? p->queue[p->head] : 0;
			pthread_mutex_unlock(&p->mu);
			if (catch_up)
				failed = push_catch_up(p, f, s, err, sizeof(err)) != 0;
			else if (run_id)
				failed = push_run(p, f, s, run_id, err, sizeof(err)) != 0;
		}
		if (!failed) {
			backoff = 0;
			continue;
		}
		push_failed(p, &f, err, logged, sizeof(logged));
		backoff = backoff ? (backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2) : BACKOFF_FIRST_MS;
	}
	pthread_mutex_lock(&p->mu);
	p->active = NULL;
	pthread_mutex_unlock(&p->mu);
	fleet_close(f);
	if (s)
		store_close(s);
	return NULL;
}

struct be_sync_push *be_sync_push_start(const char *url, const char *db)
{
	struct be_sync_push *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	deadline_cond_init(&p->cv);
	snprintf(p->url, sizeof(p->url), "%s", url);
	snprintf(p->db, sizeof(p->db), "%s", db);
	fleet_describe_url(p->url, p->where, sizeof(p->where));
	p->catch_up = 1;
	if (pthread_create(&p->thread, NULL, pusher_main, p) != 0) {
		free(p);
		return NULL;
	}
	pthread_setname_np(p->thread, "fleet-push");
	return p;
}

void be_sync_push_run_ended(struct be_sync_push *p, int64_t run_id)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	if (p->n < FLEET_QUEUE)
		p->queue[(p->head + p->n++) % FLEET_QUEUE] = run_id;
	else
		p->catch_up = 1; /* full: found again by the catch-up pass */
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void be_sync_push_stop(struct be_sync_push *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	/* A push in progress is cut (its socket shut down: a server that no
	 * longer answers cannot hold up a stop); the server rolls it back and
	 * the next start pushes that run again. */
	if (p->active)
		fleet_interrupt(p->active);
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void be_sync_push_status(struct be_sync_push *p, FILE *f)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	fprintf(f, "fleet catalogue %s: %s, %u run%s waiting%s, %llu pushed (%llu bytes)%s%s\n", p->where,
	        p->connected ? "connected" : "not connected", p->n + 0, p->n == 1 ? "" : "s",
	        p->catch_up ? " (and a catch-up pass)" : "", (unsigned long long)p->pushed,
	        (unsigned long long)p->pushed_bytes, p->last_error[0] ? "; last error: " : "", p->last_error);
	pthread_mutex_unlock(&p->mu);
}

json_t *be_sync_push_status_json(struct be_sync_push *p)
{
	if (!p)
		return json_null();
	char err[1100];
	pthread_mutex_lock(&p->mu);
	safe_text(err, sizeof(err), p->last_error); /* a server's words: valid UTF-8 for JSON */
	json_t *o = json_pack("{s:s, s:b, s:I, s:b, s:I, s:I, s:I, s:o, s:o}", "catalogue", p->where,
	                      "connected", p->connected, "waiting", (json_int_t)p->n, "catch_up",
	                      p->catch_up, "pushed", (json_int_t)p->pushed, "pushed_bytes",
	                      (json_int_t)p->pushed_bytes, "failures", (json_int_t)p->failures,
	                      "last_push_us", p->last_push_us ? json_integer(p->last_push_us) : json_null(),
	                      "last_error", p->last_error[0] ? json_string(err) : json_null());
	pthread_mutex_unlock(&p->mu);
	return o;
}
