/*
 * fleet_sync.c - pushing a host's runs into the fleet catalogue.
 *
 * A run goes in one PostgreSQL transaction: its row, its devices' rows,
 * then its chunks and trace packets through binary COPY, read from one
 * snapshot of the host's store.  So the catalogue holds a run whole or not
 * at all: a sync killed mid-run, or a server stopped under it, leaves the
 * transaction uncommitted, and the next sync sends that run again.
 *
 * What is sent again is decided by the run's stamp, a hash of everything
 * the catalogue keeps of the run but its bytes (state, end, every device's
 * counters and status, the trace's packets): bytes only change through
 * writes, which move the counters.  A run whose stamp there equals the one
 * here is left alone, so repeating a sync costs one query.  Two syncs of
 * the same host at once take turns on an advisory lock per host and look
 * at the stamp again under it.
 *
 * A run whose bytes here fail their checksum (a flipped bit on the disk)
 * is pushed without the damaged device: its row there says what was left
 * out and why (devices.damaged, runs.damaged), none of its bytes are sent,
 * and the rest of the run and every later run go on.  One damaged chunk
 * once stopped every sync at that run for ever.  Its stamp there is the
 * run's with the damage's digest after a '/': the next sync reads the run
 * here again (no byte sent) and leaves it while the damage is the same,
 * and pushes it whole once the damage is repaired; a run deleted here is
 * simply not looked at again.
 *
 * Here: which runs to push and when (the stamps, the host's lock, the
 * damage told); a run's rows and bytes sent: fleet_sync_send.c.
 * May call: fleet_sync_send.c, fleet_pg.c (statements, COPY), util/xxh.h,
 * util/grow.h, the store (store/) the runs are read from.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/grow.h"
#include "util/xxh.h"

#include "fleet_internal.h"
#include "fleet_sync_int.h"

struct remote_run {
	int64_t run_id;
	char stamp[40]; /* 16 hex digits; a partial run's: '/' and 16 more */
};

static int cmp_remote(const void *a, const void *b)
{
	const struct remote_run *x = a, *y = b;
	return x->run_id < y->run_id ? -1 : x->run_id > y->run_id;
}

/* ---- what a run is here ---------------------------------------------------- */

static int collect_device(void *ctx, const struct store_device_info *d)
{
	struct local_run *l = ctx;
	if (l->ndev == l->cap) { /* two arrays, one capacity */
		size_t cap = l->cap;
		if (GROW_FROM(l->dev, cap, l->ndev + 1, 4) != 0)
			return 1;
		cap = l->cap;
		if (GROW_FROM(l->dmg, cap, l->ndev + 1, 4) != 0)
			return 1;
		l->cap = cap;
	}
	l->dmg[l->ndev] = (struct dev_damage){"", 0};
	l->dev[l->ndev++] = *d;
	return 0;
}

static void hash_str(XXH3_state_t *h, const char *s)
{
	XXH3_64bits_update(h, s, strlen(s) + 1);
}

static void hash_i64(XXH3_state_t *h, int64_t v)
{
	XXH3_64bits_update(h, &v, sizeof(v));
}

static int trace_hash(void *ctx, const struct store_trace_packet *p)
{
	XXH3_state_t *h = ctx;
	hash_i64(h, (int64_t)p->seq);
	hash_i64(h, (int64_t)p->bytes);
	hash_i64(h, p->final);
	return 0;
}

/* The stamp: fields one by one (a struct's padding is not hashed).  0, 1
 * when out of memory, or -1 (the store's error, store_errmsg). */
