/*
 * blkfront.c - guest-side blkif frontend (see blkfront.h).
 *
 * We are the guest here, on an x86_64 host: requests are written in the
 * native (x86_64) layout with the structs of xen/io/blkif.h, which is what
 * a 64-bit PV guest's blkfront writes.  Data travels in a pool of pages
 * granted to the backend once at connect (as HaLVM's single data page).
 *
 * May call: the platform seam (platform/: grants, event channels),
 * xenstore.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>

#include <xen/io/blkif.h>

#include "blkfront.h"

#define NATIVE_SLOT sizeof(union blkif_sring_entry)
/* Request ids carry a tag in their upper half (real frontends put pointers
 * there): a response with a foreign id is ignored, and response padding
 * that overlaps the request's id keeps recognisable bytes (XSA-216). */
#define ID_TAG 0xA5A5A5A5ull
#define MAKE_ID(i) ((ID_TAG << 32) | (uint64_t)(i))
#define RING_HDR 64
#define MAX_ORDER 4u
#define BLKIF_SEGS_PER_INDIRECT_PAGE_FOR_STUB 256u /* what backends advertise */

struct inflight {
	struct bf_req *r;
	unsigned pages[BLKIF_MAX_SEGMENTS_PER_REQUEST * 24 + 1];
	unsigned npages;
	int used;
};

struct blkfront {
	struct plat *p;
	struct xs_handle *xs;
	struct plat_gntshr *shr;
	struct plat_evtchn *evt;
	uint32_t devid, backend_id;
	char fpath[96], bpath[128];
	volatile uint8_t *sring;
	uint32_t ring_pages, slots;
	size_t slot_size;        /* 112, or 108 for an x86_32-abi ring */
	uint32_t ring_refs[1u << MAX_ORDER];
	uint32_t req_prod_pvt, rsp_cons;
	int backend_closed;      /* the backend went to Closing while we waited */
	int port;
	uint64_t sectors;
	uint8_t *pool;
	uint32_t *pool_refs;
	unsigned npages;
	uint8_t *page_used;
	struct inflight *inflight; /* indexed by request id */
	unsigned outstanding;
	int timeout_ms;
};

static void set_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static char *get(struct blkfront *f, const char *dir, const char *node)
{
	char path[256];
	unsigned len;
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_read(f->xs, XBT_NULL, path, &len);
}

static int put(struct blkfront *f, xs_transaction_t t, const char *node, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int put(struct blkfront *f, xs_transaction_t t, const char *node, const char *fmt, ...)
{
	char path[256], val[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", f->fpath, node);
	return xs_write(f->xs, t, path, val, (unsigned)strlen(val)) ? 0 : -1;
}

static int backend_state(struct blkfront *f)
{
	char *v = get(f, f->bpath, "state");
	int s = v ? atoi(v) : -1;
	free(v);
	return s;
}

/* Polls the backend's state (HaLVM does plain reads, no watch). */
static int wait_backend(struct blkfront *f, int lo, int hi)
{
	for (int waited = 0; waited < f->timeout_ms; waited += 2) {
		int s = backend_state(f);
		if (s >= lo && s <= hi)
			return s;
		usleep(2000);
	}
	return -1;
}

static uint32_t load(volatile uint8_t *p, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(p + off), __ATOMIC_ACQUIRE);
}

static void store32(volatile uint8_t *p, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(p + off), v, __ATOMIC_RELEASE);
}

