/*
 * platform_sim.c - the Xen seam on xensim (see sim_proto.h).  One
 * SOCK_SEQPACKET connection per platform instance carries the calls;
 * domain memory arrives as memfds and is mapped page by page, so a grant
 * mapping covers exactly the granted pages.  Not thread-safe: one platform
 * instance per thread (the backend and the frontend-stub are event loops).
 *
 * May call: the seam's types (platform.h), xensim's sockets (sim_proto.h),
 * the inspector and the mappings
 * (platform_sim_inspect.c, platform_sim_maps.c, through platform_sim_int.h), libc.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <xenstore.h>

#include "platform.h"
#include "platform_sim_int.h"
#include "sim_proto.h"

#define MEM_BYTES ((size_t)SIM_DOMAIN_PAGES * SIM_PAGE_SIZE)
#define COPY_CACHE 16 /* other domains' memory kept mapped for grant copy */

struct mapping {
	void *addr;
	uint32_t count;
	uint32_t handle;  /* gnttab: xensim's map handle */
	uint32_t *refs;   /* gntshr: the refs to end */
	struct mapping *next;
};

struct copy_map {
	uint32_t domid, incarnation;
	uint8_t *base;
	uint64_t last_use;
};

struct sim {
	int fd;
	char *dir;
	uint32_t incarnation;
	int memfd;  /* our own domain's memory */
	uint32_t next_id;
	uint8_t *buf;  /* one message */
	size_t rlen;   /* bytes of the last reply */
	struct copy_map cache[COPY_CACHE];
	uint64_t tick;
};

struct sim_evtchn {
	struct plat_evtchn base;
	uint32_t handle;
	int pipe;
};

struct sim_gnttab {
	struct plat_gnttab base;
	struct mapping *maps;
};

struct sim_gntshr {
	struct plat_gntshr base;
	struct mapping *maps;
};

#define MSG_MAX (sizeof(struct sim_msg) + SIM_MAX_ITEMS * sizeof(struct sim_copy_seg))

static struct sim *S(struct plat *p)
{
	return p->impl;
}

static int send_msg(struct sim *s, struct sim_msg *m, const void *items, size_t len)
{
	memcpy(s->buf, m, sizeof(*m));
	if (len)
		memcpy(s->buf + sizeof(*m), items, len);
	for (;;) {
		ssize_t n = send(s->fd, s->buf, sizeof(*m) + len, MSG_NOSIGNAL);
		if (n >= 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/* One call: sends m (+items), waits for its reply into m (+reply items in
 * s->buf after the header), receives at most one fd. */
static int call(struct sim *s, struct sim_msg *m, const void *items, size_t len, int *fd_out)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {s->buf, MSG_MAX};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                    .msg_controllen = sizeof(cbuf)};
	ssize_t n;

	if (fd_out)
		*fd_out = -1;
	m->id = ++s->next_id;
	if (send_msg(s, m, items, len) != 0)
		return -1;
	do
		n = recvmsg(s->fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < (ssize_t)sizeof(*m)) {
		errno = n == 0 ? ECONNRESET : n < 0 ? errno : EPROTO;
		return -1;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int fd;
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
			if (fd_out && *fd_out < 0)
				*fd_out = fd;
			else
				close(fd);
		}
	memcpy(m, s->buf, sizeof(*m));
	s->rlen = (size_t)n;
	if (m->id != s->next_id) {
		errno = EPROTO;
		goto fail;
	}
	if (m->err) {
		errno = m->err;
		goto fail;
	}
	return 0;
fail:
	if (fd_out && *fd_out >= 0) {
		close(*fd_out);
		*fd_out = -1;
	}
	return -1;
}

static const uint32_t *reply_items(struct sim *s)
{
	return (const uint32_t *)(s->buf + sizeof(struct sim_msg));
}

/* Whether the last reply carries at least `words` 32-bit items. */
static int reply_has(struct sim *s, size_t words)
{
	return s->rlen >= sizeof(struct sim_msg) + words * sizeof(uint32_t);
}

/* ---- open / close --------------------------------------------------------- */

static int sim_open(struct plat *p, const struct plat_opts *o, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct sim *s;
	struct sim_msg m = {.op = SIM_HELLO};

	if (!o->sim_dir || !*o->sim_dir) {
		snprintf(err, errlen, "the sim platform needs xensim's directory (--sim-dir or "
		                      "$XENSIM_DIR)");
		return -1;
	}
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dom%u/hv.sock", o->sim_dir,
	                     o->sim_domid) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "xensim directory path too long: %s", o->sim_dir);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->buf = malloc(MSG_MAX)) || !(s->dir = strdup(o->sim_dir))) {
		if (s)
			free(s->buf);
		free(s);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->memfd = -1;
	s->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, errlen, "cannot reach xensim as domain %u at %s: %s (is 'xensim start "
		                      "--dir %s' running%s?)",
		         o->sim_domid, sa.sun_path, strerror(errno), o->sim_dir,
		         o->sim_domid ? ", and the domain created" : "");
		goto fail;
	}
	m.a[0] = (uint32_t)getpid();
	m.a[1] = o->sim_guest ? 1 : 0;
	if (call(s, &m, NULL, 0, &s->memfd) != 0 || s->memfd < 0) {
		snprintf(err, errlen, "xensim refused domain %u: %s", o->sim_domid, strerror(errno));
		goto fail;
	}
	p->domid = m.a[0];
	s->incarnation = m.a[1];
	p->impl = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s->dir);
	free(s);
	return -1;
}

