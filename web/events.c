/*
 * events.c - Server-Sent Event streams (text/event-stream): /api/runs/N/events
 * keeps a run page live, /api/events the catalogue.
 *
 * A run stream keeps its own incremental .hp parser: after each change of
 * its run it feeds on only the bytes the guest's status block added since
 * the last look.  Those bytes, the run's row and its eventlog's size are
 * read once per change for every stream of the run (struct run_snap: one
 * read-only connection and one read transaction per change, the first
 * stream to see the change reads, the others take the same bytes; a
 * stream that fell behind the shared bytes reads the gap itself), so 120
 * pages of one live run cost the store what one does.  The guest flushes its heap profile after every sample
 * and then rewrites the status block, so the status block's size always
 * ends on a complete sample; the bytes before it never change.  Events:
 *
 *   heap     {"heap":{...}}   the whole chart (profile/render/report.h's shape):
 *                             first, and whenever the bands shown changed
 *   samples  {"from":K, "times":[...], "bands":[{"values":[...],"peak":P}]}
 *                             samples K.. of the same bands, appended
 *   eventlog {"bytes":N}      the run's GHC eventlog grew to N bytes (the page
 *                             fetches its timeline section again); first
 *                             as soon as the run has one
 *   trace    {"bytes":N}      the run's MirageOS trace grew to N bytes of
 *                             packets kept (the page fetches its thread
 *                             timeline again); first as soon as it has some
 *   run      the run's facts (state, sizes, samples so far, last sample time)
 *   end      the run ended (complete or crashed); the stream closes
 *   problem  {"error":"..."}  the store could not be read (it is tried again
 *                             at the next change; the page says so)
 *
 * A run whose guest writes no .hp but GHC's eventlog has the eventlog's
 * heap samples followed instead (view_follow_eventlog into one decoder,
 * profile/eventlog/eventlog_summary.h's el_heap writing them into the same .hp
 * model), with the same events; once a .hp appears it takes over (a
 * whole "heap" event replaces the chart).  A run with an eventlog (its
 * row says so: a run without one costs no query more) has the eventlog
 * device's size looked at every time too, as the .hp's: from its status
 * block, which the guest rewrites after each buffer it flushed.
 *
 * Each look holds a read transaction only while it reads (never while a
 * client is slow to take the bytes), so a stalled page cannot hold back
 * the backend's checkpoints.  A run stream wakes only when its own run
 * changed (activity.h: one query per change of the store for all streams),
 * a catalogue stream at most 4 times a second.  A comment every 15 s lets
 * a vanished client be noticed by a proxy between; the client's own
 * socket is looked at every second while a stream waits (a hang-up reads
 * as POLLRDHUP), so a closed page's stream and its thread go within a
 * second, not at the next change: 128 streams opened and closed once held
 * every connection for over a minute on an idle store.
 *
 * May call: view/ (view_profile.h, view_backend.h, view_json.h),
 * profile/ (eventlog/eventlog_summary.h, eventlog/ghc_eventlog.h,
 * heap/heap_chart.h, heap/heap_profile.h, render/report.h), store/store.h, store/store_watch.h,
 * activity.h, metrics.h, web_internal.h (struct web), util/grow.h,
 * libmicrohttpd's content reader codes, pthreads, jansson.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "view/view_profile.h"
#include "view/view_backend.h"
#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/ghc_eventlog.h"
#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "profile/render/report.h"
#include "util/grow.h"
#include "metrics.h"
#include "web_internal.h"

#define RUN_EVERY_MS 250        /* a run stream's look at the run's row, at most */
#define CATALOGUE_EVERY_MS 250  /* a catalogue stream's look, at most */
#define KEEPALIVE_MS 15000
#define CLIENT_CHECK_MS 1000    /* how often a waiting stream looks at its client */
#define SNAP_KEEP_BYTES (4 << 20) /* a run's bytes kept for its streams to take */

