/*
 * platform.c - choosing an implementation of the Xen seam and dispatching
 * to it (see platform.h).
 *
 * May call: the implementations (platform_xen.c, platform_sim.c) through
 * their ops tables.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

int plat_parse_kind(const char *name, enum plat_kind *out)
{
	if (!name || !*name) {
		*out = access("/dev/xen/evtchn", F_OK) == 0 ? PLAT_XEN : PLAT_SIM;
		return 0;
	}
	if (strcmp(name, "xen") == 0) {
		*out = PLAT_XEN;
		return 0;
	}
	if (strcmp(name, "sim") == 0) {
		*out = PLAT_SIM;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

const char *plat_kind_name(enum plat_kind k)
{
	return k == PLAT_XEN ? "xen" : "sim";
}

int plat_open(struct plat **out, const struct plat_opts *opts, char *err, size_t errlen)
{
	struct plat *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->kind = opts->kind;
	if (opts->kind == PLAT_XEN) {
#ifdef HAVE_XEN
		p->ops = &plat_xen_ops;
#else
		snprintf(err, errlen, "this build has no real-Xen platform (configure found no "
		                      "libxen-dev); use --platform sim");
		free(p);
		return -1;
#endif
	} else {
		p->ops = &plat_sim_ops;
	}
	if (p->ops->open(p, opts, err, errlen) != 0) {
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void plat_close(struct plat *p)
{
	if (!p)
		return;
	p->ops->close(p);
	free(p);
}

enum plat_kind plat_kind(const struct plat *p)
{
	return p->kind;
}

uint32_t plat_domid(const struct plat *p)
{
	return p->domid;
}

struct xs_handle *plat_xs_open(struct plat *p)
{
	return p->ops->xs_open(p);
}

struct plat_evtchn *plat_evtchn_open(struct plat *p)
{
	return p->ops->evtchn_open(p);
}

void plat_evtchn_close(struct plat_evtchn *e)
{
	if (e)
		e->p->ops->evtchn_close(e);
}

int plat_evtchn_fd(struct plat_evtchn *e)
{
	return e->p->ops->evtchn_fd(e);
}

int plat_evtchn_bind_interdomain(struct plat_evtchn *e, uint32_t domid, uint32_t remote_port)
{
	return e->p->ops->evtchn_bind_interdomain(e, domid, remote_port);
}

int plat_evtchn_alloc_unbound(struct plat_evtchn *e, uint32_t remote_domid)
{
	return e->p->ops->evtchn_alloc_unbound(e, remote_domid);
}

int plat_evtchn_unbind(struct plat_evtchn *e, uint32_t port)
{
	return e->p->ops->evtchn_unbind(e, port);
}

int plat_evtchn_notify(struct plat_evtchn *e, uint32_t port)
{
	return e->p->ops->evtchn_notify(e, port);
}

int plat_evtchn_pending(struct plat_evtchn *e)
{
	return e->p->ops->evtchn_pending(e);
}

int plat_evtchn_unmask(struct plat_evtchn *e, uint32_t port)
{
	return e->p->ops->evtchn_unmask(e, port);
}

struct plat_gnttab *plat_gnttab_open(struct plat *p)
{
	return p->ops->gnttab_open(p);
}

void plat_gnttab_close(struct plat_gnttab *g)
{
	if (g)
		g->p->ops->gnttab_close(g);
}

void *plat_gnttab_map(struct plat_gnttab *g, uint32_t domid, const uint32_t *refs, uint32_t count,
                      int writable)
{
	if (count == 0) {
		errno = EINVAL;
		return NULL;
	}
	return g->p->ops->gnttab_map(g, domid, refs, count, writable);
}

int plat_gnttab_unmap(struct plat_gnttab *g, void *addr, uint32_t count)
{
	return g->p->ops->gnttab_unmap(g, addr, count);
}

int plat_gnttab_copy(struct plat_gnttab *g, uint32_t domid, int to_guest,
                     struct plat_copy_seg *segs, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		if ((uint32_t)segs[i].offset + segs[i].len > PLAT_PAGE_SIZE) {
			errno = EINVAL;
			return -1;
		}
	return g->p->ops->gnttab_copy(g, domid, to_guest, segs, count);
}

struct plat_gntshr *plat_gntshr_open(struct plat *p)
{
	return p->ops->gntshr_open(p);
}

void plat_gntshr_close(struct plat_gntshr *s)
{
	if (s)
		s->p->ops->gntshr_close(s);
}

void *plat_gntshr_share(struct plat_gntshr *s, uint32_t domid, uint32_t count, uint32_t *refs,
                        int writable)
{
	if (count == 0) {
		errno = EINVAL;
		return NULL;
	}
	return s->p->ops->gntshr_share(s, domid, count, refs, writable);
}

int plat_gntshr_unshare(struct plat_gntshr *s, void *addr, uint32_t count)
{
	return s->p->ops->gntshr_unshare(s, addr, count);
}

void plat_gntshr_leave(struct plat_gntshr *s)
{
	if (s)
		(s->p->ops->gntshr_leave ? s->p->ops->gntshr_leave : s->p->ops->gntshr_close)(s);
}

int plat_domain_create(struct plat *p, const char *name, uint32_t *domid, char *err, size_t errlen)
{
	if (!p->ops->domain_create) {
		snprintf(err, errlen, "on %s, domains are created by the toolstack (xl), not through profsvc",
		         p->ops->name);
		return -1;
	}
	return p->ops->domain_create(p, name, domid, err, errlen);
}

int plat_domain_destroy(struct plat *p, uint32_t domid)
{
	if (!p->ops->domain_destroy) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return p->ops->domain_destroy(p, domid);
}

int plat_domain_exec(struct plat *p, uint32_t domid, char *const argv[], char *err, size_t errlen)
{
	if (!p->ops->domain_exec) {
		snprintf(err, errlen, "the %s platform runs no programs as domains", p->ops->name);
		errno = ENOSYS;
		return -1;
	}
	return p->ops->domain_exec(p, domid, argv, err, errlen);
}

int plat_domain_suspended(struct plat *p, uint32_t domid)
{
	return p->ops->domain_suspended ? p->ops->domain_suspended(p, domid) : 0;
}

/* ---- looking into a domain ------------------------------------------------------ */