static int stamp_of(struct store *s, struct local_run *l)
{
	XXH3_state_t *h = XXH3_createState();
	if (!h)
		return 1;
	XXH3_64bits_reset(h);
	const struct store_run *r = &l->run;
	hash_i64(h, r->domid);
	hash_str(h, r->name);
	hash_str(h, r->uuid);
	hash_i64(h, r->started_us);
	hash_i64(h, r->ended_us);
	hash_i64(h, r->state);
	hash_str(h, r->host);
	hash_str(h, r->backend_version);
	hash_str(h, r->source);
	hash_str(h, r->end_reason);
	for (size_t i = 0; i < l->ndev; i++) {
		const struct store_device_info *d = &l->dev[i];
		hash_i64(h, d->device_id);
		hash_str(h, d->vdev);
		hash_i64(h, d->devid);
		hash_i64(h, (int64_t)d->capacity_sectors);
		hash_i64(h, d->write_requests);
		hash_i64(h, d->write_bytes);
		hash_i64(h, d->read_requests);
		hash_i64(h, d->flush_requests);
		hash_i64(h, d->discard_requests);
		hash_i64(h, d->errors);
		hash_i64(h, (int64_t)d->written_end_sector);
		hash_i64(h, d->status);
		hash_i64(h, d->file_size);
		hash_i64(h, d->closed);
		hash_i64(h, d->status_updated_us);
		if (d->role == STORE_ROLE_TRACE && store_trace_packets(s, d->device_id, trace_hash, h) < 0) {
			XXH3_freeState(h);
			return -1;
		}
	}
	snprintf(l->stamp, sizeof(l->stamp), "%016llx", (unsigned long long)XXH3_64bits_digest(h));
	XXH3_freeState(h);
	return 0;
}

static int load_remote(struct fleet *f, const char *host_id, struct remote_run **out, size_t *n)
{
	struct fleet_params p = {0};
	fleet_param_text(&p, host_id);
	PGresult *r = fleet_exec(f, "listing the host's runs there",
	                         "SELECT run_id, stamp FROM runs WHERE host_id = $1", &p, PGRES_TUPLES_OK);
	if (!r)
		return -1;
	*n = (size_t)PQntuples(r);
	*out = calloc(*n ? *n : 1, sizeof(**out));
	if (!*out) {
		PQclear(r);
		return fleet_fail(f, "out of memory");
	}
	for (size_t i = 0; i < *n; i++) {
		(*out)[i].run_id = fleet_get_i64(r, (int)i, 0);
		fleet_get_str(r, (int)i, 1, (*out)[i].stamp, sizeof((*out)[i].stamp));
	}
	PQclear(r);
	qsort(*out, *n, sizeof(**out), cmp_remote);
	return 0;
}

struct id_list {
	int64_t *v;
	size_t n, cap;
};

static int collect_id(void *ctx, const struct store_run *r)
{
	struct id_list *l = ctx;
	if (GROW_FROM(l->v, l->cap, l->n + 1, 256) != 0)
		return 1;
	l->v[l->n++] = r->run_id;
	return 0;
}

static int register_host(struct fleet *f, const char *host_id)
{
	char name[256] = "";
	if (gethostname(name, sizeof(name) - 1) != 0)
		snprintf(name, sizeof(name), "unknown");
	struct fleet_params p = {0};
	fleet_param_text(&p, host_id);
	fleet_param_str(&p, name);
	fleet_param_i64(&p, store_now_us());
	return fleet_cmd(f, "registering this host",
	                 "INSERT INTO hosts(host_id, hostname, first_sync_us, last_sync_us) "
	                 "VALUES ($1, $2, $3, $3) ON CONFLICT (host_id) DO UPDATE SET "
	                 "hostname = excluded.hostname",
	                 &p);
}

static int register_host(struct fleet *f, const char *host_id);

/* Run id as it is here, in a read transaction the caller ends: 1 when it
 * was deleted meanwhile. */
static int read_local(struct fleet *f, struct store *s, int64_t id, struct local_run *l)
{
	if (store_read_begin(s) != 0)
		return fleet_fail(f, "reading the store here: %s", store_errmsg(s));
	l->ndev = 0;
	l->damaged = 0;
	int r = store_get_run(s, id, &l->run);
	if (r == STORE_ENOTFOUND)
		return 1;
	if (r == 0)
		r = store_list_devices(s, id, collect_device, l);
	if (r == 0)
		r = stamp_of(s, l);
	if (r != 0)
		return fleet_fail(f, "reading run %lld here: %s", (long long)id,
		                  r < 0 ? store_errmsg(s) : "out of memory");
	return 0;
}

