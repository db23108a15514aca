/*
 * conn_guard.c - profdb serve's guard over its connections (conn_guard.h):
 * how long a client may take to send its request's headers, and how many
 * connections one address may hold.
 *
 * Why: libmicrohttpd times a connection out only when it is silent, so a
 * client that trickles a header line every few seconds held its thread
 * for ever, and 48 of them from 127.0.0.1 filled the per-address cap that
 * every user of the documented ssh tunnel shares (they all come from
 * 127.0.0.1).  Invariants:
 *  1. A connection whose request headers are not complete
 *     CONN_HEADER_DEADLINE_S after it was accepted is shut down.
 *  2. An address holds at most CONN_PER_ADDRESS connections; a new one
 *     past that takes the place of the address's oldest connection still
 *     sending its headers (a new client is served while the cap is full
 *     of slow ones), else it is shut down itself.
 *  3. A socket is shut down only while its connection is in the table
 *     (under the lock, and only if its peer is still the one recorded), so
 *     a descriptor the library closed and reused is never touched.
 * Shutting a socket down (not closing it) lets the connection's own
 * thread see the end and clean up as for any client that left.
 *
 * May call: libmicrohttpd (connection info), libc.  Called by server.c.
 */
#include "config.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "conn_guard.h"

struct guarded {
	int fd;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	int64_t accepted_ms;
	int headers_done;
	struct guarded *next;
};

struct conn_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int stop;
	struct guarded *all;
	unsigned long shut_slow, shut_evicted, shut_refused;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The address part of a peer (the port differs per connection). */
static int same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return memcmp(&((const struct sockaddr_in *)a)->sin_addr, &((const struct sockaddr_in *)b)->sin_addr,
		              sizeof(struct in_addr)) == 0;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		              &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
	return 1; /* other families: one address */
}

/* Invariant 3: the socket still belongs to the connection recorded. */
static void shut(struct guarded *g)
{
	struct sockaddr_storage now;
	socklen_t len = sizeof(now);
	if (getpeername(g->fd, (struct sockaddr *)&now, &len) == 0 && len == g->peerlen &&
	    memcmp(&now, &g->peer, len) == 0)
		shutdown(g->fd, SHUT_RDWR);
}

static void *reaper(void *arg)
{
	struct conn_guard *cg = arg;
	pthread_mutex_lock(&cg->lock);
	while (!cg->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&cg->wake, &cg->lock, &until);
		int64_t now = now_ms();
		for (struct guarded *g = cg->all; g; g = g->next)
			if (!g->headers_done && g->fd >= 0 && now - g->accepted_ms > CONN_HEADER_DEADLINE_S * 1000) {
				shut(g); /* invariant 1 */
				g->fd = -1;
				cg->shut_slow++;
			}
	}
	pthread_mutex_unlock(&cg->lock);
	return NULL;
}

struct conn_guard *conn_guard_start(void)
{
	struct conn_guard *cg = calloc(1, sizeof(*cg));
	if (!cg)
		return NULL;
	pthread_mutex_init(&cg->lock, NULL);
	pthread_cond_init(&cg->wake, NULL);
	if (pthread_create(&cg->thread, NULL, reaper, cg) != 0) {
		pthread_cond_destroy(&cg->wake);
		pthread_mutex_destroy(&cg->lock);
		free(cg);
		return NULL;
	}
	return cg;
}

void conn_guard_stop(struct conn_guard *cg)
{
	if (!cg)
		return;
	pthread_mutex_lock(&cg->lock);
	cg->stop = 1;
	pthread_cond_signal(&cg->wake);
	pthread_mutex_unlock(&cg->lock);
	pthread_join(cg->thread, NULL);
	while (cg->all) {
		struct guarded *g = cg->all;
		cg->all = g->next;
		free(g);
	}
	pthread_cond_destroy(&cg->wake);
	pthread_mutex_destroy(&cg->lock);
	free(cg);
}

void conn_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	struct conn_guard *cg = cls;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct guarded *g = *socket_context;
		if (!g)
			return;
		pthread_mutex_lock(&cg->lock);
		for (struct guarded **p = &cg->all; *p; p = &(*p)->next)
			if (*p == g) {
				*p = g->next;
				break;
			}
		pthread_mutex_unlock(&cg->lock);
		free(g);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct guarded *g = calloc(1, sizeof(*g));
	if (!g || !fi) {
		free(g);
		return;
	}
	g->fd = fi->connect_fd;
	g->peerlen = sizeof(g->peer);
	if (getpeername(g->fd, (struct sockaddr *)&g->peer, &g->peerlen) != 0)
		g->peerlen = 0;
	g->accepted_ms = now_ms();
	pthread_mutex_lock(&cg->lock);
	/* invariant 2: count the address's connections, note its oldest
	 * still sending headers */
	unsigned n = 0;
	struct guarded *oldest = NULL;
	for (struct guarded *o = cg->all; o; o = o->next)
		if (o->fd >= 0 && same_address(&o->peer, &g->peer)) {
			n++;
			if (!o->headers_done && (!oldest || o->accepted_ms < oldest->accepted_ms))
				oldest = o;
		}
	if (n >= CONN_PER_ADDRESS) {
		if (oldest) {
			shut(oldest);
			oldest->fd = -1;
			cg->shut_evicted++;
		} else {
			shutdown(g->fd, SHUT_RDWR); /* its own: every other is busy */
			g->fd = -1;
			cg->shut_refused++;
		}
	}
	g->next = cg->all;
	cg->all = g;
	pthread_mutex_unlock(&cg->lock);
	*socket_context = g;
}

static void mark(struct conn_guard *cg, struct MHD_Connection *c, int done)
{
	const union MHD_ConnectionInfo *si = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct guarded *g = si ? si->socket_context : NULL;
	if (!cg || !g)
		return;
	pthread_mutex_lock(&cg->lock);
	g->headers_done = done;
	g->accepted_ms = now_ms(); /* a kept-alive connection's next request: its own deadline */
	pthread_mutex_unlock(&cg->lock);
}

void conn_guard_headers_done(struct conn_guard *cg, struct MHD_Connection *c)
{
	mark(cg, c, 1);
}

void conn_guard_request_done(struct conn_guard *cg, struct MHD_Connection *c)
{
	mark(cg, c, 0);
}