static void sim_close(struct plat *p)
{
	struct sim *s = S(p);

	for (int i = 0; i < COPY_CACHE; i++)
		if (s->cache[i].base)
			munmap(s->cache[i].base, MEM_BYTES);
	close(s->fd);
	if (s->memfd >= 0)
		close(s->memfd);
	free(s->buf);
	free(s->dir);
	free(s);
}

static struct xs_handle *sim_xs_open(struct plat *p)
{
	char path[4200];

	/* libxenstore reads XENSTORED_PATH at xs_open time only. */
	snprintf(path, sizeof(path), "%s/dom%u/xs.sock", S(p)->dir, p->domid);
	setenv("XENSTORED_PATH", path, 1);
	return xs_open(0);
}

/* ---- event channels ------------------------------------------------------- */

static struct plat_evtchn *sim_evtchn_open(struct plat *p)
{
	struct sim_evtchn *e = calloc(1, sizeof(*e));
	struct sim_msg m = {.op = SIM_EVT_OPEN};

	if (!e)
		return NULL;
	if (call(S(p), &m, NULL, 0, &e->pipe) != 0 || e->pipe < 0) {
		free(e);
		return NULL;
	}
	fcntl(e->pipe, F_SETFL, fcntl(e->pipe, F_GETFL) | O_NONBLOCK);
	e->base.p = p;
	e->handle = m.a[0];
	return &e->base;
}

static void sim_evtchn_close(struct plat_evtchn *b)
{
	struct sim_evtchn *e = (struct sim_evtchn *)b;
	struct sim_msg m = {.op = SIM_EVT_CLOSE, .a = {e->handle}};

	call(S(b->p), &m, NULL, 0, NULL);
	close(e->pipe);
	free(e);
}

static int sim_evtchn_fd(struct plat_evtchn *b)
{
	return ((struct sim_evtchn *)b)->pipe;
}

static int sim_evtchn_bind_interdomain(struct plat_evtchn *b, uint32_t domid, uint32_t port)
{
	struct sim_msg m = {.op = SIM_EVT_BIND, .a = {((struct sim_evtchn *)b)->handle, domid, port}};
	return call(S(b->p), &m, NULL, 0, NULL) ? -1 : (int)m.a[0];
}

static int sim_evtchn_alloc_unbound(struct plat_evtchn *b, uint32_t domid)
{
	struct sim_msg m = {.op = SIM_EVT_ALLOC, .a = {((struct sim_evtchn *)b)->handle, domid}};
	return call(S(b->p), &m, NULL, 0, NULL) ? -1 : (int)m.a[0];
}

