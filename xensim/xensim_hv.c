/*
 * xensim_hv.c - xensim's hypervisor: domains, grant tables and event
 * channels, serving the calls of platform/sim_proto.h.
 *
 * Grant checks are where Xen makes them: a map or copy names a domain and
 * a ref; the entry must be in use, granted to the caller, not ended, and
 * writable for a writable map or a copy into the guest.  A mapped grant
 * cannot be freed: ending it only stops new maps and copies, and the page
 * goes when the last mapping does.  A destroyed domain whose pages are
 * still mapped by someone stays "dying" (Xen's zombie) until they unmap.
 *
 * Event channels: a port fires by writing its number into the bound
 * handle's pipe and is then masked until the handle unmasks it (the Linux
 * evtchn driver's contract), so a notification storm from a guest costs
 * one pending bit, not a flood.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "xensim.h"

#define FIRST_REF 8 /* refs below are the toolstack's on Xen */
#define MAX_PIDS 16

enum dom_state { DOM_RUNNING, DOM_DYING };
enum port_state { PORT_FREE, PORT_UNBOUND, PORT_INTERDOMAIN };

struct grant {
	uint8_t in_use;
	uint8_t readonly;
	uint8_t ended;      /* no new maps or copies; freed at map_count 0 */
	uint32_t grantee;
	uint32_t pfn;
	uint32_t map_count;
};

struct evt_handle;

struct port {
	uint8_t state;
	uint8_t masked;
	uint8_t pending;
	uint32_t remote_dom;
	uint32_t remote_port;
	struct evt_handle *h;
};

struct domain {
	uint32_t domid;
	uint32_t incarnation;
	enum dom_state state;
	char name[128];
	char uuid[40];
	int memfd;
	uint8_t page_used[SIM_DOMAIN_PAGES / 8];
	uint32_t next_pfn;
	struct grant gt[SIM_GRANT_ENTRIES];
	uint32_t next_ref;
	struct port ports[SIM_MAX_PORTS];
	uint32_t maps_held; /* of its grants, by others */
	pid_t pids[MAX_PIDS];
	struct hv_listener xs_listen, hv_listen;
	char dir[512];
};

struct hv_conn;

struct evt_handle {
	uint32_t id;
	int pipe_w;
	struct hv_conn *conn;
	struct evt_handle *next;
};

struct map_handle {
	uint32_t id;
	uint32_t domid, incarnation;
	uint32_t n;
	uint32_t *refs;
	struct map_handle *next;
};

struct hv_conn {
	struct ev_item it;
	uint32_t domid;
	uint32_t incarnation;
	pid_t pid;
	struct evt_handle *evts;
	struct map_handle *maps;
	uint32_t next_handle;
	int dead;
	struct hv_conn *next;
};

static struct domain *domains[SIM_MAX_DOMID + 1];
static struct hv_conn *conns;
static uint32_t incarnations;
static char rundir[256];
static int stop_requested;
static uint8_t msgbuf[sizeof(struct sim_msg) + SIM_MAX_ITEMS * sizeof(struct sim_copy_seg)];
static uint32_t replybuf[2 * SIM_MAX_ITEMS];

int hv_stop_requested(void)
{
	return stop_requested;
}

/* ---- domains ---------------------------------------------------------------- */

static int listen_on(struct hv_listener *l, const char *path, uint32_t domid, int is_xs)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, (is_xs ? SOCK_STREAM : SOCK_SEQPACKET) | SOCK_CLOEXEC | SOCK_NONBLOCK,
	                0);

	if (fd < 0)
		return -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		close(fd);
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 64) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	l->it.kind = is_xs ? EV_XS_LISTEN : EV_HV_LISTEN;
	l->it.fd = fd;
	l->domid = domid;
	l->is_xs = is_xs;
	return loop_add(&l->it, 0);
}

