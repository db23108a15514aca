/*
 * fleet_read.c - reading the fleet catalogue: a run named by the user, and
 * a run copied into a private store so that profdb's
 * viewing and export commands read it with the code that reads a host's
 * own store (and so export it byte for byte as the host does).
 *
 * A copy reads in one REPEATABLE READ transaction: a sync replacing the run
 * meanwhile is seen entirely or not at all.
 *
 * May call: fleet_pg.c (statements, binary results), util/xxh.h, the store
 * (store/) a run is copied into.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xxh.h"

#include "fleet_internal.h"

#define RUN_COLS                                                                                  \
	"r.host_id, h.hostname, r.run_id, r.domid, r.name, r.uuid, r.started_us, r.ended_us, "      \
	"r.state, r.host, r.backend_version, r.source, r.end_reason, r.prof_bytes, r.hp_bytes, "    \
	"r.trace_bytes, r.ndevices, "                                                               \
	"(SELECT CASE WHEN d.status = 'ok' THEN d.file_size ELSE -1 END FROM devices d "             \
	"  WHERE d.host_id = r.host_id AND d.run_id = r.run_id AND d.vdev = 'xvdp3'::bytea "        \
	"  AND d.role = 'eventlog'), r.damaged "

static void run_of_row(const PGresult *r, int i, struct fleet_run *out)
{
	char state[16];
	memset(out, 0, sizeof(*out));
	fleet_get_str(r, i, 0, out->host_id, sizeof(out->host_id));
	fleet_get_str(r, i, 1, out->hostname, sizeof(out->hostname));
	struct store_run *run = &out->run;
	run->run_id = fleet_get_i64(r, i, 2);
	run->domid = (int32_t)fleet_get_i64(r, i, 3);
	fleet_get_str(r, i, 4, run->name, sizeof(run->name));
	fleet_get_str(r, i, 5, run->uuid, sizeof(run->uuid));
	run->started_us = fleet_get_i64(r, i, 6);
	run->ended_us = fleet_get_i64(r, i, 7);
	fleet_get_str(r, i, 8, state, sizeof(state));
	if (store_run_state_parse(state, &run->state) != 0)
		run->state = STORE_RUN_CRASHED;
	fleet_get_str(r, i, 9, run->host, sizeof(run->host));
	fleet_get_str(r, i, 10, run->backend_version, sizeof(run->backend_version));
	fleet_get_str(r, i, 11, run->source, sizeof(run->source));
	fleet_get_str(r, i, 12, run->end_reason, sizeof(run->end_reason));
	run->prof_bytes = fleet_get_i64(r, i, 13);
	run->hp_bytes = fleet_get_i64(r, i, 14);
	run->trace_bytes = fleet_get_i64(r, i, 15);
	run->ndevices = (int)fleet_get_i64(r, i, 16);
	run->eventlog_bytes = PQgetisnull(r, i, 17) ? -1 : fleet_get_i64(r, i, 17);
	run->trace_packets = run->trace_events = run->samples_bytes = run->samples = -1; /* not kept there */
	/* a run its host pushed without a device whose bytes failed their
	 * checksum there (fleet_sync.c): said with the run, wherever it is
	 * shown; the device itself is left out of what is read */
	if (!PQgetisnull(r, i, 18)) {
		char dmg[sizeof(run->end_reason)];
		fleet_get_str(r, i, 18, dmg, sizeof(dmg));
		size_t n = strlen(run->end_reason);
		snprintf(run->end_reason + n, sizeof(run->end_reason) - n, "%spartial in the catalogue: %s",
		         n ? "; " : "", dmg);
	}
}


