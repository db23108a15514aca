/*
 * view_profile.c - reading a run's profile from the store for the views
 * (view_profile.h).
 *
 * Why salvage by default here, unlike export: export writes a file that
 * claims to be the guest's profile, so it refuses what the status block
 * does not vouch for unless asked.  A chart or a table of a crashed or
 * running guest is exactly what the user wants to see, and the parsers
 * keep only complete records anyway; the note says what was salvaged.
 *
 * A run's eventlog goes through the eventlog decoder as it is read; a
 * damaged one is an error naming the damage's offset, an unclosed one (cut
 * at its last whole event by the store) a warning.  A run with an eventlog
 * and no .hp has the eventlog's heap samples (+RTS -hT, or a profiled
 * build's -hc...) as its heap profile, the .hp model made by
 * eventlog_heap.c, so every heap view draws them by hp2ps's rules.
 *
 * May call: store/store.h, store/store_export.h, profile/ (the parsers,
 * ghc_eventlog.h, eventlog_summary.h), view.h, view_err.h.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "profile/prof/time_profile.h"
#include "store/store_export.h"
#include "view_profile.h"

struct zero_filler {
	view_profile_sink sink;
	void *ctx;
};

static int range_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	static const uint8_t zeros[65536];
	struct zero_filler *z = ctx;
	(void)off;
	if (data)
		return z->sink(z->ctx, data, len);
	while (len) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);
		if (z->sink(z->ctx, zeros, n))
			return 1;
		len -= n;
	}
	return 0;
}

/* What a run's devices hold, "a trace (mprof), stack samples (samples)",
 * for the message of a view it cannot give. */
struct holdings {
	char *out;
	size_t len, at;
};

static int add_holding(void *ctx, const struct store_device_info *d)
{
	struct holdings *h = ctx;
	static const char *const what[] = {"a raw disk", "a .prof", "a .hp", "a MirageOS trace", "stack samples",
	                                   "an eventlog"};
	const char *w = (unsigned)d->role < sizeof(what) / sizeof(what[0]) ? what[d->role] : "a disk";
	int n = snprintf(h->out + h->at, h->len - h->at, "%s%s (%s)", h->at ? ", " : "", w, d->vdev);
	if (n > 0 && (size_t)n < h->len - h->at)
		h->at += (size_t)n;
	return 0;
}

static void describe_holdings(struct store *s, int64_t id, char *out, size_t len)
{
	struct holdings h = {out, len, 0};
	out[0] = '\0';
	store_list_devices(s, id, add_holding, &h);
}

/* A store error while reading a profile's bytes into e (and out's damage). */
static void read_failed(struct view *v, struct view_profile_read *out, int rc, struct view_err *e)
{
	if (rc == STORE_ECORRUPT) { /* damaged: never "no profile" */
		snprintf(out->damage, sizeof(out->damage), "%s", store_errmsg(v->s));
		view_damage(e, "%s", out->damage);
	} else {
		view_error(e, "%s", store_errmsg(v->s));
	}
}

/* run in v's snapshot: its row in out and its device of role in dev,
 * and what an extraction of it gives (rep): 0, or -1 with the reason in
 * e. */
static int profile_plan(struct view *v, const struct view_run *run, const char *role, struct store_device_info *dev,
                        struct store_extract_report *rep, struct view_profile_read *out, struct view_err *e)
{
	int64_t id = run->id;

	memset(out, 0, sizeof(*out));
	if (view_snapshot(v, e) != 0)
		return -1;
	if (store_get_run(v->s, id, &out->run) != 0) {
		view_error(e, "%s", store_errmsg(v->s));
		return -1;
	}
	if (store_find_device(v->s, id, role, dev) != 0) {
		char holds[400];
		describe_holdings(v->s, id, holds, sizeof(holds));
		view_error(e, "run %lld has no .%s device (%s); it holds %s", (long long)id, role,
		           strcmp(role, "prof") == 0 ? "xvdp1" : strcmp(role, "hp") == 0 ? "xvdp2" : "xvdp3",
		           holds[0] ? holds : "no device at all");
		return -1;
	}
	int r = store_profile_extent(v->s, dev, 1, rep);
	if (r != 0) {
		read_failed(v, out, r, e);
		return -1;
	}
	out->bytes = rep->size;
	out->salvaged = rep->how == STORE_EXTRACT_MAJORITY || rep->how == STORE_EXTRACT_EXTENT;
	if (out->salvaged)
		snprintf(out->note, sizeof(out->note), "%s", rep->note);
	if (rep->how != STORE_EXTRACT_CLEAN)
		snprintf(out->cut, sizeof(out->cut), "%s", rep->cut);
	return 0;
}

