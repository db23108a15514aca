/*
 * platform_xen.c - the Xen seam on real Xen: libxenevtchn, libxengnttab
 * (and its xengntshr half), libxenstore, and libxl (as xl itself) for
 * one question about a domain: was it shut down to be saved?  Thin on purpose: every call maps
 * one to one onto the library, so behaviour on Xen is the libraries'.
 * Looking into a domain (libxenctrl, libxenforeignmemory, our own
 * page-table walk) is platform_xen_inspect.c's; its entries are in the
 * ops table below.
 *
 * May call: the seam's types (platform.h), libxenevtchn, libxengnttab,
 * libxenstore, the inspector
 * (platform_xen_inspect.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libxl.h>
#include <xenevtchn.h>
#include <xentoollog.h>
#include <xengnttab.h>
#include <xenstore.h>

#include <xen/grant_table.h>

#include "platform.h"
#include "platform_xen_inspect.h"

struct xen_evtchn {
	struct plat_evtchn base;
	xenevtchn_handle *h;
};

struct xen_gnttab {
	struct plat_gnttab base;
	xengnttab_handle *h;
};

struct xen_gntshr {
	struct plat_gntshr base;
	xengntshr_handle *h;
};

static int xen_open(struct plat *p, const struct plat_opts *o, char *err, size_t errlen)
{
	(void)o;
	if (access("/dev/xen/evtchn", R_OK | W_OK) != 0) {
		snprintf(err, errlen, "/dev/xen/evtchn: %s (not running in a Xen dom0? load "
		                      "xen-evtchn, or use --platform sim)",
		         strerror(errno));
		return -1;
	}
	p->domid = 0; /* profsvc runs in dom0 on Xen */
	return 0;
}

/* libxl's context, opened on first use: a backend that never sees a
 * device removed from a live domain never needs it. */
struct xen_impl {
	xentoollog_logger_stdiostream *log;
	libxl_ctx *ctx;
};

static void xen_close(struct plat *p)
{
	struct xen_impl *x = p->impl;
	if (!x)
		return;
	if (x->ctx)
		libxl_ctx_free(x->ctx);
	if (x->log)
		xtl_logger_destroy((xentoollog_logger *)x->log);
	free(x);
	p->impl = NULL;
}

/* The domain's shutdown reason, from the hypervisor through libxl:
 * xenstore does not say why a domain stopped. */
static int xen_domain_suspended(struct plat *p, uint32_t domid)
{
	struct xen_impl *x = p->impl;
	if (!x) {
		if (!(x = calloc(1, sizeof(*x))))
			return -1;
		p->impl = x;
		x->log = xtl_createlogger_stdiostream(stderr, XTL_ERROR, 0);
		if (!x->log || libxl_ctx_alloc(&x->ctx, LIBXL_VERSION, 0, (xentoollog_logger *)x->log) != 0) {
			x->ctx = NULL;
			errno = EIO;
			return -1;
		}
	}
	if (!x->ctx) {
		errno = EIO;
		return -1;
	}
	libxl_dominfo info;
	libxl_dominfo_init(&info);
	int rc = libxl_domain_info(x->ctx, &info, domid);
	int saved = rc == 0 && info.shutdown && info.shutdown_reason == LIBXL_SHUTDOWN_REASON_SUSPEND;
	libxl_dominfo_dispose(&info);
	if (rc != 0 && rc != ERROR_DOMAIN_NOTFOUND) {
		errno = EIO;
		return -1;
	}
	return saved;
}

static struct xs_handle *xen_xs_open(struct plat *p)
{
	(void)p;
	return xs_open(0);
}

static struct plat_evtchn *xen_evtchn_open(struct plat *p)
{
	struct xen_evtchn *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->base.p = p;
	e->h = xenevtchn_open(NULL, 0);
	if (!e->h) {
		free(e);
		return NULL;
	}
	/* pending() reads the device: never let it block the event loop. */
	int fd = xenevtchn_fd(e->h);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return &e->base;
}

static void xen_evtchn_close(struct plat_evtchn *b)
{
	struct xen_evtchn *e = (struct xen_evtchn *)b;
	xenevtchn_close(e->h);
	free(e);
}

static int xen_evtchn_fd(struct plat_evtchn *b)
{
	return xenevtchn_fd(((struct xen_evtchn *)b)->h);
}

static int xen_evtchn_bind_interdomain(struct plat_evtchn *b, uint32_t domid, uint32_t port)
{
	return xenevtchn_bind_interdomain(((struct xen_evtchn *)b)->h, domid, port);
}

static int xen_evtchn_alloc_unbound(struct plat_evtchn *b, uint32_t domid)
{
	return xenevtchn_bind_unbound_port(((struct xen_evtchn *)b)->h, domid);
}

static int xen_evtchn_unbind(struct plat_evtchn *b, uint32_t port)
{
	return xenevtchn_unbind(((struct xen_evtchn *)b)->h, port);
}

static int xen_evtchn_notify(struct plat_evtchn *b, uint32_t port)
{
	return xenevtchn_notify(((struct xen_evtchn *)b)->h, port);
}

