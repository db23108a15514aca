/*
 * fleet_pg.c - the connection to the fleet's PostgreSQL and the few libpq
 * idioms the fleet uses: bound parameters, results in binary (no text
 * parsing of numbers, and bytea as it is), binary COPY for bulk data.
 *
 * Why binary: a guest's name or a profile's bytes come back exactly as they
 * went in, with nothing to unescape; a number is 8 bytes, not a string to
 * parse.
 *
 * May call: libpq, util/grow.h.  The bottom of the fleet: it calls none of its other
 * files (fleet_open, connecting and then checking the schema, is
 * fleet_schema.c's).
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/grow.h"

#include "fleet_internal.h"

int fleet_is_url(const char *s)
{
	return s && (strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0);
}

int fleet_fail(struct fleet *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* PostgreSQL's message on one line (libpq ends it with a newline and may
 * add a DETAIL or HINT line). */
static void one_line(char *s)
{
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = 0;
}

int fleet_pg_fail(struct fleet *f, PGresult *res, const char *what)
{
	char msg[512];
	const char *m = res ? PQresultErrorMessage(res) : NULL;
	if (!m || !*m)
		m = PQerrorMessage(f->conn);
	snprintf(msg, sizeof(msg), "%s", m && *m ? m : "no reason given");
	one_line(msg);
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state && strcmp(state, "55P03") == 0)
		return fleet_fail(f, "%s (%s): waited %u s for a lock another session holds (another sync of "
		                     "this host, or a session holding its advisory lock: pg_locks and "
		                     "pg_stat_activity on the server say which); try again once it is gone",
		                  what, f->where, f->lock_timeout_s);
	if (state && strcmp(state, "57014") == 0)
		return fleet_fail(f, "%s (%s): a statement ran past %u s and was cancelled (a loaded or stuck "
		                     "server): %s",
		                  what, f->where, FLEET_STATEMENT_TIMEOUT_S, msg);
	return fleet_fail(f, "%s (%s): %s", what, f->where, msg);
}

void fleet_describe_url(const char *url, char *out, size_t len)
{
	char *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &err);
	const char *host = NULL, *port = NULL, *db = NULL, *user = NULL;

	if (!opts) {
		snprintf(out, len, "an unreadable URL (%s)", err ? err : "out of memory");
		PQfreemem(err);
		one_line(out);
		return;
	}
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		if (!o->val || !*o->val)
			continue;
		if (!strcmp(o->keyword, "host"))
			host = o->val;
		else if (!strcmp(o->keyword, "port"))
			port = o->val;
		else if (!strcmp(o->keyword, "dbname"))
			db = o->val;
		else if (!strcmp(o->keyword, "user"))
			user = o->val;
	}
	int sock = host && host[0] == '/'; /* a Unix socket's directory */
	snprintf(out, len, "postgresql://%s%s%s%s%s/%s%s%s", user ? user : "", user ? "@" : "",
	         host && !sock ? host : "", port ? ":" : "", port ? port : "", db ? db : "",
	         sock ? "?host=" : "", sock ? host : "");
	PQconninfoFree(opts);
}

void fleet_interrupt(struct fleet *f)
{
	int fd = f && f->conn ? PQsocket(f->conn) : -1;
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
}

const char *fleet_errmsg(const struct fleet *f)
{
	return f->err;
}

