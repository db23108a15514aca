/*
 * cmd_watch.c - `profdb watch RUN`: a running guest's heap in the terminal,
 * top-like: the largest bands now, each with its size and a sparkline,
 * samples so far, the last sample's time, bytes captured and the run's
 * state; redrawn whenever the store changes (store/store_watch.h); exits
 * when the run ends.  When stdout is not a terminal: one plain line per
 * new sample instead (for logs and scripts), or with --json one JSON
 * object per sample and one for the end (docs/json.md).  Band names are
 * the guest's: printed through safe_text, cut to the terminal's width.
 * A run with GHC's eventlog (xvdp3) has its GC and heap figures followed
 * the same way (collections, pauses, heap size and live data now): on
 * the screen under the title, or one "gc ..." line (a {"gc": ...} object
 * with --json) whenever the collections grew; and when the guest writes
 * no .hp, the eventlog's heap samples are its bands.  A run with a
 * MirageOS trace has its trace's figures followed too (events, packets
 * kept and lost, threads seen and alive, GC pauses, each counter's latest
 * value): under the title, or one "trace ..." line ({"trace": ...} with
 * --json) whenever it grew; the trace is read again when its bytes grew,
 * at most every TRACE_EVERY_MS.
 *
 * May call: store/ (store.h, store_watch.h), profile/ (heap_chart.h,
 *           heap_profile.h, heap_svg.h, ghc_eventlog.h, eventlog_summary.h), view/ through cli_view.h
 *           (and view_backend.h: where the read service listens), cli_util.h, cli_json.h.
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/ghc_eventlog.h"
#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "profile/heap/heap_svg.h"
#include "profile/trace/trace_timeline.h"
#include "view/view_trace.h"
#include "view/view_backend.h"
#include "store/store_watch.h"
#include "cli_json.h"
#include "cli_view.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb watch RUN [-n BANDS] [--json]\n"
	"  Follows a run's heap profile while the guest writes it: the largest\n"
	"  bands with their size now and a sparkline, samples so far, bytes\n"
	"  captured, state.  Exits when the run ends.  Not a terminal: one line\n"
	"  per new sample.  --json: one JSON object a line, {\"sample\": ...} for\n"
	"  each new sample (its BANDS largest bands) and {\"end\": run} at the end.\n"
	"  A run with GHC's eventlog: its GC and heap figures too (\"gc ...\" lines,\n"
	"  {\"gc\": ...} objects, whenever the collections grew).  A MirageOS trace:\n"
	"  its figures (\"trace ...\" lines, {\"trace\": ...} objects, as it grows).\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The value of chart band b in the last sample. */
static double now_of(const struct hp_chart *c, const struct hp_chart_band *b)
{
	return c->nsamples ? b->values[c->nsamples - 1] : 0;
}

/* A run's eventlog followed: its decoder, GC figures so far, and the
 * heap's size and live data at their latest event. */
struct watch_gc {
	struct gel_decoder d;
	struct el_gc g;
	uint64_t fed;
	uint64_t heap_now, heap_t, live_now, live_t;
	int have;                 /* a whole event has come */
	uint64_t printed;         /* the collections when last printed */
	int started;              /* printed once */
	struct el_heap *heap;     /* the run's heap samples, when its eventlog has them */
};

static int watch_gc_cb(void *ctx, const struct gel_event *ev)
{
	struct watch_gc *w = ctx;
	w->have = 1;
	if (ev->decoded && ev->type == GEL_HEAP_SIZE && ev->time_ns >= w->heap_t) {
		w->heap_now = ev->value;
		w->heap_t = ev->time_ns;
	}
	if (ev->decoded && ev->type == GEL_HEAP_LIVE && ev->time_ns >= w->live_t) {
		w->live_now = ev->value;
		w->live_t = ev->time_ns;
	}
	if (w->heap && el_heap_add(w->heap, ev) != 0)
		return 1;
	return el_gc_add(&w->g, ev) != 0;
}