int fleet_resolve_run(struct fleet *f, const char *arg, char host_id[33], int64_t *run_id)
{
	char host[STORE_NAME_MAX] = "";
	const char *num = arg, *colon = strrchr(arg, ':');
	struct fleet_params p = {0};
	char sql[512];

	if (colon) {
		size_t hl = (size_t)(colon - arg);
		if (hl == 0 || hl >= sizeof(host))
			return fleet_fail(f, "run '%s': say HOST:RUN, HOST a hostname or a host id", arg);
		memcpy(host, arg, hl);
		host[hl] = 0;
		num = colon + 1;
	}
	int latest = strcmp(num, "latest") == 0;
	char *end;
	long long id = latest ? 0 : strtoll(num, &end, 10);
	if (!latest && (!*num || *end || id <= 0))
		return fleet_fail(f, "'%s' is not a run: give N, HOST:N, latest or HOST:latest", arg);
	int n = snprintf(sql, sizeof(sql), "SELECT r.host_id, h.hostname, r.run_id FROM runs r "
	                                   "JOIN hosts h USING (host_id) WHERE true");
	if (!latest) {
		fleet_param_i64(&p, id);
		n += snprintf(sql + n, sizeof(sql) - n, " AND r.run_id = $%d", p.n);
	}
	if (host[0]) {
		fleet_param_text(&p, host);
		n += snprintf(sql + n, sizeof(sql) - n,
		              " AND (h.hostname = convert_to($%d, 'UTF8') OR h.host_id LIKE "
		              "replace(replace(lower($%d), '%%', ''), '_', '') || '%%')",
		              p.n, p.n);
	}
	snprintf(sql + n, sizeof(sql) - n, " ORDER BY r.started_us DESC, r.host_id LIMIT %d", latest ? 1 : 3);
	PGresult *r = fleet_exec(f, "finding the run", sql, &p, PGRES_TUPLES_OK);
	if (!r)
		return -1;
	int rows = PQntuples(r);
	if (rows == 0) {
		PQclear(r);
		return fleet_fail(f, "the catalogue holds no run %s%s", arg,
		                  host[0] ? " (a host is a hostname or a prefix of its id)" : "");
	}
	if (rows > 1) {
		char a[STORE_NAME_MAX], b[STORE_NAME_MAX], ia[33], ib[33];
		fleet_get_str(r, 0, 1, a, sizeof(a));
		fleet_get_str(r, 1, 1, b, sizeof(b));
		fleet_get_str(r, 0, 0, ia, sizeof(ia));
		fleet_get_str(r, 1, 0, ib, sizeof(ib));
		PQclear(r);
		return fleet_fail(f, "run %s is on more than one host (%s %.8s, %s %.8s%s): name it "
		                     "HOST:%s with a hostname or a host id",
		                  arg, a, ia, b, ib, rows > 2 ? ", ..." : "", num);
	}
	fleet_get_str(r, 0, 0, host_id, 33);
	*run_id = fleet_get_i64(r, 0, 2);
	PQclear(r);
	return 0;
}

/* ---- copying a run out --------------------------------------------------------- */

static int copy_fail(struct fleet *f, struct store *dst, const char *what)
{
	return fleet_fail(f, "%s into a private store: %s", what, store_errmsg(dst));
}

/* Device ids of the catalogue and of dst, for the chunks and packets. */
struct id_map {
	int64_t from, to;
};

static int64_t map_id(const struct id_map *m, size_t n, int64_t from)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].from == from)
			return m[i].to;
	return 0;
}

/* Whether a device row another host wrote holds what a store could: its
 * sizes within the largest capacity a store takes, its writes within its
 * capacity, its counts and fields in range.  0, or -1 with why. */
static int device_sane(const struct store_device_info *d, char *why, size_t len)
{
	uint64_t cap = d->capacity_sectors;
	if (cap > store_max_capacity())
		snprintf(why, len, "capacity_sectors %llu is past the %llu a store takes", (unsigned long long)cap,
		         (unsigned long long)store_max_capacity());
	else if (d->written_end_sector > cap)
		snprintf(why, len, "written_end_sector %llu is past its capacity_sectors %llu",
		         (unsigned long long)d->written_end_sector, (unsigned long long)cap);
	else if (d->file_size < -1 || (d->file_size > 0 && (uint64_t)d->file_size > cap * STORE_SECTOR_SIZE))
		snprintf(why, len, "file_size %lld is not within its capacity", (long long)d->file_size);
	else if (d->write_requests < 0 || d->write_bytes < 0 || d->read_requests < 0 || d->read_bytes < 0 ||
	         d->flush_requests < 0 || d->discard_requests < 0 || d->errors < 0)
		snprintf(why, len, "a negative request count");
	else if (d->devid < 0 || (d->closed != 0 && d->closed != 1) ||
	         (d->word_size != 0 && d->word_size != 4 && d->word_size != 8))
		snprintf(why, len, "devid %d, closed %d, word_size %d: not values a store holds", d->devid, d->closed,
		         d->word_size);
	else
		return 0;
	return -1;
}

