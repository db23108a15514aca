/*
 * read_service.c - the read service (read_service.h): the read part of
 * the store API answered on <run-dir>/read.sock for readers that may not
 * open the store's files: a member of the store's group, profdb serve as
 * user profsvc.  Why not let them open the files: read access to a live
 * SQLite WAL store is lock access (a read-only descriptor of the -shm may
 * hold SQLite's WAL write lock, one of the database may hold its locks or
 * an flock on it), and a member holding one stalled a 16 MB guest stream
 * from 0.29 s to 39.6 s, then failed its writes.  So the store's files are
 * 0600 and its readers come here.
 *
 * Invariants:
 *   (1) Guests never wait on a reader: the service has its own thread, at
 *       the lowest priority, and its own read-only connection; the event
 *       loop and the commit worker never touch either.
 *   (2) A request runs in its own short read transaction, and its whole
 *       reply is copied out of the store before anything waits on the
 *       client: no client, slow or stopped, ever holds a snapshot open
 *       (which would keep the WAL from being checkpointed).
 *   (3) Everything a client controls is bounded: a request's size
 *       (WIRE_REQUEST_MAX; more is refused unread), one request under way
 *       per client, a reply's size (WIRE_REPLY_MAX, of which WIRE_DATA_MAX
 *       data: bigger reads are several requests, a page at a time), the
 *       clients in all and per user (peer_room.c: root's are never dropped
 *       for another user's), the time a request may take to arrive, a
 *       reply to be read and a connection to sit idle.  A client past any
 *       of them gets a goodbye saying why (when its socket takes one) and
 *       is dropped; nothing of it is kept.
 *   (4) A client says hello first, naming the database file it means (its
 *       device and inode): a client never reads another store than the one
 *       it opened by mistake.
 *
 * May call: store/store.h and store/store_wire.h (the store and the
 * protocol), peer_room.c, log.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "backend/common/log.h"
#include "peer_room.h"
#include "read_service.h"
#include "store/store.h"
#include "store/store_wire.h"

/* A callback's "the reply is full": stops a listing, never a store code. */
#define FULL 1

enum { EV_LISTEN = -1, EV_STOP = -2 };

struct rs_client {
	int fd;                 /* -1: free */
	uid_t uid;
	int priv;               /* root or the backend's user */
	uint64_t seq;
	uint8_t in[4 + WIRE_REQUEST_MAX];
	size_t inlen, want;     /* bytes read, bytes of this frame (4 until its length is known) */
	uint8_t *out;           /* a reply being sent (NULL: none) */
	size_t outlen, sent;
	int64_t deadline_us;    /* idle, request or reply: by what it is doing */
	int hello;              /* said hello for our store (4) */
};

struct be_read_service {
	pthread_t thread;
	int started;
	int lfd, ep, stop_fd;
	char sock[108];
	struct store *s;
	struct rs_client c[READ_CLIENTS_MAX];
	uint64_t accepted;
	pthread_mutex_t mu;     /* the counts, read by status */
	struct be_read_service_counts counts;
	/* what was turned away or dropped, logged at most every 10 s */
	uint64_t unlogged;
	char last_why[200];
	int64_t log_at_us;
};

static int64_t mono_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void count(struct be_read_service *rs, uint64_t *what)
{
	pthread_mutex_lock(&rs->mu);
	(*what)++;
	pthread_mutex_unlock(&rs->mu);
}

/* One line per 10 s at most for clients turned away or dropped: a flood
 * of them is one line, not a line each. */
static void note_dropped(struct be_read_service *rs, uid_t uid, const char *why)
{
	rs->unlogged++;
	snprintf(rs->last_why, sizeof(rs->last_why), "user %u: %s", (unsigned)uid, why);
	int64_t now = mono_us();
	if (now < rs->log_at_us)
		return;
	be_blog_at(LOG_WARNING, "read service: %llu client%s turned away or dropped (the last, %s)",
	        (unsigned long long)rs->unlogged, rs->unlogged == 1 ? "" : "s", rs->last_why);
	rs->unlogged = 0;
	rs->log_at_us = now + 10 * 1000000LL;
}

