/*
 * store_remote.c - a store read through the backend's read service
 * (store_wire.h): what store_open gives a reader that may not open the
 * store's files (they are root's, 0600: read access to a live SQLite store
 * is lock access) when its caller names the read socket.  The read
 * functions of the store forward here; everything that needs the files
 * (writing, checking, copying) is refused with what to do.
 *
 * Layer 1 (store_internal.h), after store_conn.c.  May call: store_conn.c
 * and store_wire.c, util/grow.h; the read functions of the layers above call it.
 *
 * Invariants:
 *   (1) A reply is read whole into a buffer of its own before anything of
 *       it reaches a caller: a callback may call the store again (the
 *       connection is free by then) and never sees half a reply; a reply
 *       is never bigger than WIRE_REPLY_MAX, and every wait on the service
 *       has a deadline (REMOTE_TIMEOUT_MS).
 *   (2) A request is sent again at most once, and only when the connection
 *       it went on had served before and was closed (idle) or said goodbye
 *       before any of the reply came: nothing is ever told a caller twice.
 *   (3) Each request is its own snapshot on the service's side (a page of
 *       runs, a piece of a device's bytes of at most WIRE_DATA_MAX): a
 *       caller's store_read_begin spans no requests.  Listings go on from
 *       where the last page ended (a run id, a packet's seq, an offset), so
 *       nothing comes twice; what was added meanwhile comes at the end.
 *   (4) Connections are shared by the process's stores of one read
 *       service and database, a few kept between requests (see POOL_MAX).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"
#include "store_wire.h"
#include "util/grow.h"

#define REMOTE_TIMEOUT_MS 30000

struct store_remote {
	int fd;                 /* -1: not connected */
	int served;             /* the connection has answered a request */
	char sock[108];
	uint64_t dev, ino;      /* the database file opened (HELLO) */
};

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void disconnect(struct store_remote *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->served = 0;
}

/* What a reader that may not open the files is told when the service
 * cannot be reached. */
static int unreachable(struct store *s, int e)
{
	struct store_remote *r = s->remote;
	if (e == EACCES || e == EPERM)
		return store_fail(s, STORE_EPERM,
		                  "cannot read database %s: its files are root's, and this user may not reach "
		                  "profile-backend's read service %s (%s): it is for the members of the store's "
		                  "group (the run directory's, 2750); run as root, or as such a member",
		                  s->path, r->sock, strerror(e));
	return store_fail(s, STORE_EPERM,
	                  "cannot read database %s: the store is root's; its readers go through "
	                  "profile-backend, which is not running (nothing answers on %s: %s): start it "
	                  "(profile-backend start, or systemctl start profile-backend), or run as root",
	                  s->path, r->sock, strerror(e));
}

static int io_wait(int fd, short what, const struct timespec *t0)
{
	long left = REMOTE_TIMEOUT_MS - ms_since(t0);
	struct pollfd p = {fd, what, 0};
	if (left <= 0)
		return -1;
	int n = poll(&p, 1, (int)left);
	return n > 0 ? 0 : -1;
}

enum xfer { XFER_OK, XFER_CLOSED, XFER_FAILED };

/* Sends the frame and reads the reply's frame whole (1) into *buf, *len
 * bytes: XFER_OK; XFER_CLOSED when the connection was closed (or reset)
 * before any of the reply; XFER_FAILED otherwise (why in why). */
