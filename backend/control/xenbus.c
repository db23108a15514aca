/*
 * xenbus.c - device discovery: our backend directories and stock xl's
 * vbds, found by scanning and by xenstore watch events, handled in rounds
 * (below); each device found is handed to the XenbusState machine
 * (xenbus_state.c), which moves it.  A domain's frontend events are
 * bounded here, per turn of the loop and per second.  Runs and traces are told of a round through the listener the
 * daemon wires (xenbus.h), never called by name.
 *
 * Owns whom it tells (b->listener, set by be_xenbus_init); a round's todo
 * list lives on its stack, the counts and budgets are domains.c's, the
 * devices xenbus_state.c's (it frees them all at shutdown).
 *
 * May call: xenbus_state.c, domains.c, xl_disks.c, xs_values.c, the data
 * path's be_worker_quiesce, log.c, util/clock, util/grow and xenstore, common/
 * (state.h), datapath/ (io_worker.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstore.h>

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "backend/datapath/io_worker.h"
#include "domains.h"
#include "xenbus.h"
#include "xenbus_state.h"
#include "xl_disks.h"
#include "xs_values.h"
#include "util/clock.h"
#include "util/grow.h"

/* ---- devices ---------------------------------------------------------------- */

static struct be_device *find_device(struct be_backend *b, uint32_t domid, uint32_t devid)
{
	for (struct be_device *d = b->devices; d; d = d->next)
		if (d->domid == domid && d->devid == devid)
			return d;
	return NULL;
}

struct be_device *be_device_by_port(struct be_backend *b, uint32_t port)
{
	for (struct be_device *d = b->devices; d; d = d->next)
		if (d->connected && d->local_port == port)
			return d;
	return NULL;
}

/*
 * Watch events are handled in rounds (be_xenbus_watch_events): every event
 * queued is noted first, then each device, domain directory and kind of
 * event is acted on once.  A round of 64 guests starting or dying is
 * hundreds of events; handled one by one, each re-reading its device and
 * asking whether its domain lives, they cost thousands of xenstore round
 * trips, all while the rings wait.  Within a round a domain's liveness is
 * asked once: one that dies meanwhile fires @releaseDomain, which is the
 * next round.
 */
/* TODO_FE: only its frontend's state changed (a cheap look first). */
enum { TODO_DEVICE, TODO_DOMAIN, TODO_VBD_DEVICE, TODO_VBD_DOMAIN, TODO_FE, TODO_VBD_FE };

struct xb_todo {
	struct {
		uint32_t domid, devid;
		int kind;
	} *v;
	size_t n, cap;
	int scan, released, traces;
};

/* ---- discovery ---------------------------------------------------------------- */

static int parse_id(const char *s, uint32_t max, uint32_t *out)
{
	return be_xsv_parse_u32(s, max, out) == 0 ? 0 : -1;
}

static void refresh_path(struct be_backend *b, int xl, uint32_t domid, uint32_t devid)
{
	struct be_device *d = find_device(b, domid, devid);

	if (d && d->xl_managed != xl)
		return; /* the other kind's device of that number: not this one */
	if (!d) {
		char path[128];
		unsigned len;
		snprintf(path, sizeof(path), "%s/%u/%u", xl ? VBD_ROOT : BACKEND_ROOT, domid, devid);
		char *v = xs_read(b->env.xs, XBT_NULL, path, &len);
		if (!v)
			return; /* a removal we already handled */
		free(v);
		if (xl && !be_xl_disk_is_ours(b, path))
			return;
		if (!(d = be_device_new(b, xl, domid, devid)))
			return;
		if (xl)
			be_xl_claim(d);
	}
	be_device_refresh(d);
}

