/*
 * fleet_sync_send.c - one run of a host sent into the fleet catalogue, in
 * one PostgreSQL transaction (fleet_sync.c says why, and decides which):
 * its row and its devices' rows, then its chunks and trace packets by
 * binary COPY from one snapshot of the host's store, gathered into the
 * store's 64 KiB chunks (a chunk of holes only is not sent).  A device
 * whose bytes fail their checksum here is left out, said so in its row
 * (devices.damaged, runs.damaged), and none of its bytes go.
 *
 * May call: fleet_pg.c (connection, parameters, COPY), store/store.h
 * (snapshot reads), util/xxh.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/xxh.h"

#include "fleet_internal.h"
#include "fleet_sync_int.h"

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
void fleet_device_damage_text(const struct local_run *l, size_t i, char *out, size_t len)
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
		fleet_device_damage_text(l, i, what, sizeof(what));
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
int fleet_run_push(struct fleet *f, struct store *s, const char *host_id, struct local_run *l,
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

int fleet_run_verify(struct fleet *f, struct store *s, struct local_run *l)
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
