/*
 * xensim_hv.c - xensim's hypervisor: domains, grant tables and event
 * channels, serving the calls of platform/sim_proto.h.
 *
 * This file: the clients' connections (one per hv.sock client, tied to
 * its domain's incarnation) and their dispatch, one handler per call; the
 * hello, the control calls of dom0 (create, destroy, list, stop), and a
 * destroy: like a crash, the guest's processes stop dead, its clients are
 * dropped, its ports closed and its grants ended; a domain whose pages
 * are still mapped by someone stays "dying" (Xen's zombie) until they
 * unmap.  Its parts (xensim_hv_parts.h): event channels, grants, the
 * reply, the domain table.
 *
 * May call: every part in xensim_hv_parts.h, the event loop and log (xensim_loop.h),
 * xs_domain_release and xs_watch_count (the xenstored).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xensim_hv_parts.h"

static struct hv_conn *conns;
static int stop_requested;
static uint8_t msgbuf[sizeof(struct sim_msg) + SIM_MAX_ITEMS * sizeof(struct sim_copy_seg)];

int hv_stop_requested(void)
{
	return stop_requested;
}

/* ---- connections ---------------------------------------------------------------- */

static void conn_drop(struct hv_conn *c, const char *why)
{
	if (c->dead)
		return;
	if (sim_verbose || strcmp(why, "closed"))
		sim_log("hypervisor: dom%u client (pid %d) dropped: %s", c->domid, (int)c->pid, why);
	c->dead = 1;
	loop_del(&c->it);
	close(c->it.fd);
	c->it.fd = -1;
	hv_evts_close(c);
	hv_maps_release(c);
	struct domain *d = hv_domain(c->domid);
	if (d && c->pid > 0)
		for (int i = 0; i < MAX_PIDS; i++)
			if (d->pids[i] == c->pid)
				d->pids[i] = 0;
}

void hv_reap(void)
{
	for (struct hv_conn **p = &conns; *p;) {
		struct hv_conn *c = *p;
		if (!c->dead) {
			p = &c->next;
			continue;
		}
		*p = c->next;
		free(c);
	}
}

void hv_accept(int fd, uint32_t domid)
{
	struct hv_conn *c = calloc(1, sizeof(*c));
	struct domain *d = hv_domain(domid);

	if (!c || !d) {
		free(c);
		close(fd);
		return;
	}
	c->it.kind = EV_HV_CONN;
	c->it.fd = fd;
	c->domid = domid;
	c->incarnation = d->incarnation;
	c->next = conns;
	conns = c;
	if (loop_add(&c->it, 0) != 0)
		conn_drop(c, "cannot watch its socket");
}

/* ---- the control calls ------------------------------------------------------------ */

static int destroy_domain(uint32_t domid)
{
	struct domain *d = hv_domain(domid);

	if (!d || domid == 0 || d->state != DOM_RUNNING)
		return d && domid == 0 ? EPERM : ESRCH;
	/* Like a crash: the guest's processes stop dead. */
	for (int i = 0; i < MAX_PIDS; i++)
		if (d->pids[i] > 0)
			kill(d->pids[i], SIGKILL);
	hv_exec_kill(d);
	for (struct hv_conn *c = conns; c; c = c->next)
		if (c->domid == domid && !c->dead)
			conn_drop(c, "its domain was destroyed");
	hv_domain_unlisten(d);
	hv_ports_close(d);
	hv_grants_end(d);
	d->state = DOM_DYING;
	sim_log("domain %u (%s) destroyed%s", domid, d->name,
	        d->maps_held ? "; dying until its mapped grants are unmapped" : "");
	xs_domain_release(domid, d->uuid);
	hv_reap_domain(d);
	return 0;
}

static void do_list(struct hv_conn *c, struct sim_msg *m)
{
	static char text[SIM_MAX_ITEMS * 8];
	size_t len = 0;

	for (uint32_t i = 0; i <= SIM_MAX_DOMID && len + 256 < sizeof(text); i++) {
		struct domain *d = hv_domain(i);
		if (!d)
			continue;
		int pids = 0;
		for (int k = 0; k < MAX_PIDS; k++)
			pids += d->pids[k] > 0;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%u %s %s %u %d %u %s\n", d->domid,
		                        d->state == DOM_RUNNING ? "running" : "dying", d->uuid,
		                        d->maps_held, pids, xs_watch_count(d->domid), d->name);
	}
	m->n = (uint32_t)len;
	hv_reply(c, m, text, len, -1);
}