static enum xfer exchange(struct store_remote *r, const uint8_t *req, size_t n, uint8_t **buf, size_t *len,
                          char *why, size_t whylen)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*buf = NULL;
	for (size_t sent = 0; sent < n;) {
		ssize_t k = send(r->fd, req + sent, n - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			sent += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && io_wait(r->fd, POLLOUT, &t0) == 0)
			continue;
		if (k < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			/* it may have said goodbye first: read on */
			break;
		}
		snprintf(why, whylen, "sending: %s", k < 0 && errno != EAGAIN ? strerror(errno) : "timed out");
		return XFER_FAILED;
	}
	uint8_t hdr[4];
	size_t got = 0, want = 4;
	uint8_t *dst = hdr;
	while (got < want) {
		ssize_t k = recv(r->fd, dst + got, want - got, MSG_DONTWAIT);
		if (k > 0) {
			got += (size_t)k;
			if (got == want && dst == hdr) {
				uint32_t flen = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
				                (uint32_t)hdr[3] << 24;
				if (flen == 0 || flen > WIRE_REPLY_MAX) {
					snprintf(why, whylen, "a reply of %u bytes (at most %u)", flen, WIRE_REPLY_MAX);
					return XFER_FAILED;
				}
				if (!(*buf = malloc(flen))) {
					snprintf(why, whylen, "out of memory");
					return XFER_FAILED;
				}
				dst = *buf;
				got = 0;
				want = flen;
			}
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (io_wait(r->fd, POLLIN, &t0) == 0)
				continue;
			snprintf(why, whylen, "no reply within %d s", REMOTE_TIMEOUT_MS / 1000);
		} else if (dst == hdr && got == 0 && (k == 0 || errno == ECONNRESET)) {
			return XFER_CLOSED;
		} else {
			snprintf(why, whylen, "the connection closed in the middle of a reply");
		}
		free(*buf);
		*buf = NULL;
		return XFER_FAILED;
	}
	*len = want;
	return XFER_OK;
}

/*
 * (4) The connections are the process's, a few of them kept between
 * requests (POOL_MAX): a store takes one for a request and gives it back
 * after.  profdb serve opens a store for every request and keeps one open
 * for each live run it follows; holding a connection each, they would
 * take more of the service's room per user (read_service.h) than the
 * requests under way at once need, and the service would drop the idle
 * ones.  A connection in the pool has said hello for its store (socket,
 * device and inode) and keeps what the service answered.
 */
#define POOL_MAX 4
static struct pooled {
	int fd;
	char sock[108];
	uint64_t dev, ino;
	int32_t schema;
	char store_id[33];
} pool[POOL_MAX];
static int npool;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

/* A kept connection for r's store into r (0), or -1 when there is none. */
static int pool_take(struct store *s)
{
	struct store_remote *r = s->remote;
	int got = -1;
	pthread_mutex_lock(&pool_mu);
	for (int i = 0; i < npool && got < 0; i++)
		if (pool[i].dev == r->dev && pool[i].ino == r->ino && strcmp(pool[i].sock, r->sock) == 0) {
			r->fd = pool[i].fd;
			s->schema_version = pool[i].schema;
			snprintf(s->store_id, sizeof(s->store_id), "%s", pool[i].store_id);
			pool[i] = pool[--npool];
			got = 0;
		}
	pthread_mutex_unlock(&pool_mu);
	r->served = got == 0; /* it served before: it may have been closed idle */
	return got;
}

/* r's connection, sound after a whole reply, kept (or closed when the
 * pool is full). */
static void pool_give(struct store *s)
{
	struct store_remote *r = s->remote;
	if (r->fd < 0)
		return;
	pthread_mutex_lock(&pool_mu);
	if (npool < POOL_MAX) {
		pool[npool] = (struct pooled){.fd = r->fd, .dev = r->dev, .ino = r->ino, .schema = s->schema_version};
		memcpy(pool[npool].sock, r->sock, sizeof(r->sock));
		snprintf(pool[npool].store_id, sizeof(pool[npool].store_id), "%s", s->store_id);
		npool++;
		r->fd = -1;
	}
	pthread_mutex_unlock(&pool_mu);
	disconnect(r);
}

/* One request and its reply on r's connection, through the callbacks:
 * XFER_CLOSED when it had been closed (nothing came), -1 when a goodbye
 * came (why in rep->msg), else 0 or what the reply or a callback said. */
