/*
 * store_trace.c - MirageOS traces in the store: the packets of a run's
 * trace device (role 'trace', vdev "mprof"), each kept once by its
 * sequence number.  A packet's bytes go to the end of the device's sector
 * space, like any write (so chunks, the data file, quotas, export and
 * deletion treat them as they treat profile bytes); its row in
 * trace_packets says where it lies and what it holds.  The packet's
 * sequence is the key: a packet offered twice (a restarted backend sees
 * the ring again) is kept once.
 *
 * Layer 6 (store_internal.h).  May call: store_catalog.c, store_data.c,
 * store_conn.c, store_remote.c (a store read through the backend).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

int store_trace_keep(struct store_device *d, const struct store_trace_packet *p, const void *bytes)
{
	struct store *s = d->s;
	struct store_device_info info;
	uint32_t nsect = (p->bytes + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE;
	uint8_t *padded = NULL;
	const void *data = bytes;
	int rc;

	if (!s->in_batch)
		return store_fail(s, STORE_EINVAL, "a trace packet is kept inside a batch");
	if ((rc = store_promote(s)))
		return rc;
	if (d->pending.role != STORE_ROLE_TRACE)
		return store_fail(s, STORE_EINVAL, "device %s is not a trace", d->pending.vdev);
	if (p->bytes == 0 || p->seq > (uint64_t)INT64_MAX)
		return store_fail(s, STORE_EINVAL, "trace packet %llu: bad size or sequence",
		                  (unsigned long long)p->seq);
	store_device_get_info(d, &info);
	uint64_t sector = info.written_end_sector;
	if (p->bytes % STORE_SECTOR_SIZE) {
		padded = calloc(nsect, STORE_SECTOR_SIZE);
		if (!padded)
			return store_fail(s, STORE_ENOMEM, "out of memory keeping a trace packet");
		memcpy(padded, bytes, p->bytes);
		data = padded;
	}
	/* The row first: a packet already kept fails its key and costs no
	 * bytes. */
	sqlite3_stmt *st = store_stmt(s, ST_TRACE_INSERT);
	if (!st) {
		free(padded);
		return store_sqlite_fail(s, "keeping a trace packet");
	}
	sqlite3_bind_int64(st, 1, store_device_id(d));
	sqlite3_bind_int64(st, 2, (int64_t)p->seq);
	sqlite3_bind_int64(st, 3, (int64_t)sector);
	sqlite3_bind_int64(st, 4, p->bytes);
	sqlite3_bind_int64(st, 5, (int64_t)p->events);
	if (p->events) {
		sqlite3_bind_int64(st, 6, (int64_t)p->first_ts);
		sqlite3_bind_int64(st, 7, (int64_t)p->last_ts);
	} else {
		sqlite3_bind_null(st, 6);
		sqlite3_bind_null(st, 7);
	}
	sqlite3_bind_int(st, 8, p->final ? 1 : 0);
	sqlite3_bind_int64(st, 9, p->kept_us ? p->kept_us : store_now_us());
	sqlite3_bind_int64(st, 10, store_sum(bytes, p->bytes));
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		free(padded);
		if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_PRIMARYKEY)
			return 1; /* kept before: nothing to do */
		return store_sqlite_fail(s, "keeping a trace packet");
	}
	struct store_segment seg = {sector, nsect, data};
	rc = store_write(d, &seg, 1);
	free(padded);
	return rc;
}

int store_trace_packets(struct store *s, int64_t device_id, store_trace_cb cb, void *ctx)
{
	return store_trace_packets_from(s, device_id, 0, cb, ctx);
}