static void op_hello(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	c->pid = (pid_t)m->a[0];
	for (int i = 0; i < MAX_PIDS && c->domid != 0 && m->a[1] == 1; i++)
		if (me->pids[i] <= 0 || me->pids[i] == c->pid) {
			me->pids[i] = c->pid;
			break;
		}
	m->a[0] = c->domid;
	m->a[1] = me->incarnation;
	m->n = 0;
	hv_reply(c, m, NULL, 0, me->memfd);
}

/* Control: dom0 only (checked by dispatch()). */
static void op_dom_create(struct hv_req *r)
{
	struct hv_conn *c = r->c;
	struct sim_msg *m = r->m;
	/* items: name \0 uuid \0 */
	char text[513], err[256];
	uint32_t domid;

	memcpy(text, r->items, r->ilen);
	text[r->ilen] = '\0';
	const char *name = text, *uuid = memchr(text, '\0', r->ilen) ? text + strlen(text) + 1 : "";
	if (!*name || strlen(name) > 100 || (size_t)(uuid - text) > r->ilen) {
		hv_reply_err(c, m, EINVAL);
		return;
	}
	int rc = hv_create_domain(m->a[0] ? m->a[0] : UINT32_MAX, name, uuid, &domid, err, sizeof(err));
	if (rc) {
		sim_log("create failed: %s", err);
		m->err = rc;
		m->n = (uint32_t)strlen(err);
		hv_reply(c, m, err, strlen(err), -1);
		return;
	}
	m->a[0] = domid;
	hv_reply_ok(c, m);
}

static void op_dom_destroy(struct hv_req *r)
{
	int err = destroy_domain(r->m->a[0]);
	if (err) {
		hv_reply_err(r->c, r->m, err);
		return;
	}
	hv_reply_ok(r->c, r->m);
}

static void op_dom_list(struct hv_req *r)
{
	do_list(r->c, r->m);
}

/* items: cwd \0 console \0 argv0 \0 ... (at least one argument). */
static void op_dom_exec(struct hv_req *r)
{
	struct domain *d = hv_running_domain(r->m->a[0]);
	char *text = malloc(r->ilen + 1), *argv[257], err[300];
	int argc = 0;

	if (!text || !d || r->m->a[0] == 0 || d->prog) {
		free(text);
		hv_reply_err(r->c, r->m, !text ? ENOMEM : !d || r->m->a[0] == 0 ? ESRCH : EBUSY);
		return;
	}
	memcpy(text, r->items, r->ilen);
	text[r->ilen] = '\0';
	for (size_t at = 0; at < r->ilen && argc < 256; at += strlen(text + at) + 1)
		argv[argc++] = text + at;
	argv[argc] = NULL;
	if (argc < 3 || text[r->ilen - 1] != '\0' || argv[2][0] != '/') {
		free(text);
		hv_reply_err(r->c, r->m, EINVAL);
		return;
	}
	char console[600];
	if (!argv[1][0]) /* xensim's own: beside the domains' directories */
		snprintf(console, sizeof(console), "%s/dom%u.console", hv_rundir(), d->domid);
	else
		snprintf(console, sizeof(console), "%s", argv[1]);
	int rc = hv_exec_start(d, argv[0], console, argv + 2, hv_rundir(), err, sizeof(err));
	free(text);
	if (rc) {
		sim_log("exec failed: %s", err);
		r->m->err = EINVAL;
		r->m->n = (uint32_t)strlen(err);
		hv_reply(r->c, r->m, err, strlen(err), -1);
		return;
	}
	hv_reply_ok(r->c, r->m);
}

static struct hv_prog *prog_of(struct hv_req *r)
{
	struct domain *d = hv_running_domain(r->m->a[0]);
	if (!d || !d->prog) {
		hv_reply_err(r->c, r->m, !d ? ESRCH : EOPNOTSUPP);
		return NULL;
	}
	return d->prog;
}

/* The program's pid, and a pidfd of it: its tracer (dom0's sampler)
 * seizes the pid, then checks with the pidfd that the program has not
 * ended meanwhile (nor its pid gone to another process). */
static void op_dom_prog(struct hv_req *r)
{
	struct hv_prog *p = prog_of(r);
	if (!p)
		return;
	int fd = hv_exec_pidfd(p);
	if (fd < 0) {
		hv_reply_err(r->c, r->m, errno);
		return;
	}
	r->m->n = 0;
	r->m->a[0] = (uint32_t)p->pid;
	hv_reply(r->c, r->m, NULL, 0, fd);
	close(fd);
}

void hv_children(void)
{
	uint32_t ended;
	while (hv_exec_children(&ended) != 0)
		if (hv_running_domain(ended))
			destroy_domain(ended);
}

static void op_stop(struct hv_req *r)
{
	stop_requested = 1;
	hv_reply_ok(r->c, r->m);
}

