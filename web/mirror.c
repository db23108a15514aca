/*
 * mirror.c - profdb serve over a fleet catalogue (--db postgresql://...): a
 * private store that mirrors the catalogue, which the server then serves
 * exactly as it serves a host's store.
 *
 * Why a mirror: every page, download, API path and event stream of the
 * server reads a store; a private store that holds the catalogue's runs
 * keeps one server.  It holds every run's rows (a run and its devices: the
 * catalogue, the run pages' facts and sizes) from the start, and a run's
 * bytes (chunks, trace packets) from the first request that reads them
 * (mirror_ensure), so that a fleet of 100,000 runs costs its rows, not its
 * profiles.  A thread looks for runs synced lately every two seconds
 * (refresh() says how far back), so a run a host pushes appears in an open catalogue page (the
 * store's change notifications do the rest), and a run pushed again
 * (a running run, later ended) is replaced under the same id.
 *
 * Ids: hosts number their runs alike, so the mirror numbers them in the
 * order it meets them; a run's page names its host (the run's host field).
 * The mapping lives in memory, keyed by host id and run id.
 *
 * May call: fleet/fleet.h, util/deadline.h, util/id_index.h, util/grow.h,
 * pthreads.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fleet/fleet.h"
#include "util/deadline.h"
#include "util/grow.h"
#include "util/id_index.h"
#include "mirror.h"

struct entry {
	char host_id[33];
	int64_t run_id;    /* the host's */
	int64_t local_id;  /* ours */
	char stamp[40]; /* the catalogue's (fleet_sync.c: a partial run's is longer) */
	int have_bytes;
	unsigned seen;     /* the last full look that found it */
};

struct mirror {
	pthread_mutex_t mu; /* the connection, the writer, the map */
	pthread_cond_t cv;
	pthread_t thread;
	int stop, started;
	/* The first look, read without mu (the refresher holds it for the
	 * whole look): loaded once it committed, met counts the runs so far,
	 * first_rc its outcome for mirror_start (0 pending, 1 done, -1 failed) */
	atomic_int loaded, first_rc;
	atomic_llong met;
	atomic_int stopping; /* mirror_stop: a look in progress gives up */
	struct fleet *f;
	struct store *w;
	char url[1024], dir[4096], path[4200];
	int64_t since_us;    /* the newest synced_us seen */
	unsigned looks;      /* refreshes so far */
	unsigned full_every; /* a full look every this many (150: 5 minutes) */
	struct entry *v;     /* the runs met, in order (id: index + 1) */
	size_t n, vcap;
	struct id_index idx; /* ids by (host_id, run_id) */
	uint32_t *by_local;  /* local id -> id, 0 for none */
	size_t nlocal;
	char err[1024];
	char first_err[1024]; /* why the first look failed */
};

static uint64_t key_hash(const char *host_id, int64_t run_id)
{
	uint64_t h = id_index_hash(ID_INDEX_SEED, host_id, strlen(host_id));
	return (h ^ (uint64_t)run_id) * 1099511628211ULL;
}

static uint64_t entry_hash(const void *ctx, uint32_t id)
{
	const struct entry *e = &((const struct mirror *)ctx)->v[id - 1];
	return key_hash(e->host_id, e->run_id);
}

struct run_key {
	const struct mirror *m;
	const char *host_id;
	int64_t run_id;
};

static int entry_is(const void *ctx, uint32_t id)
{
	const struct run_key *k = ctx;
	const struct entry *e = &k->m->v[id - 1];
	return e->run_id == k->run_id && strcmp(e->host_id, k->host_id) == 0;
}

static struct entry *find(struct mirror *m, const char *host_id, int64_t run_id)
{
	struct run_key k = {m, host_id, run_id};
	uint32_t id = id_index_find(&m->idx, key_hash(host_id, run_id), entry_is, &k, NULL);
	return id ? &m->v[id - 1] : NULL;
}

/* Room for local_id in by_local: 0, or -1. */
static int grow_local(struct mirror *m, int64_t local_id)
{
	size_t was = m->nlocal;
	if (GROW_FROM(m->by_local, m->nlocal, (size_t)local_id + 1, 1024) != 0)
		return -1;
	memset(m->by_local + was, 0, (m->nlocal - was) * sizeof(*m->by_local));
	return 0;
}

static struct entry *add(struct mirror *m, const char *host_id, int64_t run_id, int64_t local_id)
{
	size_t at;
	struct run_key k = {m, host_id, run_id};
	if (m->n >= UINT32_MAX - 1 || grow_local(m, local_id) != 0 ||
	    id_index_reserve(&m->idx, entry_hash, m) != 0)
		return NULL;
	if (GROW_FROM(m->v, m->vcap, m->n + 1, 1024) != 0)
		return NULL;
	id_index_find(&m->idx, key_hash(host_id, run_id), entry_is, &k, &at);
	struct entry *e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	snprintf(e->host_id, sizeof(e->host_id), "%s", host_id);
	e->run_id = run_id;
	e->local_id = local_id;
	id_index_put(&m->idx, at, (uint32_t)++m->n);
	m->by_local[local_id] = (uint32_t)m->n;
	return e;
}