static void gc_screen(const struct watch_gc *w)
{
	char a[32], b[32], c[32], d[32];
	const struct el_gc *g = &w->g;
	printf("GC: %llu collections (", (unsigned long long)g->collections);
	unsigned last = 1;
	for (unsigned i = 0; i < EL_GENS; i++)
		if (g->by_gen[i])
			last = i + 1;
	for (unsigned i = 0; i < last; i++)
		printf("%sgen %u: %llu", i ? ", " : "", i, (unsigned long long)g->by_gen[i]);
	printf("), %llu pauses, total %.2f ms, longest %.2f ms, p90 %.2f ms; %.1f%% of %.2f s\n",
	       (unsigned long long)g->pauses_n, (double)g->total_pause_ns / 1e6, (double)g->longest_pause_ns / 1e6,
	       (double)g->p90_ns / 1e6, g->gc_share * 100, (double)g->elapsed_ns / 1e9);
	heap_fmt_bytes((double)w->heap_now, a, sizeof(a));
	heap_fmt_bytes((double)g->peak_heap, b, sizeof(b));
	heap_fmt_bytes((double)w->live_now, c, sizeof(c));
	heap_fmt_bytes((double)g->peak_live, d, sizeof(d));
	printf("heap size %s now (peak %s), live data %s now (peak %s)\n\n", a, b, c, d);
}

struct watch_trace;
static void trace_screen(const struct watch_trace *wt, int cols);

static void draw_screen(const struct store_run *r, const struct hp_profile *hp, const struct hp_chart *c,
                        size_t nbands, const char *problem, const struct watch_gc *gw,
                        const struct watch_trace *wt)
{
	struct winsize ws;
	int cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40 ? ws.ws_col : 80;
	char caption[400], b1[32], b2[32];
	view_profile_caption(r, caption, sizeof(caption));
	fputs("\033[H\033[2J", stdout);
	safe_text_print(stdout, caption, cols - 1 < safe_text_width(caption) ? cols - 1 : 0);
	fputc('\n', stdout);
	printf("%zu samples", hp->nsamples);
	if (hp->nsamples)
		printf(", the last at %.2f %s", hp->times[hp->nsamples - 1],
		       hp->sample_unit ? "s" : "s");
	printf("; captured .hp %lld bytes, .prof %lld bytes", (long long)(r->hp_bytes < 0 ? 0 : r->hp_bytes),
	       (long long)(r->prof_bytes < 0 ? 0 : r->prof_bytes));
	if (r->eventlog_bytes >= 0)
		printf(", eventlog %lld bytes", (long long)r->eventlog_bytes);
	fputs("\n\n", stdout);
	if (gw->have)
		gc_screen(gw);
	if (wt)
		trace_screen(wt, cols);
	if (problem && *problem) {
		fputs("! ", stdout);
		safe_text_print(stdout, problem, cols - 3);
		fputs("\n\n", stdout);
	}
	if (!c || c->nsamples == 0) {
		if (wt && r->hp_bytes < 0) { /* a MirageOS guest: no heap profile to wait for */
			fflush(stdout);
			return;
		}
		puts(gw->have ? "no heap profile sample (.hp) yet" : "waiting for the first heap sample...");
		fflush(stdout);
		return;
	}
	/* the top bands by their size now */
	size_t order[64], n = 0;
	for (size_t i = 0; i < c->nbands && n < 64; i++)
		order[n++] = i;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && now_of(c, &c->bands[order[j]]) > now_of(c, &c->bands[order[j - 1]]); j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	double total = 0;
	for (size_t i = 0; i < c->nbands; i++)
		total += now_of(c, &c->bands[i]);
	heap_fmt_bytes(total, b1, sizeof(b1));
	printf("%9s  %-24s  heap now, by band (hp2ps's bands)\n", b1, "total");
	int spark = 24, namew = cols - 9 - 2 - spark - 2 - 1;
	for (size_t i = 0; i < n && i < nbands; i++) {
		const struct hp_chart_band *b = &c->bands[order[i]];
		heap_fmt_bytes(now_of(c, b), b2, sizeof(b2));
		printf("%9s  ", b2);
		cli_sparkline(c, b, spark);
		fputs("  ", stdout);
		safe_text_print(stdout, b->name, namew > 10 ? namew : 10);
		fputc('\n', stdout);
	}
	fflush(stdout);
}

static void print_lines(const struct hp_profile *hp, const struct hp_chart *c, size_t from)
{
	for (size_t k = from; c && k < c->nsamples; k++) {
		double total = 0, best = -1;
		const char *top = "";
		for (size_t i = 0; i < c->nbands; i++) {
			total += c->bands[i].values[k];
			if (c->bands[i].values[k] > best) {
				best = c->bands[i].values[k];
				top = c->bands[i].name;
			}
		}
		printf("sample %zu t=%.3f total=%.0f largest=%.0f ", k, hp->times[k], total, best);
		safe_text_print(stdout, top, 0);
		fputc('\n', stdout);
	}
	fflush(stdout);
}

/* --json: {"sample": {"index", "time", "total", "bands": [{"name", "bytes"}]}}
 * per sample, the nb largest bands of that sample, largest first. */
