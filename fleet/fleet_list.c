/*
 * fleet_list.c - the fleet's runs listed (profdb query runs over a
 * catalogue), fast enough for 100,000 runs.
 *
 * Why COPY and not a query's result: a result is whole before the first row
 * can be read (libpq builds it in memory, 100,000 rows of PGresult cells),
 * while COPY ... TO STDOUT streams rows that are printed as they come, the
 * server producing the next ones meanwhile.  The listing's columns are in
 * an index of their own (runs_listing), so the server reads no table pages,
 * and packed by the server into one column (runs.listing, a generated
 * column): one field per row to send costs it a memcpy where nine cost
 * nine output functions.
 * Hostnames come from the hosts table once, not joined into every row.
 *
 * COPY takes no bound parameters, so everything put into its text is ours:
 * a state's name and numbers (the hosts' numbers a parameterised query
 * found for --host).  A row names its host by number (hosts.host_no), not
 * by its 32-character id: the id's text cost the server a third of the
 * listing.  The name glob is matched here,
 * with SQLite's GLOB (the host's own listing's), so that a limit counts only
 * runs that match.
 *
 * May call: fleet_pg.c (statements, errors), the store's run states,
 * SQLite's glob, util/grow.h.
 */
#include "config.h"

#include <endian.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

#include "fleet_internal.h"

struct host {
	int64_t no;
	char id[33];
	char name[STORE_NAME_MAX];
	size_t name_len; /* (rows come from the hosts in turn: copied often) */
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int fleet_copy_parse(const unsigned char *p, int len, struct fleet_fields *f)
{
	if (len < 2)
		return -1;
	int16_t n = (int16_t)(p[0] << 8 | p[1]);
	if (n == -1)
		return 1;
	if (n < 0 || n > FLEET_MAX_FIELDS)
		return -1;
	int off = 2;
	f->n = n;
	for (int i = 0; i < n; i++) {
		if (off + 4 > len)
			return -1;
		int32_t l = (int32_t)be32(p + off);
		off += 4;
		if (l < -1 || (l > 0 && l > len - off))
			return -1;
		f->v[i] = p + off;
		f->len[i] = l;
		if (l > 0)
			off += l;
	}
	return 0;
}

int64_t fleet_field_i64(const struct fleet_fields *f, int i)
{
	const unsigned char *p = f->v[i];
	switch (f->len[i]) {
	case 8: {
		uint64_t u;
		memcpy(&u, p, 8);
		return (int64_t)be64toh(u);
	}
	case 4:
		return (int32_t)be32(p);
	case 2:
		return (int16_t)(p[0] << 8 | p[1]);
	default:
		return 0;
	}
}

void fleet_field_str(const struct fleet_fields *f, int i, char *out, size_t outlen)
{
	size_t n = f->len[i] > 0 ? (size_t)f->len[i] : 0;
	if (!outlen)
		return;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, f->v[i], n);
	out[n] = 0;
}

static uint64_t be64(const unsigned char *p)
{
	uint64_t u;
	memcpy(&u, p, 8);
	return be64toh(u);
}

int fleet_listing_parse(const unsigned char *p, int len, int64_t *host_no, struct store_run *r)
{
	static const enum store_run_state states[] = {STORE_RUN_RUNNING, STORE_RUN_COMPLETE,
	                                              STORE_RUN_CRASHED};
	if (len < FLEET_LISTING_FIXED || p[48] > 2)
		return -1;
	*host_no = (int32_t)be32(p);
	r->run_id = (int64_t)be64(p + 4);
	r->domid = (int32_t)be32(p + 12);
	r->started_us = (int64_t)be64(p + 16);
	int64_t ended = (int64_t)be64(p + 24);
	r->ended_us = ended < 0 ? 0 : ended;
	r->prof_bytes = (int64_t)be64(p + 32);
	r->hp_bytes = (int64_t)be64(p + 40);
	r->eventlog_bytes = -1; /* not in the listing (docs/json.md) */
	r->trace_packets = r->trace_events = r->samples_bytes = r->samples = -1; /* nor these */
	r->state = states[p[48]];
	size_t n = (size_t)(len - FLEET_LISTING_FIXED);
	if (n >= sizeof(r->name))
		n = sizeof(r->name) - 1;
	memcpy(r->name, p + FLEET_LISTING_FIXED, n);
	r->name[n] = 0;
	return 0;
}