/* One run's rows from the catalogue: new, or replacing an older copy. */
static int take_rows(void *ctx, struct fleet_run *r, const char *stamp, int64_t synced_us,
                     struct store_device_info *devs, int ndevs)
{
	struct mirror *m = ctx;
	char host_id[33];
	int64_t run_id = r->run.run_id, local;

	if (atomic_load(&m->stopping))
		return snprintf(m->err, sizeof(m->err), "stopping"), -1;
	if (!atomic_load(&m->loaded))
		atomic_fetch_add(&m->met, 1);

	snprintf(host_id, sizeof(host_id), "%s", r->host_id);
	if (synced_us > m->since_us)
		m->since_us = synced_us;
	struct entry *e = find(m, host_id, run_id);
	if (e)
		e->seen = m->looks;
	if (e && strcmp(e->stamp, stamp) == 0)
		return 0;
	int dr = e ? store_run_delete(m->w, e->local_id) : 0;
	if (dr != 0 && dr != STORE_ENOTFOUND) /* (gone: a fetch of its bytes failed) */
		return snprintf(m->err, sizeof(m->err), "%s", store_errmsg(m->w)), -1;
	/* the host column is the catalogue's name for the host (a run's own
	 * field says where it was captured, the same host but for imports) */
	if (r->hostname[0])
		snprintf(r->run.host, sizeof(r->run.host), "%s", r->hostname);
	if (fleet_copy_rows(m->w, r, e ? e->local_id : 0, devs, ndevs, &local) != 0)
		return snprintf(m->err, sizeof(m->err), "%s", store_errmsg(m->w)), -1;
	if (!e && !(e = add(m, host_id, run_id, local)))
		return snprintf(m->err, sizeof(m->err), "out of memory"), -1;
	snprintf(e->stamp, sizeof(e->stamp), "%s", stamp);
	e->have_bytes = 0;
	e->seen = m->looks;
	return 0;
}

/* After a full look: runs the catalogue no longer holds (deleted there)
 * leave the mirror too.  Their entries stay, under a run id no run has. */
static int drop_unseen(struct mirror *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct entry *e = &m->v[i];
		if (e->local_id <= 0 || e->run_id <= 0 || e->seen == m->looks)
			continue;
		int rc = store_run_delete(m->w, e->local_id);
		if (rc != 0 && rc != STORE_ENOTFOUND)
			return snprintf(m->err, sizeof(m->err), "%s", store_errmsg(m->w)), -1;
		m->by_local[e->local_id] = 0;
		e->run_id = -1; /* (its id stays in the index: it matches no run) */
	}
	return 0;
}

/* Runs synced since the last look, in one batch; under mu. */
static int refresh(struct mirror *m)
{
	static const struct fleet_rows_cb cb = {take_rows};
	if (store_batch_begin(m->w) != 0)
		return snprintf(m->err, sizeof(m->err), "%s", store_errmsg(m->w)), -1;
	/* synced_us is the server's clock when the run's row was written, not
	 * when its transaction committed: a sync of a large run may commit
	 * minutes after a later one.  So each look reaches 5 minutes back,
	 * and every 5 minutes one looks at everything (runs found current
	 * by their stamps cost a comparison). */
	int64_t back = INT64_C(300000000);
	m->looks++;
	int full = m->looks % m->full_every == 1 % m->full_every || m->since_us <= back;
	if (fleet_each_run_rows(m->f, full ? 0 : m->since_us - back, &cb, m) != 0 ||
	    (full && drop_unseen(m) != 0)) {
		if (!m->err[0])
			snprintf(m->err, sizeof(m->err), "%s", fleet_errmsg(m->f));
		store_batch_abort(m->w);
		return -1;
	}
	if (store_batch_commit(m->w) != 0)
		return snprintf(m->err, sizeof(m->err), "%s", store_errmsg(m->w)), -1;
	return 0;
}

