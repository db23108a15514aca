/*
 * xensim_hv_evtchn.c - the hypervisor's event channels: ports, unbound
 * or bound to another domain's, and the handles (a pipe each) a client
 * opens to receive them.  A port fires by writing its number into the
 * bound handle's pipe and is then masked until the handle unmasks it (the
 * Linux evtchn driver's contract), so a notification storm from a guest
 * costs one pending bit, not a flood.  Closing a port sends its peer back
 * to unbound, as Xen does.
 *
 * May call: xensim_hv_wire.c (replies), xensim_hv_dom.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xensim_hv_parts.h"

struct evt_handle {
	uint32_t id;
	int pipe_w;
	struct hv_conn *conn;
	struct evt_handle *next;
};

static void deliver(struct domain *d, uint32_t port)
{
	struct port *p = &d->ports[port];

	if (p->state == PORT_FREE || !p->h)
		return;
	if (p->masked) {
		p->pending = 1;
		return;
	}
	if (write(p->h->pipe_w, &port, sizeof(port)) != (ssize_t)sizeof(port)) {
		p->pending = 1; /* pipe full: delivered at unmask */
		return;
	}
	p->masked = 1;
	p->pending = 0;
}

static void close_port(struct domain *d, uint32_t port)
{
	struct port *p = &d->ports[port];

	if (p->state == PORT_INTERDOMAIN) {
		struct domain *r = hv_domain(p->remote_dom);
		if (r && p->remote_port < SIM_MAX_PORTS &&
		    r->ports[p->remote_port].state == PORT_INTERDOMAIN &&
		    r->ports[p->remote_port].remote_dom == d->domid &&
		    r->ports[p->remote_port].remote_port == port) {
			/* As Xen: the other end goes back to unbound. */
			r->ports[p->remote_port].state = PORT_UNBOUND;
			r->ports[p->remote_port].remote_dom = d->domid;
		}
	}
	memset(p, 0, sizeof(*p));
}

static struct evt_handle *find_evt(struct hv_conn *c, uint32_t id)
{
	for (struct evt_handle *h = c->evts; h; h = h->next)
		if (h->id == id)
			return h;
	return NULL;
}

static uint32_t alloc_port(struct domain *d)
{
	for (uint32_t p = 1; p < SIM_MAX_PORTS; p++)
		if (d->ports[p].state == PORT_FREE)
			return p;
	return 0;
}

static void evt_close(struct hv_conn *c, struct evt_handle *h)
{
	struct domain *d = hv_domain(c->domid);

	for (uint32_t p = 1; d && d->incarnation == c->incarnation && p < SIM_MAX_PORTS; p++)
		if (d->ports[p].h == h)
			close_port(d, p);
	for (struct evt_handle **x = &c->evts; *x; x = &(*x)->next)
		if (*x == h) {
			*x = h->next;
			break;
		}
	close(h->pipe_w);
	free(h);
}

void hv_ports_close(struct domain *d)
{
	for (uint32_t p = 1; p < SIM_MAX_PORTS; p++)
		if (d->ports[p].state != PORT_FREE)
			close_port(d, p);
}

void hv_evts_close(struct hv_conn *c)
{
	while (c->evts)
		evt_close(c, c->evts);
}

void hv_op_evt_open(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;

	int p[2];
	struct evt_handle *h = calloc(1, sizeof(*h));
	if (!h || pipe2(p, O_CLOEXEC) != 0) {
		free(h);
		hv_reply_err(c, m, errno ? errno : ENOMEM);
		return;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	h->id = ++c->next_handle;
	h->pipe_w = p[1];
	h->conn = c;
	h->next = c->evts;
	c->evts = h;
	m->a[0] = h->id;
	m->n = 0;
	hv_reply(c, m, NULL, 0, p[0]);
	close(p[0]);
}

/* The caller's handle that m->a[0] names, or NULL replied EINVAL. */
static struct evt_handle *evt_arg(struct hv_req *req)
{
	struct evt_handle *h = find_evt(req->c, req->m->a[0]);

	if (!h)
		hv_reply_err(req->c, req->m, EINVAL);
	return h;
}

static int port_number(uint32_t port)
{
	return port != 0 && port < SIM_MAX_PORTS;
}

/* A free port of the caller's made p: its number, or 0 replied ENOSPC. */
static uint32_t new_port(struct hv_req *req, struct port p)
{
	uint32_t port = alloc_port(req->me);

	if (!port) {
		hv_reply_err(req->c, req->m, ENOSPC);
		return 0;
	}
	req->me->ports[port] = p;
	return port;
}

void hv_op_evt_close(struct hv_req *req)
{
	struct evt_handle *h = evt_arg(req);

	if (!h)
		return;
	evt_close(req->c, h);
	hv_reply_ok(req->c, req->m);
}

void hv_op_evt_alloc(struct hv_req *req)
{
	struct sim_msg *m = req->m;
	struct evt_handle *h = evt_arg(req);
	uint32_t port;

	if (!h)
		return;
	if (m->a[1] > SIM_MAX_DOMID) {
		hv_reply_err(req->c, m, EINVAL);
		return;
	}
	if (!(port = new_port(req, (struct port){PORT_UNBOUND, 0, 0, m->a[1], 0, h})))
		return;
	m->a[0] = port;
	hv_reply_ok(req->c, m);
}

void hv_op_evt_bind(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct evt_handle *h = evt_arg(req);
	struct domain *r = hv_running_domain(m->a[1]);
	uint32_t rport = m->a[2], port;

	if (!h)
		return;
	if (!r) {
		hv_reply_err(c, m, ESRCH);
		return;
	}
	if (!port_number(rport) || r->ports[rport].state != PORT_UNBOUND ||
	    r->ports[rport].remote_dom != c->domid) {
		hv_reply_err(c, m, EINVAL);
		return;
	}
	if (!(port = new_port(req, (struct port){PORT_INTERDOMAIN, 0, 0, r->domid, rport, h})))
		return;
	r->ports[rport].state = PORT_INTERDOMAIN;
	r->ports[rport].remote_port = port;
	m->a[0] = port;
	hv_reply_ok(c, m);
}

void hv_op_evt_unbind(struct hv_req *req)
{
	struct domain *me = req->me;
	uint32_t port = req->m->a[1];
	struct evt_handle *h = evt_arg(req);

	if (!h)
		return;
	if (!port_number(port) || me->ports[port].h != h) {
		hv_reply_err(req->c, req->m, EINVAL);
		return;
	}
	close_port(me, port);
	hv_reply_ok(req->c, req->m);
}

void hv_op_evt_notify(struct hv_req *req)
{
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	uint32_t port = m->a[0];
	if (!port_number(port) || me->ports[port].state != PORT_INTERDOMAIN)
		return; /* notifying nothing is harmless */
	struct domain *r = hv_running_domain(me->ports[port].remote_dom);
	if (r)
		deliver(r, me->ports[port].remote_port);
}

void hv_op_evt_unmask(struct hv_req *req)
{
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	uint32_t port = m->a[0];
	if (!port_number(port) || me->ports[port].state == PORT_FREE)
		return;
	me->ports[port].masked = 0;
	if (me->ports[port].pending)
		deliver(me, port);
}