/* One handler per operation; dom0_only: the control operations. */
static const struct {
	void (*fn)(struct hv_req *r);
	int dom0_only;
} ops[] = {
	[SIM_HELLO] = {op_hello, 0},
	[SIM_SHARE] = {hv_op_share, 0},
	[SIM_UNSHARE] = {hv_op_unshare, 0},
	[SIM_MAP] = {hv_op_map, 0},
	[SIM_UNMAP] = {hv_op_unmap, 0},
	[SIM_COPY] = {hv_op_copy, 0},
	[SIM_EVT_OPEN] = {hv_op_evt_open, 0},
	[SIM_EVT_CLOSE] = {hv_op_evt_close, 0},
	[SIM_EVT_ALLOC] = {hv_op_evt_alloc, 0},
	[SIM_EVT_BIND] = {hv_op_evt_bind, 0},
	[SIM_EVT_UNBIND] = {hv_op_evt_unbind, 0},
	[SIM_EVT_NOTIFY] = {hv_op_evt_notify, 0},
	[SIM_EVT_UNMASK] = {hv_op_evt_unmask, 0},
	[SIM_DOM_CREATE] = {op_dom_create, 1},
	[SIM_DOM_DESTROY] = {op_dom_destroy, 1},
	[SIM_DOM_LIST] = {op_dom_list, 1},
	[SIM_STOP] = {op_stop, 1},
	[SIM_DOM_EXEC] = {op_dom_exec, 1},
	[SIM_DOM_PROG] = {op_dom_prog, 1},
};

static void dispatch(struct hv_conn *c, struct sim_msg *m, const uint8_t *items, size_t ilen)
{
	struct domain *me = hv_domain(c->domid);

	if (!me || me->incarnation != c->incarnation || me->state != DOM_RUNNING) {
		conn_drop(c, "its domain is gone");
		return;
	}
	/* The item count must match what arrived (SHARE: n is a page count). */
	size_t item_size = m->op == SIM_COPY         ? sizeof(struct sim_copy_seg)
	                   : m->op == SIM_DOM_CREATE || m->op == SIM_DOM_EXEC ? 1
	                   : m->op == SIM_SHARE      ? 0
	                                             : sizeof(uint32_t);
	size_t max_items = m->op == SIM_DOM_CREATE ? 512 : m->op == SIM_DOM_EXEC ? 16384 : SIM_MAX_ITEMS;
	if (m->n > max_items || ilen != (size_t)m->n * item_size) {
		if (m->op == SIM_EVT_NOTIFY || m->op == SIM_EVT_UNMASK)
			return;
		hv_reply_err(c, m, EINVAL);
		return;
	}
	m->err = 0;
	if (m->op >= sizeof(ops) / sizeof(ops[0]) || !ops[m->op].fn) {
		hv_reply_err(c, m, ENOSYS);
		return;
	}
	if (ops[m->op].dom0_only && c->domid != 0) {
		hv_reply_err(c, m, EPERM);
		return;
	}
	struct hv_req r = {c, m, me, items, (const uint32_t *)items, ilen};
	ops[m->op].fn(&r);
}

/* A request handled; a client whose reply did not go is dropped. */
static void handle(struct hv_conn *c, struct sim_msg *m, const uint8_t *items, size_t ilen)
{
	dispatch(c, m, items, ilen);
	if (c->reply_failed)
		conn_drop(c, "reply failed");
}

void hv_conn_event(struct ev_item *it, int readable, int writable)
{
	struct hv_conn *c = (struct hv_conn *)it;

	(void)writable;
	/* Bounded work per wake-up so one client cannot starve the rest. */
	for (int i = 0; readable && !c->dead && i < 64; i++) {
		ssize_t n = ev_io(c->it.fd, EV_RECV, msgbuf, sizeof(msgbuf), MSG_TRUNC);
		if (n == 0)
			break;
		if (n < 0) {
			conn_drop(c, "closed");
			break;
		}
		if ((size_t)n > sizeof(msgbuf) || (size_t)n < sizeof(struct sim_msg)) {
			conn_drop(c, "malformed message");
			break;
		}
		struct sim_msg m;
		memcpy(&m, msgbuf, sizeof(m));
		handle(c, &m, msgbuf + sizeof(m), (size_t)n - sizeof(m));
	}
}

void hv_fini(void)
{
	for (uint32_t i = 1; i <= SIM_MAX_DOMID; i++)
		if (hv_running_domain(i))
			destroy_domain(i);
	for (struct hv_conn *c = conns; c; c = c->next)
		conn_drop(c, "closed");
	hv_reap();
	hv_domains_free();
}