static void *refresher(void *arg)
{
	struct mirror *m = arg;
	sigset_t sigs; /* the server's main thread takes them (sigwait) */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	pthread_mutex_lock(&m->mu);
	/* (tests slow the first look down, to see the server answer meanwhile) */
	const char *pause = getenv("PROFDB_SERVE_FIRST_LOOK_PAUSE_MS");
	if (pause && atoi(pause) > 0) {
		struct timespec t = deadline_after_ms(atoi(pause));
		while (!m->stop && pthread_cond_timedwait(&m->cv, &m->mu, &t) == 0)
			;
	}
	while (!m->stop) {
		if (atomic_load(&m->loaded)) {
			struct timespec t = deadline_after_ms(2000);
			pthread_cond_timedwait(&m->cv, &m->mu, &t);
			if (m->stop)
				break;
		}
		m->err[0] = 0;
		if (refresh(m) == 0 && !atomic_load(&m->loaded)) {
			atomic_store(&m->loaded, 1);
			atomic_store(&m->first_rc, 1);
			pthread_cond_broadcast(&m->cv);
		} else if (!atomic_load(&m->loaded)) {
			/* the first look failed: mirror_start says so if it still
			 * waits, else it is tried again after 2 s */
			snprintf(m->first_err, sizeof(m->first_err), "%s", m->err);
			atomic_store(&m->first_rc, -1);
			pthread_cond_broadcast(&m->cv);
			struct timespec t = deadline_after_ms(2000);
			pthread_cond_timedwait(&m->cv, &m->mu, &t);
		}
		if (m->err[0] && !m->stop) {
			fprintf(stderr, "profdb serve: the fleet catalogue: %s (looking again in 2 s)\n", m->err);
			/* a lost connection: made again on the next look */
			char err[1024];
			struct fleet *f;
			if (fleet_open(&f, m->url, 0, err, sizeof(err)) == 0) {
				fleet_close(m->f);
				m->f = f;
			}
		}
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

int mirror_start(struct mirror **out, const char *url, char *err, size_t len)
{
	struct mirror *m = calloc(1, sizeof(*m));
	*out = NULL;
	if (!m)
		return snprintf(err, len, "out of memory"), -1;
	pthread_mutex_init(&m->mu, NULL);
	deadline_cond_init(&m->cv);
	snprintf(m->url, sizeof(m->url), "%s", url);
	/* (tests make full looks frequent, to see deletions soon) */
	const char *fe = getenv("PROFDB_SERVE_FULL_LOOK_EVERY");
	m->full_every = fe && atoi(fe) > 0 ? (unsigned)atoi(fe) : 150;
	const char *tmp = getenv("TMPDIR");
	snprintf(m->dir, sizeof(m->dir), "%s/profdb-serve-fleet.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(m->dir)) {
		snprintf(err, len, "cannot make a private directory for the catalogue's mirror in %s: set "
		                   "TMPDIR to a writable directory",
		         tmp && *tmp ? tmp : "/tmp");
		m->dir[0] = 0;
		mirror_stop(m);
		return -1;
	}
	snprintf(m->path, sizeof(m->path), "%s/mirror.db", m->dir);
	struct store_open_opts so = {.mode = STORE_WRITE};
	if (fleet_open(&m->f, url, 0, err, len) != 0 || store_open(&m->w, m->path, &so, err, len) != 0) {
		mirror_stop(m);
		return -1;
	}
	/* The first look runs on the refresher: a catalogue of a million runs
	 * takes seconds to copy, and the server answers meanwhile ("loading",
	 * web/server.c).  A small one is loaded before this returns, and a
	 * first look that fails at once (a catalogue of another schema, a
	 * refused read) fails the start as it always did. */
	if (pthread_create(&m->thread, NULL, refresher, m) != 0) {
		snprintf(err, len, "cannot start the catalogue's refresher");
		mirror_stop(m);
		return -1;
	}
	m->started = 1;
	for (int i = 0; i < 100 && atomic_load(&m->first_rc) == 0; i++)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	if (atomic_load(&m->first_rc) < 0) {
		snprintf(err, len, "%s", m->first_err);
		mirror_stop(m);
		return -1;
	}
	*out = m;
	return 0;
}

int mirror_loaded(const struct mirror *m, long long *met)
{
	if (met)
		*met = atomic_load(&((struct mirror *)m)->met);
	return atomic_load(&((struct mirror *)m)->loaded);
}

const char *mirror_path(const struct mirror *m)
{
	return m->path;
}


int mirror_ensure(struct mirror *m, int64_t local_id, char *err, size_t len)
{
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	uint32_t id = local_id > 0 && (size_t)local_id < m->nlocal ? m->by_local[local_id] : 0;
	struct entry *e = id ? &m->v[id - 1] : NULL;
	if (e && e->run_id > 0 && !e->have_bytes) {
		/* the run again, whole, under its id (its rows go first) */
		int64_t got;
		struct fleet_copy_opts o = {.id = local_id, .catalogue_host = 1};
		if (store_batch_begin(m->w) != 0 || store_run_delete(m->w, local_id) != 0 ||
		    store_batch_commit(m->w) != 0) {
			snprintf(err, len, "%s", store_errmsg(m->w));
			if (store_in_batch(m->w))
				store_batch_abort(m->w);
			rc = -1;
		} else if (fleet_copy_run(m->f, e->host_id, e->run_id, m->w, &o, &got) != 0) {
			snprintf(err, len, "%s", fleet_errmsg(m->f));
			rc = -1;
			/* its rows back, so that the catalogue still lists it */
			m->since_us = 0;
			e->stamp[0] = 0;
		} else {
			e->have_bytes = 1;
		}
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

void mirror_stop(struct mirror *m)
{
	if (!m)
		return;
	if (m->started) {
		atomic_store(&m->stopping, 1);
		pthread_mutex_lock(&m->mu);
		m->stop = 1;
		pthread_cond_signal(&m->cv);
		pthread_mutex_unlock(&m->mu);
		pthread_join(m->thread, NULL);
	}
	if (m->w)
		store_close(m->w);
	fleet_close(m->f);
	if (m->path[0])
		store_remove_files(m->path);
	if (m->dir[0])
		rmdir(m->dir);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m->v);
	id_index_free(&m->idx);
	free(m->by_local);
	free(m);
}