struct plat_inspect *plat_inspect_open(struct plat *p, uint32_t domid, char *err, size_t errlen)
{
	if (!p->ops->inspect_open) {
		snprintf(err, errlen, "the %s platform cannot look into domains", p->ops->name);
		errno = ENOSYS;
		return NULL;
	}
	return p->ops->inspect_open(p, domid, err, errlen);
}

void plat_inspect_close(struct plat_inspect *in)
{
	if (in)
		in->p->ops->inspect_close(in);
}

int plat_inspect_pause(struct plat_inspect *in)
{
	return in->p->ops->inspect_pause(in);
}

int plat_inspect_unpause(struct plat_inspect *in)
{
	return in->p->ops->inspect_unpause(in);
}

int plat_inspect_vcpus(struct plat_inspect *in)
{
	return in->p->ops->inspect_vcpus(in);
}

int plat_inspect_idle(struct plat_inspect *in)
{
	return in->p->ops->inspect_idle ? in->p->ops->inspect_idle(in) : -1;
}

int plat_inspect_ready(struct plat *p, uint32_t domid, char *err, size_t errlen)
{
	return p->ops->inspect_ready ? p->ops->inspect_ready(p, domid, err, errlen) : 0;
}

int plat_inspect_ended(struct plat_inspect *in)
{
	return in->p->ops->inspect_ended ? in->p->ops->inspect_ended(in) : 0;
}

int plat_inspect_wait(struct plat *p, int64_t until_us, int wake_fd)
{
	if (p && p->ops->inspect_wait)
		return p->ops->inspect_wait(p, until_us, wake_fd);
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		int64_t now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		if (now >= until_us)
			return 0;
		struct pollfd pf = {wake_fd, POLLIN, 0};
		int ms = (int)((until_us - now) / 1000);
		if (ms == 0) {
			/* under a millisecond: slept, then looked at */
			ts = (struct timespec){0, (long)(until_us - now) * 1000};
			nanosleep(&ts, NULL);
			ms = 0;
		}
		int rc = poll(&pf, wake_fd >= 0, ms);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

int plat_inspect_regs(struct plat_inspect *in, uint32_t vcpu, struct plat_vcpu_regs *out)
{
	return in->p->ops->inspect_regs(in, vcpu, out);
}

long plat_inspect_read(struct plat_inspect *in, uint64_t cr3, uint64_t va, void *buf, size_t len)
{
	return in->p->ops->inspect_read(in, cr3, va, buf, len);
}

char *plat_domain_maps(struct plat *p, uint32_t domid, size_t *len, char *err, size_t errlen)
{
	*len = 0;
	if (!p->ops->domain_maps) {
		snprintf(err, errlen, "domain %u: the %s platform does not tell a domain's mappings", domid,
		         p->ops->name);
		errno = ENOTSUP;
		return NULL;
	}
	return p->ops->domain_maps(p, domid, len, err, errlen);
}