/* A device from a row whose columns c0.. are those of copy_devices' SELECT
 * (run_id is the caller's to set); device_sane says whether to trust it. */
static void device_of_row(const PGresult *r, int i, int c0, struct store_device_info *d)
{
	char role[16], status[16];
	memset(d, 0, sizeof(*d));
	d->device_id = fleet_get_i64(r, i, c0);
	fleet_get_str(r, i, c0 + 1, d->vdev, sizeof(d->vdev));
	d->devid = (int32_t)fleet_get_i64(r, i, c0 + 2);
	fleet_get_str(r, i, c0 + 3, role, sizeof(role));
	d->role = strcmp(role, "prof") == 0    ? STORE_ROLE_PROF
	          : strcmp(role, "hp") == 0    ? STORE_ROLE_HP
	          : strcmp(role, "trace") == 0 ? STORE_ROLE_TRACE
	          : strcmp(role, "samples") == 0 ? STORE_ROLE_SAMPLES
	          : strcmp(role, "eventlog") == 0 ? STORE_ROLE_EVENTLOG
	                                       : STORE_ROLE_RAW;
	d->capacity_sectors = (uint64_t)fleet_get_i64(r, i, c0 + 4);
	d->write_requests = fleet_get_i64(r, i, c0 + 5);
	d->write_bytes = fleet_get_i64(r, i, c0 + 6);
	d->read_requests = fleet_get_i64(r, i, c0 + 7);
	d->read_bytes = fleet_get_i64(r, i, c0 + 8);
	d->flush_requests = fleet_get_i64(r, i, c0 + 9);
	d->discard_requests = fleet_get_i64(r, i, c0 + 10);
	d->errors = fleet_get_i64(r, i, c0 + 11);
	d->written_end_sector = (uint64_t)fleet_get_i64(r, i, c0 + 12);
	fleet_get_str(r, i, c0 + 13, status, sizeof(status));
	d->status = strcmp(status, "ok") == 0        ? STORE_STATUS_OK
	            : strcmp(status, "corrupt") == 0 ? STORE_STATUS_CORRUPT
	                                             : STORE_STATUS_NONE;
	d->file_size = fleet_get_i64(r, i, c0 + 14);
	d->closed = (int)fleet_get_i64(r, i, c0 + 15);
	d->word_size = (int)fleet_get_i64(r, i, c0 + 16);
	d->status_updated_us = fleet_get_i64(r, i, c0 + 17);
}

static int copy_devices(struct fleet *f, const char *host_id, int64_t run_id, int64_t local_run,
                        struct store *dst, struct id_map **map, size_t *nmap)
{
	struct fleet_params p = {0};
	fleet_param_text(&p, host_id);
	fleet_param_i64(&p, run_id);
	PGresult *r = fleet_exec(
		f, "reading the run's devices",
		"SELECT device_id, vdev, devid, role, capacity_sectors, write_requests, write_bytes, "
		"read_requests, read_bytes, flush_requests, discard_requests, errors, written_end_sector, "
		"status, file_size, closed, word_size, status_updated_us FROM devices "
		"WHERE host_id = $1 AND run_id = $2 AND damaged IS NULL ORDER BY device_id",
		&p, PGRES_TUPLES_OK);
	if (!r)
		return -1;
	int rows = PQntuples(r);
	*map = calloc(rows ? (size_t)rows : 1, sizeof(**map));
	if (!*map) {
		PQclear(r);
		return fleet_fail(f, "out of memory");
	}
	for (int i = 0; i < rows; i++) {
		struct store_device_info d;
		char why[160];
		device_of_row(r, i, 0, &d);
		if (device_sane(&d, why, sizeof(why)) != 0) {
			PQclear(r);
			return fleet_fail(f, "%s: host %.32s run %lld device %lld (%.16s): %s; the row is damaged or "
			                     "was changed by hand, so this run cannot be read from the catalogue",
			                  f->where, host_id, (long long)run_id, (long long)d.device_id, d.vdev, why);
		}
		d.run_id = local_run;
		(*map)[i].from = d.device_id;
		if (store_copy_device(dst, &d) != 0) {
			PQclear(r);
			return copy_fail(f, dst, "copying a device");
		}
		(*map)[i].to = d.device_id;
		(*nmap)++;
	}
	PQclear(r);
	return 0;
}

