/*
 * store_check.c - an open store checked, as `profdb check` asks: SQLite's
 * integrity and foreign-key checks, the -wal read as recovery would read
 * it (a damaged frame said, not left to shadow newer pages), the data
 * file's slots against the rows, and every checksum (each chunk's bytes,
 * in its row or its slot, and each trace packet's), in one snapshot.
 *
 * Layer 6 (store_internal.h), over the catalogue.  May call: store_conn.c
 * (errors, the -wal's reader store_wal.c), store_slots.c (the slots'
 * check, a slot's chunk), store_data.c (snapshot reads, a damage's
 * description).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* The -wal as recovery reads it (wal_guard): 1 and what it is into
 * report when it is damaged, 0 when not, -1 when SQLite failed.  Read
 * within a read transaction: a writer may append meanwhile, never start
 * the file over under it. */
static int check_wal(struct store *s, char *report, size_t len)
{
	struct store_wal_report r;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL) != SQLITE_OK) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	int bad = rc == SQLITE_ROW && store_wal_scan(s->path, &r) == 0 && r.damaged;
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_ROW)
		return -1;
	if (bad)
		store_wal_describe(s->path, &r, report, len);
	return bad;
}

int store_check_integrity(struct store *s, char *report, size_t len)
{
	sqlite3_stmt *st;
	int bad = 0;
	size_t used = 0;

	report[0] = '\0';
	STORE_NEED_SQL(s);
	if ((bad = check_wal(s, report, len)) < 0)
		return store_sqlite_fail(s, "checking the -wal");
	used = strlen(report);
	static const char *const checks[] = {"PRAGMA integrity_check(20)", "PRAGMA foreign_key_check"};
	for (size_t c = 0; c < sizeof(checks) / sizeof(checks[0]); c++) {
		if (sqlite3_prepare_v2(s->db, checks[c], -1, &st, NULL) != SQLITE_OK)
			return store_sqlite_fail(s, "checking integrity");
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *row = (const char *)sqlite3_column_text(st, 0);
			if (c == 0 && row && strcmp(row, "ok") == 0)
				continue;
			bad = 1;
			if (used + 2 < len)
				used += (size_t)snprintf(report + used, len - used, "%s%s: %s",
				                         used ? "; " : "", c ? "foreign key" : "integrity",
				                         row ? row : "violation");
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return store_sqlite_fail(s, "checking integrity");
	}
	if (s->schema_version >= 3) {
		int rc = store_slots_check(s, report, len, &used);
		if (rc && rc != STORE_ECORRUPT)
			return rc;
		bad |= rc == STORE_ECORRUPT;
	}
	if (!bad)
		snprintf(report, len, "ok");
	return bad ? STORE_ECORRUPT : 0;
}

/* The sums of every chunk (the row's bytes, or its slot's) and every trace
 * packet (its bytes as the device holds them), in one snapshot. */
static int sums_chunks(struct store *s, store_damage_cb cb, void *ctx, struct store_sums_report *rep)
{
	sqlite3_stmt *st;
	int rc = 0, step;

	if (sqlite3_prepare_v2(s->db, "SELECT key, data, slot, sum FROM chunks ORDER BY key", -1, &st, NULL) !=
	    SQLITE_OK)
		return store_sqlite_fail(s, "checking checksums");
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key = sqlite3_column_int64(st, 0);
		const uint8_t *data = sqlite3_column_blob(st, 1);
		size_t bytes = (size_t)sqlite3_column_bytes(st, 1);
		if (sqlite3_column_type(st, 3) == SQLITE_NULL) {
			rep->unsummed++;
			continue;
		}
		if (bytes == 0 && sqlite3_column_type(st, 2) != SQLITE_NULL) {
			if ((rc = store_slot_chunk(s, key, sqlite3_column_int64(st, 2), &data)))
				break;
			bytes = STORE_CHUNK_BYTES;
		}
		rep->chunks++;
		if (store_sum(data ? (const void *)data : "", bytes) == sqlite3_column_int64(st, 3))
			continue;
		rep->bad_chunks++;
		struct store_damage d = {.device_id = key >> STORE_CHUNK_SHIFT,
		                         .chunk = key & 0xffffffffLL,
		                         .off = (uint64_t)(key & 0xffffffffLL) * STORE_CHUNK_BYTES,
		                         .len = bytes,
		                         .seq = -1};
		store_damage_fill(s, &d);
		if (cb && (rc = cb(ctx, &d)))
			break;
	}
	if (!rc && step != SQLITE_DONE)
		rc = store_sqlite_fail(s, "checking checksums");
	sqlite3_finalize(st);
	return rc;
}

static int sums_packets(struct store *s, store_damage_cb cb, void *ctx, struct store_sums_report *rep)
{
	sqlite3_stmt *st;
	uint8_t *buf = NULL;
	size_t cap = 0;
	int rc = 0, step;

	if (sqlite3_prepare_v2(s->db, "SELECT device_id, seq, sector, bytes, sum FROM trace_packets", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_sqlite_fail(s, "checking checksums");
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(st, 0), sector = sqlite3_column_int64(st, 2);
		int64_t bytes = sqlite3_column_int64(st, 3);
		if (sqlite3_column_type(st, 4) == SQLITE_NULL) {
			rep->unsummed++;
			continue;
		}
		if (sector < 0 || bytes <= 0 || bytes > (1 << 30)) {
			rc = store_fail(s, STORE_ECORRUPT, "trace packet row of device %lld is damaged",
			                (long long)dev);
			break;
		}
		if ((size_t)bytes > cap) {
			uint8_t *p = realloc(buf, (size_t)bytes);
			if (!p) {
				rc = store_fail(s, STORE_ENOMEM, "out of memory");
				break;
			}
			buf = p;
			cap = (size_t)bytes;
		}
		if ((rc = store_chunk_read(s, dev, (uint64_t)sector * STORE_SECTOR_SIZE, buf, (size_t)bytes)))
			break;
		rep->packets++;
		if (store_sum(buf, (size_t)bytes) == sqlite3_column_int64(st, 4))
			continue;
		rep->bad_packets++;
		struct store_damage d = {.device_id = dev,
		                         .chunk = -1,
		                         .off = (uint64_t)sector * STORE_SECTOR_SIZE,
		                         .len = (uint64_t)bytes,
		                         .seq = sqlite3_column_int64(st, 1)};
		store_damage_fill(s, &d);
		if (cb && (rc = cb(ctx, &d)))
			break;
	}
	if (!rc && step != SQLITE_DONE)
		rc = store_sqlite_fail(s, "checking checksums");
	sqlite3_finalize(st);
	free(buf);
	store_blob_release(s);
	return rc;
}

int store_check_sums(struct store *s, store_damage_cb cb, void *ctx, struct store_sums_report *rep)
{
	int rc;

	memset(rep, 0, sizeof(*rep));
	STORE_NEED_SQL(s);
	if (s->schema_version < 9) {
		/* read as it is: nothing to verify, and said so */
		sqlite3_stmt *st;
		const char *sql = s->schema_version >= 5
		                          ? "SELECT (SELECT count(*) FROM chunks) + (SELECT count(*) FROM trace_packets)"
		                          : "SELECT count(*) FROM chunks";
		if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
			return store_sqlite_fail(s, "checking checksums");
		if (sqlite3_step(st) == SQLITE_ROW)
			rep->unsummed = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return 0;
	}
	if ((rc = store_read_begin(s)))
		return rc;
	rc = sums_chunks(s, cb, ctx, rep);
	if (!rc)
		rc = sums_packets(s, cb, ctx, rep);
	store_read_end(s);
	return rc;
}