int view_profile_read(struct view *v, const struct view_run *run, const char *role,
                      view_profile_sink sink, void *ctx, struct view_profile_read *out,
                      struct view_err *e)
{
	struct store_device_info dev;
	struct store_extract_report rep;
	struct zero_filler z = {sink, ctx};

	if (profile_plan(v, run, role, &dev, &rep, out, e) != 0)
		return -1;
	int r = store_read_range(v->s, dev.device_id, STORE_SECTOR_SIZE, rep.size, range_cb, &z);
	if (r < 0) {
		read_failed(v, out, r, e);
		return -1;
	}
	if (r > 0)
		return -1; /* the sink stopped it and the caller says why */
	return 0;
}

int view_pieces_begin(struct view *v, const struct view_run *run, const char *role, struct view_pieces *p,
                      struct view_err *e)
{
	struct store_device_info dev;
	struct store_extract_report rep;

	memset(p, 0, sizeof(*p));
	int rc = profile_plan(v, run, role, &dev, &rep, &p->rd, e);
	view_snapshot_end(v);
	if (rc != 0)
		return -1;
	p->device_id = dev.device_id;
	snprintf(p->vdev, sizeof(p->vdev), "%s", dev.vdev);
	p->size = rep.size;
	return 0;
}

int view_pieces_next(struct view *v, struct view_pieces *p, size_t max, view_profile_sink sink, void *ctx,
                     struct view_err *e)
{
	struct store_device_info dev;
	struct zero_filler z = {sink, ctx};
	uint64_t n = p->size - p->at < max ? p->size - p->at : max;

	if (n == 0)
		return 0;
	if (view_snapshot(v, e) != 0)
		return -1;
	int rc = store_find_device(v->s, p->rd.run.run_id, p->vdev, &dev);
	if (rc == 0 && dev.device_id != p->device_id)
		rc = STORE_ENOTFOUND;
	if (rc == STORE_ENOTFOUND) {
		view_error(e, "run %lld's %s was deleted while it was read (%llu of %llu bytes given)",
		           (long long)p->rd.run.run_id, p->vdev, (unsigned long long)p->at,
		           (unsigned long long)p->size);
	} else if (rc == 0) {
		rc = store_read_range(v->s, p->device_id, STORE_SECTOR_SIZE + p->at, n, range_cb, &z);
		if (rc < 0)
			read_failed(v, &p->rd, rc, e);
	} else {
		view_error(e, "%s", store_errmsg(v->s));
	}
	view_snapshot_end(v);
	if (rc != 0)
		return -1;
	p->at += n;
	return 0;
}

void view_profile_caption(const struct store_run *r, char *out, size_t len)
{
	snprintf(out, len, "run %lld %s (%s)", (long long)r->run_id, r->name,
	         store_run_state_name(r->state));
}

static int tp_sink(void *ctx, const void *data, size_t len)
{
	return tp_feed(ctx, data, len) ? 1 : 0;
}

static int hp_sink(void *ctx, const void *data, size_t len)
{
	return hp_feed(ctx, data, len) ? 1 : 0;
}

int view_read_time_profile(struct view *v, const struct view_run *run, struct time_profile *p,
                           struct view_profile_read *rd, struct view_err *e)
{
	tp_init(p);
	if (view_profile_read(v, run, "prof", tp_sink, p, rd, e) != 0) {
		if (p->failed)
			view_error(e, "run %lld: time profile, %s", (long long)run->id, tp_error(p));
		return -1;
	}
	if (rd->salvaged)
		view_warn(e, "run %lld: %s", (long long)rd->run.run_id, rd->note);
	if (tp_finish(p) != 0) {
		view_error(e, "run %lld: time profile, %s", (long long)rd->run.run_id, tp_error(p));
		return -1;
	}
	return 0;
}