static int discover(struct blkfront *f, const char *vdev, char *err, size_t errlen)
{
	unsigned n;
	/* Relative to our home, like the HaLVM runtime. */
	char **ids = xs_directory(f->xs, XBT_NULL, "device/vbd", &n);

	for (unsigned i = 0; ids && i < n; i++) {
		char dir[96];
		snprintf(dir, sizeof(dir), "device/vbd/%s", ids[i]);
		char *be = get(f, dir, "backend");
		char *dev = be ? get(f, be, "dev") : NULL;
		int match = dev && strncmp(dev, vdev, strlen(vdev)) == 0;
		if (match) {
			snprintf(f->fpath, sizeof(f->fpath), "%s", dir);
			snprintf(f->bpath, sizeof(f->bpath), "%s", be);
			f->devid = (uint32_t)strtoul(ids[i], NULL, 10);
			char *bid = get(f, dir, "backend-id");
			f->backend_id = bid ? (uint32_t)strtoul(bid, NULL, 10) : 0;
			free(bid);
		}
		free(be);
		free(dev);
		if (match) {
			free(ids);
			return 0;
		}
	}
	free(ids);
	set_err(err, errlen, "no device/vbd entry whose backend dev is %s", vdev);
	return -1;
}

/* The ring's page order: as asked, at most what a Linux guest's backend
 * offers once in InitWait (HaLVM does not wait); -1 when it never is. */
static int ring_order(struct blkfront *f, const struct blkfront_opts *o, uint32_t *order,
                      char *err, size_t errlen)
{
	*order = o->ring_order > MAX_ORDER ? MAX_ORDER : o->ring_order;
	if (o->halvm)
		return 0;
	/* Linux: wait for the backend's features (InitWait). */
	if (wait_backend(f, 2, 2) < 0) {
		set_err(err, errlen, "backend %s never reached InitWait", f->bpath);
		return -1;
	}
	char *mo = get(f, f->bpath, "max-ring-page-order");
	uint32_t max = mo ? (uint32_t)strtoul(mo, NULL, 10) : 0;
	free(mo);
	if (*order > max)
		*order = max;
	return 0;
}