static void scan_root(struct be_backend *b, int xl)
{
	unsigned nd = 0, nv = 0;
	const char *root = xl ? VBD_ROOT : BACKEND_ROOT;
	char **doms = xs_directory(b->env.xs, XBT_NULL, root, &nd);

	for (unsigned i = 0; doms && i < nd; i++) {
		uint32_t domid, devid;
		char path[128];
		if (parse_id(doms[i], 32767, &domid) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%u", root, domid);
		char **devs = xs_directory(b->env.xs, XBT_NULL, path, &nv);
		for (unsigned k = 0; devs && k < nv; k++)
			if (parse_id(devs[k], UINT32_MAX, &devid) == 0)
				refresh_path(b, xl, domid, devid);
		free(devs);
		if (!xl && (!devs || nv == 0)) /* left behind: ours to remove if the domain is gone */
			be_remove_domain_dir_if_empty(b, domid, 1);
	}
	free(doms);
}

void be_xenbus_scan(struct be_backend *b)
{
	scan_root(b, 0);
	scan_root(b, 1);
	/* Devices whose directory vanished without an event we saw. */
	for (struct be_device *d = b->devices, *next; d; d = next) {
		next = d->next;
		be_device_refresh(d);
	}
}

/* Notes that a device (or a domain's directory) needs a look this round,
 * once however many events named it. */
static void todo_add(struct xb_todo *t, uint32_t domid, uint32_t devid, int kind)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].domid == domid && t->v[i].devid == devid && t->v[i].kind == kind)
			return;
	if (GROW_FROM(t->v, t->cap, t->n + 1, 64) != 0) {
		t->scan = 1; /* cannot remember it: look at everything */
		return;
	}
	t->v[t->n].domid = domid;
	t->v[t->n].devid = devid;
	t->v[t->n++].kind = kind;
}

/*
 * A guest writes its frontend directory as often as it likes, and every
 * write of a watched node is a watch event the backend must read, and
 * each look at a device is xenstore round trips (queued behind the flood
 * on xenstored) and a drained pipeline: an honest neighbour's round trips
 * wait for all of it.  So one domain's events cost a bounded amount per
 * turn of the loop and per second, however many devices it has:
 *
 *   - a turn reads at most XS_EVENTS_PER_TURN watch events (the rest are
 *     read in the next turns, after the rings had theirs);
 *   - all of a domain's frontend events share one token bucket,
 *     DOM_EVENTS_PER_S with bursts of DOM_EVENTS_BURST;
 *   - a device its events name is looked at once per turn, and first only
 *     its frontend's state is read: a state that asks nothing new (what it
 *     said last; Initialised or Connected while connected) costs nothing
 *     more, no drained pipeline;
 *   - a domain out of tokens has its frontends' watches dropped, as Xen
 *     stops delivering a flooding guest's event channel (XSA-332), and its
 *     devices' state is polled every DOM_POLL_US instead, so that a real
 *     state change still takes effect within that time; its watches come
 *     back after a back-off (1 s, doubling up to 32 s while it goes on).
 */
#define XS_EVENTS_PER_TURN 256
#define DOM_EVENTS_PER_S 50.0
#define DOM_EVENTS_BURST 100.0
#define DOM_POLL_US 100000
#define DOM_BACKOFF_MIN_US 1000000
#define DOM_BACKOFF_MAX_US 32000000

/* Sets or drops the watches of a domain's frontends. */
static void domain_watch(struct be_backend *b, uint32_t domid, int on)
{
	char path[256];

	for (struct be_device *d = b->devices; d; d = d->next) {
		if (d->domid != domid || !d->initialised || d->fe_watched == on)
			continue;
		snprintf(path, sizeof(path), "%s/state", d->fpath);
		if (on) {
			d->fe_watched = xs_watch(b->env.xs, path, "fe");
		} else {
			xs_unwatch(b->env.xs, path, "fe");
			d->fe_watched = 0;
		}
	}
}

/* One frontend event of a domain: 1 when it may be acted on now. */
static int fe_event_allowed(struct be_backend *b, struct be_device *d)
{
	struct be_xs_domain *x = be_xs_domain_get(b->domains, d->domid, 1);
	int64_t now = clock_mono_us();

	if (!x)
		return 1;
	x->events++;
	if (x->unwatched) {
		be_domains_count(b->domains, BE_XS_DEFERRED); /* queued before its watches went: the poll sees it */
		return 0;
	}
	if (x->tokens < 0)
		x->tokens = DOM_EVENTS_BURST;
	else
		x->tokens += (double)(now - x->tokens_us) * DOM_EVENTS_PER_S / 1e6;
	if (x->tokens > DOM_EVENTS_BURST)
		x->tokens = DOM_EVENTS_BURST;
	x->tokens_us = now;
	if (x->tokens >= 1.0) {
		x->tokens -= 1.0;
		return 1;
	}
	be_domains_count(b->domains, BE_XS_DEFERRED);
	/* Out of tokens: its watches go for a while.  A domain that floods
	 * again soon after they came back stays unwatched twice as long. */
	x->backoff_us = x->rewatched_us && now - x->rewatched_us < 2 * x->backoff_us
	                        ? (x->backoff_us * 2 > DOM_BACKOFF_MAX_US ? DOM_BACKOFF_MAX_US : x->backoff_us * 2)
	                        : DOM_BACKOFF_MIN_US;
	x->unwatched = 1;
	x->poll_at_us = now; /* this event's change: looked at in this turn's timers */
	x->rewatch_at_us = now + x->backoff_us;
	be_domains_count(b->domains, BE_XS_UNWATCHED);
	domain_watch(b, d->domid, 0);
	be_elog_at(LOG_WARNING, d->domid, d->run ? d->run->run_id : -1,
	        "dom%u: xenstore event flood from its frontends (over %.0f events/s): their state is no longer "
	        "watched but looked at every %d ms, for %lld s",
	        d->domid, DOM_EVENTS_PER_S, DOM_POLL_US / 1000, (long long)(x->backoff_us / 1000000));
	return 0;
}