static void close_listener(struct hv_listener *l, const char *dir, const char *name)
{
	char path[600];

	if (l->it.fd < 0)
		return;
	loop_del(&l->it);
	close(l->it.fd);
	l->it.fd = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

int hv_create_domain(uint32_t domid, const char *name, const char *uuid, uint32_t *out,
                     char *err, size_t errlen)
{
	struct domain *d;
	char path[600], genuuid[40];

	if (domid == UINT32_MAX) {
		/* As Xen: ids keep increasing (and wrap), so a new domain does not
		 * take the id of one that just died while its backends still
		 * clean up after it. */
		static uint32_t next = 1;
		uint32_t tried = 0;
		for (domid = next; tried < SIM_MAX_DOMID && domains[domid]; tried++)
			domid = domid % SIM_MAX_DOMID + 1;
		if (tried < SIM_MAX_DOMID)
			next = domid % SIM_MAX_DOMID + 1;
		else
			domid = SIM_MAX_DOMID + 1;
	}
	if (domid > SIM_MAX_DOMID) {
		snprintf(err, errlen, "no free domain id");
		return EBUSY;
	}
	if (domains[domid]) {
		snprintf(err, errlen, "domain %u already exists (%s)", domid,
		         domains[domid]->state == DOM_DYING ? "dying" : "running");
		return EEXIST;
	}
	for (uint32_t i = 0; i <= SIM_MAX_DOMID; i++)
		if (domains[i] && domains[i]->state == DOM_RUNNING && strcmp(domains[i]->name, name) == 0) {
			snprintf(err, errlen, "a domain named '%s' already exists (domid %u)", name, i);
			return EEXIST;
		}
	if (!uuid || !*uuid) {
		unsigned r[4];
		for (int i = 0; i < 4; i++)
			r[i] = (unsigned)rand() ^ (domid << (i * 4)) ^ (incarnations << 8);
		snprintf(genuuid, sizeof(genuuid), "%08x-%04x-4%03x-8%03x-%04x%08x", r[0], r[1] & 0xffff,
		         r[2] & 0xfff, r[3] & 0xfff, (r[1] >> 16) & 0xffff, r[2] ^ r[3]);
		uuid = genuuid;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return ENOMEM;
	}
	d->domid = domid;
	d->incarnation = ++incarnations;
	d->next_ref = FIRST_REF;
	d->next_pfn = 0;
	d->xs_listen.it.fd = d->hv_listen.it.fd = -1;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	snprintf(d->dir, sizeof(d->dir), "%s/dom%u", rundir, domid);
	snprintf(path, sizeof(path), "dom%u", domid);
	d->memfd = memfd_create(path, MFD_CLOEXEC);
	if (d->memfd < 0 || ftruncate(d->memfd, (off_t)SIM_DOMAIN_PAGES * SIM_PAGE_SIZE) != 0 ||
	    (mkdir(d->dir, 0700) != 0 && errno != EEXIST)) {
		snprintf(err, errlen, "creating domain %u: %s", domid, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/xs.sock", d->dir);
	if (listen_on(&d->xs_listen, path, domid, 1) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/hv.sock", d->dir);
	if (listen_on(&d->hv_listen, path, domid, 0) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	domains[domid] = d;
	xs_domain_introduce(domid, d->name, d->uuid);
	sim_log("domain %u (%s) created", domid, d->name);
	*out = domid;
	return 0;
fail:
	close_listener(&d->xs_listen, d->dir, "xs.sock");
	close_listener(&d->hv_listen, d->dir, "hv.sock");
	if (d->memfd >= 0)
		close(d->memfd);
	rmdir(d->dir);
	free(d);
	return EIO;
}

static void free_page(struct domain *d, uint32_t pfn)
{
	/* Punching the hole frees the memory and makes the page read zeros
	 * for its next owner. */
	fallocate(d->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)pfn * SIM_PAGE_SIZE,
	          SIM_PAGE_SIZE);
	d->page_used[pfn / 8] &= (uint8_t)~(1u << (pfn % 8));
}

static void free_grant(struct domain *d, uint32_t ref)
{
	free_page(d, d->gt[ref].pfn);
	memset(&d->gt[ref], 0, sizeof(d->gt[ref]));
}

static void reap_domain(struct domain *d)
{
	if (d->state != DOM_DYING || d->maps_held)
		return;
	sim_log("domain %u (%s) is gone", d->domid, d->name);
	domains[d->domid] = NULL;
	close(d->memfd);
	free(d);
}

static void close_port(struct domain *d, uint32_t port);

static void conn_drop(struct hv_conn *c, const char *why);

static int destroy_domain(uint32_t domid)
{
	struct domain *d = domid <= SIM_MAX_DOMID ? domains[domid] : NULL;

	if (!d || domid == 0 || d->state != DOM_RUNNING)
		return d && domid == 0 ? EPERM : ESRCH;
	/* Like a crash: the guest's processes stop dead. */
	for (int i = 0; i < MAX_PIDS; i++)
		if (d->pids[i] > 0)
			kill(d->pids[i], SIGKILL);
	for (struct hv_conn *c = conns; c; c = c->next)
		if (c->domid == domid && !c->dead)
			conn_drop(c, "its domain was destroyed");
	close_listener(&d->xs_listen, d->dir, "xs.sock");
	close_listener(&d->hv_listen, d->dir, "hv.sock");
	rmdir(d->dir);
	for (uint32_t p = 1; p < SIM_MAX_PORTS; p++)
		if (d->ports[p].state != PORT_FREE)
			close_port(d, p);
	for (uint32_t r = 0; r < SIM_GRANT_ENTRIES; r++) {
		struct grant *g = &d->gt[r];
		if (!g->in_use)
			continue;
		g->ended = 1;
		if (!g->map_count)
			free_grant(d, r);
	}
	d->state = DOM_DYING;
	sim_log("domain %u (%s) destroyed%s", domid, d->name,
	        d->maps_held ? "; dying until its mapped grants are unmapped" : "");
	xs_domain_release(domid, d->uuid);
	reap_domain(d);
	return 0;
}

/* ---- event channels ---------------------------------------------------------- */

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
		struct domain *r = p->remote_dom <= SIM_MAX_DOMID ? domains[p->remote_dom] : NULL;
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
	struct domain *d = domains[c->domid];

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

/* ---- grants ----------------------------------------------------------------- */

static int check_grant(struct domain *d, uint32_t ref, uint32_t caller, int write)
{
	if (ref >= SIM_GRANT_ENTRIES || !d->gt[ref].in_use || d->gt[ref].ended)
		return SIM_GNTST_BAD_GNTREF;
	if (d->gt[ref].grantee != caller || (write && d->gt[ref].readonly))
		return SIM_GNTST_PERMISSION_DENIED;
	return SIM_GNTST_OKAY;
}

static void release_map(struct map_handle *m)
{
	struct domain *d = m->domid <= SIM_MAX_DOMID ? domains[m->domid] : NULL;

	if (d && d->incarnation == m->incarnation) {
		for (uint32_t i = 0; i < m->n; i++) {
			struct grant *g = &d->gt[m->refs[i]];
			if (g->map_count && --g->map_count == 0 && g->ended)
				free_grant(d, m->refs[i]);
		}
		d->maps_held -= m->n;
		reap_domain(d);
	}
	free(m->refs);
	free(m);
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
	while (c->evts)
		evt_close(c, c->evts);
	while (c->maps) {
		struct map_handle *m = c->maps;
		c->maps = m->next;
		release_map(m);
	}
	struct domain *d = domains[c->domid];
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
	struct domain *d = domains[domid];

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

static int reply(struct hv_conn *c, struct sim_msg *m, const void *items, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov[2] = {{m, sizeof(*m)}, {(void *)items, len}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};

	if (fd >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	if (sendmsg(c->it.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* A client that does not read its replies is not served. */
		conn_drop(c, "reply failed");
		return -1;
	}
	return 0;
}

static void reply_err(struct hv_conn *c, struct sim_msg *m, int err)
{
	m->err = err;
	m->n = 0;
	reply(c, m, NULL, 0, -1);
}

static void do_list(struct hv_conn *c, struct sim_msg *m)
{
	static char text[SIM_MAX_ITEMS * 8];
	size_t len = 0;

	for (uint32_t i = 0; i <= SIM_MAX_DOMID && len + 256 < sizeof(text); i++) {
		struct domain *d = domains[i];
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
	reply(c, m, text, len, -1);
}

/* A request being handled: the connection, the message (rewritten into
 * the reply), the caller's domain, and the items that came with it. */
struct hv_req {
	struct hv_conn *c;
	struct sim_msg *m;
	struct domain *me;
	const uint8_t *items;
	const uint32_t *words;
	size_t ilen;
};

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
	reply(c, m, NULL, 0, me->memfd);
}

static void op_share(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	uint32_t n = m->n; /* pages wanted */
	if (n == 0 || n > SIM_MAX_ITEMS || m->a[0] > SIM_MAX_DOMID) {
		reply_err(c, m, EINVAL);
		return;
	}
	/* Pages and refs first, all or nothing. */
	uint32_t got = 0;
	for (uint32_t pfn = 0; pfn < SIM_DOMAIN_PAGES && got < n; pfn++)
		if (!(me->page_used[pfn / 8] & (1u << (pfn % 8))))
			replybuf[2 * got++ + 1] = pfn;
	uint32_t refs = 0;
	for (uint32_t r = FIRST_REF; r < SIM_GRANT_ENTRIES && refs < n; r++)
		if (!me->gt[r].in_use)
			replybuf[2 * refs++] = r;
	if (got < n || refs < n) {
		reply_err(c, m, ENOSPC);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ref = replybuf[2 * i], pfn = replybuf[2 * i + 1];
		me->page_used[pfn / 8] |= (uint8_t)(1u << (pfn % 8));
		me->gt[ref] = (struct grant){1, (uint8_t)!m->a[1], 0, m->a[0], pfn, 0};
	}
	m->n = n;
	reply(c, m, replybuf, 2 * n * sizeof(uint32_t), -1);
}

static void op_unshare(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;
	const uint32_t *words = req->words;

	for (uint32_t i = 0; i < m->n; i++) {
		uint32_t ref = words[i];
		if (ref >= SIM_GRANT_ENTRIES || !me->gt[ref].in_use)
			continue;
		if (me->gt[ref].map_count)
			me->gt[ref].ended = 1; /* freed when the backend unmaps */
		else
			free_grant(me, ref);
	}
	m->n = 0;
	reply(c, m, NULL, 0, -1);
}

static void op_map(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	const uint32_t *words = req->words;

	struct domain *d = m->a[0] <= SIM_MAX_DOMID ? domains[m->a[0]] : NULL;
	if (!d || d->state != DOM_RUNNING) {
		reply_err(c, m, ESRCH);
		return;
	}
	for (uint32_t i = 0; i < m->n; i++) {
		int st = check_grant(d, words[i], c->domid, (int)m->a[1]);
		if (st != SIM_GNTST_OKAY) {
			reply_err(c, m, st == SIM_GNTST_BAD_GNTREF ? EINVAL : EACCES);
			return;
		}
	}
	struct map_handle *h = calloc(1, sizeof(*h));
	uint32_t *refs = malloc(m->n * sizeof(*refs));
	if (!h || !refs) {
		free(h);
		free(refs);
		reply_err(c, m, ENOMEM);
		return;
	}
	memcpy(refs, words, m->n * sizeof(*refs));
	*h = (struct map_handle){++c->next_handle, d->domid, d->incarnation, m->n, refs, c->maps};
	c->maps = h;
	for (uint32_t i = 0; i < m->n; i++) {
		d->gt[refs[i]].map_count++;
		replybuf[i] = d->gt[refs[i]].pfn;
	}
	d->maps_held += m->n;
	m->a[0] = h->id;
	m->a[1] = d->incarnation;
	reply(c, m, replybuf, m->n * sizeof(uint32_t), d->memfd);
}

static void op_unmap(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;

	for (struct map_handle **h = &c->maps; *h; h = &(*h)->next)
		if ((*h)->id == m->a[0]) {
			struct map_handle *x = *h;
			*h = x->next;
			release_map(x);
			m->n = 0;
			reply(c, m, NULL, 0, -1);
			return;
		}
	reply_err(c, m, EINVAL);
}

static void op_copy(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	const uint8_t *items = req->items;

	const struct sim_copy_seg *segs = (const struct sim_copy_seg *)items;
	struct domain *d = m->a[0] <= SIM_MAX_DOMID ? domains[m->a[0]] : NULL;
	if (!d || d->state != DOM_RUNNING) {
		reply_err(c, m, ESRCH);
		return;
	}
	for (uint32_t i = 0; i < m->n; i++) {
		int st = segs[i].domid != d->domid ? SIM_GNTST_BAD_DOMAIN
		         : (uint32_t)segs[i].offset + segs[i].len > SIM_PAGE_SIZE
		                 ? SIM_GNTST_BAD_COPY_ARG
		                 : check_grant(d, segs[i].ref, c->domid, (int)segs[i].to_guest);
		replybuf[2 * i] = (uint32_t)st;
		replybuf[2 * i + 1] = st == SIM_GNTST_OKAY ? d->gt[segs[i].ref].pfn : 0;
	}
	m->a[1] = d->incarnation;
	reply(c, m, replybuf, 2 * m->n * sizeof(uint32_t), d->memfd);
}

static void op_evt_open(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;

	int p[2];
	struct evt_handle *h = calloc(1, sizeof(*h));
	if (!h || pipe2(p, O_CLOEXEC) != 0) {
		free(h);
		reply_err(c, m, errno ? errno : ENOMEM);
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
	reply(c, m, NULL, 0, p[0]);
	close(p[0]);
}

static void op_evt_close(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;

	struct evt_handle *h = find_evt(c, m->a[0]);
	if (!h) {
		reply_err(c, m, EINVAL);
		return;
	}
	evt_close(c, h);
	m->n = 0;
	reply(c, m, NULL, 0, -1);
}

static void op_evt_alloc(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	struct evt_handle *h = find_evt(c, m->a[0]);
	uint32_t port = alloc_port(me);
	if (!h || m->a[1] > SIM_MAX_DOMID) {
		reply_err(c, m, EINVAL);
		return;
	}
	if (!port) {
		reply_err(c, m, ENOSPC);
		return;
	}
	me->ports[port] = (struct port){PORT_UNBOUND, 0, 0, m->a[1], 0, h};
	m->a[0] = port;
	m->n = 0;
	reply(c, m, NULL, 0, -1);
}

static void op_evt_bind(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	struct evt_handle *h = find_evt(c, m->a[0]);
	struct domain *r = m->a[1] <= SIM_MAX_DOMID ? domains[m->a[1]] : NULL;
	uint32_t rport = m->a[2];
	if (!h) {
		reply_err(c, m, EINVAL);
		return;
	}
	if (!r || r->state != DOM_RUNNING) {
		reply_err(c, m, ESRCH);
		return;
	}
	if (rport == 0 || rport >= SIM_MAX_PORTS || r->ports[rport].state != PORT_UNBOUND ||
	    r->ports[rport].remote_dom != c->domid) {
		reply_err(c, m, EINVAL);
		return;
	}
	uint32_t port = alloc_port(me);
	if (!port) {
		reply_err(c, m, ENOSPC);
		return;
	}
	me->ports[port] = (struct port){PORT_INTERDOMAIN, 0, 0, r->domid, rport, h};
	r->ports[rport].state = PORT_INTERDOMAIN;
	r->ports[rport].remote_port = port;
	m->a[0] = port;
	m->n = 0;
	reply(c, m, NULL, 0, -1);
}

static void op_evt_unbind(struct hv_req *req)
{
	struct hv_conn *c = req->c;
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	uint32_t port = m->a[1];
	struct evt_handle *h = find_evt(c, m->a[0]);
	if (!h || port == 0 || port >= SIM_MAX_PORTS || me->ports[port].h != h) {
		reply_err(c, m, EINVAL);
		return;
	}
	close_port(me, port);
	m->n = 0;
	reply(c, m, NULL, 0, -1);
}

static void op_evt_notify(struct hv_req *req)
{
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	uint32_t port = m->a[0];
	if (port == 0 || port >= SIM_MAX_PORTS || me->ports[port].state != PORT_INTERDOMAIN)
		return; /* notifying nothing is harmless */
	struct domain *r = domains[me->ports[port].remote_dom];
	if (r && r->state == DOM_RUNNING)
		deliver(r, me->ports[port].remote_port);
}

static void op_evt_unmask(struct hv_req *req)
{
	struct sim_msg *m = req->m;
	struct domain *me = req->me;

	uint32_t port = m->a[0];
	if (port == 0 || port >= SIM_MAX_PORTS || me->ports[port].state == PORT_FREE)
		return;
	me->ports[port].masked = 0;
	if (me->ports[port].pending)
		deliver(me, port);
}

/* Control: dom0 only (checked by handle()). */
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
		reply_err(c, m, EINVAL);
		return;
	}
	int rc = hv_create_domain(m->a[0] ? m->a[0] : UINT32_MAX, name, uuid, &domid, err, sizeof(err));
	if (rc) {
		sim_log("create failed: %s", err);
		m->err = rc;
		m->n = (uint32_t)strlen(err);
		reply(c, m, err, strlen(err), -1);
		return;
	}
	m->a[0] = domid;
	m->n = 0;
	reply(c, m, NULL, 0, -1);
}

static void op_dom_destroy(struct hv_req *r)
{
	int err = destroy_domain(r->m->a[0]);
	if (err) {
		reply_err(r->c, r->m, err);
		return;
	}
	r->m->n = 0;
	reply(r->c, r->m, NULL, 0, -1);
}

static void op_dom_list(struct hv_req *r)
{
	do_list(r->c, r->m);
}

static void op_stop(struct hv_req *r)
{
	stop_requested = 1;
	r->m->n = 0;
	reply(r->c, r->m, NULL, 0, -1);
}

/* One handler per operation; dom0_only: the control operations. */
static const struct {
	void (*fn)(struct hv_req *r);
	int dom0_only;
} ops[] = {
	[SIM_HELLO] = {op_hello, 0},
	[SIM_SHARE] = {op_share, 0},
	[SIM_UNSHARE] = {op_unshare, 0},
	[SIM_MAP] = {op_map, 0},
	[SIM_UNMAP] = {op_unmap, 0},
	[SIM_COPY] = {op_copy, 0},
	[SIM_EVT_OPEN] = {op_evt_open, 0},
	[SIM_EVT_CLOSE] = {op_evt_close, 0},
	[SIM_EVT_ALLOC] = {op_evt_alloc, 0},
	[SIM_EVT_BIND] = {op_evt_bind, 0},
	[SIM_EVT_UNBIND] = {op_evt_unbind, 0},
	[SIM_EVT_NOTIFY] = {op_evt_notify, 0},
	[SIM_EVT_UNMASK] = {op_evt_unmask, 0},
	[SIM_DOM_CREATE] = {op_dom_create, 1},
	[SIM_DOM_DESTROY] = {op_dom_destroy, 1},
	[SIM_DOM_LIST] = {op_dom_list, 1},
	[SIM_STOP] = {op_stop, 1},
};

static void handle(struct hv_conn *c, struct sim_msg *m, const uint8_t *items, size_t ilen)
{
	struct domain *me = domains[c->domid];

	if (!me || me->incarnation != c->incarnation || me->state != DOM_RUNNING) {
		conn_drop(c, "its domain is gone");
		return;
	}
	/* The item count must match what arrived (SHARE: n is a page count). */
	size_t item_size = m->op == SIM_COPY         ? sizeof(struct sim_copy_seg)
	                   : m->op == SIM_DOM_CREATE ? 1
	                   : m->op == SIM_SHARE      ? 0
	                                             : sizeof(uint32_t);
	if (m->n > (m->op == SIM_DOM_CREATE ? 512 : SIM_MAX_ITEMS) || ilen != (size_t)m->n * item_size) {
		if (m->op == SIM_EVT_NOTIFY || m->op == SIM_EVT_UNMASK)
			return;
		reply_err(c, m, EINVAL);
		return;
	}
	m->err = 0;
	if (m->op >= sizeof(ops) / sizeof(ops[0]) || !ops[m->op].fn) {
		reply_err(c, m, ENOSYS);
		return;
	}
	if (ops[m->op].dom0_only && c->domid != 0) {
		reply_err(c, m, EPERM);
		return;
	}
	struct hv_req r = {c, m, me, items, (const uint32_t *)items, ilen};
	ops[m->op].fn(&r);
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

int hv_init(const char *dir)
{
	snprintf(rundir, sizeof(rundir), "%s", dir);
	return 0;
}

void hv_fini(void)
{
	for (uint32_t i = 1; i <= SIM_MAX_DOMID; i++)
		if (domains[i] && domains[i]->state == DOM_RUNNING)
			destroy_domain(i);
	for (struct hv_conn *c = conns; c; c = c->next)
		conn_drop(c, "closed");
	hv_reap();
	for (uint32_t i = 0; i <= SIM_MAX_DOMID; i++) {
		struct domain *d = domains[i];
		if (!d)
			continue;
		close_listener(&d->xs_listen, d->dir, "xs.sock");
		close_listener(&d->hv_listen, d->dir, "hv.sock");
		rmdir(d->dir);
		close(d->memfd);
		free(d);
		domains[i] = NULL;
	}
}