static int cmp_host(const void *a, const void *b)
{
	int64_t x = ((const struct host *)a)->no, y = ((const struct host *)b)->no;
	return x < y ? -1 : x > y;
}

/* The hosts, sorted by number; with `want` only those it names (a hostname
 * or a prefix of an id). */
static int load_hosts(struct fleet *f, const char *want, struct host **out, size_t *n)
{
	struct fleet_params p = {0};
	const char *sql = "SELECT host_no, host_id, hostname FROM hosts ORDER BY host_no";
	if (want) {
		fleet_param_text(&p, want);
		sql = "SELECT host_no, host_id, hostname FROM hosts WHERE hostname = convert_to($1, 'UTF8') OR "
		      "host_id LIKE replace(replace(lower($1), '%', ''), '_', '') || '%' ORDER BY host_no";
	}
	PGresult *r = fleet_exec(f, "listing the fleet's hosts", sql, &p, PGRES_TUPLES_OK);
	if (!r)
		return -1;
	*n = (size_t)PQntuples(r);
	*out = calloc(*n ? *n : 1, sizeof(**out));
	if (!*out) {
		PQclear(r);
		return fleet_fail(f, "out of memory");
	}
	for (size_t i = 0; i < *n; i++) {
		(*out)[i].no = fleet_get_i64(r, (int)i, 0);
		fleet_get_str(r, (int)i, 1, (*out)[i].id, sizeof((*out)[i].id));
		fleet_get_str(r, (int)i, 2, (*out)[i].name, sizeof((*out)[i].name));
		(*out)[i].name_len = strlen((*out)[i].name);
	}
	PQclear(r);
	return 0;
}

struct lister {
	struct fleet *f;
	const struct fleet_filter *flt;
	struct host *hosts;
	size_t nhosts;
	int full;
	fleet_run_cb cb;
	void *ctx;
	struct fleet_run run;
	/* a name glob with a limit: the matching rows, kept until the end */
	struct kept_row **kept;
	size_t nkept, capkept;
	int cb_rc;            /* what the callback said when it stopped */
};

struct kept_row {
	int len;
	char data[];
};

static int fill(struct lister *l, const struct fleet_fields *f)
{
	struct fleet_run *fr = &l->run;
	struct store_run *r = &fr->run;
	int64_t host_no;

	if (f->n != (l->full ? 8 : 1))
		return fleet_fail(l->f, "the catalogue answered a listing row of %d columns", f->n);
	if (fleet_listing_parse(f->v[0], f->len[0], &host_no, r) != 0)
		return fleet_fail(l->f, "the catalogue answered a listing row that is not one (%d bytes)",
		                  f->len[0]);
	struct host key = {.no = host_no}, *h;
	h = bsearch(&key, l->hosts, l->nhosts, sizeof(key), cmp_host);
	int no = h ? (int)(h - l->hosts) : -1;
	if (no != fr->host_no || no < 0) { /* copied when the host changes */
		if (h) {
			memcpy(fr->host_id, h->id, sizeof(fr->host_id));
			memcpy(fr->hostname, h->name, h->name_len + 1);
		} else {
			fr->host_id[0] = 0;
			memcpy(fr->hostname, "?", 2);
		}
	}
	fr->host_no = no;
	if (l->full) {
		fleet_field_str(f, 1, r->uuid, sizeof(r->uuid));
		fleet_field_str(f, 2, r->host, sizeof(r->host));
		fleet_field_str(f, 3, r->backend_version, sizeof(r->backend_version));
		fleet_field_str(f, 4, r->source, sizeof(r->source));
		fleet_field_str(f, 5, r->end_reason, sizeof(r->end_reason));
		r->trace_bytes = fleet_field_i64(f, 6);
		r->ndevices = (int)fleet_field_i64(f, 7);
	}
	return 0;
}