static int xen_evtchn_pending(struct plat_evtchn *b)
{
	return xenevtchn_pending(((struct xen_evtchn *)b)->h);
}

static int xen_evtchn_unmask(struct plat_evtchn *b, uint32_t port)
{
	return xenevtchn_unmask(((struct xen_evtchn *)b)->h, port);
}

static struct plat_gnttab *xen_gnttab_open(struct plat *p)
{
	struct xen_gnttab *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->base.p = p;
	g->h = xengnttab_open(NULL, 0);
	if (!g->h) {
		free(g);
		return NULL;
	}
	return &g->base;
}

static void xen_gnttab_close(struct plat_gnttab *b)
{
	struct xen_gnttab *g = (struct xen_gnttab *)b;
	xengnttab_close(g->h);
	free(g);
}

static void *xen_gnttab_map(struct plat_gnttab *b, uint32_t domid, const uint32_t *refs,
                            uint32_t count, int writable)
{
	/* The library takes a non-const array it does not modify. */
	uint32_t *copy = malloc(count * sizeof(*copy));
	void *addr;

	if (!copy)
		return NULL;
	memcpy(copy, refs, count * sizeof(*copy));
	addr = xengnttab_map_domain_grant_refs(((struct xen_gnttab *)b)->h, count, domid, copy,
	                                       writable ? PROT_READ | PROT_WRITE : PROT_READ);
	free(copy);
	return addr;
}

static int xen_gnttab_unmap(struct plat_gnttab *b, void *addr, uint32_t count)
{
	return xengnttab_unmap(((struct xen_gnttab *)b)->h, addr, count);
}

static int xen_gnttab_copy(struct plat_gnttab *b, uint32_t domid, int to_guest,
                           struct plat_copy_seg *segs, uint32_t count)
{
	xengnttab_grant_copy_segment_t *x = calloc(count ? count : 1, sizeof(*x));
	int rc;

	if (!x)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		union xengnttab_copy_ptr guest = {.foreign = {segs[i].ref, segs[i].offset,
		                                              (uint16_t)domid}};
		if (to_guest) {
			x[i].source.virt = segs[i].local;
			x[i].dest = guest;
			x[i].flags = GNTCOPY_dest_gref;
		} else {
			x[i].source = guest;
			x[i].dest.virt = segs[i].local;
			x[i].flags = GNTCOPY_source_gref;
		}
		x[i].len = segs[i].len;
	}
	rc = xengnttab_grant_copy(((struct xen_gnttab *)b)->h, count, x);
	for (uint32_t i = 0; i < count; i++)
		segs[i].status = rc == 0 ? x[i].status : -1;
	free(x);
	return rc;
}

static struct plat_gntshr *xen_gntshr_open(struct plat *p)
{
	struct xen_gntshr *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->base.p = p;
	s->h = xengntshr_open(NULL, 0);
	if (!s->h) {
		free(s);
		return NULL;
	}
	return &s->base;
}

static void xen_gntshr_close(struct plat_gntshr *b)
{
	struct xen_gntshr *s = (struct xen_gntshr *)b;
	xengntshr_close(s->h);
	free(s);
}

static void *xen_gntshr_share(struct plat_gntshr *b, uint32_t domid, uint32_t count,
                              uint32_t *refs, int writable)
{
	return xengntshr_share_pages(((struct xen_gntshr *)b)->h, domid, (int)count, refs, writable);
}

static int xen_gntshr_unshare(struct plat_gntshr *b, void *addr, uint32_t count)
{
	return xengntshr_unshare(((struct xen_gntshr *)b)->h, addr, count);
}

const struct plat_ops plat_xen_ops = {
	.name = "xen",
	.open = xen_open,
	.close = xen_close,
	.xs_open = xen_xs_open,
	.evtchn_open = xen_evtchn_open,
	.evtchn_close = xen_evtchn_close,
	.evtchn_fd = xen_evtchn_fd,
	.evtchn_bind_interdomain = xen_evtchn_bind_interdomain,
	.evtchn_alloc_unbound = xen_evtchn_alloc_unbound,
	.evtchn_unbind = xen_evtchn_unbind,
	.evtchn_notify = xen_evtchn_notify,
	.evtchn_pending = xen_evtchn_pending,
	.evtchn_unmask = xen_evtchn_unmask,
	.gnttab_open = xen_gnttab_open,
	.gnttab_close = xen_gnttab_close,
	.gnttab_map = xen_gnttab_map,
	.gnttab_unmap = xen_gnttab_unmap,
	.gnttab_copy = xen_gnttab_copy,
	.gntshr_open = xen_gntshr_open,
	.gntshr_close = xen_gntshr_close,
	.gntshr_share = xen_gntshr_share,
	.gntshr_unshare = xen_gntshr_unshare,
	.domain_suspended = xen_domain_suspended,
	.inspect_open = xen_inspect_open,
	.inspect_close = xen_inspect_close,
	.inspect_pause = xen_inspect_pause,
	.inspect_unpause = xen_inspect_unpause,
	.inspect_vcpus = xen_inspect_vcpus,
	.inspect_idle = xen_inspect_idle,
	.inspect_regs = xen_inspect_regs,
	.inspect_read = xen_inspect_read,
};