struct event_stream {
	struct web *w;
	int catalogue;
	int client_fd;          /* the client's socket (-1: not known) */
	struct access_entry *access; /* the request's log entry, or NULL */
	int counted;            /* in the open streams of /metrics */
	/* pending output */
	char *out;
	size_t len, off, out_cap;
	int ended, started;
	uint64_t gen;
	int64_t last_look_us, last_run_us;
	int run_seen, run_pending;
	/* a run stream */
	int64_t run_id;
	struct run_snap *snap;    /* its run's shared reads */
	int retry;                /* the last look failed: look again when quiet */
	struct hp_profile hp;
	uint64_t fed;
	int hp_failed;
	struct hp_chart prev;
	int have_prev;
	enum view_heap_source heap_src;
	struct gel_decoder eld;   /* the eventlog's heap samples (heap_src EVENTLOG) */
	struct el_heap elh;
	uint64_t el_fed;
	int has_el;               /* the run has an eventlog: its size looked at */
	uint64_t el_sent;         /* its size last sent (an "eventlog" event) */
	int el_said;
	int64_t trace_sent;       /* the trace's bytes last sent (a "trace" event) */
	char last_run_json[512];
	char last_error[300];
	/* a catalogue stream */
	struct store_run_filter f;
	char *name;
	char *last_list;
};

void events_set_access(struct event_stream *e, struct access_entry *a)
{
	e->access = a;
	if (!e->counted) {
		e->counted = 1;
		web_metrics_streams(e->w->metrics, 1);
	}
}

void events_set_client(struct event_stream *e, int fd)
{
	if (e)
		e->client_fd = fd;
}

/* The client hung up (or its socket failed): nothing it will read. */
static int client_gone(const struct event_stream *e)
{
	struct pollfd p = {.fd = e->client_fd, .events = POLLRDHUP};
	return e->client_fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Waits up to timeout ms for the store (catalogue) or the run to change,
 * a second at a time, looking at the client between: the generation
 * seen, or -1 when the client went. */
static int64_t wait_change(struct event_stream *e, int timeout)
{
	for (;;) {
		int slice = timeout < CLIENT_CHECK_MS ? timeout : CLIENT_CHECK_MS;
		uint64_t g = e->catalogue ? store_watch_wait(e->w->live, e->gen, slice)
		                          : activity_wait(e->w->activity, e->run_id, e->gen, slice);
		if (client_gone(e))
			return -1; /* changed or not: no look for a client that went */
		if (g != e->gen || store_watch_stopping(e->w->live))
			return (int64_t)g;
		timeout -= slice;
		if (timeout <= 0)
			return (int64_t)g;
	}
}

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void append(struct event_stream *e, const char *s, size_t n)
{
	if (GROW(e->out, e->out_cap, e->len + n) != 0)
		return; /* the event is lost; the next look sends the state again */
	memcpy(e->out + e->len, s, n);
	e->len += n;
}

/* Appends "event: NAME\ndata: TEXT\n\n" (TEXT has no newline: compact JSON). */
static void emit(struct event_stream *e, const char *name, const char *data, size_t dlen)
{
	append(e, "event: ", 7);
	append(e, name, strlen(name));
	append(e, "\ndata: ", 7);
	append(e, data, dlen);
	append(e, "\n\n", 2);
}

static void emit_json(struct event_stream *e, const char *name, json_t *v)
{
	char *s = json_dump_inert(v);
	if (s)
		emit(e, name, s, strlen(s));
	free(s);
	json_decref(v);
}

static void emit_problem(struct event_stream *e, const char *msg)
{
	if (strcmp(msg, e->last_error) == 0)
		return; /* said once is enough */
	snprintf(e->last_error, sizeof(e->last_error), "%s", msg);
	emit_json(e, "problem", json_pack("{s:o}", "error", view_json_guest(msg)));
}

/* ---- a run ---------------------------------------------------------------- */

/* The chart's bands are those already sent, with the samples sent before
 * unchanged: then only the new samples need to go. */
static int same_bands(const struct hp_chart *a, const struct hp_chart *b)
{
	if (a->nbands != b->nbands)
		return 0;
	for (size_t i = 0; i < a->nbands; i++)
		if (a->bands[i].name != b->bands[i].name || /* the band's own string, or OTHER's */
		    memcmp(a->bands[i].values, b->bands[i].values, a->nsamples * sizeof(double)) != 0)
			return 0;
	return 1;
}

static void send_heap(struct event_stream *e)
{
	struct hp_chart c;
	struct hp_chart_opts o;
	hp_chart_defaults(&o);
	if (hp_chart_make(&e->hp, &o, &c) != 0)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		hp_chart_free(&c);
		return;
	}
	if (e->have_prev && same_bands(&e->prev, &c)) {
		size_t from = e->prev.nsamples;
		fprintf(f, "{\"from\":%zu,\"times\":[", from);
		for (size_t k = from; k < c.nsamples; k++)
			fprintf(f, "%s%.6g", k > from ? "," : "", c.times[k]);
		fputs("],\"bands\":[", f);
		for (size_t i = 0; i < c.nbands; i++) {
			fprintf(f, "%s{\"peak\":%llu,\"values\":[", i ? "," : "",
			        (unsigned long long)c.bands[i].peak);
			for (size_t k = from; k < c.nsamples; k++)
				fprintf(f, "%s%.0f", k > from ? "," : "", c.bands[i].values[k]);
			fputs("]}", f);
		}
		fprintf(f, "],\"dropped_trace\":%zu,\"merged_other\":%zu}", c.dropped_trace, c.merged_other);
		fclose(f);
		emit(e, "samples", buf, len);
	} else {
		fputc('{', f);
		report_heap_json(f, e->hp.sample_unit, &c);
		fprintf(f, ",\"dropped_trace\":%zu,\"merged_other\":%zu}", c.dropped_trace, c.merged_other);
		fclose(f);
		emit(e, "heap", buf, len);
	}
	free(buf);
	if (e->have_prev)
		hp_chart_free(&e->prev);
	e->prev = c;
	e->have_prev = 1;
}