/* Rows of a large result one at a time (libpq's single-row mode), so a run
 * of gigabytes is never held in memory whole. */
static int stream_rows(struct fleet *f, const char *what, const char *sql, const struct fleet_params *p,
                       int (*row)(void *ctx, const PGresult *r), void *ctx)
{
	if (!PQsendQueryParams(f->conn, sql, p->n, NULL, p->v, p->len, p->fmt, 1) ||
	    !PQsetSingleRowMode(f->conn))
		return fleet_pg_fail(f, NULL, what);
	int rc = 0;
	PGresult *r;
	while ((r = PQgetResult(f->conn))) {
		ExecStatusType st = PQresultStatus(r);
		if (st == PGRES_SINGLE_TUPLE) {
			if (!rc && row(ctx, r) != 0)
				rc = -1;
		} else if (st != PGRES_TUPLES_OK && !rc) {
			rc = fleet_pg_fail(f, r, what);
		}
		PQclear(r);
	}
	return rc;
}

struct copy_ctx {
	struct fleet *f;
	struct store *dst;
	const struct id_map *map;
	size_t nmap;
	const char *host_id; /* the run copied, for what a damaged row names */
	int64_t run_id;
};

static int copy_chunk_row(void *ctx, const PGresult *r)
{
	struct copy_ctx *c = ctx;
	int64_t dev = map_id(c->map, c->nmap, fleet_get_i64(r, 0, 0));
	int64_t chunk = fleet_get_i64(r, 0, 1);
	if (!dev || chunk < 0)
		return fleet_fail(c->f, "the catalogue holds a chunk of no device of the run");
	size_t len = (size_t)PQgetlength(r, 0, 2);
	if (!PQgetisnull(r, 0, 3) &&
	    (int64_t)XXH3_64bits(PQgetvalue(r, 0, 2), len) != fleet_get_i64(r, 0, 3))
		return fleet_fail(c->f,
		                  "the catalogue's copy of run %lld of host %.8s, device id %lld: bytes %llu-%llu "
		                  "(chunk %lld) " STORE_DAMAGE_WORDS "; sync the run again from its host",
		                  (long long)c->run_id, c->host_id, (long long)fleet_get_i64(r, 0, 0),
		                  (unsigned long long)chunk * STORE_CHUNK_BYTES,
		                  (unsigned long long)chunk * STORE_CHUNK_BYTES + (len ? len - 1 : 0), (long long)chunk);
	if (store_copy_chunk(c->dst, dev, (uint64_t)chunk, PQgetvalue(r, 0, 2),
	                     (size_t)PQgetlength(r, 0, 2)) != 0)
		return copy_fail(c->f, c->dst, "copying a chunk");
	return 0;
}

static int copy_packet_row(void *ctx, const PGresult *r)
{
	struct copy_ctx *c = ctx;
	int64_t dev = map_id(c->map, c->nmap, fleet_get_i64(r, 0, 0));
	struct store_trace_packet p = {
		.seq = (uint64_t)fleet_get_i64(r, 0, 1),
		.sector = (uint64_t)fleet_get_i64(r, 0, 2),
		.bytes = (uint32_t)fleet_get_i64(r, 0, 3),
		.events = (uint64_t)fleet_get_i64(r, 0, 4),
		.first_ts = (uint64_t)fleet_get_i64(r, 0, 5),
		.last_ts = (uint64_t)fleet_get_i64(r, 0, 6),
		.final = (int)fleet_get_i64(r, 0, 7),
		.kept_us = fleet_get_i64(r, 0, 8),
		.sum = (uint64_t)fleet_get_i64(r, 0, 9),
		.has_sum = !PQgetisnull(r, 0, 9),
	};
	if (!dev)
		return fleet_fail(c->f, "the catalogue holds a trace packet of no device of the run");
	if (store_copy_trace_packet(c->dst, dev, &p) != 0)
		return copy_fail(c->f, c->dst, "copying a trace packet");
	return 0;
}

