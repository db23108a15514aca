/*
 * xenbus_state.c - the per-device XenbusState machine, after Linux
 * drivers/block/xen-blkback/xenbus.c: a device first seen is checked,
 * given its run and store device and its features published (InitWait);
 * its frontend's ring is mapped and bound when it says Initialised or
 * Connected; it is closed, and its nodes removed, when it or its domain
 * goes.  xenbus.c finds the devices and calls be_device_refresh() when
 * something changed; this file never calls back into it.
 *
 * Everything here is level-triggered: be_device_refresh() re-reads the
 * backend and frontend state and moves the device one step.  Two watches
 * firing in quick succession, a frontend that got to Initialised before
 * we first looked (the HaLVM writer does), or a backend restarted under a
 * live guest all end up in the same place.
 *
 * Every value read from the frontend's directory is guest-controlled and
 * parsed strictly; a bad one is a clear error in our directory, never a
 * crash.  When the domain dies we remove our own nodes: nobody else will.
 *
 * Owns each device's XenbusState side (struct be_device: its states,
 * nodes, ring and port) and the list of devices (b->devices).
 *
 * May call: runs.c (a device's run), domains.c, xl_disks.c, xs_values.c,
 * the data path (io.c's schedule, io_worker.c's quiesce, journal.c,
 * raw_mirror.c, the ring), quota.c, vdev.c, log.c, the store, the
 * platform and xenstore, common/ (state.h), datapath/ (io_worker.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstore.h>

#include "backend/common/log.h"
#include "backend/common/quota.h"
#include "backend/common/state.h"
#include "backend/common/vdev.h"
#include "backend/datapath/io.h"
#include "backend/datapath/io_worker.h"
#include "backend/datapath/journal.h"
#include "backend/datapath/raw_mirror.h"
#include "domains.h"
#include "runs.h"
#include "xenbus_state.h"
#include "xl_disks.h"
#include "xs_values.h"

_Static_assert(XSV_MAX_RING_PAGE_ORDER == MAX_RING_PAGE_ORDER, "one ring size limit");

static const char *const state_names[] = {"Unknown", "Initialising", "InitWait", "Initialised",
                                          "Connected", "Closing", "Closed"};

const char *be_xenbus_state_name(int s)
{
	return s >= 0 && s <= XB_CLOSED ? state_names[s] : "?";
}

/* ---- xenstore helpers ----------------------------------------------------- */

static char *xs_get(struct be_backend *b, const char *dir, const char *node)
{
	char path[256];
	unsigned len;

	snprintf(path, sizeof(path), "%s%s%s", dir, node ? "/" : "", node ? node : "");
	return xs_read(b->env.xs, XBT_NULL, path, &len);
}

/* Strict decimal (be_xsv_parse_u32); 0 ok, -1 missing, -2 malformed or > max. */
static int xs_get_u32(struct be_backend *b, const char *dir, const char *node, uint32_t max,
                      uint32_t *out)
{
	char *v = xs_get(b, dir, node);
	int rc = be_xsv_parse_u32(v, max, out);
	free(v);
	return rc;
}