/* ---- one read per change of a run, for all its streams ----------------------- */

struct run_snap {
	int64_t run_id;
	int refs;                 /* streams of the run (under snaps_mu) */
	struct run_snap *next;
	pthread_mutex_t mu;       /* held while reading and while a stream takes */
	int taken;
	uint64_t gen;             /* the run's change count when it was read */
	int64_t taken_us;
	struct store *s;          /* read-only, reopened when the file is replaced */
	ino_t ino;
	int rc;                   /* 0; STORE_ENOTFOUND: the run went; else failed (err) */
	char err[400];
	struct store_run run;
	enum view_heap_source src;
	char *bytes;              /* [base, base + nbytes) of src's device: the last reads' */
	size_t nbytes, cap;
	uint64_t base;
	int el_now;               /* the run has an eventlog the guest wrote: its size */
	uint64_t el_size;
};

static pthread_mutex_t snaps_mu = PTHREAD_MUTEX_INITIALIZER;
static struct run_snap *snaps;

static struct run_snap *snap_get(int64_t run_id)
{
	pthread_mutex_lock(&snaps_mu);
	struct run_snap *sn = snaps;
	while (sn && sn->run_id != run_id)
		sn = sn->next;
	if (!sn && (sn = calloc(1, sizeof(*sn)))) {
		sn->run_id = run_id;
		pthread_mutex_init(&sn->mu, NULL);
		sn->next = snaps;
		snaps = sn;
	}
	if (sn)
		sn->refs++;
	pthread_mutex_unlock(&snaps_mu);
	return sn;
}

