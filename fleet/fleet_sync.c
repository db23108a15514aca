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
 * May call: fleet_pg.c (statements, COPY), util/xxh.h, the store (store/)
 * the runs are read from.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/xxh.h"

#include "fleet_internal.h"

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

/* What of a device could not be read here: its first damaged range and how
 * many chunks or packets failed. */
struct dev_damage {
	char what[256];
	int64_t count;
};

struct local_run {
	struct store_run run;
	struct store_device_info *dev;
	struct dev_damage *dmg; /* one per device, as dev */
	size_t ndev, cap;
	char stamp[17];
	int64_t damaged;        /* devices left out */
	char partial_stamp[40]; /* stamp/digest when damaged */
};

static int collect_device(void *ctx, const struct store_device_info *d)
{
	struct local_run *l = ctx;
	if (l->ndev == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct store_device_info *v = realloc(l->dev, cap * sizeof(*v));
		if (!v)
			return 1;
		l->dev = v;
		struct dev_damage *m = realloc(l->dmg, cap * sizeof(*m));
		if (!m)
			return 1;
		l->dmg = m;
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

/* The stamp: fields one by one (a struct's padding is not hashed). */
static int stamp_of(struct store *s, struct local_run *l)
{
	XXH3_state_t *h = XXH3_createState();
	if (!h)
		return -1;
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

/* ---- sending a run ----------------------------------------------------------- */

struct chunk_sender {
	struct fleet_copy *copy;
	const char *host_id;
	int64_t device_id;
	uint64_t end;           /* bytes of the device that can hold data */
	uint64_t cur;           /* the chunk being gathered, UINT64_MAX: none */
	int present;            /* a stored piece fell in it */
	struct dev_damage *dmg; /* the device's damage: once found, nothing more is sent */
	uint8_t buf[STORE_CHUNK_BYTES];
	int64_t sent;
};

static int emit_chunk(struct chunk_sender *c)
{
	if (c->cur != UINT64_MAX && c->present && !c->dmg->count && c->copy) {
		uint64_t off = c->cur * STORE_CHUNK_BYTES;
		size_t len = c->end - off < STORE_CHUNK_BYTES ? (size_t)(c->end - off) : STORE_CHUNK_BYTES;
		/* zeros at a chunk's end are not sent: a short chunk reads as
		 * zeros after its end, here and there (a profile's last chunk
		 * is mostly zeros); a chunk is whole sectors, as the store's */
		while (len && c->buf[len - 1] == 0)
			len--;
		len = (len + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE * STORE_SECTOR_SIZE; /* whole sectors */
		if (!len) {
			c->present = 0;
			return 0;
		}
		fleet_copy_row(c->copy, 5);
		fleet_copy_bytes(c->copy, c->host_id, strlen(c->host_id));
		fleet_copy_i64(c->copy, c->device_id);
		fleet_copy_i64(c->copy, (int64_t)c->cur);
		fleet_copy_bytes(c->copy, c->buf, len);
		/* of the bytes the catalogue holds, which the store's read
		 * verified against the store's own sums */
		fleet_copy_i64(c->copy, (int64_t)XXH3_64bits(c->buf, len));
		c->sent += (int64_t)len;
		if (fleet_copy_flush(c->copy, 0) != 0)
			return 1;
	}
	c->present = 0;
	return 0;
}

static int gather(void *ctx, uint64_t off, const void *data, size_t len);

/* A damaged chunk or packet met while reading a device (the store passes
 * its bytes as a hole): counted, the first one described. */
static int note_damage(void *ctx, const struct store_damage *d)
{
	struct dev_damage *m = ctx;
	if (!m->count++)
		store_damage_describe(d, m->what, sizeof(m->what));
	return 0;
}

/* Reads device i of l with cs (copy NULL: nothing sent), the damage it
 * meets into l->dmg[i] rather than failing: store_read_range's status. */
static int read_device(struct store *s, struct local_run *l, size_t i, struct chunk_sender *cs)
{
	const struct store_device_info *d = &l->dev[i];
	cs->device_id = d->device_id;
	cs->end = d->written_end_sector * STORE_SECTOR_SIZE;
	cs->cur = UINT64_MAX;
	cs->present = 0;
	cs->dmg = &l->dmg[i];
	l->dmg[i] = (struct dev_damage){"", 0};
	if (!cs->end)
		return 0;
	store_salvage_damage(s, note_damage, &l->dmg[i]);
	int r = store_read_range(s, d->device_id, 0, cs->end, gather, cs);
	if (r == 0)
		r = emit_chunk(cs);
	store_salvage_damage(s, NULL, NULL);
	return r;
}

/* l's damage, once its devices were read: how many were left out, and the
 * stamp the catalogue keeps for it (the run's, '/', the damage's digest). */
static void sum_damage(struct local_run *l)
{
	XXH64_hash_t h = XXH3_64bits("", 0);
	l->damaged = 0;
	for (size_t i = 0; i < l->ndev; i++)
		if (l->dmg[i].count) {
			l->damaged++;
			h = XXH3_64bits_withSeed(l->dmg[i].what, strlen(l->dmg[i].what), h ^ (uint64_t)l->dmg[i].count);
		}
	snprintf(l->partial_stamp, sizeof(l->partial_stamp), "%s/%016llx", l->stamp, (unsigned long long)h);
}

/* What the catalogue says of a device left out (devices.damaged), into
 * out. */
static void device_damage_text(const struct local_run *l, size_t i, char *out, size_t len)
{
	const struct dev_damage *m = &l->dmg[i];
	if (m->count > 1)
		snprintf(out, len, "%s (and %lld more); its bytes are not in the catalogue", m->what,
		         (long long)(m->count - 1));
	else
		snprintf(out, len, "%s; its bytes are not in the catalogue", m->what);
}

/* store_read_range's pieces, gathered into the store's chunks: a chunk
 * with any stored piece is sent (its holes as zeros), one of holes only is
 * not (it reads as zeros either way). */
static int gather(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct chunk_sender *c = ctx;
	while (len) {
		uint64_t chunk = off / STORE_CHUNK_BYTES;
		size_t in = (size_t)(off % STORE_CHUNK_BYTES);
		size_t n = STORE_CHUNK_BYTES - in < len ? STORE_CHUNK_BYTES - in : len;
		if (c->dmg->count && !c->copy)
			return 0; /* looking for damage alone: found */
		if (chunk != c->cur) {
			if (emit_chunk(c))
				return 1;
			c->cur = chunk;
			memset(c->buf, 0, sizeof(c->buf));
		}
		if (data) {
			memcpy(c->buf + in, data, n);
			c->present = 1;
			data = (const uint8_t *)data + n;
		}
		off += n;
		len -= n;
	}
	return 0;
}

struct packet_sender {
	struct fleet_copy *copy;
	const char *host_id;
	int64_t device_id;
};

static int send_packet(void *ctx, const struct store_trace_packet *p)
{
	struct packet_sender *ps = ctx;
	struct fleet_copy *c = ps->copy;
	fleet_copy_row(c, 11);
	fleet_copy_bytes(c, ps->host_id, strlen(ps->host_id));
	fleet_copy_i64(c, ps->device_id);
	fleet_copy_i64(c, (int64_t)p->seq);
	fleet_copy_i64(c, (int64_t)p->sector);
	fleet_copy_i64(c, p->bytes);
	fleet_copy_i64(c, (int64_t)p->events);
	if (p->events) {
		fleet_copy_i64(c, (int64_t)p->first_ts);
		fleet_copy_i64(c, (int64_t)p->last_ts);
	} else {
		fleet_copy_null(c);
		fleet_copy_null(c);
	}
	fleet_copy_i32(c, p->final ? 1 : 0);
	fleet_copy_i64(c, p->kept_us);
	if (p->has_sum)
		fleet_copy_i64(c, (int64_t)p->sum);
	else
		fleet_copy_null(c);
	return fleet_copy_flush(c, 0) ? 1 : 0;
}

static const char *const status_names[] = {"none", "ok", "corrupt"};

static int insert_rows(struct fleet *f, const char *host_id, const struct local_run *l)
{
	const struct store_run *r = &l->run;
	struct fleet_params p = {0};

	fleet_param_text(&p, host_id);
	fleet_param_i64(&p, r->run_id);
	fleet_param_i64(&p, r->domid);
	fleet_param_str(&p, r->name);
	fleet_param_str(&p, r->uuid);
	fleet_param_i64(&p, r->started_us);
	if (r->ended_us)
		fleet_param_i64(&p, r->ended_us);
	else
		fleet_param_null(&p);
	fleet_param_text(&p, store_run_state_name(r->state));
	fleet_param_str(&p, r->host);
	fleet_param_str(&p, r->backend_version);
	fleet_param_text(&p, strcmp(r->source, "import") == 0 ? "import" : "capture");
	fleet_param_str(&p, r->end_reason);
	fleet_param_i64(&p, r->prof_bytes);
	fleet_param_i64(&p, r->hp_bytes);
	fleet_param_i64(&p, r->trace_bytes);
	fleet_param_i64(&p, (int64_t)l->ndev);
	fleet_param_text(&p, l->stamp);
	if (fleet_cmd(f, "adding a run",
	              "INSERT INTO runs(host_id, host_no, run_id, domid, name, uuid, started_us, ended_us, "
	              "state, host, backend_version, source, end_reason, prof_bytes, hp_bytes, trace_bytes, "
	              "ndevices, stamp, synced_us) VALUES ($1, (SELECT host_no FROM hosts WHERE host_id = $1), "
	              "$2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
	              /* the server's clock, not the host's: readers that follow
	               * the catalogue (profdb serve) compare it across hosts */
	              "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint)",
	              &p) != 0)
		return -1;
	for (size_t i = 0; i < l->ndev; i++) {
		const struct store_device_info *d = &l->dev[i];
		struct fleet_params q = {0};
		fleet_param_text(&q, host_id);
		fleet_param_i64(&q, d->device_id);
		fleet_param_i64(&q, d->run_id);
		fleet_param_str(&q, d->vdev);
		fleet_param_i64(&q, d->devid);
		fleet_param_text(&q, store_role_name(d->role));
		fleet_param_i64(&q, (int64_t)d->capacity_sectors);
		fleet_param_i64(&q, d->write_requests);
		fleet_param_i64(&q, d->write_bytes);
		fleet_param_i64(&q, d->read_requests);
		fleet_param_i64(&q, d->read_bytes);
		fleet_param_i64(&q, d->flush_requests);
		fleet_param_i64(&q, d->discard_requests);
		fleet_param_i64(&q, d->errors);
		fleet_param_i64(&q, (int64_t)d->written_end_sector);
		fleet_param_text(&q, status_names[d->status <= STORE_STATUS_CORRUPT ? d->status : 0]);
		if (d->status != STORE_STATUS_NONE) {
			fleet_param_i64(&q, d->file_size);
			fleet_param_i64(&q, d->closed);
			fleet_param_i64(&q, d->word_size);
			fleet_param_i64(&q, d->status_updated_us);
		} else {
			for (int k = 0; k < 4; k++)
				fleet_param_null(&q);
		}
		if (fleet_cmd(f, "adding a device",
		              "INSERT INTO devices(host_id, device_id, run_id, vdev, devid, role, "
		              "capacity_sectors, write_requests, write_bytes, read_requests, read_bytes, "
		              "flush_requests, discard_requests, errors, written_end_sector, status, file_size, "
		              "closed, word_size, status_updated_us) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
		              "$9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)",
		              &q) != 0)
			return -1;
	}
	return 0;
}

/* The devices left out, in the run's transaction: the chunks sent before
 * their damage was met taken back, each device's row and the run's saying
 * what is missing, the run's stamp its partial one. */
static int mark_damage(struct fleet *f, const char *host_id, const struct local_run *l)
{
	char what[512], all[1024] = "";
	size_t used = 0;

	for (size_t i = 0; i < l->ndev; i++) {
		if (!l->dmg[i].count)
			continue;
		device_damage_text(l, i, what, sizeof(what));
		struct fleet_params p = {0}, k = {0};
		fleet_param_text(&k, host_id);
		fleet_param_i64(&k, l->dev[i].device_id);
		fleet_param_text(&p, host_id);
		fleet_param_i64(&p, l->dev[i].device_id);
		fleet_param_str(&p, what);
		if (fleet_cmd(f, "leaving a damaged device out",
		              "DELETE FROM chunks WHERE host_id = $1 AND device_id = $2", &k) != 0 ||
		    fleet_cmd(f, "leaving a damaged device out",
		              "UPDATE devices SET damaged = $3 WHERE host_id = $1 AND device_id = $2", &p) != 0)
			return -1;
		if (used < sizeof(all))
			used += (size_t)snprintf(all + used, sizeof(all) - used, "%sdevice %s left out: %s",
			                         used ? ", " : "", l->dev[i].vdev, l->dmg[i].what);
	}
	struct fleet_params q = {0};
	fleet_param_text(&q, host_id);
	fleet_param_i64(&q, l->run.run_id);
	fleet_param_str(&q, all);
	fleet_param_text(&q, l->partial_stamp);
	return fleet_cmd(f, "marking the run partial",
	                 "UPDATE runs SET damaged = $3, stamp = $4 WHERE host_id = $1 AND run_id = $2", &q);
}

static int send_data(struct fleet *f, struct store *s, const char *host_id, struct local_run *l,
                     int64_t *bytes)
{
	struct fleet_copy copy;
	struct chunk_sender *cs = malloc(sizeof(*cs));
	int rc = -1, have_trace = 0;

	if (!cs)
		return fleet_fail(f, "out of memory");
	if (fleet_copy_begin(&copy, f, "COPY chunks(host_id, device_id, chunk, data, sum) FROM STDIN "
	                               "(FORMAT binary)") != 0)
		goto out;
	for (size_t i = 0; i < l->ndev; i++) {
		const struct store_device_info *d = &l->dev[i];
		have_trace |= d->role == STORE_ROLE_TRACE;
		*cs = (struct chunk_sender){.copy = &copy, .host_id = host_id};
		int r = read_device(s, l, i, cs);
		*bytes += cs->sent;
		if (r != 0) {
			if (r < 0)
				fleet_fail(f, "reading run %lld's %s here: %s", (long long)l->run.run_id, d->vdev,
				           store_errmsg(s));
			fleet_copy_abort(&copy);
			goto out;
		}
	}
	if (fleet_copy_end(&copy) != 0)
		goto out;
	if (have_trace) {
		if (fleet_copy_begin(&copy, f, "COPY trace_packets(host_id, device_id, seq, sector, bytes, "
		                               "events, first_ts, last_ts, final, kept_us, sum) FROM STDIN "
		                               "(FORMAT binary)") != 0)
			goto out;
		for (size_t i = 0; i < l->ndev; i++) {
			struct packet_sender ps = {&copy, host_id, l->dev[i].device_id};
			if (l->dev[i].role == STORE_ROLE_TRACE && !l->dmg[i].count &&
			    store_trace_packets(s, ps.device_id, send_packet, &ps) != 0) {
				fleet_copy_abort(&copy);
				goto out;
			}
		}
		if (fleet_copy_end(&copy) != 0)
			goto out;
	}
	sum_damage(l);
	rc = l->damaged ? mark_damage(f, host_id, l) : 0;
out:
	free(cs);
	return rc;
}

/* One run, in one transaction; 1 when the catalogue already had it as it
 * is here. */
static int push_run(struct fleet *f, struct store *s, const char *host_id, struct local_run *l,
                    int64_t *bytes)
{
	struct fleet_params p = {0};
	int rc = -1;

	fleet_param_text(&p, host_id);
	fleet_param_i64(&p, l->run.run_id);
	fleet_param_text(&p, l->stamp);
	if (fleet_cmd(f, "starting a run's transaction", "BEGIN", NULL) != 0)
		return -1;
	struct fleet_params lk = {0};
	fleet_param_text(&lk, host_id);
	PGresult *r = fleet_exec(f, "taking the host's sync lock",
	                         "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &lk,
	                         PGRES_TUPLES_OK);
	if (!r)
		goto fail;
	PQclear(r);
	r = fleet_exec(f, "looking for the run",
	               "SELECT stamp = $3 FROM runs WHERE host_id = $1 AND run_id = $2", &p, PGRES_TUPLES_OK);
	if (!r)
		goto fail;
	int same = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 1, had = PQntuples(r) == 1;
	PQclear(r);
	if (same) {
		rc = 1;
		goto fail; /* nothing to do: roll back the empty transaction */
	}
	if (had) {
		/* an older copy (a running run pushed as it was then): replaced,
		 * its devices, chunks and packets going with it */
		struct fleet_params d = {0};
		fleet_param_text(&d, host_id);
		fleet_param_i64(&d, l->run.run_id);
		if (fleet_cmd(f, "replacing the run", "DELETE FROM runs WHERE host_id = $1 AND run_id = $2",
		              &d) != 0)
			goto fail;
	}
	if (insert_rows(f, host_id, l) != 0 || send_data(f, s, host_id, l, bytes) != 0)
		goto fail;
	struct fleet_params h = {0};
	fleet_param_text(&h, host_id);
	fleet_param_i64(&h, store_now_us());
	if (fleet_cmd(f, "updating the host", "UPDATE hosts SET last_sync_us = $2 WHERE host_id = $1",
	              &h) != 0 ||
	    fleet_cmd(f, "committing the run", "COMMIT", NULL) != 0)
		goto fail;
	return 0;
fail:;
	r = PQexec(f->conn, "ROLLBACK");
	PQclear(r);
	return rc;
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
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		int64_t *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return 1;
		l->v = v;
		l->cap = cap;
	}
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

/* The run's devices read here and nothing sent, for their damage alone
 * (l->damaged, l->partial_stamp): 0, or -1. */
static int verify_local(struct fleet *f, struct store *s, struct local_run *l)
{
	struct chunk_sender *cs = malloc(sizeof(*cs));
	int rc = 0;

	if (!cs)
		return fleet_fail(f, "out of memory");
	for (size_t i = 0; i < l->ndev && !rc; i++) {
		*cs = (struct chunk_sender){.copy = NULL};
		if (read_device(s, l, i, cs) != 0)
			rc = fleet_fail(f, "reading run %lld's %s here: %s", (long long)l->run.run_id, l->dev[i].vdev,
			                store_errmsg(s));
	}
	free(cs);
	sum_damage(l);
	return rc;
}

/* The devices of l left out, said to the caller. */
static void tell_damage(const struct fleet_sync_opts *o, const struct local_run *l)
{
	char what[512];
	for (size_t i = 0; i < l->ndev && o->damaged; i++)
		if (l->dmg[i].count) {
			device_damage_text(l, i, what, sizeof(what));
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
		r = push_run(f, s, host_id, &l, bytes);
		*pushed = r == 0;
		if (r == 1)
			r = 0;
		for (size_t i = 0, used = 0; r == 0 && *pushed && damage && i < l.ndev; i++)
			if (l.dmg[i].count && used < damage_len) {
				char what[512];
				device_damage_text(&l, i, what, sizeof(what));
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

int fleet_sync(struct fleet *f, struct store *s, const struct fleet_sync_opts *o,
               struct fleet_sync_report *rep)
{
	const char *host_id = store_identity(s);
	struct store_run_filter flt = {.state = -1, .since_us = o->since_us};
	struct remote_run *remote = NULL;
	struct id_list ids = {0};
	size_t nremote = 0;
	struct local_run l = {0};
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (check_identity(f, s) != 0)
		return -1;
	if (register_host(f, host_id) != 0 || load_remote(f, host_id, &remote, &nremote) != 0)
		goto out;
	f->host_registered = 1;
	int lr = store_list_runs(s, &flt, collect_id, &ids);
	if (lr != 0) {
		fleet_fail(f, "listing the runs here: %s", lr < 0 ? store_errmsg(s) : "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ids.n; i++) {
		int64_t bytes = 0;
		int r = read_local(f, s, ids.v[i], &l);
		if (r != 0) {
			store_read_end(s);
			if (r > 0)
				continue; /* deleted since the listing */
			goto out;
		}
		if (l.run.state == STORE_RUN_RUNNING && !o->include_running) {
			rep->running++;
			store_read_end(s);
			continue;
		}
		struct remote_run key = {.run_id = l.run.run_id}, *have;
		have = bsearch(&key, remote, nremote, sizeof(key), cmp_remote);
		if (have && strcmp(have->stamp, l.stamp) == 0) {
			rep->current++;
			store_read_end(s);
			if (o->progress)
				o->progress(o->ctx, l.run.run_id, 0, 0);
			continue;
		}
		if (have && partial_of(have->stamp, l.stamp)) {
			/* pushed without what was damaged here: still so? */
			if (verify_local(f, s, &l) != 0) {
				store_read_end(s);
				goto out;
			}
			if (l.damaged && strcmp(have->stamp, l.partial_stamp) == 0) {
				store_read_end(s);
				rep->damaged++;
				tell_damage(o, &l);
				if (o->progress)
					o->progress(o->ctx, l.run.run_id, 0, 0);
				continue;
			}
		}
		r = push_run(f, s, host_id, &l, &bytes);
		store_read_end(s);
		if (r < 0)
			goto out;
		if (r == 1)
			rep->current++;
		else
			rep->pushed++, rep->bytes += bytes;
		if (r == 0 && l.damaged) {
			rep->damaged++;
			tell_damage(o, &l);
		}
		if (o->progress)
			o->progress(o->ctx, l.run.run_id, r == 0, bytes);
	}
	if (backfill_sums(f, &rep->summed) != 0)
		goto out;
	rc = 0;
out:
	free(l.dev);
	free(l.dmg);
	free(ids.v);
	free(remote);
	return rc;
}
