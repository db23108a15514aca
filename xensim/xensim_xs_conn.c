/*
 * xensim_xs_conn.c - the xenstored's connections: one per client socket,
 * their output (replies and watch events, sent at once and the rest when
 * the socket takes it), and dropping a client: one whose unread replies
 * pile up past XS_OUTBUF_MAX, whose socket fails or closes, or whose
 * domain is destroyed.  A dropped connection stays, dead, until xs_reap()
 * (xensim_xs.c) frees it with its watches and transactions.
 *
 * May call: the event loop, ev_io and log (xensim_loop.h), util/grow.h.
 * Nothing else of the xenstored (xensim_xs_parts.h): watches and
 * transactions sit above it.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"
#include "xensim_xs_parts.h"

static struct xs_conn *conns;

static void out_append(struct xs_conn *c, const void *data, size_t len)
{
	if (c->dead)
		return;
	if (c->outlen - c->outoff + len > XS_OUTBUF_MAX) {
		xs_conn_drop(c, "not reading its replies/watch events");
		return;
	}
	if (c->outlen + len > c->outcap) {
		if (c->outoff) {
			memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
			c->outlen -= c->outoff;
			c->outoff = 0;
		}
		if (GROW_FROM(c->out, c->outcap, c->outlen + len, 4096) != 0)
			abort();
	}
	memcpy(c->out + c->outlen, data, len);
	c->outlen += len;
}

void xs_flush_out(struct xs_conn *c)
{
	while (!c->dead && c->outoff < c->outlen) {
		ssize_t n = ev_io(c->it.fd, EV_SEND, c->out + c->outoff, c->outlen - c->outoff, 0);
		if (n == 0)
			break;
		if (n < 0) {
			xs_conn_drop(c, "write failed");
			return;
		}
		c->outoff += (size_t)n;
	}
	if (c->dead)
		return;
	if (c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	loop_mod(&c->it, c->outlen > 0);
}

void xs_send_msg(struct xs_conn *c, uint32_t type, uint32_t req_id, uint32_t tx_id,
                 const void *body, size_t len)
{
	struct xsd_sockmsg h = {type, req_id, tx_id, (uint32_t)len};
	out_append(c, &h, sizeof(h));
	out_append(c, body, len);
	/* Send now: watch events go to connections other than the one being
	 * served, and nobody else would flush them.  What does not fit waits
	 * for EPOLLOUT. */
	xs_flush_out(c);
}

void xs_reply_ok(struct xs_conn *c, const struct xsd_sockmsg *req)
{
	xs_send_msg(c, req->type, req->req_id, req->tx_id, "OK", 3);
}

void xs_reply_err(struct xs_conn *c, const struct xsd_sockmsg *req, int err)
{
	const char *name = "EINVAL";
	for (size_t i = 0; i < sizeof(xsd_errors) / sizeof(xsd_errors[0]); i++)
		if (xsd_errors[i].errnum == err) {
			name = xsd_errors[i].errstring;
			break;
		}
	xs_send_msg(c, XS_ERROR, req->req_id, req->tx_id, name, strlen(name) + 1);
}

void xs_conn_drop(struct xs_conn *c, const char *why)
{
	if (c->dead)
		return;
	if (sim_verbose || strcmp(why, "closed"))
		sim_log("xenstore: dom%u client dropped: %s", c->domid, why);
	c->dead = 1;
	loop_del(&c->it);
	close(c->it.fd);
	c->it.fd = -1;
	/* Its watches and transactions stay until xs_reap(): we may be inside
	 * xs_fire(), walking the watch list, or inside the commit of one of its
	 * own transactions (a commit's watch event can fail to reach it).  Its
	 * watches no longer count against its domain's quota from now on.
	 * Freed by xs_reap() once the event loop's batch is done. */
}

void xs_accept(int fd, uint32_t domid)
{
	struct xs_conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	c->it.kind = EV_XS_CONN;
	c->it.fd = fd;
	c->domid = domid;
	c->next = conns;
	conns = c;
	if (loop_add(&c->it, 0) != 0)
		xs_conn_drop(c, "cannot watch its socket");
}

size_t xs_conn_count(void)
{
	size_t n = 0;
	for (struct xs_conn *c = conns; c; c = c->next)
		n += !c->dead;
	return n;
}

void xs_conn_drop_domain(uint32_t domid, const char *why)
{
	for (struct xs_conn *c = conns; c; c = c->next)
		if (domid == UINT32_MAX || c->domid == domid)
			xs_conn_drop(c, why);
}

struct xs_conn *xs_conn_take_dead(void)
{
	for (struct xs_conn **p = &conns; *p; p = &(*p)->next)
		if ((*p)->dead) {
			struct xs_conn *c = *p;
			*p = c->next;
			return c;
		}
	return NULL;
}

void xs_conn_free(struct xs_conn *c)
{
	free(c->out);
	free(c);
}