static int exchange_once(struct store *s, const uint8_t *req, size_t n, const struct wire_request *rq,
                         const struct wire_reply_cb *cb, void *ctx, struct wire_reply *rep, int *closed)
{
	struct store_remote *r = s->remote;
	char why[300];
	uint8_t *buf;
	size_t len = 0;

	*closed = 0;
	enum xfer x = exchange(r, req, n, &buf, &len, why, sizeof(why));
	if (x == XFER_CLOSED) {
		*closed = 1;
		disconnect(r);
		return store_fail(s, STORE_EIO, "reading %s through profile-backend's read service %s: it closed the "
		                  "connection without a reply", s->path, r->sock);
	}
	if (x != XFER_OK) {
		disconnect(r);
		return store_fail(s, STORE_EIO, "reading %s through profile-backend's read service %s: %s", s->path,
		                  r->sock, why);
	}
	int rc = wire_reply_parse(rq, buf, len, cb, ctx, rep, why, sizeof(why));
	free(buf);
	if (rc == WIRE_BAD) {
		disconnect(r);
		return store_fail(s, STORE_EIO, "profile-backend's read service %s sent %s", r->sock, why);
	}
	if (rep->bye) {
		*closed = 1;
		disconnect(r);
		return store_fail(s, STORE_EBUSY, "profile-backend's read service %s turned this reader away: %s", r->sock,
		                  rep->msg);
	}
	r->served = 1;
	if (rc)
		return rc; /* a callback's */
	if (rep->rc)
		return store_fail(s, rep->rc, "%s", rep->msg);
	return 0;
}

static int encode(struct store *s, const struct wire_request *rq, uint8_t *req, size_t cap, size_t *n)
{
	if (!(*n = wire_request_encode(rq, req, cap)))
		return store_fail(s, STORE_EINVAL, "a request too big for profile-backend's read service (a name "
		                  "filter of at most %u bytes)", WIRE_GLOB_MAX);
	return 0;
}

/* A new connection, and its hello for the store the reader opened. */
static int connect_hello(struct store *s)
{
	struct store_remote *r = s->remote;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memcpy(sa.sun_path, r->sock, sizeof(r->sock));
	r->served = 0;
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->fd < 0)
		return store_fail(s, STORE_EIO, "cannot make a socket: %s", strerror(errno));
	/* a full backlog is waited for, this long at most */
	struct timeval tv = {REMOTE_TIMEOUT_MS / 1000, 0};
	setsockopt(r->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		disconnect(r);
		return unreachable(s, e);
	}
	struct wire_request rq = {.op = WIRE_HELLO, .version = WIRE_VERSION, .dev = r->dev, .ino = r->ino};
	struct wire_reply rep = {0};
	static const struct wire_reply_cb none;
	uint8_t req[64];
	size_t n;
	int closed, rc = encode(s, &rq, req, sizeof(req), &n);
	if (!rc)
		rc = exchange_once(s, req, n, &rq, &none, NULL, &rep, &closed);
	if (!rc && rep.singles != 1)
		rc = store_fail(s, STORE_EIO, "the read service on %s did not say which store it serves", r->sock);
	if (rc && rep.rc) { /* the service said no: which store, which version */
		char said[sizeof(s->errmsg)];
		snprintf(said, sizeof(said), "%s", s->errmsg);
		rc = store_fail(s, rc, "cannot read database %s (its files are root's) through %s: %s", s->path, r->sock,
		                said);
	}
	if (rc) {
		disconnect(r);
		return rc;
	}
	s->schema_version = rep.schema;
	snprintf(s->store_id, sizeof(s->store_id), "%s", rep.store_id);
	return 0;
}

/* One request and its reply, through the callbacks (2), on a connection
 * of the pool or a new one, given back after a whole reply. */
static int call(struct store *s, const struct wire_request *rq, const struct wire_reply_cb *cb, void *ctx,
                struct wire_reply *rep)
{
	struct store_remote *r = s->remote;
	uint8_t req[4 + WIRE_REQUEST_MAX];
	size_t n;
	int rc = encode(s, rq, req, sizeof(req), &n);

	memset(rep, 0, sizeof(*rep));
	for (int again = 0; !rc; again++) {
		int closed;
		/* (a second try on a new connection: the kept ones may all be as old) */
		if (r->fd < 0 && (again || pool_take(s) != 0) && (rc = connect_hello(s)) != 0)
			return rc;
		int reused = r->served;
		rc = exchange_once(s, req, n, rq, cb, ctx, rep, &closed);
		if (closed && reused && !again) {
			rc = 0; /* it had closed an idle connection, or dropped it for a newer: once more */
			continue;
		}
		if (r->fd >= 0)
			pool_give(s);
		return rc;
	}
	return rc;
}