int view_read_heap_profile(struct view *v, const struct view_run *run, struct hp_profile *p,
                           struct hp_tail *tail, struct view_profile_read *rd, struct view_err *e)
{
	memset(rd, 0, sizeof(*rd));
	if (view_eventlog_heap_fallback(v, run))
		return view_read_eventlog_heap(v, run, p, tail, rd, e);
	hp_init(p);
	if (view_profile_read(v, run, "hp", hp_sink, p, rd, e) != 0) {
		if (p->failed)
			view_error(e, "run %lld: heap profile, %s", (long long)run->id, hp_error(p));
		return -1;
	}
	if (rd->salvaged)
		view_warn(e, "run %lld: %s", (long long)rd->run.run_id, rd->note);
	if (hp_finish(p, tail) != 0) {
		view_error(e, "run %lld: heap profile, %s", (long long)rd->run.run_id, hp_error(p));
		return -1;
	}
	return 0;
}

struct follow {
	view_profile_sink feed; /* the parser's */
	void *ctx;
	uint64_t *fed; /* advanced by what the parser was given */
};

/* A view_profile_sink: the bytes to the parser, counted. */
static int follow_sink(void *ctx, const void *data, size_t len)
{
	struct follow *fw = ctx;
	if (fw->feed(fw->ctx, data, len) != 0)
		return -1;
	*fw->fed += len;
	return 0;
}

/* The bytes a run's profile device (role) holds past *fed, to feed: 0
 * (nothing written yet, or nothing new, counts too; or the parser
 * refused them, which the caller looks at first), -1 with the reason in
 * e when the store fails.  A status block may claim more than was
 * written: never read past that. */
static int follow_device(struct store *s, const struct view_run *run, const char *role, uint64_t *fed,
                         view_profile_sink feed, void *ctx, struct view_err *e)
{
	struct follow fw = {feed, ctx, fed};
	struct view_err store_e;
	uint64_t end;
	view_err_init(&store_e);
	if (view_read_device_bytes(s, run, role, *fed, UINT64_MAX, follow_sink, &fw, &end, &store_e) == 0 ||
	    !store_e.n)
		return 0;
	view_error(e, "%s", view_err_first(&store_e));
	return -1;
}

int view_read_device_bytes(struct store *s, const struct view_run *run, const char *role, uint64_t from, uint64_t to,
                           view_profile_sink sink, void *ctx, uint64_t *end, struct view_err *e)
{
	struct store_device_info dev;
	*end = from;
	int rc = store_find_device(s, run->id, role, &dev);
	if (rc == STORE_ENOTFOUND || (rc == 0 && dev.status != STORE_STATUS_OK))
		return 0; /* nothing written yet */
	if (rc != 0) {
		view_error(e, "%s", store_errmsg(s));
		return -1;
	}
	uint64_t size = (uint64_t)dev.file_size, written = store_device_written_bytes(&dev);
	if (size > written)
		size = written;
	if (size > to)
		size = to;
	if (size <= from)
		return 0;
	struct zero_filler z = {sink, ctx}; /* a hole reads as zeros (and fails the parse) */
	rc = store_read_range(s, dev.device_id, STORE_SECTOR_SIZE + from, size - from, range_cb, &z);
	if (rc < 0) {
		view_error(e, "%s", store_errmsg(s));
		return -1;
	}
	if (rc > 0)
		return -1; /* the sink stopped it: its owner knows why */
	*end = size;
	return 0;
}

int view_follow_heap(struct store *s, const struct view_run *run, struct hp_profile *p, uint64_t *fed,
                     struct view_err *e)
{
	struct view_err store_e;
	if (p->failed) {
		view_error(e, "heap profile: %s", hp_error(p));
		return -1;
	}
	view_err_init(&store_e);
	int rc = follow_device(s, run, "hp", fed, hp_sink, p, &store_e);
	if (p->failed) {
		view_error(e, "heap profile: %s", hp_error(p));
		return -1;
	}
	if (rc != 0)
		view_error(e, "%s", view_err_first(&store_e));
	return rc;
}

/* ---- the eventlog ---------------------------------------------------------- */

enum view_heap_source view_heap_source(struct store *s, const struct view_run *run)
{
	struct store_device_info dev;
	if (store_find_device(s, run->id, "hp", &dev) == 0 && dev.status != STORE_STATUS_NONE)
		return VIEW_HEAP_HP;
	if (store_find_device(s, run->id, "eventlog", &dev) == 0 && dev.status != STORE_STATUS_NONE)
		return VIEW_HEAP_EVENTLOG;
	return VIEW_HEAP_NONE;
}

