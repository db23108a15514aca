/*
 * conn_guard.c - profdb serve's guard over its connections (conn_guard.h):
 * how long a client may take to send its request's headers, how many
 * connections one address may hold, and how slowly it may take a reply.
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
 *  3. A connection whose client takes its reply slower than the floor
 *     is shut down: over any CONN_FLOOR_WINDOW_S (30 s) throughout which
 *     the reply had bytes waiting in the socket for the client (it never
 *     took all it was sent: an event stream's client that keeps up is
 *     never judged), the client must have taken CONN_FLOOR_BYTES_S
 *     (2 KiB) a second.  A client trickling a big download (800 B/s:
 *     8000 bytes every 10 s) kept its connection, two threads and, before
 *     download.c, a read transaction for ever, since libmicrohttpd's idle
 *     timeout counts any byte sent as activity.  Why 2 KiB/s: twenty
 *     times the 100 B/s trickle of issue 44, and under half of the
 *     slowest links still in use (GPRS carries 5 KB/s and more), so no
 *     real reader meets it; why 30 s: a stall that long is what the idle
 *     timeout already ends, and a short one (a laptop lid, Wi-Fi lost for
 *     a moment) is forgiven.  What the client took is the kernel's count
 *     of bytes it acknowledged (TCP_INFO), what waits for it the socket's
 *     output queue (SIOCOUTQ).
 *  4. A socket is shut down only while its connection is in the table
 *     (under the lock, and only if its peer is still the one recorded), so
 *     a descriptor the library closed and reused is never touched.
 * Shutting a socket down (not closing it) lets the connection's own
 * thread see the end and clean up as for any client that left.
 *
 * May call: libmicrohttpd (connection info), libc.  Called by server.c.
 */
#include "config.h"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
	/* invariant 3: the window of the floor open on this reply */
	int win_open;
	int64_t win_start_ms;
	uint64_t win_acked, win_need;
	struct guarded *next;
};

struct conn_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int stop;
	struct guarded *all;
	unsigned long shut_slow, shut_evicted, shut_refused, shut_trickle;
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

/* Invariant 4: the socket still belongs to the connection recorded;
 * abort: reset it (SO_LINGER 0: what waits in it is dropped with it when
 * the library closes it, not sent on by an orphan at the client's pace). */
static void shut_as(struct guarded *g, int abort)
{
	struct sockaddr_storage now;
	socklen_t len = sizeof(now);
	if (getpeername(g->fd, (struct sockaddr *)&now, &len) != 0 || len != g->peerlen ||
	    memcmp(&now, &g->peer, len) != 0)
		return;
	if (abort)
		setsockopt(g->fd, SOL_SOCKET, SO_LINGER, &(struct linger){1, 0}, sizeof(struct linger));
	shutdown(g->fd, SHUT_RDWR);
}

static void shut(struct guarded *g)
{
	shut_as(g, 0);
}

/* What the client acknowledged on g's socket so far and what waits for
 * it there: 0, or -1 when the kernel does not say. */
static int tcp_progress(int fd, uint64_t *acked, uint64_t *waiting)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int outq = 0;
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(ti.tcpi_bytes_acked) ||
	    ioctl(fd, SIOCOUTQ, &outq) != 0 || outq < 0)
		return -1;
	*acked = ti.tcpi_bytes_acked;
	*waiting = (uint64_t)outq;
	return 0;
}

/* Invariant 3, for a connection whose reply is under way. */
static void floor_check(struct conn_guard *cg, struct guarded *g, int64_t now)
{
	uint64_t acked, waiting;
	if (tcp_progress(g->fd, &acked, &waiting) != 0)
		return;
	if (waiting == 0) { /* it took all it was sent: keeping up */
		g->win_open = 0;
		return;
	}
	if (g->win_open && now - g->win_start_ms >= CONN_FLOOR_WINDOW_S * 1000) {
		uint64_t took = acked - g->win_acked;
		g->win_open = 0;
		if (took < g->win_need) {
			char who[INET6_ADDRSTRLEN] = "?";
			if (g->peer.ss_family == AF_INET)
				inet_ntop(AF_INET, &((struct sockaddr_in *)&g->peer)->sin_addr, who, sizeof(who));
			else if (g->peer.ss_family == AF_INET6)
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&g->peer)->sin6_addr, who, sizeof(who));
			fprintf(stderr, "profdb: %s: dropped a client taking its reply below the floor: %llu bytes "
			                "in %d s (at least %llu wanted: %d B/s)\n",
			        who, (unsigned long long)took, CONN_FLOOR_WINDOW_S, (unsigned long long)g->win_need,
			        CONN_FLOOR_BYTES_S);
			shut_as(g, 1);
			g->fd = -1;
			cg->shut_trickle++;
			return;
		}
	}
	if (!g->win_open) { /* bytes wait for the client: its window begins */
		g->win_open = 1;
		g->win_start_ms = now;
		g->win_acked = acked;
		g->win_need = (uint64_t)CONN_FLOOR_BYTES_S * CONN_FLOOR_WINDOW_S;
	}
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
			} else if (g->headers_done && g->fd >= 0) {
				floor_check(cg, g, now); /* invariant 3 */
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
	g->win_open = 0; /* a reply's floor is its own */
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