static int check_identity(struct fleet *f, struct store *s)
{
	if (strlen(store_identity(s)) != 32)
		return fleet_fail(f, "the store %s has no identity yet (a store older than schema 4): "
		                     "start profile-backend on it once to upgrade it",
		                  store_path(s));
	return 0;
}

/* The devices of l left out, said to the caller. */
static void tell_damage(const struct fleet_sync_opts *o, const struct local_run *l)
{
	char what[512];
	for (size_t i = 0; i < l->ndev && o->damaged; i++)
		if (l->dmg[i].count) {
			fleet_device_damage_text(l, i, what, sizeof(what));
			o->damaged(o->ctx, l->run.run_id, what);
		}
}

/* 1 when the catalogue's stamp is the partial one of a run whose stamp
 * here is local. */
static int partial_of(const char *remote, const char *local)
{
	size_t n = strlen(local);
	return strncmp(remote, local, n) == 0 && remote[n] == '/';
}

int fleet_sync_run(struct fleet *f, struct store *s, int64_t run_id, int *pushed, int64_t *bytes, char *damage,
                   size_t damage_len)
{
	struct local_run l = {0};
	const char *host_id = store_identity(s);
	int rc = -1;

	*pushed = 0;
	*bytes = 0;
	if (check_identity(f, s) != 0)
		return -1;
	if (!f->host_registered) {
		if (register_host(f, host_id) != 0)
			return -1;
		f->host_registered = 1;
	}
	if (damage && damage_len)
		damage[0] = '\0';
	int r = read_local(f, s, run_id, &l);
	if (r == 0 && l.run.state != STORE_RUN_RUNNING) {
		r = fleet_run_push(f, s, host_id, &l, bytes);
		*pushed = r == 0;
		if (r == 1)
			r = 0;
		for (size_t i = 0, used = 0; r == 0 && *pushed && damage && i < l.ndev; i++)
			if (l.dmg[i].count && used < damage_len) {
				char what[512];
				fleet_device_damage_text(&l, i, what, sizeof(what));
				used += (size_t)snprintf(damage + used, damage_len - used, "%s%s", used ? ", " : "", what);
			}
	}
	store_read_end(s);
	if (r >= 0)
		rc = 0;
	free(l.dev);
	free(l.dmg);
	return rc;
}

/*
 * Chunks synced before schema 5 carry no checksum (sum NULL: read
 * unverified).  Their host's next sync sends them again with one; a host
 * that never syncs again would leave them so for ever.  So every sync also
 * gives up to FLEET_BACKFILL_MAX such chunks the checksum of their bytes as
 * the catalogue holds them (as the store's first writer did for its own
 * rows at schema 9): from then on their rot is seen.  Batches of
 * FLEET_BACKFILL_BATCH, each its own statement pair; a chunk another host
 * summed meanwhile is left as it is (sum IS NULL in the update).  A trace
 * packet's bytes are its device's chunks', so they are covered too.
 */
#define FLEET_BACKFILL_BATCH 256
#define FLEET_BACKFILL_MAX 8192
static int backfill_sums(struct fleet *f, int64_t *summed)
{
	while (*summed < FLEET_BACKFILL_MAX) {
		PGresult *r = fleet_exec(f, "finding catalogue chunks without a checksum",
		                         "SELECT host_id, device_id, chunk, data FROM chunks WHERE sum IS NULL "
		                         "LIMIT 256",
		                         NULL, PGRES_TUPLES_OK);
		if (!r)
			return -1;
		int n = PQntuples(r);
		for (int i = 0; i < n; i++) {
			struct fleet_params p = {0};
			char host[80];
			fleet_get_str(r, i, 0, host, sizeof(host));
			fleet_param_text(&p, host);
			fleet_param_i64(&p, fleet_get_i64(r, i, 1));
			fleet_param_i64(&p, fleet_get_i64(r, i, 2));
			fleet_param_i64(&p, (int64_t)XXH3_64bits(PQgetvalue(r, i, 3), (size_t)PQgetlength(r, i, 3)));
			if (fleet_cmd(f, "giving a catalogue chunk its checksum",
			              "UPDATE chunks SET sum = $4 WHERE host_id = $1 AND device_id = $2 AND chunk = $3 "
			              "AND sum IS NULL",
			              &p) != 0) {
				PQclear(r);
				return -1;
			}
			(*summed)++;
		}
		PQclear(r);
		if (n < FLEET_BACKFILL_BATCH)
			break;
	}
	return 0;
}
_Static_assert(FLEET_BACKFILL_BATCH == 256, "the LIMIT above");