static void snap_put(struct run_snap *sn)
{
	if (!sn)
		return;
	pthread_mutex_lock(&snaps_mu);
	if (--sn->refs > 0) {
		pthread_mutex_unlock(&snaps_mu);
		return;
	}
	for (struct run_snap **p = &snaps; *p; p = &(*p)->next)
		if (*p == sn) {
			*p = sn->next;
			break;
		}
	pthread_mutex_unlock(&snaps_mu);
	if (sn->s)
		store_close(sn->s);
	pthread_mutex_destroy(&sn->mu);
	free(sn->bytes);
	free(sn);
}

static const char *src_role(enum view_heap_source src)
{
	return src == VIEW_HEAP_HP ? "hp" : "eventlog";
}

static int snap_append(void *ctx, const void *data, size_t len)
{
	struct run_snap *sn = ctx;
	if (GROW_FROM(sn->bytes, sn->cap, sn->nbytes + len, 65536) != 0)
		return 1;
	memcpy(sn->bytes + sn->nbytes, data, len);
	sn->nbytes += len;
	return 0;
}

/* A store failure: said by every stream, and a fresh connection next time
 * (the file may have been replaced or repaired meanwhile). */
static void snap_failed(struct run_snap *sn, int rc, const char *msg)
{
	sn->rc = rc ? rc : -1;
	snprintf(sn->err, sizeof(sn->err), "%s", msg);
	if (sn->s && rc != STORE_ENOTFOUND) {
		store_close(sn->s);
		sn->s = NULL;
	}
}

/* The run as it is now, in one read transaction (under sn->mu): the bytes
 * its heap source added since the last read, its row, its eventlog's size. */
static void snap_take(struct web *w, struct run_snap *sn)
{
	struct stat st;
	char err[400];
	sn->taken = 1;
	sn->taken_us = now_us();
	sn->gen = activity_count(w->activity, sn->run_id); /* a change after it is read again */
	sn->rc = 0;
	if (sn->s && !(stat(w->db, &st) == 0 && st.st_ino == sn->ino)) {
		store_close(sn->s); /* the file was replaced */
		sn->s = NULL;
	}
	if (!sn->s) {
		struct store_open_opts o = {.mode = STORE_READ, .follows_growth = 1, .read_socket = view_read_socket()};
		if (store_open(&sn->s, w->db, &o, err, sizeof(err)) != 0) {
			sn->s = NULL;
			return snap_failed(sn, -1, err);
		}
		sn->ino = stat(w->db, &st) == 0 ? st.st_ino : 0;
	}
	int rc = store_read_begin(sn->s);
	if (rc != 0)
		return snap_failed(sn, rc, store_errmsg(sn->s));
	web_metrics_snapshot_read(w->metrics);
	struct view_run run;
	view_run_at(&run, sn->run_id);
	if (sn->src != VIEW_HEAP_HP) {
		enum view_heap_source src = view_heap_source(sn->s, &run);
		if (src != sn->src)
			sn->base = sn->nbytes = 0; /* another device: from its start */
		sn->src = src;
	}
	if (sn->src != VIEW_HEAP_NONE) {
		/* the bytes kept: the last SNAP_KEEP_BYTES (all that came since the
		 * last read at least), so a stream a few changes behind, or a new
		 * one of a small profile, reads nothing itself */
		size_t old = sn->nbytes;
		uint64_t from = sn->base + sn->nbytes, end;
		struct view_err ve;
		view_err_init(&ve);
		rc = view_read_device_bytes(sn->s, &run, src_role(sn->src), from, UINT64_MAX, snap_append, sn, &end, &ve);
		if (rc != 0) {
			sn->base = from;
			sn->nbytes = 0;
			store_read_end(sn->s);
			/* (no reason said: snap_append stopped it) */
			snprintf(err, sizeof(err), "%s", ve.n ? view_err_first(&ve) : "out of memory");
			return snap_failed(sn, -1, err);
		}
		size_t drop = sn->nbytes > SNAP_KEEP_BYTES ? sn->nbytes - SNAP_KEEP_BYTES : 0;
		if (drop > old)
			drop = old;
		if (drop) {
			memmove(sn->bytes, sn->bytes + drop, sn->nbytes - drop);
			sn->nbytes -= drop;
			sn->base += drop;
		}
	}
	if ((rc = store_get_run(sn->s, sn->run_id, &sn->run)) != 0) {
		snprintf(err, sizeof(err), "%s", rc == STORE_ENOTFOUND ? "the run is no longer in the store"
		                                                        : store_errmsg(sn->s));
		store_read_end(sn->s);
		return snap_failed(sn, rc, err);
	}
	struct store_device_info dev;
	sn->el_now = sn->run.eventlog_bytes >= 0 && store_find_device(sn->s, sn->run_id, "eventlog", &dev) == 0 &&
	             dev.status == STORE_STATUS_OK;
	if (sn->el_now) { /* never more than the guest wrote */
		sn->el_size = (uint64_t)dev.file_size;
		if (sn->el_size > store_device_written_bytes(&dev))
			sn->el_size = store_device_written_bytes(&dev);
	}
	store_read_end(sn->s);
}

