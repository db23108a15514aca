/*
 * conn_guard.h - how long a client of profdb serve may take over its
 * request's headers, how many connections one address may hold, and how
 * slowly it may take a reply (conn_guard.c).  server.c hands conn_guard_notify to libmicrohttpd
 * (MHD_OPTION_NOTIFY_CONNECTION) and says when a request's headers are in
 * and when a request is done.
 *
 * May call: libmicrohttpd (connection info), libc (conn_guard.c).
 */
#ifndef PROFSVC_WEB_CONN_GUARD_H
#define PROFSVC_WEB_CONN_GUARD_H

#include <microhttpd.h>

#define CONN_HEADER_DEADLINE_S 10 /* from accept (or the last reply) to the whole headers */
#define CONN_PER_ADDRESS 48       /* connections one client address may hold */
#define CONN_FLOOR_BYTES_S 2048   /* a reply's client takes at least this a second... */
#define CONN_FLOOR_WINDOW_S 30    /* ...over any this long in which bytes wait for it */

struct conn_guard;

/* NULL when out of memory or threads. */
struct conn_guard *conn_guard_start(void);
void conn_guard_stop(struct conn_guard *cg);
/* libmicrohttpd's connection notifier; cls is the guard. */
void conn_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe);
/* The request's headers are in: no deadline until the reply is done. */
void conn_guard_headers_done(struct conn_guard *cg, struct MHD_Connection *c);
/* The reply is done: the next request's headers have the deadline again. */
void conn_guard_request_done(struct conn_guard *cg, struct MHD_Connection *c);

#endif