/* A sync under way: where, what the catalogue holds of this host, the
 * run being read here, what is told and counted. */
struct sync_round {
	struct fleet *f;
	struct store *s;
	const char *host_id;
	const struct fleet_sync_opts *o;
	struct fleet_sync_report *rep;
	struct remote_run *remote;
	size_t nremote;
	struct local_run l;
};

/* The catalogue already holds run l as it is here, or as it was pushed
 * without what is still damaged here: 1 (counted and told), 0 when it is
 * to be pushed, -1 on failure.  Inside the run's read here. */
static int already_there(struct sync_round *x)
{
	struct local_run *l = &x->l;
	struct remote_run key = {.run_id = l->run.run_id}, *have;
	have = bsearch(&key, x->remote, x->nremote, sizeof(key), cmp_remote);
	if (have && strcmp(have->stamp, l->stamp) == 0) {
		x->rep->current++;
		return 1;
	}
	if (!have || !partial_of(have->stamp, l->stamp))
		return 0;
	/* pushed without what was damaged here: still so? */
	if (fleet_run_verify(x->f, x->s, l) != 0)
		return -1;
	if (!l->damaged || strcmp(have->stamp, l->partial_stamp) != 0)
		return 0;
	x->rep->damaged++;
	tell_damage(x->o, l);
	return 1;
}

/* Run id, read here and pushed if the catalogue lacks it as it is: 0, or
 * -1 on failure (f's error). */
static int sync_one(struct sync_round *x, int64_t id)
{
	struct local_run *l = &x->l;
	const struct fleet_sync_opts *o = x->o;
	int64_t bytes = 0;
	int r = read_local(x->f, x->s, id, l);
	if (r != 0) {
		store_read_end(x->s);
		return r > 0 ? 0 : -1; /* > 0: deleted since the listing */
	}
	if (l->run.state == STORE_RUN_RUNNING && !o->include_running) {
		x->rep->running++;
		store_read_end(x->s);
		return 0;
	}
	if ((r = already_there(x)) != 0) {
		store_read_end(x->s);
		if (r > 0 && o->progress)
			o->progress(o->ctx, l->run.run_id, 0, 0);
		return r < 0 ? -1 : 0;
	}
	r = fleet_run_push(x->f, x->s, x->host_id, l, &bytes);
	store_read_end(x->s);
	if (r < 0)
		return -1;
	if (r == 1)
		x->rep->current++;
	else
		x->rep->pushed++, x->rep->bytes += bytes;
	if (r == 0 && l->damaged) {
		x->rep->damaged++;
		tell_damage(o, l);
	}
	if (o->progress)
		o->progress(o->ctx, l->run.run_id, r == 0, bytes);
	return 0;
}

int fleet_sync(struct fleet *f, struct store *s, const struct fleet_sync_opts *o,
               struct fleet_sync_report *rep)
{
	struct sync_round x = {.f = f, .s = s, .host_id = store_identity(s), .o = o, .rep = rep};
	struct store_run_filter flt = {.state = -1, .since_us = o->since_us};
	struct id_list ids = {0};
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (check_identity(f, s) != 0)
		return -1;
	if (register_host(f, x.host_id) != 0 || load_remote(f, x.host_id, &x.remote, &x.nremote) != 0)
		goto out;
	f->host_registered = 1;
	int lr = store_list_runs(s, &flt, collect_id, &ids);
	if (lr != 0) {
		fleet_fail(f, "listing the runs here: %s", lr < 0 ? store_errmsg(s) : "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ids.n; i++)
		if (sync_one(&x, ids.v[i]) != 0)
			goto out;
	if (backfill_sums(f, &rep->summed) != 0)
		goto out;
	rc = 0;
out:
	free(x.l.dev);
	free(x.l.dmg);
	free(ids.v);
	free(x.remote);
	return rc;
}