static void client_free(struct be_read_service *rs, struct rs_client *c)
{
	if (c->fd >= 0) {
		epoll_ctl(rs->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	pthread_mutex_lock(&rs->mu);
	rs->counts.open--;
	pthread_mutex_unlock(&rs->mu);
}

/* A goodbye (when the socket takes it without waiting, and no reply was
 * begun: a frame is never cut by another), then the drop. */
static void client_drop(struct be_read_service *rs, struct rs_client *c, const char *why)
{
	uint8_t bye[4 + 1 + 4 + WIRE_MSG_MAX + 8];
	size_t n = wire_bye(bye, why);
	if (!c->sent)
		(void)send(c->fd, bye, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	note_dropped(rs, c->uid, why);
	count(rs, &rs->counts.dropped);
	client_free(rs, c);
}

static void watch(struct be_read_service *rs, struct rs_client *c, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u32 = (uint32_t)(c - rs->c)};
	epoll_ctl(rs->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Waiting for the next request: idle until its first byte. */
static void await_request(struct be_read_service *rs, struct rs_client *c)
{
	free(c->out);
	c->out = NULL;
	c->outlen = c->sent = 0;
	c->inlen = 0;
	c->want = 4;
	c->deadline_us = mono_us() + READ_IDLE_US;
	watch(rs, c, EPOLLIN);
}

/* ---- the requests (2): each in its own read transaction ------------------------- */

struct listing {
	struct wire_out *o;
	int64_t last;           /* the last run id or packet seq added */
	int any;
	uint64_t pos;           /* READ_RANGE: where the pieces added end */
};

static int add_run(void *ctx, const struct store_run *r)
{
	struct listing *l = ctx;
	if (wire_out_run(l->o, r))
		return FULL;
	l->last = r->run_id;
	l->any = 1;
	return 0;
}

static int add_device(void *ctx, const struct store_device_info *d)
{
	struct listing *l = ctx;
	return wire_out_device(l->o, d) ? FULL : 0;
}

static int add_packet(void *ctx, const struct store_trace_packet *p)
{
	struct listing *l = ctx;
	if (wire_out_packet(l->o, p))
		return FULL;
	l->last = (int64_t)p->seq;
	l->any = 1;
	return 0;
}

static int add_piece(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct listing *l = ctx;
	if (wire_out_piece(l->o, off, data, len))
		return FULL;
	l->pos = off + len;
	return 0;
}

static int add_damage(void *ctx, const struct store_damage *d)
{
	struct listing *l = ctx;
	return wire_out_damage(l->o, d) ? FULL : 0;
}

/* A hello: the version this backend speaks, the store this client
 * means (its device and inode), then the store's name and identity. */
static size_t answer_hello(struct store *s, struct rs_client *c, const struct wire_request *rq, struct wire_out *o)
{
	struct stat st;
	char msg[WIRE_MSG_MAX];
	if (rq->version != WIRE_VERSION) {
		snprintf(msg, sizeof(msg), "this backend speaks the read service's version %d, not %u: use the "
		         "profdb of the same profsvc as profile-backend", WIRE_VERSION, rq->version);
		return wire_out_end(o, STORE_EINVAL, msg, 0, 0);
	}
	if (stat(store_path(s), &st) != 0 || (uint64_t)st.st_dev != rq->dev || (uint64_t)st.st_ino != rq->ino) {
		snprintf(msg, sizeof(msg), "the backend on this run directory serves another store (%s)", store_path(s));
		return wire_out_end(o, STORE_ENOTFOUND, msg, 0, 0);
	}
	c->hello = 1;
	wire_out_hello(o, store_path(s), store_schema(s), store_identity(s));
	return wire_out_end(o, 0, "", 0, 0);
}

/* A request answered by one item (a run, a run id, the counts, a device,
 * the space), inside the request's read transaction; the store's result,
 * or MANY when rq is not one of them. */
#define MANY 2
static int answer_single(struct store *s, const struct wire_request *rq, struct wire_out *o)
{
	int rc;
	switch (rq->op) {
	case WIRE_GET_RUN: {
		struct store_run r;
		if ((rc = store_get_run(s, rq->id, &r)) == 0)
			wire_out_run(o, &r);
		return rc;
	}
	case WIRE_LATEST_RUN: {
		int64_t id;
		if ((rc = store_latest_run(s, &id)) == 0)
			wire_out_run_id(o, id);
		return rc;
	}
	case WIRE_COUNT_STATES: {
		int64_t n[3];
		if ((rc = store_count_runs_by_state(s, n)) == 0)
			wire_out_counts(o, n);
		return rc;
	}
	case WIRE_FIND_DEVICE: {
		struct store_device_info d;
		if ((rc = store_find_device(s, rq->id, rq->name, &d)) == 0)
			wire_out_device(o, &d);
		return rc;
	}
	case WIRE_GET_DEVICE: {
		struct store_device *h;
		struct store_device_info d;
		if ((rc = store_device_open(s, rq->id, &h)) == 0) {
			store_device_get_info(h, &d);
			store_device_release(h);
			wire_out_device(o, &d);
		}
		return rc;
	}
	case WIRE_SPACE: {
		struct store_space sp;
		if ((rc = store_space(s, &sp)) == 0)
			wire_out_space(o, &sp);
		return rc;
	}
	default:
		return MANY;
	}
}

/* How a reply of many items ended: more to ask for from next, or more
 * than one reply holds (too_many: of what). */
struct reply_end {
	int more;
	uint64_t next;
	const char *too_many;
};

/* A listing that went on from where the reply filled (FULL): 0, and more
 * from next. */
static int go_on(int rc, struct reply_end *e, uint64_t next)
{
	if (rc != FULL)
		return rc;
	e->more = 1;
	e->next = next;
	return 0;
}

/* A request answered by many items (running runs' activity, runs,
 * devices, a device's bytes, trace packets, runs' space), inside the
 * request's read transaction; the store's result. */
static int answer_many(struct store *s, const struct wire_request *rq, struct listing *l, struct reply_end *e)
{
	int rc = 0;
	switch (rq->op) {
	case WIRE_ACTIVITY: {
		struct store_activity *a = NULL;
		size_t n = 0;
		if ((rc = store_running_activity(s, &a, &n)) == 0)
			for (size_t i = 0; i < n && !e->too_many; i++)
				if (wire_out_activity(l->o, &a[i]))
					e->too_many = "running runs";
		free(a);
		return rc;
	}
	case WIRE_LIST_RUNS: {
		struct store_run_filter f = {.state = rq->state, .name_glob = rq->has_glob ? rq->glob : NULL,
		                             .since_us = rq->since_us, .limit = rq->limit,
		                             .before_id = rq->before_id, .after_id = rq->after_id};
		rc = store_list_runs(s, &f, add_run, l);
		return go_on(rc, e, (uint64_t)l->last);
	}
	case WIRE_LIST_DEVICES:
		rc = store_list_devices(s, rq->id, add_device, l);
		if (rc == FULL) {
			rc = 0;
			e->too_many = "devices";
		}
		return rc;
	case WIRE_READ_RANGE:
		if (rq->salvage)
			store_salvage_damage(s, add_damage, l);
		rc = store_read_range(s, rq->id, rq->off, rq->len, add_piece, l);
		store_salvage_damage(s, NULL, NULL);
		return go_on(rc, e, l->pos);
	case WIRE_TRACE_PACKETS:
		rc = store_trace_packets_from(s, rq->id, rq->off, add_packet, l);
		return go_on(rc, e, (uint64_t)l->last + 1);
	case WIRE_RUNS_SPACE: {
		struct store_run_space *v = NULL;
		size_t n = 0;
		if ((rc = store_runs_space(s, rq->limit, &v, &n)) == 0)
			for (size_t i = 0; i < n && !e->too_many; i++)
				if (wire_out_run_space(l->o, &v[i]))
					e->too_many = "runs (ask for fewer: du -n)";
		free(v);
		return rc;
	}
	default:
		return 0;
	}
}

/* The reply to rq into o (c->out): the frame's length, or 0 when the
 * client is to be dropped (why in why). */
static size_t answer(struct be_read_service *rs, struct rs_client *c, const struct wire_request *rq, struct wire_out *o,
                     char *why, size_t whylen)
{
	struct store *s = rs->s;
	struct listing l = {.o = o, .pos = rq->off};
	struct reply_end e = {0, 0, NULL};
	int rc;

	wire_out_begin(o, c->out, rq->op);
	if (rq->op == WIRE_HELLO)
		return answer_hello(s, c, rq, o);
	if (!c->hello) {
		snprintf(why, whylen, "a request before hello");
		return 0;
	}
	if ((rc = store_read_begin(s)) == 0) {
		rc = answer_single(s, rq, o);
		if (rc == MANY)
			rc = answer_many(s, rq, &l, &e);
		store_read_end(s);
	}
	if (e.too_many) {
		char msg[WIRE_MSG_MAX];
		snprintf(msg, sizeof(msg), "more %s than one reply of the read service holds (%u bytes)", e.too_many,
		         WIRE_REPLY_MAX);
		wire_out_begin(o, c->out, rq->op);
		return wire_out_end(o, STORE_ENOMEM, msg, 0, 0);
	}
	return wire_out_end(o, rc, rc ? store_errmsg(s) : "", e.more, e.next);
}

/* Sends what the client takes now; 0, or -1 when it is gone. */
static int client_send(struct be_read_service *rs, struct rs_client *c)
{
	while (c->sent < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->sent, c->outlen - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			watch(rs, c, EPOLLOUT);
			return 0;
		}
		client_free(rs, c);
		return -1;
	}
	await_request(rs, c);
	return 0;
}

/* A whole request frame is in: answered, the reply copied out (2), then
 * sent as the client takes it. */
static void serve_request(struct be_read_service *rs, struct rs_client *c)
{
	struct wire_request rq;
	char why[WIRE_MSG_MAX];

	if (wire_request_parse(c->in + 4, c->inlen - 4, &rq, why, sizeof(why)) != 0) {
		client_drop(rs, c, why);
		return;
	}
	if (!(c->out = malloc(4 + WIRE_REPLY_MAX))) {
		client_drop(rs, c, "the backend is out of memory; try again");
		return;
	}
	struct wire_out o;
	why[0] = '\0';
	size_t n = answer(rs, c, &rq, &o, why, sizeof(why));
	if (!n) {
		client_drop(rs, c, why);
		return;
	}
	count(rs, &rs->counts.requests);
	/* what the reply holds is ours now: the buffer is cut to it */
	uint8_t *fit = realloc(c->out, n);
	if (fit)
		c->out = fit;
	c->outlen = n;
	c->sent = 0;
	c->deadline_us = mono_us() + READ_REPLY_US;
	client_send(rs, c);
}

/* Reads what came: the length, then the frame (3). */
static void client_read(struct be_read_service *rs, struct rs_client *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->inlen, c->want - c->inlen, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			client_free(rs, c); /* gone */
			return;
		}
		if (c->inlen == 0)
			c->deadline_us = mono_us() + READ_REQUEST_US; /* a request began */
		c->inlen += (size_t)n;
		if (c->inlen < c->want)
			continue;
		if (c->want == 4) {
			uint32_t len = (uint32_t)c->in[0] | (uint32_t)c->in[1] << 8 | (uint32_t)c->in[2] << 16 |
			               (uint32_t)c->in[3] << 24;
			if (len == 0 || len > WIRE_REQUEST_MAX) {
				char why[120];
				snprintf(why, sizeof(why), "a request of %u bytes (1 to %u): not this service's protocol",
				         len, WIRE_REQUEST_MAX);
				client_drop(rs, c, why);
				return;
			}
			c->want = 4 + len;
			continue;
		}
		watch(rs, c, 0); /* nothing more read until the reply is sent */
		serve_request(rs, c);
		return;
	}
}

/* ---- clients ---------------------------------------------------------------------- */

static void accept_clients(struct be_read_service *rs)
{
	int fd;
	while ((fd = accept4(rs->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct ucred cred;
		socklen_t credlen = sizeof(cred);
		int known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) == 0;
		uid_t uid = known ? cred.uid : (uid_t)-1;
		int priv = known && (cred.uid == 0 || cred.uid == geteuid());
		struct be_peer_slot slots[READ_CLIENTS_MAX];
		for (int i = 0; i < READ_CLIENTS_MAX; i++) {
			struct rs_client *c = &rs->c[i];
			/* (3) idle, or mid-request: nothing of it is under way here */
			slots[i] = (struct be_peer_slot){c->fd >= 0, c->uid, c->priv, c->seq, c->fd >= 0 && !c->out};
		}
		size_t idx;
		char why[240];
		enum be_peer_place place =
		        be_peer_room_place(slots, READ_CLIENTS_MAX, READ_PER_USER_MAX, uid, priv, &idx, why, sizeof(why));
		if (place == PEER_REFUSE) {
			uint8_t bye[4 + 1 + 4 + WIRE_MSG_MAX + 8];
			char said[WIRE_MSG_MAX];
			snprintf(said, sizeof(said), "refused: %s", why);
			(void)send(fd, bye, wire_bye(bye, said), MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			note_dropped(rs, uid, said);
			count(rs, &rs->counts.turned_away);
			continue;
		}
		struct rs_client *c = &rs->c[idx];
		if (place == PEER_EVICT) {
			char said[WIRE_MSG_MAX];
			snprintf(said, sizeof(said), "evicted: %s", why);
			client_drop(rs, c, said);
		}
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)idx};
		if (epoll_ctl(rs->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = uid;
		c->priv = priv;
		c->seq = ++rs->accepted;
		c->want = 4;
		c->deadline_us = mono_us() + READ_IDLE_US;
		pthread_mutex_lock(&rs->mu);
		rs->counts.clients++;
		rs->counts.open++;
		pthread_mutex_unlock(&rs->mu);
	}
}

/* Drops clients past their deadline; ms until the next one, or -1. */
static int expire(struct be_read_service *rs)
{
	int64_t now = mono_us(), next = -1;
	for (int i = 0; i < READ_CLIENTS_MAX; i++) {
		struct rs_client *c = &rs->c[i];
		if (c->fd < 0)
			continue;
		if (c->deadline_us <= now) {
			client_drop(rs, c, c->out     ? "a reply not read within 10 s"
			                   : c->inlen ? "a request not sent whole within 5 s"
			                              : "idle for 30 s");
			continue;
		}
		int64_t wait = (c->deadline_us - now) / 1000 + 1;
		next = next < 0 || wait < next ? wait : next;
	}
	return (int)next;
}

static void *service_main(void *arg)
{
	struct be_read_service *rs = arg;

	/* (1) the lowest priority of the process's threads: when a core is
	 * short, the guests' threads take it */
	pthread_setname_np(pthread_self(), "read-service");
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	for (;;) {
		struct epoll_event evs[16];
		int n = epoll_wait(rs->ep, evs, 16, expire(rs));
		if (n < 0 && errno != EINTR) {
			be_blog_at(LOG_ERR, "read service: epoll_wait: %s (readers through %s stop)", strerror(errno), rs->sock);
			break;
		}
		for (int i = 0; i < n; i++) {
			int32_t who = (int32_t)evs[i].data.u32;
			if (who == EV_STOP)
				return NULL;
			if (who == EV_LISTEN) {
				accept_clients(rs);
				continue;
			}
			if (who < 0 || who >= READ_CLIENTS_MAX || rs->c[who].fd < 0)
				continue;
			struct rs_client *c = &rs->c[who];
			if (c->out)
				client_send(rs, c);
			else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				client_read(rs, c);
		}
	}
	return NULL;
}

/* ---- start and stop ----------------------------------------------------------------- */

static int listen_on(struct be_read_service *rs, const char *run_dir, int shared, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char bound[sizeof(sa.sun_path) + 8];

	if ((size_t)snprintf(rs->sock, sizeof(rs->sock), "%s/" WIRE_SOCKET_NAME, run_dir) >= sizeof(rs->sock) ||
	    (size_t)snprintf(bound, sizeof(bound), "%s.new", rs->sock) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--run-dir %s is too long for a Unix socket path", run_dir);
		return -1;
	}
	/* named only once it listens, as backend.sock (daemon.c) */
	memcpy(sa.sun_path, bound, strlen(bound) + 1);
	unlink(bound);
	rs->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (rs->lfd < 0 || bind(rs->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(bound, shared ? 0660 : 0600) != 0 || listen(rs->lfd, 64) != 0 || rename(bound, rs->sock) != 0) {
		snprintf(err, errlen, "read service socket %s: %s", rs->sock, strerror(errno));
		unlink(bound);
		return -1;
	}
	return 0;
}

struct be_read_service *be_read_service_start(const char *db, const char *run_dir, int shared, char *err, size_t errlen)
{
	struct be_read_service *rs = calloc(1, sizeof(*rs));
	char why[512];

	if (!rs) {
		snprintf(err, errlen, "read service: out of memory");
		return NULL;
	}
	pthread_mutex_init(&rs->mu, NULL);
	rs->lfd = rs->ep = rs->stop_fd = -1;
	for (int i = 0; i < READ_CLIENTS_MAX; i++)
		rs->c[i].fd = -1;
	/* (1) a connection of its own, read-only, kept while the store grows */
	struct store_open_opts o = {.mode = STORE_READ, .follows_growth = 1};
	if (store_open(&rs->s, db, &o, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "read service: %s", why);
		be_read_service_stop(rs);
		return NULL;
	}
	if (listen_on(rs, run_dir, shared, err, errlen) != 0) {
		be_read_service_stop(rs);
		return NULL;
	}
	struct epoll_event lev = {.events = EPOLLIN, .data.u32 = (uint32_t)EV_LISTEN};
	struct epoll_event sev = {.events = EPOLLIN, .data.u32 = (uint32_t)EV_STOP};
	if ((rs->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 || (rs->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0 ||
	    epoll_ctl(rs->ep, EPOLL_CTL_ADD, rs->lfd, &lev) != 0 || epoll_ctl(rs->ep, EPOLL_CTL_ADD, rs->stop_fd, &sev) != 0 ||
	    pthread_create(&rs->thread, NULL, service_main, rs) != 0) {
		snprintf(err, errlen, "read service: cannot start: %s", strerror(errno));
		be_read_service_stop(rs);
		return NULL;
	}
	rs->started = 1;
	return rs;
}

void be_read_service_stop(struct be_read_service *rs)
{
	if (!rs)
		return;
	if (rs->started) {
		uint64_t one = 1;
		(void)!write(rs->stop_fd, &one, sizeof(one));
		pthread_join(rs->thread, NULL);
	}
	for (int i = 0; i < READ_CLIENTS_MAX; i++)
		if (rs->c[i].fd >= 0)
			client_free(rs, &rs->c[i]);
	if (rs->lfd >= 0) {
		close(rs->lfd);
		unlink(rs->sock);
	}
	if (rs->ep >= 0)
		close(rs->ep);
	if (rs->stop_fd >= 0)
		close(rs->stop_fd);
	store_close(rs->s);
	pthread_mutex_destroy(&rs->mu);
	free(rs);
}

void be_read_service_counts(struct be_read_service *rs, struct be_read_service_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (!rs)
		return;
	pthread_mutex_lock(&rs->mu);
	*out = rs->counts;
	pthread_mutex_unlock(&rs->mu);
}