int fleet_connect(struct fleet **out, const char *url, int writer, char *err, size_t len)
{
	/* The URL through libpq's own parser (expand_dbname); profdb names
	 * itself so that pg_stat_activity says who is connected. */
	/* A server that stops answering mid-transfer is noticed within 30 s
	 * (tcp_user_timeout, keepalives) instead of the kernel's 15 minutes. */
	const char *keys[] = {"dbname", "application_name", "connect_timeout", "keepalives_idle",
	                      "keepalives_interval", "keepalives_count", "tcp_user_timeout", NULL};
	const char *vals[] = {url, writer ? "profdb sync" : "profdb", "10", "10", "5", "3", "30000", NULL};
	struct fleet *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	f->conn = PQconnectdbParams(keys, vals, 1);
	if (!f->conn || PQstatus(f->conn) != CONNECTION_OK) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", f->conn ? PQerrorMessage(f->conn) : "out of memory");
		one_line(msg);
		snprintf(err, len, "cannot connect to the PostgreSQL catalogue: %s", msg);
		fleet_close(f);
		return -1;
	}
	const char *h = PQhost(f->conn), *p = PQport(f->conn), *d = PQdb(f->conn);
	snprintf(f->where, sizeof(f->where), "PostgreSQL at %s%s%s, database %s",
	         h && *h ? h : "the default socket", p && *p ? ":" : "", p && *p ? p : "", d ? d : "?");
	/* Nothing another session does blocks us for ever: a lock is waited
	 * for lock_timeout (PROFSVC_FLEET_LOCK_TIMEOUT seconds, 30 by
	 * default), a statement runs at most FLEET_STATEMENT_TIMEOUT_S. */
	const char *lt = getenv("PROFSVC_FLEET_LOCK_TIMEOUT");
	char *end;
	unsigned long secs = lt && *lt ? strtoul(lt, &end, 10) : 30;
	f->lock_timeout_s = lt && *lt && (*end || secs < 1 || secs > 3600) ? 30 : (unsigned)secs;
	char setup[256];
	snprintf(setup, sizeof(setup),
	         "SET client_min_messages = warning; SET TIME ZONE 'UTC'; SET lock_timeout = '%us'; "
	         "SET statement_timeout = '%us'",
	         f->lock_timeout_s, FLEET_STATEMENT_TIMEOUT_S);
	if (fleet_cmd(f, "setting up the session", setup, NULL) != 0) {
		snprintf(err, len, "%s", f->err);
		fleet_close(f);
		return -1;
	}
	*out = f;
	return 0;
}

void fleet_close(struct fleet *f)
{
	if (!f)
		return;
	if (f->conn)
		PQfinish(f->conn);
	free(f);
}

/* ---- parameters ------------------------------------------------------------ */

static int next_param(struct fleet_params *p)
{
	if (p->n >= FLEET_MAX_PARAMS)
		abort(); /* a programming error: the statements are ours */
	return p->n++;
}

void fleet_param_i64(struct fleet_params *p, int64_t v)
{
	int i = next_param(p);
	snprintf(p->num[i], sizeof(p->num[i]), "%lld", (long long)v);
	p->v[i] = p->num[i];
	p->len[i] = 0;
	p->fmt[i] = 0;
}

void fleet_param_text(struct fleet_params *p, const char *s)
{
	int i = next_param(p);
	p->v[i] = s;
	p->len[i] = 0;
	p->fmt[i] = 0;
}

void fleet_param_bytes(struct fleet_params *p, const void *b, size_t len)
{
	int i = next_param(p);
	p->v[i] = len ? b : "";
	p->len[i] = (int)len;
	p->fmt[i] = 1;
}

void fleet_param_str(struct fleet_params *p, const char *s)
{
	fleet_param_bytes(p, s, strlen(s));
}

void fleet_param_null(struct fleet_params *p)
{
	int i = next_param(p);
	p->v[i] = NULL;
	p->len[i] = 0;
	p->fmt[i] = 0;
}

PGresult *fleet_exec(struct fleet *f, const char *what, const char *sql, const struct fleet_params *p,
                     ExecStatusType expect)
{
	PGresult *r = PQexecParams(f->conn, sql, p ? p->n : 0, NULL, p ? p->v : NULL,
	                           p ? p->len : NULL, p ? p->fmt : NULL, 1);
	if (!r || PQresultStatus(r) != expect) {
		fleet_pg_fail(f, r, what);
		PQclear(r);
		return NULL;
	}
	return r;
}

int fleet_cmd(struct fleet *f, const char *what, const char *sql, const struct fleet_params *p)
{
	PGresult *r;

	if (!p) {
		/* several statements at once (PQexecParams takes one) */
		r = PQexec(f->conn, sql);
		if (!r || (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)) {
			fleet_pg_fail(f, r, what);
			PQclear(r);
			return -1;
		}
		PQclear(r);
		return 0;
	}
	r = fleet_exec(f, what, sql, p, PGRES_COMMAND_OK);
	if (!r)
		return -1;
	PQclear(r);
	return 0;
}

/* ---- binary results ------------------------------------------------------- */