static int sim_evtchn_unbind(struct plat_evtchn *b, uint32_t port)
{
	struct sim_msg m = {.op = SIM_EVT_UNBIND, .a = {((struct sim_evtchn *)b)->handle, port}};
	return call(S(b->p), &m, NULL, 0, NULL);
}

static int sim_evtchn_notify(struct plat_evtchn *b, uint32_t port)
{
	struct sim_msg m = {.op = SIM_EVT_NOTIFY, .a = {port}};
	return send_msg(S(b->p), &m, NULL, 0);
}

static int sim_evtchn_pending(struct plat_evtchn *b)
{
	uint32_t port;
	ssize_t n = read(((struct sim_evtchn *)b)->pipe, &port, sizeof(port));

	if (n == (ssize_t)sizeof(port))
		return (int)port;
	if (n == 0) /* xensim went away */
		errno = ECONNRESET;
	else if (n > 0)
		errno = EPROTO;
	return -1;
}

static int sim_evtchn_unmask(struct plat_evtchn *b, uint32_t port)
{
	struct sim_msg m = {.op = SIM_EVT_UNMASK, .a = {port}};
	return send_msg(S(b->p), &m, NULL, 0);
}

/* ---- grant mapping ---------------------------------------------------------- */

/* Maps pfns of memfd contiguously: a PROT_NONE reservation, then each page
 * MAP_FIXED over it, so the range holds exactly the granted pages. */
static void *map_pages(int memfd, const uint32_t *pfns, uint32_t count, int writable)
{
	size_t len = (size_t)count * SIM_PAGE_SIZE;
	uint8_t *base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;

	if (base == MAP_FAILED)
		return NULL;
	for (uint32_t i = 0; i < count; i++) {
		/* A run of consecutive pfns is one mmap. */
		uint32_t run = 1;
		while (i + run < count && pfns[i + run] == pfns[i] + run)
			run++;
		if (mmap(base + (size_t)i * SIM_PAGE_SIZE, (size_t)run * SIM_PAGE_SIZE, prot,
		         MAP_SHARED | MAP_FIXED, memfd, (off_t)pfns[i] * SIM_PAGE_SIZE) == MAP_FAILED) {
			int e = errno;
			munmap(base, len);
			errno = e;
			return NULL;
		}
		i += run - 1;
	}
	return base;
}

static struct plat_gnttab *sim_gnttab_open(struct plat *p)
{
	struct sim_gnttab *g = calloc(1, sizeof(*g));

	if (g)
		g->base.p = p;
	return g ? &g->base : NULL;
}

static int unmap_one(struct plat *p, struct mapping **list, void *addr, uint32_t count, int op)
{
	for (struct mapping **m = list; *m; m = &(*m)->next) {
		struct mapping *x = *m;
		if (x->addr != addr)
			continue;
		if (x->count != count) {
			errno = EINVAL;
			return -1;
		}
		munmap(x->addr, (size_t)x->count * SIM_PAGE_SIZE);
		struct sim_msg msg = {.op = (uint32_t)op, .a = {x->handle}, .n = x->refs ? x->count : 0};
		call(S(p), &msg, x->refs, x->refs ? x->count * sizeof(uint32_t) : 0, NULL);
		*m = x->next;
		free(x->refs);
		free(x);
		return 0;
	}
	errno = EINVAL;
	return -1;
}

static void sim_gnttab_close(struct plat_gnttab *b)
{
	struct sim_gnttab *g = (struct sim_gnttab *)b;
	while (g->maps)
		unmap_one(b->p, &g->maps, g->maps->addr, g->maps->count, SIM_UNMAP);
	free(g);
}