static int xs_put(struct be_backend *b, xs_transaction_t t, const char *dir, const char *node,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int xs_put(struct be_backend *b, xs_transaction_t t, const char *dir, const char *node,
                  const char *fmt, ...)
{
	char path[256], val[256];
	va_list ap;

	snprintf(path, sizeof(path), "%s/%s", dir, node);
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	return xs_write(b->env.xs, t, path, val, (unsigned)strlen(val)) ? 0 : -1;
}

static void set_state(struct be_device *d, int state)
{
	if (d->bstate == state)
		return;
	if (xs_put(d->b, XBT_NULL, d->bpath, "state", "%d", state) == 0) {
		be_bdebug("dom%u %s: backend %s -> %s", d->domid, d->vdev, be_xenbus_state_name(d->bstate),
		       be_xenbus_state_name(state));
		d->bstate = state;
	}
}

/* An error the toolstack and the user can see: written to <bpath>/error
 * (as Linux's xenbus_dev_error does) and logged. */
/* prio: LOG_WARNING for what the guest or its toolstack got wrong, LOG_ERR
 * for our own failures (the store). */
static void dev_error(int prio, struct be_device *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void dev_error(int prio, struct be_device *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->last_error, sizeof(d->last_error), fmt, ap);
	va_end(ap);
	be_dlog_at(prio, d, "%s", d->last_error);
	xs_put(d->b, XBT_NULL, d->bpath, "error", "%s", d->last_error);
}

static void disconnect(struct be_device *d)
{
	struct be_backend *b = d->b;

	if (!d->connected)
		return;
	plat_evtchn_unbind(b->env.evt, d->local_port);
	/* Release the mapping at once: a held grant keeps a dead domain a zombie. */
	plat_gnttab_unmap(b->env.gnt, d->ring_mem, d->ring_pages);
	d->connected = 0;
	d->ring_mem = NULL;
	be_journal_close(d);
	be_io_unschedule(d);
	be_dlog_at(LOG_NOTICE, d, "disconnected");
}

/* Tears a connected device down to Closing (ring bogus, fatal error). */
static void xenbus_fail(struct be_device *d, const char *why)
{
	dev_error(LOG_WARNING, d, "%s; disconnecting this device (other devices are not affected)", why);
	disconnect(d);
	set_state(d, XB_CLOSING);
}

void be_xenbus_fail_broken(struct be_backend *b)
{
	int quiesced = 0;
	for (struct be_device *d = b->devices; d; d = d->next)
		if (d->run_gone) {
			/* Its run was deleted without this backend being asked
			 * first (profdb could not reach it): one request failed;
			 * the run's devices close now, as profdb would have had
			 * them closed. */
			d->run_gone = 0;
			if (!d->run)
				continue;
			if (!quiesced++)
				be_worker_quiesce(b->worker);
			struct be_run *r = d->run;
			be_dlog_at(LOG_WARNING, d, "its run was deleted while it ran (this backend was not asked first): "
			        "closing the run's devices");
			be_devices_close_run(b, r);
			be_run_close(b->runs, r, "deleted while running");
		}
	for (struct be_device *d = b->devices; d; d = d->next)
		if (d->ring_broken) {
			d->ring_broken = 0;
			if (d->connected)
				xenbus_fail(d, "frontend's ring producer index is more than a ring ahead (bogus "
				               "or hostile ring)");
		}
}

/* Removes .../profsvc/<domid> when it holds no device (and, with
 * only_if_dead, when the domain is gone), atomically: a toolstack attaching
 * a device meanwhile makes the transaction conflict, and the retry sees it. */
void be_remove_domain_dir_if_empty(struct be_backend *b, uint32_t domid, int only_if_dead)
{
	char dom[96];

	snprintf(dom, sizeof(dom), "%s/%u", BACKEND_ROOT, domid);
	for (int tries = 0; tries < 10; tries++) {
		unsigned n = 1;
		xs_transaction_t t = xs_transaction_start(b->env.xs);
		if (!t)
			return;
		char **left = xs_directory(b->env.xs, t, dom, &n);
		int empty = left && n == 0;
		free(left);
		if (!empty || (only_if_dead && be_domain_alive(b->domains, domid))) {
			xs_transaction_end(b->env.xs, t, true);
			return;
		}
		xs_rm(b->env.xs, t, dom);
		if (xs_transaction_end(b->env.xs, t, false) || errno != EAGAIN)
			return;
	}
}

/* Closed, in an xl device's directory if it is still there (a plain
 * write would make a removed directory again). */
static void xl_closed(struct be_device *d)
{
	struct be_backend *b = d->b;
	for (int tries = 0; tries < 10; tries++) {
		unsigned len;
		xs_transaction_t t = xs_transaction_start(b->env.xs);
		if (!t)
			return;
		char *dir = xs_read(b->env.xs, t, d->bpath, &len);
		if (dir)
			xs_put(b, t, d->bpath, "state", "%d", XB_CLOSED);
		free(dir);
		if (xs_transaction_end(b->env.xs, t, false) || errno != EAGAIN)
			return;
	}
}

void be_device_free(struct be_device *d, int domain_dead, const char *why)
{
	struct be_backend *b = d->b;
	char path[256];

	disconnect(d);
	if (d->fe_watched) {
		snprintf(path, sizeof(path), "%s/state", d->fpath);
		xs_unwatch(b->env.xs, path, "fe");
	}
	if (d->sdev)
		store_device_release(d->sdev);
	be_raw_mirror_close(d);
	be_journal_remove(d);
	be_dlog_at(LOG_NOTICE, d, "removed (%s)", why);
	if (d->run)
		be_run_device_gone(b->runs, d->run, domain_dead);
	if (d->xl_managed) {
		/* libxl's nodes: it removes them once the backend says Closed
		 * (and waits for that before its hotplug script's remove). */
		xl_closed(d);
	} else {
		/* Our directory, and the frontend's when the toolstack detached
		 * it: nobody else removes nodes of a backend libxl does not know. */
		xs_rm(b->env.xs, XBT_NULL, d->bpath);
		if (domain_dead || !d->online)
			xs_rm(b->env.xs, XBT_NULL, d->fpath);
		/* .../profsvc/<domid> goes with its last device. */
		be_remove_domain_dir_if_empty(b, d->domid, 0);
	}
	for (struct be_device **p = &b->devices; *p; p = &(*p)->next)
		if (*p == d) {
			*p = d->next;
			break;
		}
	free(d);
}
static int note_stored_chunk(void *ctx, uint64_t chunk)
{
	struct be_device *d = ctx;
	return be_quota_note_stored(&d->run->chunks, d->devid, chunk);
}


/* What the toolstack wrote in our directory is consistent: d->vdev and
 * d->fpath set, 0; else Closed, -1. */
static int device_check_dir(struct be_device *d)
{
	struct be_backend *b = d->b;
	char expect[96], *fe, *feid, *dev;

	snprintf(expect, sizeof(expect), "/local/domain/%u/device/vbd/%u", d->domid, d->devid);
	fe = xs_get(b, d->bpath, "frontend");
	feid = xs_get(b, d->bpath, "frontend-id");
	dev = xs_get(b, d->bpath, "dev");
	int bad = be_xsv_backend_dir(fe, feid, dev, d->domid, d->devid, d->vdev, sizeof(d->vdev)) != 0;
	free(fe);
	free(feid);
	free(dev);
	if (bad) {
		dev_error(LOG_WARNING, d, "backend directory %s is inconsistent (frontend must be %s, frontend-id %u, "
		          "dev the name of devid %u); fix the toolstack's entries",
		       d->bpath, expect, d->domid, d->devid);
		set_state(d, XB_CLOSED);
		return -1;
	}
	snprintf(d->fpath, sizeof(d->fpath), "%s", expect);
	return 0;
}

/* The device's run and its data in the store (found again, or made), and
 * its raw image: 0, or -1 (said why; Closed unless the domain is going). */
static int device_open_data(struct be_device *d)
{
	struct be_backend *b = d->b;
	int gone = 0;

	d->run = be_run_for_domain(b->runs, d->domid, &gone);
	if (!d->run && gone) {
		be_dlog_at(LOG_INFO, d, "domain %u is being destroyed: no run started for this device", d->domid);
		return -1;
	}
	if (!d->run) {
		dev_error(LOG_ERR, d, "cannot record a run for domain %u: %s", d->domid, store_errmsg(b->env.store));
		set_state(d, XB_CLOSED);
		return -1;
	}
	struct store_device_info info;
	if (store_find_device(b->env.store, d->run->run_id, d->vdev, &info) == 0) {
		/* A restarted backend, or a device detached and attached again
		 * in the same boot: the same disk. */
		if (store_device_open(b->env.store, info.device_id, &d->sdev) != 0)
			d->sdev = NULL;
		/* What it already holds counts against --max-run-bytes. */
		else if (store_device_chunks(b->env.store, info.device_id, note_stored_chunk, d) != 0)
			be_dlog_at(LOG_ERR, d, "cannot count its stored chunks: %s (--max-run-bytes starts from 0)",
			     store_errmsg(b->env.store));
	} else if (store_device_create(b->env.store, d->run->run_id, d->vdev, (int32_t)d->devid,
	                               b->env.opt.capacity, &d->sdev) != 0) {
		d->sdev = NULL;
	}
	if (!d->sdev) {
		dev_error(LOG_ERR, d, "cannot open its data in the store: %s", store_errmsg(b->env.store));
		set_state(d, XB_CLOSED);
		return -1;
	}
	be_run_device_added(d->run);
	{
		struct store_device_info ci;
		store_device_get_info(d->sdev, &ci);
		d->capacity = ci.capacity_sectors;
	}
	if (b->env.opt.sink == SINK_RAW || b->env.opt.sink == SINK_RAW_DIRECT) {
		if (be_raw_mirror_open(d, b->env.opt.sink_dir, b->env.opt.sink == SINK_RAW_DIRECT, 1) != 0) {
			dev_error(LOG_ERR, d, "cannot open its raw image in %s (--sink)", b->env.opt.sink_dir);
			set_state(d, XB_CLOSED);
			return -1;
		}
	} else if (b->env.opt.mirror_raw && be_raw_mirror_open(d, b->env.opt.mirror_raw, 1, 0) != 0) {
		be_dlog_at(LOG_WARNING, d, "raw mirror unavailable (continuing without it)");
	}
	return 0;
}

/* Our features, in one transaction. */
static void device_publish(struct be_device *d, uint64_t sectors)
{
	struct be_backend *b = d->b;

	for (;;) {
		xs_transaction_t t = xs_transaction_start(b->env.xs);
		if (!t)
			break;
		xs_put(b, t, d->bpath, "sectors", "%llu", (unsigned long long)sectors);
		xs_put(b, t, d->bpath, "sector-size", "512");
		xs_put(b, t, d->bpath, "physical-sector-size", "512");
		xs_put(b, t, d->bpath, "info", "0");
		xs_put(b, t, d->bpath, "feature-flush-cache", "1");
		xs_put(b, t, d->bpath, "feature-discard", "1");
		xs_put(b, t, d->bpath, "discard-granularity", "512");
		xs_put(b, t, d->bpath, "discard-alignment", "0");
		xs_put(b, t, d->bpath, "discard-secure", "0");
		xs_put(b, t, d->bpath, "feature-max-indirect-segments", "%u",
		       BLKIF_BACK_MAX_INDIRECT_SEGMENTS);
		xs_put(b, t, d->bpath, "max-ring-page-order", "%u", MAX_RING_PAGE_ORDER);
		xs_put(b, t, d->bpath, "feature-persistent", "0");
		if (xs_transaction_end(b->env.xs, t, false) || errno != EAGAIN)
			break;
	}
}

/* First sight of a device: check what the toolstack wrote, find the run
 * and the store device, publish our features, InitWait. */
static int device_setup(struct be_device *d)
{
	struct be_backend *b = d->b;

	if (device_check_dir(d) != 0 || device_open_data(d) != 0)
		return -1;
	struct store_device_info si;
	store_device_get_info(d->sdev, &si);
	device_publish(d, si.capacity_sectors);
	/* Its frontend's state is watched, unless its domain floods
	 * xenstore: then xenbus.c polls it with the domain's other devices. */
	struct be_xs_domain *xd = be_xs_domain_get(b->domains, d->domid, 0);
	if (!xd || !xd->unwatched) {
		char path[256];
		snprintf(path, sizeof(path), "%s/state", d->fpath);
		d->fe_watched = xs_watch(b->env.xs, path, "fe");
	}
	d->initialised = 1;
	be_dlog_at(LOG_NOTICE, d, "device attached (devid %u, %llu sectors)", d->devid,
	     (unsigned long long)si.capacity_sectors);
	/* A backend restarted under a connected guest stays Connected. */
	if (d->bstate != XB_CONNECTED)
		set_state(d, XB_INITWAIT);
	return 0;
}

/* Reads the frontend's ring description and connects. */
static char *frontend_get(void *ctx, const char *node)
{
	struct be_device *d = ctx;
	return xs_get(d->b, d->fpath, node);
}

static int connect_ring(struct be_device *d)
{
	struct be_backend *b = d->b;
	struct be_xsv_ring r;
	char why[160];

	if (be_xsv_frontend_ring(frontend_get, d, &r, why, sizeof(why)) != 0) {
		dev_error(LOG_WARNING, d, "%s", why);
		return -1;
	}
	uint32_t pages = r.pages, *refs = r.refs, port = r.port;
	enum be_blkif_abi abi = r.abi;

	void *mem = plat_gnttab_map(b->env.gnt, d->domid, refs, pages, 1);
	if (!mem) {
		dev_error(LOG_WARNING, d, "cannot map the ring (%u grant refs): %s", pages, strerror(errno));
		return -1;
	}
	int lport = plat_evtchn_bind_interdomain(b->env.evt, d->domid, port);
	if (lport < 0) {
		dev_error(LOG_WARNING, d, "cannot bind event channel %u: %s", port, strerror(errno));
		plat_gnttab_unmap(b->env.gnt, mem, pages);
		return -1;
	}
	d->ring_mem = mem;
	d->ring_pages = pages;
	d->remote_port = port;
	d->local_port = (uint32_t)lport;
	/* Resume from what the ring itself says was answered: a fresh ring
	 * starts at 0, a backend restarted under a live guest re-executes
	 * whatever was in flight. */
	be_ring_attach(&d->ring, mem, pages, abi, 1);
	/* Responses a killed backend wrote but never published go out now. */
	if (be_journal_open(d, refs[0]) == 0)
		be_journal_recover(d);
	d->connected = 1;
	d->spurious = 0;
	char path[256];
	snprintf(path, sizeof(path), "%s/error", d->bpath);
	xs_rm(b->env.xs, XBT_NULL, path);
	d->last_error[0] = '\0';
	be_dlog_at(LOG_NOTICE, d, "connected: %u-page ring (%u slots), %s, event channel %u, %u request(s) in flight",
	     pages, d->ring.slots, be_blkif_abi_name(abi), port,
	     be_ring_pending_requests(&d->ring) > 0 ? (unsigned)be_ring_pending_requests(&d->ring) : 0);
	return 0;
}

/* The frontend says fs: the device follows (connects, closes).  1 when
 * the device was freed (the frontend is gone, or closed and detached). */
static int follow_frontend(struct be_device *d, int fs)
{
	switch (fs) {
	case XB_INITIALISING:
		if (d->bstate == XB_CLOSED && !d->run_closed) {
			be_dlog_at(LOG_INFO, d, "frontend reinitialising: ready to reconnect");
			set_state(d, XB_INITWAIT);
		}
		break;
	case XB_INITIALISED:
	case XB_CONNECTED:
		if (d->connected || !d->online || d->bstate == XB_CLOSING || d->bstate == XB_CLOSED)
			break;
		if (connect_ring(d) != 0) {
			set_state(d, XB_CLOSING);
			break;
		}
		set_state(d, XB_CONNECTED);
		be_io_schedule(d);
		break;
	case XB_CLOSING:
		set_state(d, XB_CLOSING);
		break;
	case XB_CLOSED:
		disconnect(d);
		set_state(d, XB_CLOSED);
		if (!d->online)
			be_device_free(d, 0, "detached");
		return 1;
	case XB_UNKNOWN:
	default:
		/* The frontend's directory is gone. */
		be_device_free(d, !be_domain_alive(d->b->domains, d->domid), "frontend gone");
		return 1;
	}
	return 0;
}

int be_devices_close_run(struct be_backend *b, struct be_run *r)
{
	int n = 0;

	for (struct be_device *d = b->devices; d; d = d->next) {
		if (d->run != r)
			continue;
		/* Closing first, then the ring goes: a request the guest queues
		 * meanwhile is never answered, never failed, and the guest,
		 * seeing Closing, knows why. */
		set_state(d, XB_CLOSING);
		disconnect(d);
		if (d->sdev) {
			store_device_release(d->sdev);
			d->sdev = NULL;
		}
		be_raw_mirror_close(d);
		be_journal_remove(d);
		d->run_closed = 1;
		be_dlog_at(LOG_NOTICE, d, "its run is being deleted (profdb delete/prune --force): closed, and not "
		        "connected again in this boot");
		d->run = NULL;
		be_run_device_gone(b->runs, r, 0);
		n++;
	}
	return n;
}

/* What its frontend says asks nothing new of the device: the state it
 * said last, or one that changes nothing (Initialised or Connected while
 * connected, Closing while closing).  Reads only the frontend's state. */
int be_device_frontend_unchanged(struct be_device *d)
{
	uint32_t v;

	if (!d->initialised)
		return 0;
	int fs = xs_get_u32(d->b, d->fpath, "state", 8, &v) == 0 ? (int)v : XB_UNKNOWN;
	if (fs == XB_UNKNOWN)
		return 0;
	if (fs == d->fstate || (d->connected && (fs == XB_INITIALISED || fs == XB_CONNECTED)) ||
	    (fs == XB_CLOSING && d->bstate == XB_CLOSING)) {
		if (fs != d->fstate)
			be_bdebug("dom%u %s: frontend %s -> %s", d->domid, d->vdev, be_xenbus_state_name(d->fstate),
			       be_xenbus_state_name(fs));
		d->fstate = fs;
		return 1;
	}
	return 0;
}

/* Looks again at one device and moves it along. */
void be_device_refresh(struct be_device *d)
{
	struct be_backend *b = d->b;
	uint32_t v;

	if (xs_get_u32(b, d->bpath, "state", 8, &v) == -1) {
		char *dir = xs_get(b, d->bpath, NULL);
		if (!dir) {
			be_device_free(d, !be_domain_alive(b->domains, d->domid), "backend directory removed");
			return;
		}
		free(dir);
	} else if (!d->initialised) {
		d->bstate = (int)v;
	}
	d->online = xs_get_u32(b, d->bpath, "online", 1, &v) == 0 ? (int)v : 1;
	if (d->xl_managed)
		be_xl_release_kernel(d, 0); /* a xen-blkback loaded since */
	if (!be_domain_alive(b->domains, d->domid)) {
		be_device_free(d, 1, "domain gone");
		return;
	}
	if (!d->initialised && device_setup(d) != 0)
		return;

	int fs = xs_get_u32(b, d->fpath, "state", 8, &v) == 0 ? (int)v : XB_UNKNOWN;
	if (fs != d->fstate)
		be_bdebug("dom%u %s: frontend %s -> %s", d->domid, d->vdev, be_xenbus_state_name(d->fstate),
		       be_xenbus_state_name(fs));
	d->fstate = fs;

	if (follow_frontend(d, fs))
		return;
	if (!d->online && d->xl_managed) {
		/*
		 * libxl removes the device (block-detach, and every shutdown,
		 * reboot, destroy or save, the domain paused): it writes
		 * online=0 and Closing and waits up to 10 s for Closed before
		 * it goes on.  A paused or dead frontend never answers, so the
		 * device closes now: what was acknowledged is stored already,
		 * and nothing may keep the guest's pages mapped.
		 */
		be_dlog_at(LOG_NOTICE, d, "toolstack removes the device (online=0): closed");
		be_device_free(d, 0, "removed by the toolstack");
		return;
	}
	if (!d->online && !d->connected && (fs == XB_INITIALISING || fs == XB_INITWAIT)) {
		/*
		 * Detached before its frontend ever connected (or while it is
		 * between two connections): no ring is mapped and nothing is
		 * in flight, so there is no close handshake to wait for.
		 * Waiting would keep `detach` (and libxl) for their whole
		 * timeout on a frontend that may never come.
		 */
		be_device_free(d, 0, "detached before its frontend connected");
		return;
	}
	if (!d->online && d->bstate != XB_CLOSING && d->bstate != XB_CLOSED) {
		be_dlog_at(LOG_NOTICE, d, "toolstack set online=0: closing");
		set_state(d, XB_CLOSING);
	}
}

struct be_device *be_device_new(struct be_backend *b, int xl, uint32_t domid, uint32_t devid)
{
	struct be_device *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->b = b;
	d->io = b->io;
	d->domid = domid;
	d->devid = devid;
	d->online = 1;
	d->xl_managed = xl;
	snprintf(d->bpath, sizeof(d->bpath), "%s/%u/%u", xl ? VBD_ROOT : BACKEND_ROOT, domid, devid);
	if (be_devid_to_vdev(devid, d->vdev, sizeof(d->vdev)) != 0)
		snprintf(d->vdev, sizeof(d->vdev), "dev%u", devid);
	d->next = b->devices;
	b->devices = d;
	return d;
}

/* Our own resources of a device, the backend stopping: its ring unmapped,
 * its store device and image closed, the device freed.  Its xenstore
 * nodes stay, for a restarted backend to pick the guest up. */
void be_device_drop(struct be_device *d)
{
	disconnect(d);
	if (d->sdev)
		store_device_release(d->sdev);
	be_raw_mirror_close(d);
	free(d);
}