/* A device's frontend asks something new of it: looked at (pipeline
 * drained first, once: *quiesced).  May free d. */
static void look_at(struct be_backend *b, struct be_device *d, int *quiesced)
{
	if (be_device_frontend_unchanged(d))
		return;
	if (!*quiesced) {
		be_worker_quiesce(b->worker);
		be_domains_count(b->domains, BE_XS_ROUNDS);
		*quiesced = 1;
	}
	be_device_refresh(d);
}

int be_xenbus_deferred_run(struct be_backend *b)
{
	int64_t now = clock_mono_us(), next = -1;
	int quiesced = 0;

	for (struct be_xs_domain *x = be_xs_domains_first(b->domains); x; x = x->next) {
		if (!x->unwatched)
			continue;
		if (x->poll_at_us <= now) {
			x->poll_at_us = now + DOM_POLL_US;
			for (struct be_device *d = b->devices, *nd; d; d = nd) {
				nd = d->next;
				if (d->domid == x->domid && d->initialised)
					look_at(b, d, &quiesced); /* may free d: nd was read first */
			}
		}
		if (x->rewatch_at_us <= now) {
			/* Each watch fires once when set: the first look. */
			x->unwatched = 0;
			x->rewatched_us = now;
			x->tokens = DOM_EVENTS_BURST;
			x->tokens_us = now;
			domain_watch(b, x->domid, 1);
			be_elog_at(LOG_INFO, x->domid, -1, "dom%u: its frontends' state is watched again", x->domid);
			continue;
		}
		int64_t due = x->poll_at_us < x->rewatch_at_us ? x->poll_at_us : x->rewatch_at_us;
		int64_t wait = (due - now) / 1000 + 1;
		next = next < 0 || wait < next ? wait : next;
	}
	return (int)next;
}

static void note_event(struct be_backend *b, struct xb_todo *t, const char *path, const char *token)
{
	if (strcmp(token, "rel") == 0) {
		t->released = 1;
		return;
	}
	if (strcmp(token, "intro") == 0 || strcmp(token, "mprof") == 0) {
		t->traces |= b->listener->note_event(b, path, token);
		return;
	}
	if (strcmp(token, "fe") == 0) {
		for (struct be_device *d = b->devices; d; d = d->next) {
			size_t n = strlen(d->fpath);
			if (strncmp(path, d->fpath, n) == 0 && (path[n] == '/' || !path[n])) {
				if (fe_event_allowed(b, d))
					todo_add(t, d->domid, d->devid, d->xl_managed ? TODO_VBD_FE : TODO_FE);
				return;
			}
		}
		return;
	}
	/* token "be": /local/domain/0/backend/profsvc[/<domid>[/<devid>[/<node>]]],
	 * token "vbd": the same under backend/vbd (stock xl's disks, most of
	 * them the kernel's: only those with our hotplug script are ours) */
	uint32_t domid, devid;
	int xl = strcmp(token, "vbd") == 0;
	switch (be_xsv_backend_path(xl ? VBD_ROOT : BACKEND_ROOT, path, &domid, &devid)) {
	case XSV_PATH_ROOT:
		t->scan = 1;
		break;
	case XSV_PATH_DOMAIN:
		todo_add(t, domid, 0, xl ? TODO_VBD_DOMAIN : TODO_DOMAIN);
		break;
	case XSV_PATH_DEVICE:
		todo_add(t, domid, devid, xl ? TODO_VBD_DEVICE : TODO_DEVICE);
		break;
	case XSV_PATH_OTHER:
		break;
	}
}

/* One domain's directory changed: its devices, and devices we hold of it
 * whose directory went. */