static void *sim_gnttab_map(struct plat_gnttab *b, uint32_t domid, const uint32_t *refs,
                            uint32_t count, int writable)
{
	struct sim_gnttab *g = (struct sim_gnttab *)b;
	struct sim *s = S(b->p);
	struct sim_msg m = {.op = SIM_MAP, .a = {domid, (uint32_t)!!writable}, .n = count};
	struct mapping *x;
	int memfd;

	if (count > SIM_MAX_ITEMS) {
		errno = E2BIG;
		return NULL;
	}
	if (call(s, &m, refs, count * sizeof(uint32_t), &memfd) != 0)
		return NULL;
	void *addr = memfd >= 0 && m.n == count && reply_has(s, count)
	                     ? map_pages(memfd, reply_items(s), count, writable)
	                     : NULL;
	int e = errno;
	if (memfd >= 0)
		close(memfd);
	x = addr ? calloc(1, sizeof(*x)) : NULL;
	if (!x) {
		struct sim_msg u = {.op = SIM_UNMAP, .a = {m.a[0]}};
		if (addr)
			munmap(addr, (size_t)count * SIM_PAGE_SIZE);
		call(s, &u, NULL, 0, NULL);
		errno = addr ? ENOMEM : (e ? e : EPROTO);
		return NULL;
	}
	x->addr = addr;
	x->count = count;
	x->handle = m.a[0];
	x->next = g->maps;
	g->maps = x;
	return addr;
}

static int sim_gnttab_unmap(struct plat_gnttab *b, void *addr, uint32_t count)
{
	return unmap_one(b->p, &((struct sim_gnttab *)b)->maps, addr, count, SIM_UNMAP);
}