int64_t fleet_get_i64(const PGresult *r, int row, int col)
{
	if (PQgetisnull(r, row, col))
		return 0;
	const unsigned char *v = (const unsigned char *)PQgetvalue(r, row, col);
	int n = PQgetlength(r, row, col);
	uint64_t u = 0;
	for (int i = 0; i < n && i < 8; i++)
		u = u << 8 | v[i];
	if (n == 4)
		return (int32_t)(uint32_t)u;
	if (n == 2)
		return (int16_t)(uint16_t)u;
	return (int64_t)u;
}

void fleet_get_str(const PGresult *r, int row, int col, char *out, size_t outlen)
{
	size_t n = PQgetisnull(r, row, col) ? 0 : (size_t)PQgetlength(r, row, col);
	if (!outlen)
		return;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, PQgetvalue(r, row, col), n);
	out[n] = 0;
	/* a NUL inside a bytea would cut the string here; that is all it does */
}

/* ---- binary COPY ------------------------------------------------------------ */

static void put(struct fleet_copy *c, const void *b, size_t n)
{
	if (c->failed)
		return;
	if (c->len + n > c->cap && GROW_FROM(c->buf, c->cap, c->len + n, 1 << 20) != 0) {
		c->failed = 1;
		fleet_fail(c->f, "out of memory for a COPY");
		return;
	}
	memcpy(c->buf + c->len, b, n);
	c->len += n;
}

int fleet_copy_begin(struct fleet_copy *c, struct fleet *f, const char *sql)
{
	static const char header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
	memset(c, 0, sizeof(*c));
	c->f = f;
	PGresult *r = PQexec(f->conn, sql);
	if (!r || PQresultStatus(r) != PGRES_COPY_IN) {
		fleet_pg_fail(f, r, "starting a COPY");
		PQclear(r);
		c->failed = 1;
		return -1;
	}
	PQclear(r);
	put(c, header, sizeof(header));
	return c->failed ? -1 : 0;
}

void fleet_copy_row(struct fleet_copy *c, int nfields)
{
	uint16_t n = htons((uint16_t)nfields);
	put(c, &n, 2);
}

void fleet_copy_i64(struct fleet_copy *c, int64_t v)
{
	uint32_t len = htonl(8);
	uint64_t be = htobe64((uint64_t)v);
	put(c, &len, 4);
	put(c, &be, 8);
}

void fleet_copy_i32(struct fleet_copy *c, int32_t v)
{
	uint32_t len = htonl(4), be = htonl((uint32_t)v);
	put(c, &len, 4);
	put(c, &be, 4);
}

void fleet_copy_bytes(struct fleet_copy *c, const void *b, size_t n)
{
	uint32_t len = htonl((uint32_t)n);
	put(c, &len, 4);
	put(c, b, n);
}

void fleet_copy_null(struct fleet_copy *c)
{
	uint32_t len = htonl(UINT32_MAX);
	put(c, &len, 4);
}

int fleet_copy_flush(struct fleet_copy *c, int force)
{
	if (c->failed)
		return -1;
	if (!c->len || (!force && c->len < (1u << 20)))
		return 0;
	if (PQputCopyData(c->f->conn, c->buf, (int)c->len) != 1) {
		c->failed = 1;
		return fleet_pg_fail(c->f, NULL, "sending a COPY");
	}
	c->len = 0;
	return 0;
}

int fleet_copy_end(struct fleet_copy *c)
{
	uint16_t trailer = htons(0xffff);
	int rc = -1;

	put(c, &trailer, 2);
	if (fleet_copy_flush(c, 1) == 0) {
		if (PQputCopyEnd(c->f->conn, NULL) != 1) {
			fleet_pg_fail(c->f, NULL, "ending a COPY");
		} else {
			PGresult *r = PQgetResult(c->f->conn);
			if (r && PQresultStatus(r) == PGRES_COMMAND_OK)
				rc = 0;
			else
				fleet_pg_fail(c->f, r, "a COPY");
			PQclear(r);
			while ((r = PQgetResult(c->f->conn)))
				PQclear(r);
		}
	} else {
		fleet_copy_abort(c);
		return -1;
	}
	free(c->buf);
	c->buf = NULL;
	return rc;
}

void fleet_copy_abort(struct fleet_copy *c)
{
	PGresult *r;
	if (PQputCopyEnd(c->f->conn, "abandoned") == 1)
		while ((r = PQgetResult(c->f->conn)))
			PQclear(r);
	free(c->buf);
	c->buf = NULL;
}