static void scan_domain(struct be_backend *b, int xl, uint32_t domid)
{
	char path[128];
	unsigned nv = 0;

	snprintf(path, sizeof(path), "%s/%u", xl ? VBD_ROOT : BACKEND_ROOT, domid);
	char **devs = xs_directory(b->env.xs, XBT_NULL, path, &nv);
	for (unsigned k = 0; devs && k < nv; k++) {
		uint32_t devid;
		if (parse_id(devs[k], UINT32_MAX, &devid) == 0)
			refresh_path(b, xl, domid, devid);
	}
	free(devs);
	for (struct be_device *d = b->devices, *next; d; d = next) {
		next = d->next;
		if (d->domid == domid && d->xl_managed == xl)
			be_device_refresh(d);
	}
}

void be_xenbus_watch_events(struct be_backend *b)
{
	struct xb_todo t = {0};
	char **w;

	/* At most XS_EVENTS_PER_TURN: the rest stay queued (the descriptor
	 * stays readable) for the next turns, the rings served between. */
	for (int i = 0; i < XS_EVENTS_PER_TURN && (w = xs_check_watch(b->env.xs)); i++) {
		note_event(b, &t, w[XS_WATCH_PATH], w[XS_WATCH_TOKEN]);
		be_domains_count(b->domains, BE_XS_EVENTS);
		free(w);
	}
	/* Frontends whose state asks nothing new cost their one read. */
	size_t keep = 0;
	for (size_t i = 0; i < t.n; i++) {
		int k = t.v[i].kind;
		if (!t.scan && (k == TODO_FE || k == TODO_VBD_FE)) {
			struct be_device *d = find_device(b, t.v[i].domid, t.v[i].devid);
			if (!d || d->xl_managed != (k == TODO_VBD_FE) || be_device_frontend_unchanged(d))
				continue;
		}
		t.v[keep++] = t.v[i];
	}
	t.n = keep;
	if (!t.scan && !t.n && !t.released && !t.traces) {
		free(t.v);
		return; /* nothing to drain the pipeline for */
	}
	be_domains_count(b->domains, BE_XS_ROUNDS);
	/* Devices may come and go: nothing in flight may refer to them, and
	 * the store is ours meanwhile. */
	be_worker_quiesce(b->worker);
	be_domains_round_begin(b->domains);
	if (t.scan) {
		be_xenbus_scan(b);
	} else {
		for (size_t i = 0; i < t.n; i++) {
			int k = t.v[i].kind, xl = k == TODO_VBD_DOMAIN || k == TODO_VBD_DEVICE || k == TODO_VBD_FE;
			if (k == TODO_DOMAIN || k == TODO_VBD_DOMAIN)
				scan_domain(b, xl, t.v[i].domid);
			else
				refresh_path(b, xl, t.v[i].domid, t.v[i].devid);
		}
	}
	if (t.released) {
		/* Some domain died: every device of a dead domain goes. */
		for (struct be_device *d = b->devices, *next; d; d = next) {
			next = d->next;
			if (!be_domain_alive(b->domains, d->domid))
				be_device_free(d, 1, "domain destroyed");
		}
		be_xs_domains_prune(b->domains, b->devices, 0); /* the budgets of domains without devices */
		b->listener->domains_changed(b);
	}
	if (t.traces)
		b->listener->round(b);
	be_domains_round_end(b->domains);
	free(t.v);
}

int be_xenbus_init(struct be_backend *b, const struct be_xenbus_listener *l)
{
	b->listener = l;
	/* Our root, owned by dom0 and readable by nobody else. */
	if (!xs_mkdir(b->env.xs, XBT_NULL, BACKEND_ROOT))
		return -1;
	if (!xs_watch(b->env.xs, BACKEND_ROOT, "be") || !xs_watch(b->env.xs, "@releaseDomain", "rel"))
		return -1;
	/* Stock xl's disks: a watch on a path that does not exist yet is
	 * fine (it fires when libxl makes it). */
	if (!xs_watch(b->env.xs, VBD_ROOT, "vbd"))
		return -1;
	return 0;
}

void be_xenbus_shutdown(struct be_backend *b)
{
	be_worker_quiesce(b->worker);
	/* Leave the guests connected in xenstore: a restarted backend picks
	 * them up.  Only our own resources go. */
	while (b->devices) {
		struct be_device *d = b->devices;
		b->devices = d->next;
		be_device_drop(d);
	}
	be_xs_domains_prune(b->domains, NULL, 1);
}