/* The whole memory of domid (this incarnation), mapped for grant copy. */
static uint8_t *copy_memory(struct sim *s, uint32_t domid, uint32_t incarnation, int memfd)
{
	struct copy_map *victim = &s->cache[0];

	s->tick++;
	for (int i = 0; i < COPY_CACHE; i++) {
		struct copy_map *c = &s->cache[i];
		if (c->base && c->domid == domid) {
			if (c->incarnation == incarnation) {
				c->last_use = s->tick;
				return c->base;
			}
			victim = c; /* a dead incarnation: replace it */
			break;
		}
		if (!c->base || c->last_use < victim->last_use)
			victim = c;
	}
	if (memfd < 0)
		return NULL;
	uint8_t *base = mmap(NULL, MEM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (victim->base)
		munmap(victim->base, MEM_BYTES);
	*victim = (struct copy_map){domid, incarnation, base, s->tick};
	return base;
}

static int sim_gnttab_copy(struct plat_gnttab *b, uint32_t domid, int to_guest,
                           struct plat_copy_seg *segs, uint32_t count)
{
	struct sim *s = S(b->p);
	struct sim_copy_seg req[256];

	for (uint32_t done = 0; done < count;) {
		uint32_t n = count - done < 256 ? count - done : 256;
		struct sim_msg m = {.op = SIM_COPY, .a = {domid}, .n = n};
		int memfd;

		for (uint32_t i = 0; i < n; i++)
			req[i] = (struct sim_copy_seg){domid, segs[done + i].ref, segs[done + i].offset,
			                               segs[done + i].len, (uint32_t)!!to_guest};
		if (call(s, &m, req, n * sizeof(req[0]), &memfd) != 0) {
			if (errno != ESRCH)
				return -1;
			/* The domain is gone: every segment fails, as on Xen. */
			for (uint32_t i = 0; i < n; i++)
				segs[done + i].status = SIM_GNTST_BAD_DOMAIN;
			done += n;
			continue;
		}
		if (!reply_has(s, 2 * (size_t)n)) {
			if (memfd >= 0)
				close(memfd);
			errno = EPROTO;
			return -1;
		}
		const uint32_t *items = reply_items(s); /* status, pfn pairs */
		uint8_t *mem = copy_memory(s, domid, m.a[1], memfd);
		if (memfd >= 0)
			close(memfd);
		for (uint32_t i = 0; i < n; i++) {
			struct plat_copy_seg *g = &segs[done + i];
			int32_t st = (int32_t)items[2 * i];
			if (st == SIM_GNTST_OKAY && !mem)
				st = SIM_GNTST_BAD_DOMAIN;
			g->status = (int16_t)st;
			if (st != SIM_GNTST_OKAY)
				continue;
			uint8_t *page = mem + (size_t)items[2 * i + 1] * SIM_PAGE_SIZE + g->offset;
			if (to_guest)
				memcpy(page, g->local, g->len);
			else
				memcpy(g->local, page, g->len);
		}
		done += n;
	}
	return 0;
}

/* ---- grant sharing ------------------------------------------------------------ */

static struct plat_gntshr *sim_gntshr_open(struct plat *p)
{
	struct sim_gntshr *g = calloc(1, sizeof(*g));

	if (g)
		g->base.p = p;
	return g ? &g->base : NULL;
}

static void sim_gntshr_close(struct plat_gntshr *b)
{
	struct sim_gntshr *g = (struct sim_gntshr *)b;
	while (g->maps)
		unmap_one(b->p, &g->maps, g->maps->addr, g->maps->count, SIM_UNSHARE);
	free(g);
}

/* This process's view of the pages gone, the grants left to the domain. */
static void sim_gntshr_leave(struct plat_gntshr *b)
{
	struct sim_gntshr *g = (struct sim_gntshr *)b;
	while (g->maps) {
		struct mapping *x = g->maps;
		g->maps = x->next;
		munmap(x->addr, (size_t)x->count * SIM_PAGE_SIZE);
		free(x->refs);
		free(x);
	}
	free(g);
}

static void *sim_gntshr_share(struct plat_gntshr *b, uint32_t domid, uint32_t count,
                              uint32_t *refs, int writable)
{
	struct sim_gntshr *g = (struct sim_gntshr *)b;
	struct sim *s = S(b->p);
	struct sim_msg m = {.op = SIM_SHARE, .a = {domid, (uint32_t)!!writable}, .n = count};
	uint32_t *pfns;
	struct mapping *x;

	if (count > SIM_MAX_ITEMS) {
		errno = E2BIG;
		return NULL;
	}
	if (call(s, &m, NULL, 0, NULL) != 0)
		return NULL;
	if (m.n != count || !reply_has(s, 2 * (size_t)count)) {
		errno = EPROTO;
		return NULL;
	}
	pfns = malloc(count * sizeof(*pfns));
	x = calloc(1, sizeof(*x));
	uint32_t *myrefs = malloc(count * sizeof(*myrefs));
	if (!pfns || !x || !myrefs) {
		free(pfns);
		free(x);
		free(myrefs);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < count; i++) {
		refs[i] = myrefs[i] = reply_items(s)[2 * i];
		pfns[i] = reply_items(s)[2 * i + 1];
	}
	/* Our own pages: always writable for us. */
	x->addr = map_pages(s->memfd, pfns, count, 1);
	free(pfns);
	if (!x->addr) {
		struct sim_msg u = {.op = SIM_UNSHARE, .n = count};
		call(s, &u, myrefs, count * sizeof(uint32_t), NULL);
		free(myrefs);
		free(x);
		return NULL;
	}
	memset(x->addr, 0, (size_t)count * SIM_PAGE_SIZE);
	x->count = count;
	x->refs = myrefs;
	x->next = g->maps;
	g->maps = x;
	return x->addr;
}

static int sim_gntshr_unshare(struct plat_gntshr *b, void *addr, uint32_t count)
{
	return unmap_one(b->p, &((struct sim_gntshr *)b)->maps, addr, count, SIM_UNSHARE);
}

/* ---- domains --------------------------------------------------------------------- */

static int sim_domain_create(struct plat *p, const char *name, uint32_t *domid, char *err, size_t errlen)
{
	struct sim *s = S(p);
	char items[256];
	size_t len = strlen(name) + 2; /* name \0 uuid (empty: xensim makes one) \0 */
	struct sim_msg m = {.op = SIM_DOM_CREATE, .n = (uint32_t)len};

	if (len > sizeof(items)) {
		snprintf(err, errlen, "domain name too long: %zu bytes", len - 2);
		return -1;
	}
	memset(items, 0, len);
	memcpy(items, name, len - 2);
	if (call(s, &m, items, len, NULL) != 0) {
		/* xensim says why in the reply's text */
		size_t n = s->rlen > sizeof(struct sim_msg) ? s->rlen - sizeof(struct sim_msg) : 0;
		if (n && m.id == s->next_id)
			snprintf(err, errlen, "xensim: %.*s", (int)n, (const char *)reply_items(s));
		else
			snprintf(err, errlen, "xensim: %s", strerror(errno));
		return -1;
	}
	*domid = m.a[0];
	return 0;
}

static int sim_domain_destroy(struct plat *p, uint32_t domid)
{
	struct sim_msg m = {.op = SIM_DOM_DESTROY, .a = {domid}};
	return call(S(p), &m, NULL, 0, NULL);
}

/* items: cwd \0 console (empty: xensim's default) \0 argv0 \0 ... */
static int sim_domain_exec(struct plat *p, uint32_t domid, char *const argv[], char *err, size_t errlen)
{
	struct sim *s = S(p);
	static char items[16384];
	char cwd[4096];
	size_t len = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	const char *head[2] = {cwd, ""};
	for (int i = 0; i < 2 + 256 && (i < 2 || argv[i - 2]); i++) {
		const char *part = i < 2 ? head[i] : argv[i - 2];
		size_t l = strlen(part) + 1;
		if (len + l > sizeof(items)) {
			snprintf(err, errlen, "the command line is too long (at most %zu bytes)", sizeof(items));
			return -1;
		}
		memcpy(items + len, part, l);
		len += l;
	}
	struct sim_msg m = {.op = SIM_DOM_EXEC, .a = {domid}, .n = (uint32_t)len};
	if (call(s, &m, items, len, NULL) != 0) {
		size_t n = s->rlen > sizeof(struct sim_msg) ? s->rlen - sizeof(struct sim_msg) : 0;
		snprintf(err, errlen, "xensim cannot run %s: %.*s", argv[0], (int)n,
		         n ? (const char *)reply_items(s) : strerror(errno));
		return -1;
	}
	return 0;
}

/* The calls of the other parts (platform_sim_int.h). */
int sim_send(struct plat *p, struct sim_msg *m)
{
	return send_msg(S(p), m, NULL, 0);
}

int sim_call(struct plat *p, struct sim_msg *m, const void *items, size_t len, int *fd_out,
             const void **reply, size_t *reply_len)
{
	struct sim *s = S(p);
	int rc = call(s, m, items, len, fd_out);
	*reply = s->buf + sizeof(struct sim_msg);
	*reply_len = s->rlen > sizeof(struct sim_msg) ? s->rlen - sizeof(struct sim_msg) : 0;
	return rc;
}

const struct plat_ops plat_sim_ops = {
	.name = "sim",
	.open = sim_open,
	.close = sim_close,
	.xs_open = sim_xs_open,
	.evtchn_open = sim_evtchn_open,
	.evtchn_close = sim_evtchn_close,
	.evtchn_fd = sim_evtchn_fd,
	.evtchn_bind_interdomain = sim_evtchn_bind_interdomain,
	.evtchn_alloc_unbound = sim_evtchn_alloc_unbound,
	.evtchn_unbind = sim_evtchn_unbind,
	.evtchn_notify = sim_evtchn_notify,
	.evtchn_pending = sim_evtchn_pending,
	.evtchn_unmask = sim_evtchn_unmask,
	.gnttab_open = sim_gnttab_open,
	.gnttab_close = sim_gnttab_close,
	.gnttab_map = sim_gnttab_map,
	.gnttab_unmap = sim_gnttab_unmap,
	.gnttab_copy = sim_gnttab_copy,
	.gntshr_open = sim_gntshr_open,
	.gntshr_close = sim_gntshr_close,
	.gntshr_share = sim_gntshr_share,
	.gntshr_unshare = sim_gntshr_unshare,
	.gntshr_leave = sim_gntshr_leave,
	.domain_create = sim_domain_create,
	.domain_destroy = sim_domain_destroy,
	.domain_exec = sim_domain_exec,
	.inspect_open = sim_inspect_open,
	.inspect_close = sim_inspect_close,
	.inspect_pause = sim_inspect_pause,
	.inspect_unpause = sim_inspect_unpause,
	.inspect_vcpus = sim_inspect_vcpus,
	.inspect_idle = sim_inspect_idle,
	.inspect_ready = sim_inspect_ready,
	.inspect_wait = sim_inspect_wait,
	.inspect_ended = sim_inspect_ended,
	.inspect_regs = sim_inspect_regs,
	.inspect_read = sim_inspect_read,
	.domain_maps = sim_domain_maps,
};