int fleet_copy_run(struct fleet *f, const char *host_id, int64_t run_id, struct store *dst,
                   const struct fleet_copy_opts *o, int64_t *local_id)
{
	static const struct fleet_copy_opts whole = {0};
	struct fleet_params p = {0};
	struct id_map *map = NULL;
	size_t nmap = 0;
	int rc = -1, in_batch = 0;

	if (fleet_cmd(f, "reading the catalogue",
	              "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", NULL) != 0)
		return -1;
	fleet_param_text(&p, host_id);
	fleet_param_i64(&p, run_id);
	PGresult *r = fleet_exec(f, "reading the run",
	                         "SELECT " RUN_COLS "FROM runs r JOIN hosts h USING (host_id) "
	                         "WHERE r.host_id = $1 AND r.run_id = $2",
	                         &p, PGRES_TUPLES_OK);
	if (!r)
		goto out;
	if (PQntuples(r) != 1) {
		PQclear(r);
		fleet_fail(f, "the catalogue holds no run %lld of host %.8s", (long long)run_id, host_id);
		goto out;
	}
	struct fleet_run fr;
	run_of_row(r, 0, &fr);
	PQclear(r);
	if (!o)
		o = &whole;
	if (o->id)
		fr.run.run_id = o->id;
	if (o->catalogue_host && fr.hostname[0])
		snprintf(fr.run.host, sizeof(fr.run.host), "%s", fr.hostname);
	if (store_batch_begin(dst) != 0) {
		copy_fail(f, dst, "copying the run");
		goto out;
	}
	in_batch = 1;
	if (store_copy_run(dst, &fr.run) != 0) {
		copy_fail(f, dst, "copying the run");
		goto out;
	}
	if (copy_devices(f, host_id, run_id, fr.run.run_id, dst, &map, &nmap) != 0)
		goto out;
	struct copy_ctx c = {f, dst, map, nmap, host_id, run_id};
	if (!o->rows_only && (stream_rows(f, "reading the run's chunks",
	                "SELECT c.device_id, c.chunk, c.data, c.sum FROM chunks c JOIN devices d "
	                "USING (host_id, device_id) WHERE d.host_id = $1 AND d.run_id = $2",
	                &p, copy_chunk_row, &c) != 0 ||
	    stream_rows(f, "reading the run's trace packets",
	                "SELECT t.device_id, t.seq, t.sector, t.bytes, t.events, t.first_ts, t.last_ts, "
	                "t.final, t.kept_us, t.sum FROM trace_packets t JOIN devices d "
	                "USING (host_id, device_id) WHERE d.host_id = $1 AND d.run_id = $2",
	                &p, copy_packet_row, &c) != 0))
		goto out;
	if (store_batch_commit(dst) != 0) {
		in_batch = 0;
		copy_fail(f, dst, "copying the run");
		goto out;
	}
	in_batch = 0;
	*local_id = fr.run.run_id;
	rc = 0;
out:
	if (in_batch)
		store_batch_abort(dst);
	r = PQexec(f->conn, "COMMIT");
	PQclear(r);
	free(map);
	return rc;
}

/* ---- every run's rows (profdb serve's mirror) --------------------------------------- */

/* Rows of a server-side cursor, FLEET_CURSOR_BATCH at a time: a catalogue
 * of a million runs is read in pieces, never held whole (its two results
 * took 877 MB). */
#define FLEET_CURSOR_BATCH 5000
struct cursor {
	struct fleet *f;
	const char *name, *what;
	PGresult *r;
	int i, n, done;
};

/* The next row (c->r, c->i), 1; 0 at the end; -1 on failure. */
static int cursor_next(struct cursor *c)
{
	if (c->r && ++c->i < c->n)
		return 1;
	if (c->done)
		return 0;
	PQclear(c->r);
	char sql[64];
	snprintf(sql, sizeof(sql), "FETCH %d FROM %s", FLEET_CURSOR_BATCH, c->name);
	if (!(c->r = fleet_exec(c->f, c->what, sql, NULL, PGRES_TUPLES_OK)))
		return -1;
	c->n = PQntuples(c->r);
	c->i = 0;
	c->done = c->n < FLEET_CURSOR_BATCH;
	return c->n > 0;
}