static int give(struct lister *l, const struct fleet_fields *f)
{
	if (fill(l, f) != 0)
		return 1;
	l->cb_rc = l->cb(l->ctx, &l->run);
	return l->cb_rc ? 1 : 0;
}

/* A row: 0 go on, 1 stop. */
static int take_row(struct lister *l, const char *buf, int len)
{
	struct fleet_fields f;
	int pr = fleet_copy_parse((const unsigned char *)buf, len, &f);
	if (pr == 1)
		return 0;
	if (pr < 0)
		return fleet_fail(l->f, "the catalogue answered a listing row that is not COPY's binary format"),
		       1;
	if (l->flt->run.name_glob) {
		char name[STORE_NAME_MAX];
		if (f.n < 1 || f.len[0] < FLEET_LISTING_FIXED)
			return fleet_fail(l->f, "the catalogue answered a short listing row"), 1;
		size_t nl = (size_t)(f.len[0] - FLEET_LISTING_FIXED);
		nl = nl < sizeof(name) - 1 ? nl : sizeof(name) - 1;
		memcpy(name, f.v[0] + FLEET_LISTING_FIXED, nl);
		name[nl] = 0;
		if (sqlite3_strglob(l->flt->run.name_glob, name) != 0)
			return 0;
		if (l->flt->run.limit > 0) {
			if (GROW_FROM(l->kept, l->capkept, l->nkept + 1, 256) != 0)
				return fleet_fail(l->f, "out of memory"), 1;
			struct kept_row *k = malloc(sizeof(*k) + (size_t)len);
			if (!k)
				return fleet_fail(l->f, "out of memory"), 1;
			k->len = len;
			memcpy(k->data, buf, (size_t)len);
			l->kept[l->nkept++] = k;
			return 0;
		}
	}
	return give(l, &f);
}

/* " AND host_no IN (...)": the hosts --host names; -1 when none does. */
static int host_clause(struct fleet *f, const char *host, char *sql, size_t cap, int *np)
{
	struct host *want;
	size_t nwant;
	int n = *np;
	if (load_hosts(f, host, &want, &nwant) != 0)
		return -1;
	if (nwant == 0) {
		free(want);
		fleet_fail(f, "the catalogue has no host '%s' (a hostname, or a prefix of a host id: "
		              "query runs --json shows them)",
		           host);
		return -1;
	}
	n += snprintf(sql + n, cap - n, " AND host_no IN (");
	for (size_t i = 0; i < nwant && n < (int)cap - 200; i++)
		n += snprintf(sql + n, cap - n, "%s%lld", i ? ", " : "", (long long)want[i].no);
	n += snprintf(sql + n, cap - n, ")");
	free(want);
	*np = n;
	return 0;
}

/* The COPY statement of the listing the filter asks for. */
static int listing_sql(struct fleet *f, const struct fleet_filter *flt, int full, char *sql, size_t cap)
{
	int n = 0;
	/* (the row: the packed listing alone, or with --json the columns
	 * outside it; the inner query keeps the index's keys for ORDER BY) */
	const char *more = full ? ", uuid, host, backend_version, source, end_reason, trace_bytes, ndevices" : "";
	n += snprintf(sql + n, cap - n,
	              "COPY (SELECT listing%s FROM (SELECT started_us, host_no, run_id, listing%s "
	              "FROM runs WHERE true",
	              more, more);
	if (flt->run.state >= 0)
		n += snprintf(sql + n, cap - n, " AND state = '%s'",
		              store_run_state_name((enum store_run_state)flt->run.state));
	if (flt->run.since_us)
		n += snprintf(sql + n, cap - n, " AND started_us >= %lld", (long long)flt->run.since_us);
	if (flt->host && host_clause(f, flt->host, sql, cap, &n) != 0)
		return -1;
	if (flt->run.limit > 0 && !flt->run.name_glob)
		n += snprintf(sql + n, cap - n,
		              " ORDER BY started_us DESC, host_no DESC, run_id DESC LIMIT %lld",
		              (long long)flt->run.limit);
	n += snprintf(sql + n, cap - n,
	              ") AS x ORDER BY started_us, host_no, run_id) TO STDOUT (FORMAT binary)");
	if (n >= (int)cap - 1)
		return fleet_fail(f, "too many hosts match '%s'", flt->host);
	return 0;
}