/* ---- open and close ---------------------------------------------------------------- */

int store_remote_open(struct store *s, const char *sock, const struct stat *st)
{
	struct store_remote *r = calloc(1, sizeof(*r));
	if (!r)
		return store_fail(s, STORE_ENOMEM, "out of memory");
	r->fd = -1;
	r->dev = (uint64_t)st->st_dev;
	r->ino = (uint64_t)st->st_ino;
	s->remote = r;
	if (strlen(sock) >= sizeof(r->sock))
		return store_fail(s, STORE_EINVAL, "the read socket's path %s is too long", sock);
	snprintf(r->sock, sizeof(r->sock), "%s", sock);
	/* a kept connection to the same store said hello already */
	if (pool_take(s) == 0) {
		pool_give(s);
		return 0;
	}
	int rc = connect_hello(s);
	if (!rc)
		pool_give(s);
	return rc;
}

void store_remote_close(struct store *s)
{
	if (!s->remote)
		return;
	disconnect(s->remote);
	free(s->remote);
	s->remote = NULL;
}

int store_remote_refuse(struct store *s)
{
	return store_fail(s, STORE_EPERM,
	                  "needs root: %s is root's (0600), and its readers go through profile-backend's read "
	                  "service, which only reads runs; this needs the store's files: run it as root",
	                  s->path);
}

/* ---- the reads ---------------------------------------------------------------------- */

static int one_run(void *ctx, const struct store_run *r)
{
	*(struct store_run *)ctx = *r;
	return 0;
}

int store_remote_get_run(struct store *s, int64_t run_id, struct store_run *out)
{
	struct wire_request rq = {.op = WIRE_GET_RUN, .id = run_id};
	struct wire_reply rep;
	struct wire_reply_cb cb = {.run = one_run};
	int rc = call(s, &rq, &cb, out, &rep);
	if (!rc && rep.singles != 1)
		return store_fail(s, STORE_EIO, "profile-backend's read service sent no run");
	return rc;
}

int store_remote_latest_run(struct store *s, int64_t *run_id)
{
	struct wire_request rq = {.op = WIRE_LATEST_RUN};
	struct wire_reply rep;
	static const struct wire_reply_cb none;
	int rc = call(s, &rq, &none, NULL, &rep);
	if (!rc && rep.singles != 1)
		return store_fail(s, STORE_EIO, "profile-backend's read service sent no run id");
	if (!rc)
		*run_id = rep.run_id;
	return rc;
}

int store_remote_count_runs(struct store *s, int64_t counts[3])
{
	struct wire_request rq = {.op = WIRE_COUNT_STATES};
	struct wire_reply rep;
	static const struct wire_reply_cb none;
	counts[0] = counts[1] = counts[2] = 0;
	int rc = call(s, &rq, &none, NULL, &rep);
	if (!rc && rep.singles != 1)
		return store_fail(s, STORE_EIO, "profile-backend's read service sent no counts");
	if (!rc)
		memcpy(counts, rep.counts, sizeof(rep.counts));
	return rc;
}

/* A growing array of fixed-size items. */
struct vec {
	void *v;
	size_t n, cap, size;
};

static int vec_push(struct vec *x, const void *item)
{
	if (grow_array(&x->v, &x->cap, x->n + 1, x->size, 16) != 0)
		return STORE_ENOMEM;
	memcpy((char *)x->v + x->n++ * x->size, item, x->size);
	return 0;
}

static int push_activity(void *ctx, const struct store_activity *a)
{
	return vec_push(ctx, a);
}