static int el_sink(void *ctx, const void *data, size_t len)
{
	return gel_feed(ctx, data, len) != 0;
}

int view_follow_eventlog(struct store *s, const struct view_run *run, struct gel_decoder *d, uint64_t *fed,
                         struct view_err *e)
{
	struct view_err store_e;
	if (d->failed || d->stopped) {
		view_error(e, "eventlog: %s", d->failed ? gel_error(d) : "stopped");
		return -1;
	}
	view_err_init(&store_e);
	int rc = follow_device(s, run, "eventlog", fed, el_sink, d, &store_e);
	if (d->failed) {
		view_error(e, "eventlog: %s", gel_error(d));
		return -1;
	}
	if (rc != 0)
		view_error(e, "%s", view_err_first(&store_e));
	return rc;
}

int view_read_eventlog(struct view *v, const struct view_run *run, gel_event_fn fn, void *ctx,
                       struct view_eventlog *el, struct view_err *e)
{
	memset(el, 0, sizeof(*el));
	gel_init(&el->d, fn, ctx);
	if (view_profile_read(v, run, "eventlog", el_sink, &el->d, &el->rd, e) != 0) {
		if (el->d.failed)
			view_error(e, "run %lld: eventlog damaged: %s", (long long)el->rd.run.run_id,
			           gel_error(&el->d));
		return -1;
	}
	long long id = (long long)el->rd.run.run_id;
	int fin = gel_finish(&el->d, &el->tail);
	if (fin < 0) {
		view_error(e, "run %lld: eventlog damaged: %s", id, gel_error(&el->d));
		return -1;
	}
	el->whole = fin == 0;
	if (!el->tail.header_done) {
		view_error(e, "run %lld: its eventlog has no whole header yet (%llu bytes)", id,
		           (unsigned long long)el->rd.bytes);
		return -1;
	}
	if (el->rd.cut[0])
		view_warn(e, "run %lld: eventlog not closed by the guest (it crashed or still runs): %s", id,
		          el->rd.cut);
	else if (el->rd.salvaged)
		view_warn(e, "run %lld: %s", id, el->rd.note);
	return 0;
}

void view_eventlog_free(struct view_eventlog *el)
{
	gel_free(&el->d);
}

int view_eventlog_heap_fallback(struct view *v, const struct view_run *run)
{
	struct store_device_info dev;
	if (view_snapshot(v, NULL) != 0)
		return 0;
	/* a .hp disk the guest never wrote (sector 0 untouched) is no .hp */
	if (store_find_device(v->s, run->id, "hp", &dev) == 0 && dev.status != STORE_STATUS_NONE)
		return 0;
	return store_find_device(v->s, run->id, "eventlog", &dev) == 0 && dev.status != STORE_STATUS_NONE;
}

static int el_heap_cb(void *ctx, const struct gel_event *ev)
{
	return el_heap_add(ctx, ev) != 0;
}

int view_read_eventlog_heap(struct view *v, const struct view_run *run, struct hp_profile *p, struct hp_tail *tail,
                            struct view_profile_read *rd, struct view_err *e)
{
	struct view_eventlog el;
	struct el_heap h;
	int rc = -1;

	memset(rd, 0, sizeof(*rd));
	hp_init(p);
	el_heap_init(&h, p);
	if (view_read_eventlog(v, run, el_heap_cb, &h, &el, e) != 0) {
		snprintf(rd->damage, sizeof(rd->damage), "%s", el.rd.damage);
		if (el.d.stopped)
			view_error(e, "run %lld: the eventlog's heap samples: %s", (long long)el.rd.run.run_id,
			           hp_error(p));
		goto out;
	}
	*rd = el.rd;
	if (el_heap_finish(&h, &el.d, tail) != 0) {
		view_error(e, "run %lld: the eventlog's heap samples: %s", (long long)el.rd.run.run_id, hp_error(p));
		goto out;
	}
	if (h.samples == 0 && p->nsamples == 0) {
		view_error(e, "run %lld has no .hp and its eventlog no whole heap sample %s",
		           (long long)el.rd.run.run_id,
		           el.whole ? "(the program ran without +RTS -hT, or a profiled build's -hc...)"
		                    : "yet (the log the guest left ends before one)");
		goto out;
	}
	rc = 0;
out:
	el_heap_free(&h);
	view_eventlog_free(&el);
	return rc;
}