static void print_json_lines(const struct hp_profile *hp, const struct hp_chart *c, size_t from, size_t nb)
{
	size_t *order = c ? malloc(c->nbands * sizeof(*order)) : NULL;
	for (size_t k = from; order && k < c->nsamples; k++) {
		double total = 0;
		for (size_t i = 0; i < c->nbands; i++) {
			total += c->bands[i].values[k];
			order[i] = i;
		}
		for (size_t i = 1; i < c->nbands; i++) /* few bands: insertion sort */
			for (size_t j = i; j > 0 && c->bands[order[j - 1]].values[k] < c->bands[order[j]].values[k]; j--) {
				size_t t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		json_t *bands = json_array();
		for (size_t i = 0; i < c->nbands && i < nb; i++)
			json_array_append_new(bands, json_pack("{s:o, s:I}", "name", view_json_guest(c->bands[order[i]].name),
			                                       "bytes", (json_int_t)c->bands[order[i]].values[k]));
		cli_json_print(json_pack("{s:{s:I, s:f, s:I, s:o}}", "sample", "index", (json_int_t)k, "time",
		                     hp->times[k], "total", (json_int_t)total, "bands", bands));
	}
	free(order);
}

/* A run's MirageOS trace followed: its figures when last read. */
#define TRACE_EVERY_MS 250
struct watch_trace {
	int64_t bytes;            /* trace_bytes when read; -1 none yet */
	int64_t read_us;
	int have, changed;
	struct mprof_stats st;
	struct tt_live live;
};

/* Reads the trace again when it grew (inside the caller's snapshot). */
static void trace_refresh(struct store *s, const struct store_run *r, struct watch_trace *wt)
{
	int64_t now = store_now_us();
	if (r->trace_bytes < 0 || r->trace_bytes <= wt->bytes ||
	    (r->state == STORE_RUN_RUNNING && now - wt->read_us < TRACE_EVERY_MS * 1000))
		return;
	struct view_trace ct;
	if (view_trace_load(s, r, &ct, NULL) != 0)
		return; /* tried again at the next change */
	trace_render_stats(&ct.t, &wt->st);
	if (trace_timeline_live(&ct.t, &wt->live) == 0) {
		wt->have = wt->changed = 1;
		wt->bytes = r->trace_bytes;
		wt->read_us = now;
	}
	view_trace_free(&ct);
}

static void trace_screen(const struct watch_trace *wt, int cols)
{
	const struct mprof_stats *st = &wt->st;
	printf("trace: %llu events over %.3f s, packets %llu kept, %llu lost; threads %llu seen, %llu alive; "
	       "GC %llu pauses, %.3f ms in all, longest %.3f ms\n",
	       (unsigned long long)st->events, st->events ? (double)(st->last_ts - st->first_ts) / 1e9 : 0.0,
	       (unsigned long long)st->kept, (unsigned long long)st->lost, (unsigned long long)wt->live.threads,
	       (unsigned long long)wt->live.alive, (unsigned long long)st->gc_count, (double)st->gc_total_ns / 1e6,
	       (double)st->gc_max_ns / 1e6);
	for (size_t i = 0; i < st->ncounters; i++) {
		printf("%20lld  ", (long long)st->counters[i].value);
		safe_text_print(stdout, st->counters[i].name, cols > 40 ? cols - 23 : 17);
		fputc('\n', stdout);
	}
	fputc('\n', stdout);
}

static void trace_line(const struct watch_trace *wt, int json)
{
	const struct mprof_stats *st = &wt->st;
	if (json) {
		json_t *c = json_array();
		for (size_t i = 0; i < st->ncounters; i++)
			json_array_append_new(c, json_pack("{s:o, s:I, s:I}", "name", view_json_guest(st->counters[i].name),
			                                   "value", (json_int_t)st->counters[i].value, "updates",
			                                   (json_int_t)st->counters[i].updates));
		cli_json_print(json_pack("{s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:o}}", "trace", "events",
		                         (json_int_t)st->events, "packets_kept", (json_int_t)st->kept, "packets_lost",
		                         (json_int_t)st->lost, "threads", (json_int_t)wt->live.threads, "threads_alive",
		                         (json_int_t)wt->live.alive, "gc_pauses", (json_int_t)st->gc_count,
		                         "gc_total_ns", (json_int_t)st->gc_total_ns, "gc_longest_ns",
		                         (json_int_t)st->gc_max_ns, "span_ns",
		                         (json_int_t)(st->events ? st->last_ts - st->first_ts : 0), "ended", st->final,
		                         "counters", c));
		return;
	}
	printf("trace t=%.3f events=%llu packets_kept=%llu packets_lost=%llu threads=%llu alive=%llu gc=%llu "
	       "gc_total_ms=%.3f",
	       st->events ? (double)(st->last_ts - st->first_ts) / 1e9 : 0.0, (unsigned long long)st->events,
	       (unsigned long long)st->kept, (unsigned long long)st->lost, (unsigned long long)wt->live.threads,
	       (unsigned long long)wt->live.alive, (unsigned long long)st->gc_count, (double)st->gc_total_ns / 1e6);
	for (size_t i = 0; i < st->ncounters; i++) {
		fputc(' ', stdout);
		safe_text_print(stdout, st->counters[i].name, 0);
		printf("=%lld", (long long)st->counters[i].value);
	}
	fputc('\n', stdout);
	fflush(stdout);
}

/* What watch is asked: -n (the largest bands shown), --json. */
struct watch_opts {
	uint64_t bands;
	int json;
};

static int watch_opt(int c, const char *arg, void *ctx)
{
	struct watch_opts *o = ctx;

	if (c != 'n')
		return CLI_NOT_MINE;
	if (view_parse_u64(arg, &o->bands) != 0 || o->bands == 0 || o->bands > 64) {
		cli_err("-n must be a number of bands from 1 to 64, not '%s'", arg);
		return EXIT_USAGE;
	}
	return 0;
}

/* A run followed: its heap profile as read so far, charted, and how much
 * of it is already shown. */
struct watch_state {
	struct hp_profile hp;
	struct hp_chart chart;
	struct hp_chart_opts co;
	int have_chart;
	uint64_t fed;
	size_t printed;
	char problem[400];
	struct watch_gc gc;
	char gc_problem[400];
	enum view_heap_source src; /* the .hp, or the eventlog's heap samples */
	struct el_heap elh;
	struct watch_trace tr;
};

/* The run and what its heap profile has grown by, read in one snapshot:
 * 0, or 1 (reported). */
static int refresh(struct store *s, const struct view_run *run, struct store_run *r, struct watch_state *st)
{
	int err = store_read_begin(s);

	if (err == 0)
		err = store_get_run(s, run->id, r);
	if (err != 0) {
		cli_err("%s", store_errmsg(s));
		store_read_end(s);
		return 1;
	}
	st->problem[0] = '\0';
	if (st->src != VIEW_HEAP_HP) {
		enum view_heap_source src = view_heap_source(s, run);
		if (src == VIEW_HEAP_HP && st->src == VIEW_HEAP_EVENTLOG) {
			/* the .hp came after all: it is the heap profile, read from its start */
			st->gc.heap = NULL;
			hp_free(&st->hp);
			hp_init(&st->hp);
			if (st->have_chart)
				hp_chart_free(&st->chart);
			st->have_chart = 0;
			st->printed = 0;
		} else if (src == VIEW_HEAP_EVENTLOG) {
			st->gc.heap = &st->elh;
		}
		st->src = src;
	}
	struct view_err e;
	view_err_init(&e);
	if (st->src == VIEW_HEAP_HP && view_follow_heap(s, run, &st->hp, &st->fed, &e) != 0)
		snprintf(st->problem, sizeof(st->problem), "%s", view_err_first(&e));
	uint64_t fed = st->gc.fed;
	view_err_init(&e);
	if (!st->gc_problem[0] && view_follow_eventlog(s, run, &st->gc.d, &st->gc.fed, &e) != 0) {
		snprintf(st->gc_problem, sizeof(st->gc_problem), "%s", view_err_first(&e));
		if (!st->problem[0])
			snprintf(st->problem, sizeof(st->problem), "%s", st->gc_problem);
	}
	trace_refresh(s, r, &st->tr);
	store_read_end(s);
	if (st->gc.fed > fed && el_gc_finish(&st->gc.g) != 0)
		snprintf(st->gc_problem, sizeof(st->gc_problem), "eventlog: out of memory");
	if (st->hp.nsamples > (st->have_chart ? st->chart.nsamples : 0)) {
		if (st->have_chart)
			hp_chart_free(&st->chart);
		st->have_chart = hp_chart_make(&st->hp, &st->co, &st->chart) == 0;
	}
	return 0;
}

/* What is new: the screen redrawn, or the new samples printed. */
static void show(struct watch_state *st, const struct store_run *r, const struct watch_opts *o, int tty)
{
	const struct watch_gc *gw = &st->gc;
	if (tty) {
		draw_screen(r, &st->hp, st->have_chart ? &st->chart : NULL, (size_t)o->bands, st->problem, gw,
		            st->tr.have ? &st->tr : NULL);
		return;
	}
	if (st->tr.changed) {
		trace_line(&st->tr, o->json);
		st->tr.changed = 0;
	}
	if (gw->have && (!st->gc.started || gw->g.collections != gw->printed)) {
		const struct el_gc *g = &gw->g;
		if (o->json)
			cli_json_print(json_pack("{s:{s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I}}", "gc",
			                         "collections", (json_int_t)g->collections, "pauses", (json_int_t)g->pauses_n,
			                         "total_pause_ns", (json_int_t)g->total_pause_ns, "longest_pause_ns",
			                         (json_int_t)g->longest_pause_ns, "elapsed_ns", (json_int_t)g->elapsed_ns,
			                         "gc_share", g->gc_share, "heap_bytes", (json_int_t)gw->heap_now,
			                         "live_bytes", (json_int_t)gw->live_now, "peak_heap_bytes",
			                         (json_int_t)g->peak_heap, "peak_live_bytes", (json_int_t)g->peak_live));
		else
			printf("gc t=%.3f collections=%llu pauses=%llu total_pause_ms=%.3f longest_ms=%.3f heap=%llu "
			       "live=%llu\n",
			       (double)g->elapsed_ns / 1e9, (unsigned long long)g->collections,
			       (unsigned long long)g->pauses_n, (double)g->total_pause_ns / 1e6,
			       (double)g->longest_pause_ns / 1e6, (unsigned long long)gw->heap_now,
			       (unsigned long long)gw->live_now);
		fflush(stdout);
		st->gc.printed = g->collections;
		st->gc.started = 1;
	}
	if (st->have_chart && st->chart.nsamples > st->printed) {
		if (o->json)
			print_json_lines(&st->hp, &st->chart, st->printed, (size_t)o->bands);
		else
			print_lines(&st->hp, &st->chart, st->printed);
		st->printed = st->chart.nsamples;
	}
}

/* Follows run until it ends or a signal comes: the exit status. */
static int follow(struct store *s, struct store_watch *w, const struct view_run *run, const struct watch_opts *o)
{
	int tty = !o->json && isatty(STDOUT_FILENO), rc = 0;
	struct watch_state st = {.have_chart = 0, .tr = {.bytes = -1}};
	uint64_t gen = store_watch_generation(w);

	hp_init(&st.hp);
	el_gc_init(&st.gc.g);
	gel_init(&st.gc.d, watch_gc_cb, &st.gc);
	el_heap_init(&st.elh, &st.hp);
	hp_chart_defaults(&st.co);
	st.co.max_bands = 0; /* the terminal shows the largest now, not by area */
	for (;;) {
		struct store_run r;
		if (refresh(s, run, &r, &st) != 0) {
			rc = 1;
			break;
		}
		show(&st, &r, o, tty);
		if (r.state != STORE_RUN_RUNNING) {
			if (o->json)
				cli_json_print(json_pack("{s:o}", "end", view_json_run(&r, store_now_us())));
			else
				printf("run %lld ended: %s\n", (long long)run->id, store_run_state_name(r.state));
			break;
		}
		if (stop)
			break;
		gen = store_watch_wait(w, gen, 1000);
		if (stop)
			break;
	}
	if (st.have_chart)
		hp_chart_free(&st.chart);
	hp_free(&st.hp);
	gel_free(&st.gc.d);
	el_gc_free(&st.gc.g);
	el_heap_free(&st.elh);
	return rc;
}

int cmd_watch(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {"json", no_argument, NULL, 'j'},
	                                     {NULL, 0, NULL, 0}};
	static const struct cli_optspec spec = {usage, "n:h", opts, 1, watch_opt};
	struct watch_opts o = {.bands = 12};
	struct store *s;
	struct view_run run;
	char why[512];
	int rc = cli_parse_opts(&spec, argc, argv, &o, &o.json);

	if (rc != CLI_GO_ON)
		return rc;
	struct store_open_opts so = {.mode = STORE_READ, .follows_growth = 1, .read_socket = view_read_socket()};
	if (store_open(&s, db, &so, why, sizeof(why)) != 0) {
		cli_err("%s", why);
		return 1;
	}
	if (cli_resolve_host(s, argv[optind], &run) != 0) {
		store_close(s);
		return 1;
	}
	struct store_watch *w = store_watch_start(db);
	if (!w) {
		cli_err("cannot watch %s for changes", db);
		store_close(s);
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = follow(s, w, &run, &o);
	store_watch_free(w);
	store_close(s);
	return rc;
}