/* The shared ring, the data pages and the event channel. */
static int ring_share(struct blkfront *f, const struct blkfront_opts *o, uint32_t order, char *err,
                      size_t errlen)
{
	f->ring_pages = 1u << order;
	/* A 32-bit guest's slots are 108 bytes; only raw requests fit them. */
	f->slot_size = o->protocol && !strcmp(o->protocol, "x86_32-abi") ? 108 : NATIVE_SLOT;
	size_t n = (f->ring_pages * 4096 - RING_HDR) / f->slot_size;
	f->slots = 1;
	while (f->slots * 2 <= n)
		f->slots *= 2;
	f->shr = plat_gntshr_open(f->p);
	f->evt = plat_evtchn_open(f->p);
	if (!f->shr || !f->evt) {
		set_err(err, errlen, "cannot open grant sharing/event channels: %s", strerror(errno));
		return -1;
	}
	f->sring = plat_gntshr_share(f->shr, f->backend_id, f->ring_pages, f->ring_refs, 1);
	f->npages = o->data_pages ? o->data_pages : 64;
	f->pool_refs = calloc(f->npages, sizeof(*f->pool_refs));
	f->page_used = calloc(f->npages, 1);
	f->inflight = calloc(f->slots, sizeof(*f->inflight));
	if (!f->sring || !f->pool_refs || !f->page_used || !f->inflight ||
	    !(f->pool = plat_gntshr_share(f->shr, f->backend_id, f->npages, f->pool_refs, 1))) {
		set_err(err, errlen, "cannot share pages with the backend: %s", strerror(errno));
		return -1;
	}
	/* SHARED_RING_INIT */
	memset((void *)f->sring, 0, RING_HDR);
	store32(f->sring, 4, 1);  /* req_event */
	store32(f->sring, 12, 1); /* rsp_event */
	f->port = plat_evtchn_alloc_unbound(f->evt, f->backend_id);
	if (f->port < 0) {
		set_err(err, errlen, "cannot allocate an event channel: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The ring and channel published in our xenstore nodes, state Initialised. */
static void ring_publish(struct blkfront *f, const struct blkfront_opts *o, uint32_t order)
{
	if (o->halvm) {
		/* The HaLVM order: three plain writes, no transaction, no protocol
		 * unless asked, and no waiting for InitWait first. */
		put(f, XBT_NULL, "ring-ref", "%u", f->ring_refs[0]);
		put(f, XBT_NULL, "event-channel", "%d", f->port);
		if (o->protocol)
			put(f, XBT_NULL, "protocol", "%s", o->protocol);
		put(f, XBT_NULL, "state", "3");
		return;
	}
	for (;;) {
		xs_transaction_t t = xs_transaction_start(f->xs);
		if (order == 0) {
			put(f, t, "ring-ref", "%u", f->ring_refs[0]);
		} else {
			put(f, t, "ring-page-order", "%u", order);
			for (uint32_t i = 0; i < f->ring_pages; i++) {
				char node[32];
				snprintf(node, sizeof(node), "ring-ref%u", i);
				put(f, t, node, "%u", f->ring_refs[i]);
			}
		}
		put(f, t, "event-channel", "%d", f->port);
		if (o->protocol)
			put(f, t, "protocol", "%s", o->protocol);
		put(f, t, "state", "3");
		if (xs_transaction_end(f->xs, t, false) || errno != EAGAIN)
			break;
	}
}

/* Waits for Connected, reads the disk's size and says Connected too. */
static int ring_connect(struct blkfront *f, char *err, size_t errlen)
{
	if (wait_backend(f, 4, 4) < 0) {
		char *e = get(f, f->bpath, "error");
		set_err(err, errlen, "backend did not connect (state %d)%s%s", backend_state(f),
		        e ? ": " : "", e ? e : "");
		free(e);
		return -1;
	}
	char *sec = get(f, f->bpath, "sectors");
	f->sectors = sec ? strtoull(sec, NULL, 10) : 0;
	free(sec);
	put(f, XBT_NULL, "state", "4");
	return 0;
}

int blkfront_open(struct blkfront **out, struct plat *p, struct xs_handle *xs, const char *vdev,
                  const struct blkfront_opts *o, char *err, size_t errlen)
{
	struct blkfront_opts def = {0};
	struct blkfront *f = calloc(1, sizeof(*f));
	uint32_t order;

	*out = NULL;
	if (!o)
		o = &def;
	if (!f) {
		set_err(err, errlen, "out of memory");
		return -1;
	}
	f->p = p;
	f->xs = xs;
	f->port = -1;
	f->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	if (discover(f, vdev, err, errlen) != 0 || ring_order(f, o, &order, err, errlen) != 0 ||
	    ring_share(f, o, order, err, errlen) != 0)
		goto fail;
	ring_publish(f, o, order);
	if (ring_connect(f, err, errlen) != 0)
		goto fail;
	*out = f;
	return 0;
fail:
	blkfront_close(f, 0);
	return -1;
}

void blkfront_close(struct blkfront *f, int graceful)
{
	if (!f)
		return;
	if (graceful && f->fpath[0]) {
		put(f, XBT_NULL, "state", "5");
		wait_backend(f, 5, 6);
		put(f, XBT_NULL, "state", "6");
		/* Closed, or gone altogether (a detach removes the directory). */
		for (int waited = 0; waited < f->timeout_ms; waited += 2) {
			int st = backend_state(f);
			if (st == 6 || st == -1)
				break;
			usleep(2000);
		}
	}
	if (f->evt) {
		if (f->port >= 0)
			plat_evtchn_unbind(f->evt, (uint32_t)f->port);
		plat_evtchn_close(f->evt);
	}
	if (f->shr) {
		if (f->sring)
			plat_gntshr_unshare(f->shr, (void *)f->sring, f->ring_pages);
		if (f->pool)
			plat_gntshr_unshare(f->shr, f->pool, f->npages);
		plat_gntshr_close(f->shr);
	}
	free(f->pool_refs);
	free(f->page_used);
	free(f->inflight);
	free(f);
}

uint64_t blkfront_sectors(const struct blkfront *f)
{
	return f->sectors;
}

uint32_t blkfront_devid(const struct blkfront *f)
{
	return f->devid;
}

uint32_t blkfront_ring_slots(const struct blkfront *f)
{
	return f->slots;
}

const char *blkfront_backend_path(const struct blkfront *f)
{
	return f->bpath;
}

unsigned blkfront_outstanding(const struct blkfront *f)
{
	return f->outstanding;
}

static volatile void *slot(struct blkfront *f, uint32_t idx)
{
	return f->sring + RING_HDR + (size_t)(idx & (f->slots - 1)) * f->slot_size;
}

static int alloc_pages(struct blkfront *f, unsigned n, unsigned *out)
{
	unsigned got = 0;
	for (unsigned i = 0; i < f->npages && got < n; i++)
		if (!f->page_used[i])
			out[got++] = i;
	if (got < n)
		return -1;
	for (unsigned i = 0; i < n; i++)
		f->page_used[out[i]] = 1;
	return 0;
}

static uint64_t wire_id(const struct bf_req *r, uint32_t slot)
{
	return r->wire_id ? r->wire_id : MAKE_ID(slot);
}

/* A read or write (or a flush with data) into slot s: direct up to
 * BLKIF_MAX_SEGMENTS_PER_REQUEST segments, indirect beyond; its data
 * copied into pool pages for a write. */
static int queue_rw(struct blkfront *f, struct bf_req *r, struct inflight *in, volatile void *s)
{
	unsigned nseg = (r->nsect + 7) / 8;
	int indirect = nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST;
	unsigned need = nseg + (indirect ? 1 : 0);
	if (r->nsect == 0 || nseg > BLKIF_SEGS_PER_INDIRECT_PAGE_FOR_STUB ||
	    alloc_pages(f, need, in->pages) != 0) {
		errno = r->nsect == 0 ? EINVAL : EBUSY;
		return -1;
	}
	in->npages = need;
	struct blkif_request_segment *segs;
	struct blkif_request *q = (struct blkif_request *)s;
	if (indirect) {
		struct blkif_request_indirect *ir = (struct blkif_request_indirect *)s;
		ir->operation = BLKIF_OP_INDIRECT;
		ir->indirect_op = r->op == BLKIF_OP_READ ? BLKIF_OP_READ : BLKIF_OP_WRITE;
		ir->nr_segments = (uint16_t)nseg;
		ir->id = r->id;
		ir->sector_number = r->sector;
		ir->handle = (blkif_vdev_t)f->devid;
		ir->indirect_grefs[0] = f->pool_refs[in->pages[nseg]];
		segs = (struct blkif_request_segment *)(f->pool + (size_t)in->pages[nseg] * 4096);
		memset(segs, 0, 4096);
	} else {
		q->operation = r->op;
		q->nr_segments = (uint8_t)nseg;
		q->handle = (blkif_vdev_t)f->devid;
		q->id = r->id;
		q->sector_number = r->sector;
		segs = q->seg;
	}
	for (unsigned i = 0; i < nseg; i++) {
		uint32_t left = r->nsect - i * 8, n = left < 8 ? left : 8;
		segs[i].gref = f->pool_refs[in->pages[i]];
		segs[i].first_sect = 0;
		segs[i].last_sect = (uint8_t)(n - 1);
		if (r->op != BLKIF_OP_READ)
			memcpy(f->pool + (size_t)in->pages[i] * 4096, (uint8_t *)r->buf + i * 4096,
			       n * 512);
	}
	return 0;
}

int blkfront_queue(struct blkfront *f, struct bf_req *r)
{
	uint32_t id;

	if (f->req_prod_pvt - f->rsp_cons >= f->slots) {
		errno = EBUSY;
		return -1;
	}
	for (id = 0; id < f->slots && f->inflight[id].used; id++)
		;
	if (id == f->slots) {
		errno = EBUSY;
		return -1;
	}
	struct inflight *in = &f->inflight[id];
	volatile void *s = slot(f, f->req_prod_pvt);
	memset((void *)s, 0, f->slot_size);
	r->id = wire_id(r, id);
	r->done = 0;
	in->npages = 0;

	if (r->op == BLKIF_OP_DISCARD) {
		struct blkif_request_discard *d = (struct blkif_request_discard *)s;
		d->operation = BLKIF_OP_DISCARD;
		d->handle = (blkif_vdev_t)f->devid;
		d->id = r->id;
		d->sector_number = r->sector;
		d->nr_sectors = r->nr_sectors;
	} else if (r->op == BLKIF_OP_FLUSH_DISKCACHE && r->nsect == 0) {
		struct blkif_request *q = (struct blkif_request *)s;
		q->operation = BLKIF_OP_FLUSH_DISKCACHE;
		q->handle = (blkif_vdev_t)f->devid;
		q->id = r->id;
		q->sector_number = r->sector;
	} else if (queue_rw(f, r, in, s) != 0) {
		return -1;
	}
	in->r = r;
	in->used = 1;
	f->req_prod_pvt++;
	f->outstanding++;
	return 0;
}

void blkfront_kick(struct blkfront *f)
{
	uint32_t old = load(f->sring, 0), new = f->req_prod_pvt;
	store32(f->sring, 0, new);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint32_t ev = load(f->sring, 4);
	if ((uint32_t)(new - ev) < (uint32_t)(new - old))
		plat_evtchn_notify(f->evt, (uint32_t)f->port);
}

/* Takes one response, if any. */
static struct bf_req *consume(struct blkfront *f)
{
	for (;;) {
		uint32_t rp = load(f->sring, 8);
		if (f->rsp_cons != rp) {
			volatile uint8_t *s = slot(f, f->rsp_cons++);
			uint64_t id;
			int16_t status;
			memcpy(&id, (const void *)s, 8);
			memcpy(&status, (const void *)(s + 10), 2);
			uint64_t wire = id;
			if ((id >> 32) == ID_TAG && (id & 0xffffffffu) < f->slots &&
			    f->inflight[id & 0xffffffffu].used && f->inflight[id & 0xffffffffu].r->id == wire) {
				id &= 0xffffffffu;
			} else {
				/* A caller-chosen id: look it up. */
				for (id = 0; id < f->slots; id++)
					if (f->inflight[id].used && f->inflight[id].r->id == wire)
						break;
				if (id == f->slots)
					continue; /* not ours: a buggy backend */
			}
			struct inflight *in = &f->inflight[id];
			struct bf_req *r = in->r;
			r->status = status;
			r->done = 1;
			if (r->op == BLKIF_OP_READ && status == BLKIF_RSP_OKAY)
				for (uint32_t i = 0; i * 8 < r->nsect; i++) {
					uint32_t left = r->nsect - i * 8, n = left < 8 ? left : 8;
					memcpy((uint8_t *)r->buf + i * 4096, f->pool + (size_t)in->pages[i] * 4096,
					       n * 512);
				}
			for (unsigned i = 0; i < in->npages; i++)
				f->page_used[in->pages[i]] = 0;
			in->used = 0;
			f->outstanding--;
			return r;
		}
		/* RING_FINAL_CHECK_FOR_RESPONSES */
		store32(f->sring, 12, f->rsp_cons + 1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (load(f->sring, 8) == f->rsp_cons)
			return NULL;
	}
}

struct bf_req *blkfront_wait(struct blkfront *f, int timeout_ms)
{
	struct pollfd pfd = {plat_evtchn_fd(f->evt), POLLIN, 0};
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct bf_req *r = consume(f);
		if (r)
			return r;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long spent = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		/* timeout 0 still takes the events already there (and unmasks
		 * their ports): callers polling several devices rely on it. */
		/* Every 100 ms of waiting the backend's state is looked at, as
		 * a frontend's xenbus watch would: a backend that closed the
		 * device answers nothing more. */
		long slice = spent >= timeout_ms ? 0 : timeout_ms - spent;
		int n = poll(&pfd, 1, slice > 100 ? 100 : (int)slice);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && slice > 100) {
			if (backend_state(f) >= 5) {
				f->backend_closed = 1;
				return NULL;
			}
			continue;
		}
		if (n <= 0)
			return NULL;
		int port;
		while ((port = plat_evtchn_pending(f->evt)) >= 0)
			plat_evtchn_unmask(f->evt, (uint32_t)port);
	}
}

int blkfront_event_fd(const struct blkfront *f)
{
	return plat_evtchn_fd(f->evt);
}

int blkfront_do(struct blkfront *f, struct bf_req *r, int timeout_ms)
{
	if (blkfront_queue(f, r) != 0)
		return -101;
	blkfront_kick(f);
	while (!r->done)
		if (!blkfront_wait(f, timeout_ms))
			return f->backend_closed ? BF_BACKEND_CLOSED : -100;
	return r->status;
}

int blkfront_queue_raw(struct blkfront *f, struct bf_req *r, const void *bytes, size_t len,
                       size_t id_offset)
{
	uint32_t id;

	if (len > f->slot_size || id_offset + 8 > len || f->req_prod_pvt - f->rsp_cons >= f->slots) {
		errno = EINVAL;
		return -1;
	}
	for (id = 0; id < f->slots && f->inflight[id].used; id++)
		;
	if (id == f->slots) {
		errno = EBUSY;
		return -1;
	}
	volatile uint8_t *s = slot(f, f->req_prod_pvt);
	memset((void *)s, 0, f->slot_size);
	memcpy((void *)s, bytes, len);
	uint64_t id64 = MAKE_ID(id);
	memcpy((void *)(s + id_offset), &id64, 8);
	r->id = id64;
	r->done = 0;
	r->op = 0xff; /* nothing to copy back */
	f->inflight[id] = (struct inflight){.r = r, .npages = 0, .used = 1};
	f->req_prod_pvt++;
	f->outstanding++;
	return 0;
}

int blkfront_do_raw(struct blkfront *f, const void *bytes, size_t len, size_t id_offset,
                    int timeout_ms)
{
	struct bf_req r;

	if (blkfront_queue_raw(f, &r, bytes, len, id_offset) != 0)
		return -100;
	blkfront_kick(f);
	while (!r.done)
		if (!blkfront_wait(f, timeout_ms))
			return -100;
	return r.status;
}

void blkfront_rw_slot(uint8_t slot[112], uint8_t op, uint8_t nseg, uint64_t sector, uint32_t gref,
                      uint8_t first_sect, uint8_t last_sect)
{
	struct blkif_request *q = (struct blkif_request *)slot;

	memset(slot, 0, 112);
	q->operation = op;
	q->nr_segments = nseg;
	q->sector_number = sector;
	for (unsigned i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++) {
		q->seg[i].gref = gref;
		q->seg[i].first_sect = first_sect;
		q->seg[i].last_sect = last_sect;
	}
}

void blkfront_set_state(struct blkfront *f, int state)
{
	put(f, XBT_NULL, "state", "%d", state);
}

volatile uint8_t *blkfront_sring(struct blkfront *f)
{
	return f->sring;
}

uint32_t blkfront_grant(struct blkfront *f, unsigned page)
{
	return page < f->npages ? f->pool_refs[page] : 0;
}

uint8_t *blkfront_page(struct blkfront *f, unsigned page)
{
	return page < f->npages ? f->pool + (size_t)page * 4096 : NULL;
}

void blkfront_notify(struct blkfront *f)
{
	plat_evtchn_notify(f->evt, (uint32_t)f->port);
}

unsigned blkfront_poll_responses(struct blkfront *f, int timeout_ms)
{
	struct pollfd pfd = {plat_evtchn_fd(f->evt), POLLIN, 0};
	if (load(f->sring, 8) == f->rsp_cons && poll(&pfd, 1, timeout_ms) > 0) {
		int port;
		while ((port = plat_evtchn_pending(f->evt)) >= 0)
			plat_evtchn_unmask(f->evt, (uint32_t)port);
	}
	return load(f->sring, 8) - f->rsp_cons;
}
