/*
 * fleet_internal.h - what the fleet's files share: the connection, bound
 * parameters, binary results and binary COPY (fleet_pg.c).
 */
#ifndef PROFSVC_FLEET_INTERNAL_H
#define PROFSVC_FLEET_INTERNAL_H

#include <libpq-fe.h>

#include "fleet.h"

struct fleet {
	PGconn *conn;
	char where[160]; /* "PostgreSQL at HOST:PORT, database DB" (never the password) */
	char err[768];
	int host_registered; /* this host's row written on this connection */
	unsigned lock_timeout_s; /* the session's lock_timeout */
};

/* A statement (a run's COPY of gigabytes included) that runs longer is
 * cancelled: a stuck server never holds a sync for ever. */
#define FLEET_STATEMENT_TIMEOUT_S 1800u

/* The connection, its session set up (fleet_open, fleet_schema.c, then
 * checks the schema): 0, or -1 with err. */
int fleet_connect(struct fleet **out, const char *url, int writer, char *err, size_t len);

/* Sets f->err ("what: PostgreSQL's message") and returns -1. */
int fleet_fail(struct fleet *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* fleet_fail with the connection's or the result's message appended. */
int fleet_pg_fail(struct fleet *f, PGresult *res, const char *what);

/* Parameters for PQexecParams: numbers as text, strings and bytes as
 * binary (bytea), NULLs as NULL. */
#define FLEET_MAX_PARAMS 24
struct fleet_params {
	int n;
	const char *v[FLEET_MAX_PARAMS];
	int len[FLEET_MAX_PARAMS];
	int fmt[FLEET_MAX_PARAMS];
	char num[FLEET_MAX_PARAMS][24];
};
void fleet_param_i64(struct fleet_params *p, int64_t v);
void fleet_param_text(struct fleet_params *p, const char *s);  /* a text column */
void fleet_param_bytes(struct fleet_params *p, const void *b, size_t len); /* bytea */
void fleet_param_str(struct fleet_params *p, const char *s);   /* bytea of a C string */
void fleet_param_null(struct fleet_params *p);

/* Runs sql with p; results in binary.  Returns the result, or NULL (then
 * f->err says why, naming `what`) unless its status is the expected one. */
PGresult *fleet_exec(struct fleet *f, const char *what, const char *sql, const struct fleet_params *p,
                     ExecStatusType expect);
/* A command whose result is not needed; 0 or -1. */
int fleet_cmd(struct fleet *f, const char *what, const char *sql, const struct fleet_params *p);

/* Binary result values (a NULL reads as 0 or ""). */
int64_t fleet_get_i64(const PGresult *r, int row, int col); /* int8, int4 or int2 */
/* Copies a text or bytea value into out (cut at outlen - 1, NUL-terminated). */
void fleet_get_str(const PGresult *r, int row, int col, char *out, size_t outlen);

/* Binary COPY FROM STDIN: begin, rows of fields, end. */
struct fleet_copy {
	struct fleet *f;
	char *buf;
	size_t len, cap;
	int failed;
};
int fleet_copy_begin(struct fleet_copy *c, struct fleet *f, const char *sql);
void fleet_copy_row(struct fleet_copy *c, int nfields);
void fleet_copy_i64(struct fleet_copy *c, int64_t v);
void fleet_copy_i32(struct fleet_copy *c, int32_t v);
void fleet_copy_bytes(struct fleet_copy *c, const void *b, size_t len); /* text or bytea */
void fleet_copy_null(struct fleet_copy *c);
/* Sends what is buffered once it is large (every row, for the caller). */
int fleet_copy_flush(struct fleet_copy *c, int force);
int fleet_copy_end(struct fleet_copy *c);
void fleet_copy_abort(struct fleet_copy *c);

/* fleet_list.c: one row of COPY's binary output (the catalogue's answer,
 * parsed as untrusted: tests/fuzz/fuzz_fleet_copy): 0, 1 at the trailer,
 * -1 when it is not one.  The getters read a field (0 or "" when NULL or
 * of another size); i < f->n. */
#define FLEET_MAX_FIELDS 24
struct fleet_fields {
	int n;
	const unsigned char *v[FLEET_MAX_FIELDS];
	int32_t len[FLEET_MAX_FIELDS];
};
int fleet_copy_parse(const unsigned char *p, int len, struct fleet_fields *f);
int64_t fleet_field_i64(const struct fleet_fields *f, int i);
void fleet_field_str(const struct fleet_fields *f, int i, char *out, size_t outlen);

/* runs.listing (schema 2, fleet_schema.c): a run's listing columns packed
 * by the server, big-endian: host_no int32, run_id int64, domid int32,
 * started_us int64, ended_us int64 (-1: not ended), prof_bytes int64,
 * hp_bytes int64, state 1 byte (0 running, 1 complete, 2 crashed), then
 * the name's bytes.  fleet_listing_parse reads one into r (its host_no
 * into *host_no): 0, or -1 when it is not one (short, or a state out of
 * range; tests/fuzz/fuzz_fleet_copy). */
#define FLEET_LISTING_FIXED 49
int fleet_listing_parse(const unsigned char *p, int len, int64_t *host_no, struct store_run *r);


#endif