/* COPY's rows, each to take_row; 1 when the listing stopped (an error, or
 * the callback said so). */
static int copy_rows(struct lister *l)
{
	struct fleet *f = l->f;
	PGresult *r;
	int stop = 0, header = 1;
	for (;;) {
		char *buf;
		int len = PQgetCopyData(f->conn, &buf, 0);
		if (len < 0)
			break;
		int off = 0;
		if (header) { /* the signature, flags and extension area lead the first row */
			uint32_t ext = len >= 19 ? be32((const unsigned char *)buf + 15) : 0;
			if (len < 19 || memcmp(buf, "PGCOPY\n\377\r\n\0", 11) != 0 || ext > (uint32_t)(len - 19)) {
				PQfreemem(buf);
				if (!stop)
					fleet_fail(f, "the catalogue's COPY output has no binary header");
				stop = 1;
				continue;
			}
			off = 19 + (int)ext;
			header = 0;
		}
		if (!stop && take_row(l, buf + off, len - off))
			stop = 1;
		PQfreemem(buf);
	}
	while ((r = PQgetResult(f->conn))) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK && !stop) {
			fleet_pg_fail(f, r, "listing the fleet's runs");
			stop = 1;
		}
		PQclear(r);
	}
	return stop;
}

/* A glob with a limit: the newest `limit` of the runs that matched. */
static int give_kept(struct lister *l, int64_t limit)
{
	size_t first = l->nkept > (size_t)limit ? l->nkept - (size_t)limit : 0;
	for (size_t i = first; i < l->nkept; i++) {
		struct fleet_fields fl;
		if (fleet_copy_parse((const unsigned char *)l->kept[i]->data, l->kept[i]->len, &fl) != 0 ||
		    give(l, &fl) != 0)
			return -1;
	}
	return 0;
}

int fleet_list_runs(struct fleet *f, const struct fleet_filter *flt, fleet_run_cb cb, void *ctx)
{
	struct lister l = {.f = f, .flt = flt, .full = !flt->brief, .cb = cb, .ctx = ctx,
	                   .run = {.host_no = -1}};
	char sql[2048];
	int rc = -1;

	/* The listing wants the index's order: a catalogue's pages are cached
	 * or on SSD (random_page_cost as for SSDs), and when the planner sorts
	 * anyway (pages not yet marked all-visible by autovacuum just after a
	 * sync), it sorts in memory, not in files. */
	if (fleet_cmd(f, "preparing the listing", "SET random_page_cost = 1.1; SET work_mem = '64MB'",
	              NULL) != 0 ||
	    load_hosts(f, NULL, &l.hosts, &l.nhosts) != 0)
		return -1;
	if (listing_sql(f, flt, l.full, sql, sizeof(sql)) != 0)
		goto out;
	PGresult *r = PQexec(f->conn, sql);
	if (!r || PQresultStatus(r) != PGRES_COPY_OUT) {
		fleet_pg_fail(f, r, "listing the fleet's runs");
		PQclear(r);
		goto out;
	}
	PQclear(r);
	if (copy_rows(&l) == 0 && give_kept(&l, flt->run.limit) == 0)
		rc = 0;
out:
	free(l.hosts);
	for (size_t i = 0; i < l.nkept; i++)
		free(l.kept[i]);
	free(l.kept);
	return l.cb_rc ? l.cb_rc : rc;
}