int store_remote_activity(struct store *s, struct store_activity **out, size_t *n)
{
	struct wire_request rq = {.op = WIRE_ACTIVITY};
	struct wire_reply rep;
	struct wire_reply_cb cb = {.activity = push_activity};
	struct vec x = {.size = sizeof(**out)};
	int rc = call(s, &rq, &cb, &x, &rep);
	if (rc == STORE_ENOMEM && !rep.rc)
		rc = store_fail(s, STORE_ENOMEM, "out of memory listing runs");
	if (rc) {
		free(x.v);
		x.v = NULL;
		x.n = 0;
	}
	*out = x.v;
	*n = x.n;
	return rc;
}

struct runs_ctx {
	store_run_cb cb;
	void *ctx;
};

static int pass_run(void *ctx, const struct store_run *r)
{
	struct runs_ctx *c = ctx;
	return c->cb(c->ctx, r);
}

int store_remote_list_runs(struct store *s, const struct store_run_filter *f, store_run_cb cb, void *ctx)
{
	struct wire_request rq = {.op = WIRE_LIST_RUNS, .state = -1};
	struct runs_ctx c = {cb, ctx};
	struct wire_reply_cb wcb = {.run = pass_run};

	if (f) {
		if (f->name_glob && strlen(f->name_glob) > WIRE_GLOB_MAX)
			return store_fail(s, STORE_EINVAL, "a name filter of %zu bytes (at most %u through "
			                  "profile-backend's read service)", strlen(f->name_glob), WIRE_GLOB_MAX);
		rq.state = f->state >= 0 ? f->state : -1;
		rq.has_glob = f->name_glob != NULL;
		if (f->name_glob)
			snprintf(rq.glob, sizeof(rq.glob), "%s", f->name_glob);
		rq.since_us = f->since_us;
		rq.limit = f->limit;
		rq.before_id = f->before_id;
		rq.after_id = f->after_id;
	}
	for (;;) {
		struct wire_reply rep;
		int rc = call(s, &rq, &wcb, &c, &rep);
		if (rc || !rep.more)
			return rc;
		/* (3) on from the last run sent, never back */
		if (rep.next > INT64_MAX || (int64_t)rep.next <= rq.after_id)
			return store_fail(s, STORE_EIO, "profile-backend's read service went back in a listing of runs");
		rq.after_id = (int64_t)rep.next;
	}
}

struct devices_ctx {
	store_device_cb cb;
	void *ctx;
};

static int pass_device(void *ctx, const struct store_device_info *d)
{
	struct devices_ctx *c = ctx;
	return c->cb(c->ctx, d);
}

int store_remote_list_devices(struct store *s, int64_t run_id, store_device_cb cb, void *ctx)
{
	struct wire_request rq = {.op = WIRE_LIST_DEVICES, .id = run_id};
	struct wire_reply rep;
	struct devices_ctx c = {cb, ctx};
	struct wire_reply_cb wcb = {.device = pass_device};
	return call(s, &rq, &wcb, &c, &rep);
}

static int one_device(void *ctx, const struct store_device_info *d)
{
	*(struct store_device_info *)ctx = *d;
	return 0;
}

int store_remote_find_device(struct store *s, int64_t run_id, const char *vdev_or_role,
                             struct store_device_info *out)
{
	struct wire_request rq = {.op = WIRE_FIND_DEVICE, .id = run_id};
	struct wire_reply rep;
	struct wire_reply_cb wcb = {.device = one_device};
	if (strlen(vdev_or_role) >= sizeof(rq.name)) /* no vdev or role is that long */
		return store_fail(s, STORE_ENOTFOUND, "run %lld has no device %s", (long long)run_id, vdev_or_role);
	snprintf(rq.name, sizeof(rq.name), "%s", vdev_or_role);
	int rc = call(s, &rq, &wcb, out, &rep);
	if (!rc && rep.singles != 1)
		return store_fail(s, STORE_EIO, "profile-backend's read service sent no device");
	return rc;
}

void store_remote_damage_fill(struct store *s, struct store_damage *d)
{
	struct wire_request rq = {.op = WIRE_GET_DEVICE, .id = d->device_id};
	struct wire_reply rep;
	struct wire_reply_cb wcb = {.device = one_device};
	struct store_device_info info;
	char keep[sizeof(s->errmsg)];

	d->run_id = 0;
	snprintf(d->vdev, sizeof(d->vdev), "?");
	memcpy(keep, s->errmsg, sizeof(keep)); /* a fill says nothing of its own */
	if (call(s, &rq, &wcb, &info, &rep) == 0 && rep.singles == 1) {
		d->run_id = info.run_id;
		snprintf(d->vdev, sizeof(d->vdev), "%s", info.vdev);
	}
	memcpy(s->errmsg, keep, sizeof(keep));
}