int store_trace_packets_from(struct store *s, int64_t device_id, uint64_t from_seq, store_trace_cb cb, void *ctx)
{
	if (s->remote)
		return store_remote_trace_packets(s, device_id, from_seq, cb, ctx);
	sqlite3_stmt *st;
	int rc;
	STORE_NEED_SQL(s);

	if (s->schema_version < 5)
		return 0; /* no store before version 5 holds a trace */
	if (sqlite3_prepare_v2(s->db,
	                       s->schema_version >= 9
	                               ? "SELECT seq, sector, bytes, events, first_ts, last_ts, final, kept_us, "
	                                 "sum FROM trace_packets WHERE device_id = ?1 AND seq >= ?2 ORDER BY seq"
	                               : "SELECT seq, sector, bytes, events, first_ts, last_ts, final, kept_us, "
	                                 "NULL FROM trace_packets WHERE device_id = ?1 AND seq >= ?2 ORDER BY seq",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "reading a trace");
	sqlite3_bind_int64(st, 1, device_id);
	sqlite3_bind_int64(st, 2, from_seq > INT64_MAX ? INT64_MAX : (int64_t)from_seq);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_trace_packet p = {
			.seq = (uint64_t)sqlite3_column_int64(st, 0),
			.sector = (uint64_t)sqlite3_column_int64(st, 1),
			.bytes = (uint32_t)sqlite3_column_int64(st, 2),
			.events = (uint64_t)sqlite3_column_int64(st, 3),
			.first_ts = (uint64_t)sqlite3_column_int64(st, 4),
			.last_ts = (uint64_t)sqlite3_column_int64(st, 5),
			.final = sqlite3_column_int(st, 6),
			.kept_us = sqlite3_column_int64(st, 7),
			.sum = (uint64_t)sqlite3_column_int64(st, 8),
			.has_sum = sqlite3_column_type(st, 8) != SQLITE_NULL,
		};
		/* A damaged row: out-of-range values are refused, not followed. */
		if (sqlite3_column_int64(st, 0) < 0 || sqlite3_column_int64(st, 1) < 0 ||
		    sqlite3_column_int64(st, 2) <= 0 || sqlite3_column_int64(st, 2) > (1 << 30)) {
			sqlite3_finalize(st);
			return store_fail(s, STORE_ECORRUPT,
			                  "trace packet row of device %lld is damaged: run 'profdb check'",
			                  (long long)device_id);
		}
		if ((rc = cb(ctx, &p))) {
			sqlite3_finalize(st);
			return rc;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_sqlite_fail(s, "reading a trace");
	return 0;
}

static int add_up(void *ctx, const struct store_trace_packet *p)
{
	struct store_trace_summary *sum = ctx;

	if (sum->kept == 0 || p->seq > sum->last_seq)
		sum->last_seq = p->seq;
	sum->kept++;
	sum->bytes += p->bytes;
	sum->events += p->events;
	if (p->events) {
		if (!sum->have_time || p->first_ts < sum->first_ts)
			sum->first_ts = p->first_ts;
		if (!sum->have_time || p->last_ts > sum->last_ts)
			sum->last_ts = p->last_ts;
		sum->have_time = 1;
	}
	sum->final |= p->final;
	return 0;
}

int store_trace_summary(struct store *s, int64_t device_id, struct store_trace_summary *out)
{
	int rc;
	STORE_NEED_SQL(s);

	memset(out, 0, sizeof(*out));
	if ((rc = store_trace_packets(s, device_id, add_up, out)))
		return rc;
	/* Every packet from the guest's first (0) to its last seen that is
	 * not kept was overwritten before it could be. */
	out->lost = out->kept ? out->last_seq + 1 - out->kept : 0;
	return 0;
}

int store_trace_verify(struct store *s, int64_t device_id, const struct store_trace_packet *p, const void *bytes)
{
	if (!p->has_sum || (uint64_t)store_sum(bytes, p->bytes) == p->sum)
		return 0;
	struct store_damage d = {.device_id = device_id,
	                         .off = p->sector * STORE_SECTOR_SIZE,
	                         .len = p->bytes,
	                         .chunk = -1,
	                         .seq = (int64_t)p->seq};
	char what[200];
	store_damage_fill(s, &d);
	if (s->damage_cb)
		return s->damage_cb(s->damage_ctx, &d);
	store_damage_describe(&d, what, sizeof(what));
	return store_fail(s, STORE_ECORRUPT, "%s: the stored trace is damaged (run 'profdb check')", what);
}