int fleet_each_run_rows(struct fleet *f, int64_t since_us, const struct fleet_rows_cb *cb, void *ctx)
{
	struct fleet_params p = {0};
	int rc = -1;

	if (fleet_cmd(f, "reading the catalogue", "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", NULL) != 0)
		return -1;
	fleet_param_i64(&p, since_us);
	/* both in one snapshot, both in (host, run) order: a merge */
	struct cursor runs = {f, "profsvc_runs", "reading the runs", NULL, 0, 0, 0};
	struct cursor devs = {f, "profsvc_devs", "reading the runs' devices", NULL, 0, 0, 0};
	struct fleet_run *fr = malloc(sizeof(*fr));
	struct store_device_info *dv = malloc(sizeof(*dv) * 64);
	if (!fr || !dv) {
		fleet_fail(f, "out of memory");
		goto out;
	}
	if (fleet_cmd(f, "reading the runs",
	              "DECLARE profsvc_runs NO SCROLL CURSOR FOR SELECT " RUN_COLS ", r.stamp, r.synced_us "
	              "FROM runs r JOIN hosts h USING (host_id) WHERE r.synced_us > $1 ORDER BY r.host_id, r.run_id",
	              &p) != 0 ||
	    fleet_cmd(f, "reading the runs' devices",
	              "DECLARE profsvc_devs NO SCROLL CURSOR FOR "
	              "SELECT d.host_id, d.run_id, d.device_id, d.vdev, d.devid, d.role, "
	              "d.capacity_sectors, d.write_requests, d.write_bytes, "
	              "d.read_requests, d.read_bytes, d.flush_requests, "
	              "d.discard_requests, d.errors, d.written_end_sector, d.status, "
	              "d.file_size, d.closed, d.word_size, d.status_updated_us "
	              "FROM devices d JOIN runs r USING (host_id, run_id) "
	              "WHERE r.synced_us > $1 AND d.damaged IS NULL ORDER BY d.host_id, d.run_id, d.device_id",
	              &p) != 0)
		goto out;
	int more_devs = cursor_next(&devs), got;
	rc = 0;
	while (!rc && (got = cursor_next(&runs)) > 0 && more_devs >= 0) {
		char stamp[40];
		run_of_row(runs.r, runs.i, fr);
		fleet_get_str(runs.r, runs.i, 19, stamp, sizeof(stamp));
		int64_t synced = fleet_get_i64(runs.r, runs.i, 20);
		int n = 0;
		/* its devices: the same order, a merge */
		for (; more_devs > 0; more_devs = cursor_next(&devs)) {
			char hid[33];
			fleet_get_str(devs.r, devs.i, 0, hid, sizeof(hid));
			int64_t rid = fleet_get_i64(devs.r, devs.i, 1);
			int c = strcmp(hid, fr->host_id);
			if (c > 0 || (c == 0 && rid > fr->run.run_id))
				break;
			char why[160];
			/* a device row no store could hold is left out of the listing */
			if (c == 0 && rid == fr->run.run_id && n < 64) {
				device_of_row(devs.r, devs.i, 2, &dv[n]);
				n += device_sane(&dv[n], why, sizeof(why)) == 0;
			}
		}
		rc = cb->run(ctx, fr, stamp, synced, dv, n);
	}
	if (!rc && (got < 0 || more_devs < 0))
		rc = -1;
out:
	free(fr);
	free(dv);
	PQclear(runs.r);
	PQclear(devs.r);
	PGresult *e = PQexec(f->conn, rc == 0 ? "COMMIT" : "ROLLBACK");
	PQclear(e);
	return rc;
}

int fleet_copy_rows(struct store *dst, struct fleet_run *fr, int64_t want_id, struct store_device_info *devs,
                    int ndevs, int64_t *local_id)
{
	fr->run.run_id = want_id;
	int rc = store_copy_run(dst, &fr->run);
	for (int i = 0; i < ndevs && !rc; i++) {
		devs[i].run_id = fr->run.run_id;
		devs[i].device_id = 0; /* the next free one: hosts' device ids meet here */
		rc = store_copy_device(dst, &devs[i]);
	}
	*local_id = fr->run.run_id;
	return rc;
}