static int el_heap_cb(void *ctx, const struct gel_event *ev)
{
	return el_heap_add(ctx, ev) != 0;
}

/* The heap profile read again from nothing (its source changed): the
 * next chart sent is whole. */
static void restart_heap(struct event_stream *e)
{
	hp_free(&e->hp);
	hp_init(&e->hp);
	e->fed = 0;
	e->hp_failed = 0;
	if (e->have_prev)
		hp_chart_free(&e->prev);
	e->have_prev = 0;
}

static int hp_feed_sink(void *ctx, const void *data, size_t len)
{
	return hp_feed(ctx, data, len) != 0;
}

static int el_feed_sink(void *ctx, const void *data, size_t len)
{
	return gel_feed(ctx, data, len) != 0;
}

/* Feeds the stream's parser from *fed to the shared bytes' end (under
 * sn->mu): a gap before them read by the stream itself, on the shared
 * connection (the bytes below a status block's size never change). */
static void feed_from_snap(struct event_stream *e, struct run_snap *sn)
{
	int hp = sn->src == VIEW_HEAP_HP;
	uint64_t *fed = hp ? &e->fed : &e->el_fed;
	view_profile_sink sink = hp ? hp_feed_sink : el_feed_sink;
	void *ctx = hp ? (void *)&e->hp : (void *)&e->eld;
	char err[400];
	if (*fed < sn->base && sn->s) {
		uint64_t end = *fed;
		int rc = store_read_begin(sn->s);
		if (rc == 0) {
			web_metrics_snapshot_read(e->w->metrics);
			struct view_run run;
			view_run_at(&run, e->run_id);
			struct view_err ve;
			view_err_init(&ve);
			rc = view_read_device_bytes(sn->s, &run, src_role(sn->src), *fed, sn->base, sink, ctx, &end, &ve);
			store_read_end(sn->s);
			if (rc != 0 && !ve.n)
				rc = 0; /* the parser refused: said below */
			snprintf(err, sizeof(err), "%s", view_err_first(&ve));
		} else {
			snprintf(err, sizeof(err), "%s", store_errmsg(sn->s));
		}
		*fed = end;
		if (rc < 0)
			emit_problem(e, err);
	}
	uint64_t end = sn->base + sn->nbytes;
	if (*fed >= sn->base && *fed < end && !(hp ? e->hp.failed : e->eld.failed || e->hp.failed)) {
		if (sink(ctx, sn->bytes + (*fed - sn->base), (size_t)(end - *fed)) == 0)
			*fed = end;
	}
	if (hp && e->hp.failed) {
		snprintf(err, sizeof(err), "heap profile: %s", hp_error(&e->hp));
		e->hp_failed = 1;
		emit_problem(e, err);
	} else if (!hp && (e->eld.failed || e->hp.failed)) {
		snprintf(err, sizeof(err), "eventlog: %s", e->eld.failed ? gel_error(&e->eld) : hp_error(&e->hp));
		e->hp_failed = 1;
		emit_problem(e, err);
	}
}