struct range_ctx {
	struct store *s;
	store_range_cb cb;
	void *ctx;
};

static int pass_piece(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct range_ctx *c = ctx;
	return c->cb(c->ctx, off, data, len);
}

static int pass_damage(void *ctx, const struct store_damage *d)
{
	struct range_ctx *c = ctx;
	return c->s->damage_cb ? c->s->damage_cb(c->s->damage_ctx, d) : 0;
}

int store_remote_read_range(struct store *s, int64_t device_id, uint64_t byte_off, uint64_t len,
                            store_range_cb cb, void *ctx)
{
	struct wire_request rq = {.op = WIRE_READ_RANGE, .id = device_id, .off = byte_off, .len = len,
	                          .salvage = s->damage_cb != NULL};
	struct range_ctx c = {s, cb, ctx};
	struct wire_reply_cb wcb = {.piece = pass_piece, .damage = pass_damage};
	uint64_t end = byte_off + len;

	if (len == 0)
		return 0;
	if (end < byte_off)
		return store_fail(s, STORE_EINVAL, "read range overflows");
	for (;;) {
		struct wire_reply rep;
		int rc = call(s, &rq, &wcb, &c, &rep);
		if (rc || !rep.more)
			return rc;
		/* (3) wire_reply_parse saw the pieces reach next, past the start */
		rq.off = rep.next;
		rq.len = end - rep.next;
	}
}

struct packets_ctx {
	store_trace_cb cb;
	void *ctx;
};

static int pass_packet(void *ctx, const struct store_trace_packet *p)
{
	struct packets_ctx *c = ctx;
	return c->cb(c->ctx, p);
}

int store_remote_trace_packets(struct store *s, int64_t device_id, uint64_t from_seq, store_trace_cb cb, void *ctx)
{
	struct wire_request rq = {.op = WIRE_TRACE_PACKETS, .id = device_id, .off = from_seq};
	struct packets_ctx c = {cb, ctx};
	struct wire_reply_cb wcb = {.packet = pass_packet};
	for (;;) {
		struct wire_reply rep;
		int rc = call(s, &rq, &wcb, &c, &rep);
		if (rc || !rep.more)
			return rc;
		if (rep.next <= rq.off)
			return store_fail(s, STORE_EIO, "profile-backend's read service went back in a trace");
		rq.off = rep.next;
	}
}

int store_remote_space(struct store *s, struct store_space *out)
{
	struct wire_request rq = {.op = WIRE_SPACE};
	struct wire_reply rep;
	static const struct wire_reply_cb none;
	int rc = call(s, &rq, &none, NULL, &rep);
	if (!rc && rep.singles != 1)
		return store_fail(s, STORE_EIO, "profile-backend's read service sent no figures");
	if (!rc)
		*out = rep.space;
	return rc;
}

static int push_run_space(void *ctx, const struct store_run_space *r)
{
	return vec_push(ctx, r);
}

int store_remote_runs_space(struct store *s, int64_t limit, struct store_run_space **out, size_t *n)
{
	struct wire_request rq = {.op = WIRE_RUNS_SPACE, .limit = limit};
	struct wire_reply rep;
	struct wire_reply_cb cb = {.run_space = push_run_space};
	struct vec x = {.size = sizeof(**out)};
	int rc = call(s, &rq, &cb, &x, &rep);
	if (rc == STORE_ENOMEM && !rep.rc)
		rc = store_fail(s, STORE_ENOMEM, "out of memory");
	if (rc) {
		free(x.v);
		x.v = NULL;
		x.n = 0;
	}
	*out = x.v;
	*n = x.n;
	return rc;
}

int store_is_remote(const struct store *s)
{
	return s->remote != NULL;
}