/* What changed since the last look, from the run's shared read: taken
 * again when the run changed since it was read (the first stream to look
 * after a change reads, the others take the same), or when a stream due
 * its run's row finds the read older than RUN_EVERY_MS.  The run's row is
 * sent at most every RUN_EVERY_MS. */
static void look_run(struct event_stream *e)
{
	struct run_snap *sn = e->snap;
	struct store_run run;
	int64_t now = now_us();
	int due = !e->run_seen || now - e->last_run_us >= RUN_EVERY_MS * 1000;
	pthread_mutex_lock(&sn->mu);
	if (!sn->taken || sn->gen < e->gen || ((due || sn->rc) && now - sn->taken_us >= RUN_EVERY_MS * 1000))
		snap_take(e->w, sn);
	if (sn->rc) {
		char msg[400];
		int gone = sn->rc == STORE_ENOTFOUND;
		snprintf(msg, sizeof(msg), "%s", sn->err);
		pthread_mutex_unlock(&sn->mu);
		emit_problem(e, msg);
		e->retry = 1;
		if (gone)
			e->ended = 1;
		return;
	}
	e->retry = 0;
	if (e->heap_src != VIEW_HEAP_HP) {
		if (sn->src == VIEW_HEAP_HP && e->heap_src == VIEW_HEAP_EVENTLOG)
			restart_heap(e); /* the .hp came after all: it is the heap profile */
		e->heap_src = sn->src;
	}
	if (e->heap_src != VIEW_HEAP_NONE && !e->hp_failed)
		feed_from_snap(e, sn);
	run = sn->run;
	int el_now = sn->el_now;
	uint64_t el_size = sn->el_size;
	pthread_mutex_unlock(&sn->mu);
	e->run_pending = !due;
	if (!e->hp_failed)
		e->last_error[0] = '\0';
	if (e->hp.nsamples > (e->have_prev ? e->prev.nsamples : 0))
		send_heap(e);
	if (el_now && (!e->el_said || el_size > e->el_sent)) {
		char b[48];
		int n = snprintf(b, sizeof(b), "{\"bytes\":%llu}", (unsigned long long)el_size);
		emit(e, "eventlog", b, (size_t)n);
		e->el_sent = el_size;
		e->el_said = 1;
	}
	if (!due)
		return;
	if (run.trace_bytes > e->trace_sent) {
		char b[48];
		int n = snprintf(b, sizeof(b), "{\"bytes\":%lld}", (long long)run.trace_bytes);
		emit(e, "trace", b, (size_t)n);
		e->trace_sent = run.trace_bytes;
	}
	e->run_seen = 1;
	e->last_run_us = now;
	json_t *o = api_run_object(&run, store_now_us());
	json_object_set_new(o, "samples", json_integer((json_int_t)e->hp.nsamples));
	json_object_set_new(o, "last_sample_time",
	                    e->hp.nsamples ? json_real(e->hp.times[e->hp.nsamples - 1]) : json_null());
	json_object_del(o, "duration_us"); /* it changes every time; the page counts it */
	char *s = json_dump_inert(o);
	if (s && strcmp(s, e->last_run_json) != 0) {
		snprintf(e->last_run_json, sizeof(e->last_run_json), "%s", s);
		emit(e, "run", s, strlen(s));
	}
	free(s);
	json_decref(o);
	if (run.state != STORE_RUN_RUNNING) {
		emit_json(e, "end", json_pack("{s:s}", "state", store_run_state_name(run.state)));
		e->ended = 1;
	}
}

struct event_stream *events_run(struct web *w, int64_t id)
{
	struct event_stream *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->w = w;
	e->client_fd = -1;
	e->run_id = id;
	if (!(e->snap = snap_get(id))) {
		free(e);
		return NULL;
	}
	hp_init(&e->hp);
	el_heap_init(&e->elh, &e->hp);
	gel_init(&e->eld, el_heap_cb, &e->elh);
	return e;
}

/* ---- the catalogue ---------------------------------------------------------- */

static void look_catalogue(struct event_stream *e)
{
	char err[300];
	json_t *a = api_run_list(e->w, &e->f, err, sizeof(err));
	if (!a)
		return emit_problem(e, err);
	e->last_error[0] = '\0';
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
		json_object_del(v, "duration_us"); /* it changes every time; the page counts it */
	json_t *doc = json_pack("{s:o}", "runs", a);
	char *s = json_dump_inert(doc);
	json_decref(doc);
	if (s && (!e->last_list || strcmp(s, e->last_list) != 0)) {
		emit(e, "runs", s, strlen(s));
		free(e->last_list);
		e->last_list = s;
	} else {
		free(s);
	}
}

struct event_stream *events_catalogue(struct web *w, const struct store_run_filter *f,
                                      const char *name)
{
	struct event_stream *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->w = w;
	e->client_fd = -1;
	e->catalogue = 1;
	e->f = *f;
	if (name && !(e->name = strdup(name))) {
		free(e);
		return NULL;
	}
	e->f.name_glob = e->name;
	return e;
}

/* ---- the stream ---------------------------------------------------------------- */

long events_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct event_stream *e = cls;
	(void)pos;
	while (e->off == e->len) {
		e->off = e->len = 0;
		if (e->ended || store_watch_stopping(e->w->live))
			return MHD_CONTENT_READER_END_OF_STREAM;
		int quiet = 0, timeout = KEEPALIVE_MS;
		if (!e->started) {
			e->started = 1;
			e->gen = e->catalogue ? store_watch_generation(e->w->live)
			                      : activity_count(e->w->activity, e->run_id);
			emit(e, "hello", "{}", 2);
		} else {
			if (e->catalogue) { /* a whole list: not more than 4 times a second */
				int64_t wait = CATALOGUE_EVERY_MS * 1000 - (now_us() - e->last_look_us);
				if (wait > 0)
					usleep((useconds_t)wait);
			}
			timeout = !e->catalogue && e->run_pending ? RUN_EVERY_MS : KEEPALIVE_MS;
			int64_t seen = wait_change(e, timeout);
			if (seen < 0)
				return MHD_CONTENT_READER_END_WITH_ERROR; /* the client went */
			uint64_t g = (uint64_t)seen;
			if (store_watch_stopping(e->w->live))
				return MHD_CONTENT_READER_END_OF_STREAM;
			quiet = g == e->gen;
			e->gen = g;
			/* quiet: the run's row may be due, or a run stream after an
			 * error tries again; a catalogue looks anyway.  Whatever it
			 * finds, a quiet stream says it is still here, so that a
			 * vanished client is noticed. */
			if (quiet && !(e->run_pending || e->catalogue || e->retry)) {
				append(e, ": still here\n\n", 14);
				continue;
			}
		}
		e->last_look_us = now_us();
		if (e->catalogue)
			look_catalogue(e);
		else
			look_run(e);
		if (quiet && timeout == KEEPALIVE_MS && e->len == 0)
			append(e, ": still here\n\n", 14);
	}
	size_t n = e->len - e->off < max ? e->len - e->off : max;
	memcpy(buf, e->out + e->off, n);
	e->off += n;
	if (e->access)
		e->access->bytes += n;
	return (long)n;
}

void events_free(void *cls)
{
	struct event_stream *e = cls;
	if (!e)
		return;
	if (e->counted)
		web_metrics_streams(e->w->metrics, -1);
	if (e->access)
		web_metrics_reply(e->w->metrics, e->access->status, 0, 1);
	access_entry_finish(e->w->access_log, e->access);
	snap_put(e->snap);
	if (!e->catalogue) {
		gel_free(&e->eld);
		el_heap_free(&e->elh);
	}
	hp_free(&e->hp);
	if (e->have_prev)
		hp_chart_free(&e->prev);
	free(e->out);
	free(e->name);
	free(e->last_list);
	free(e);
}
