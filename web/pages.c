/*
 * pages.c - profdb serve's HTML pages and downloads: the run catalogue
 * (/), a run's live report (/runs/N), two runs compared (/compare), and a
 * run's derived files (/runs/N/speedscope.json, folded, report.html; a
 * MirageOS trace's trace.ctf.tar and trace.chrome.json; its raw profiles
 * are download.c's), a run's
 * eventlog timeline alone (/api/runs/N/eventlog: the report's section,
 * which a live page fetches again every second), and a MirageOS trace's
 * thread timeline model (/api/runs/N/trace-timeline: a window of it, or
 * one thread's events, as JSON).
 * Pages are rendered here (server.c runs them through reply_stream: in
 * pieces, a slow reader holding a bounded pipe), guest text escaped by util/safe_text.h;
 * the scripts (catalogue.js, live.js and the report's own) only add to
 * them and put guest text in as textContent.
 *
 * May call: view/ (view_eventlog.h, view_backend.h, view_format.h,
 * view_profile.h, view_samples.h, view_trace.h, view_report.h), profile/
 * (render/flame.h, render/speedscope.h, samples/samples.h,
 * trace/trace_timeline.h and the models they draw), util/safe_text.h,
 * web_assets.h, reply.c and args.c (web_internal.h), jansson.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "view/view_eventlog.h"
#include "view/view_backend.h"
#include "view/view_format.h"
#include "view/view_profile.h"
#include "view/view_samples.h"
#include "view/view_trace.h"
#include "view/view_report.h"
#include "profile/render/flame.h"
#include "profile/samples/samples.h"
#include "profile/render/speedscope.h"
#include "profile/trace/trace_timeline.h"
#include "util/safe_text.h"
#include "web_assets.h"
#include "web_internal.h"

static void page_head(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
	markup_text_cut(f, title, 120);
	fprintf(f, " \xe2\x80\x94 profsvc</title>\n<style>\n%s</style></head>\n<body>\n"
	           "<header><h1><a href=\"/\">profsvc</a> \xc2\xb7 ", web_css);
	markup_text(f, title);
	fputs("</h1></header>\n<main>\n", f);
}

/* ---- / ---------------------------------------------------------------------- */

static void filter_form(FILE *f, arg_fn arg, void *req)
{
	static const char *const states[] = {"", "running", "complete", "crashed"};
	const char *name = arg(req, "name"), *state = arg(req, "state"), *since = arg(req, "since");
	fputs("<form class=\"filter\" method=\"get\" action=\"/\">name <input name=\"name\" "
	      "placeholder=\"glob, e.g. halvm-*\" value=\"", f);
	markup_text(f, name ? name : "");
	fputs("\"> state <select name=\"state\">", f);
	for (size_t i = 0; i < 4; i++)
		fprintf(f, "<option value=\"%s\"%s>%s</option>", states[i],
		        state && strcmp(state, states[i]) == 0 ? " selected" : "", i ? states[i] : "any");
	fputs("</select> since <input name=\"since\" placeholder=\"2h, 7d, 2026-11-21\" value=\"", f);
	markup_text(f, since ? since : "");
	fputs("\"> <button>filter</button></form>\n", f);
}

/* The guests seen so far in the catalogue and each one's latest run: the
 * earlier run a row's comparison takes as a (the runs come oldest first).
 * Past GUESTS_SEEN guests a row has no link until catalogue.js adds it. */
#define GUESTS_SEEN 256
struct rows_out {
	FILE *f;
	int fleet; /* a host column: the runs are a fleet's */
	struct store *s; /* a host's store: samples counted (a fleet's mirror holds their bytes later) */
	uint64_t budget;
	int64_t rows, oldest;
	char *names[GUESTS_SEEN];
	int64_t last[GUESTS_SEEN];
	size_t nnames;
};

/* The run before this one of its guest (0: none), this one remembered. */
static int64_t earlier_of(struct rows_out *o, const struct store_run *r)
{
	for (size_t i = 0; i < o->nnames; i++)
		if (strcmp(o->names[i], r->name) == 0) {
			int64_t prev = o->last[i];
			o->last[i] = r->run_id;
			return prev < r->run_id ? prev : 0;
		}
	if (o->nnames < GUESTS_SEEN && (o->names[o->nnames] = strdup(r->name)) != NULL)
		o->last[o->nnames++] = r->run_id;
	return 0;
}

/* A query value in a link: unreserved bytes as they are, the rest %XX
 * (inside an HTML attribute, so no quote or ampersand passes raw). */
static void put_query_value(FILE *f, const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~*?", *p))
			fputc(*p, f);
		else
			fprintf(f, "%%%02X", *p);
}

/* The link to the page of older runs, the page's filter kept. */
static void older_link(FILE *f, arg_fn arg, void *req, int64_t before)
{
	static const char *const keys[] = {"name", "state", "since", "limit"};
	fprintf(f, "<p class=\"older\"><a id=\"older\" href=\"/?before=%lld", (long long)before);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = arg(req, keys[i]);
		if (v && *v) {
			fprintf(f, "&amp;%s=", keys[i]);
			put_query_value(f, v);
		}
	}
	fputs("\">older runs</a></p>\n", f);
}

/* A size as the pages show it ("8.2 kB"), the exact bytes in its title
 * and data-bytes (catalogue.js writes the same). */
static void size_cell(FILE *f, const char *cls, int64_t bytes)
{
	if (bytes < 0) {
		fprintf(f, "<td class=\"num %s\">-</td>", cls);
		return;
	}
	char h[32], c[32];
	report_fmt_bytes((double)bytes, h, sizeof(h));
	report_fmt_count((uint64_t)bytes, c, sizeof(c));
	fprintf(f, "<td class=\"num %s\" data-bytes=\"%lld\" title=\"%s bytes\">%s</td>", cls, (long long)bytes,
	        c, h);
}

static int row(void *ctx, const struct store_run *run)
{
	struct rows_out *o = ctx;
	FILE *f = o->f;
	struct store_run counted = *run;
	const struct store_run *r = &counted;
	if (o->s)
		view_count_samples(o->s, &counted, &o->budget); /* within the listing's bound, as /api/runs */
	if (!o->rows++ || r->run_id < o->oldest)
		o->oldest = r->run_id;
	char t[32], d[32], holds[VIEW_HOLDS_MAX];
	view_format_time(r->started_us, t, sizeof(t));
	int64_t us = view_run_duration_us(r, store_now_us());
	if (us < 0)
		snprintf(d, sizeof(d), "?"); /* nobody is adding to it: its end is unknown */
	else
		view_format_duration(us, d, sizeof(d));
	view_format_holds(r, holds, sizeof(holds));
	const char *st = store_run_state_name(r->state);
	/* the first cell: a box to pick it for a comparison (catalogue.js) */
	fprintf(f, "<tr data-run=\"%lld\" class=\"%s\"><td class=\"pick\"><input type=\"checkbox\" class=\"pick\" "
	           "value=\"%lld\" title=\"pick run %lld to compare\" aria-label=\"pick run %lld\"></td>"
	           "<td><a href=\"/runs/%lld\">%lld</a></td>",
	        (long long)r->run_id, st, (long long)r->run_id, (long long)r->run_id, (long long)r->run_id,
	        (long long)r->run_id, (long long)r->run_id);
	if (o->fleet) {
		fputs("<td class=\"host\">", f);
		markup_text(f, r->host);
		fputs("</td>", f);
	}
	fputs("<td class=\"name\">", f);
	markup_text(f, r->name);
	fprintf(f, "</td><td class=\"state\"><span class=\"badge %s\">%s</span></td><td>%s</td>"
	           "<td class=\"num dur\">%s</td>", st, r->state == STORE_RUN_RUNNING ? "live" : st, t, d);
	size_cell(f, "prof", r->prof_bytes);
	size_cell(f, "hp", r->hp_bytes);
	fprintf(f, "<td class=\"holds\">%s</td>", holds); /* (our words and figures: nothing to escape) */
	int64_t prev = earlier_of(o, r);
	if (prev) /* the earlier run is a, this one b (catalogue.js does the same) */
		fprintf(f, "<td><a class=\"compare\" href=\"/compare?a=%lld&amp;b=%lld\">vs %lld</a></td></tr>\n",
		        (long long)prev, (long long)r->run_id, (long long)prev);
	else
		fputs("<td></td></tr>\n", f);
	return 0;
}

void page_catalogue(struct web *w, arg_fn arg, void *req, struct reply *r)
{
	struct store_run_filter flt;
	char err[300];
	struct store *s;
	if (web_filter(arg, req, &flt, err, sizeof(err)) != 0)
		return reply_error(r, 400, 0, "%s", err);
	if (store_open(&s, w->db, &(struct store_open_opts){.mode = STORE_READ, .read_socket = view_read_socket()},
	               err, sizeof(err)) != 0)
		return reply_error(r, 503, 0, "%s", err);
	if (reply_open(r, 200, "text/html; charset=utf-8") != 0) {
		store_close(s);
		return;
	}
	page_head(r->f, "runs");
	filter_form(r->f, arg, req);
	fprintf(r->f, "<p><span id=\"count\"></span> <span id=\"status\" class=\"note\"></span></p>\n"
	              "<p id=\"picker\" class=\"picker\">Tick two runs to compare them: "
	              "<a id=\"compare-picked\" class=\"button off\" role=\"button\" aria-disabled=\"true\">"
	              "compare</a> <span id=\"picked\" class=\"note\">none ticked</span></p>\n"
	              "<div class=\"scroll\"><table id=\"runs\" class=\"runs\"%s><thead><tr><th><span class=\"sr\">pick</span></th>"
	              "<th>run</th>%s<th>guest</th><th>state</th>"
	              "<th>started (UTC)</th><th>duration</th><th>.prof</th><th>.hp</th><th>holds</th>"
	              "<th>compare</th></tr></thead><tbody>\n",
	        w->mirror ? " data-fleet=\"1\"" : "", w->mirror ? "<th>host</th>" : "");
	struct rows_out out = {.f = r->f, .fleet = w->mirror != NULL, .s = w->mirror ? NULL : s,
	                       .budget = VIEW_SAMPLES_LIST_BUDGET};
	int rc = store_list_runs(s, &flt, row, &out);
	for (size_t i = 0; i < out.nnames; i++)
		free(out.names[i]);
	fputs("</tbody></table></div>\n", r->f);
	if (rc == 0 && out.rows == flt.limit && out.oldest > 1)
		older_link(r->f, arg, req, out.oldest);
	if (rc != 0) {
		char msg[300];
		snprintf(msg, sizeof(msg), "%s", rc < 0 ? store_errmsg(s) : "out of memory");
		store_close(s);
		return reply_error(r, 503, 0, "%s", msg);
	}
	store_close(s);
	fprintf(r->f, "</main>\n<script>\n%s</script>\n</body></html>\n", web_catalogue_js);
	reply_close(r);
}

/* ---- /runs/N and /compare -------------------------------------------------- */

/* Links to the earlier runs of the same guest, to compare with: the 8
 * most recent, the newest first (the runs come oldest first, so the last
 * 8 seen are kept, in a ring). */
#define EARLIER_MAX 8
struct earlier {
	const char *name;
	int64_t id;
	char labels[EARLIER_MAX][96], hrefs[EARLIER_MAX][64];
	size_t n;    /* seen, of which the last EARLIER_MAX are kept */
};

static int earlier_cb(void *ctx, const struct store_run *run)
{
	struct earlier *e = ctx;
	if (run->run_id >= e->id || strcmp(run->name, e->name) != 0)
		return 0;
	size_t k = e->n++ % EARLIER_MAX;
	char t[32];
	view_format_time(run->started_us, t, sizeof(t));
	snprintf(e->labels[k], sizeof(e->labels[k]), "against run %lld (%s, %s)",
	         (long long)run->run_id, t, store_run_state_name(run->state));
	snprintf(e->hrefs[k], sizeof(e->hrefs[k]), "/compare?a=%lld&b=%lld",
	         (long long)run->run_id, (long long)e->id);
	return 0;
}

static void find_earlier(struct view *v, struct earlier *e)
{
	struct store_run_filter f = {.state = -1, .limit = 2000};
	if (view_snapshot(v, NULL) == 0)
		store_list_runs(v->s, &f, earlier_cb, e);
}

/* A page's links: labels and addresses, pairs in lv (report_input's
 * links), the addresses made here kept in links. */
struct page_links {
	char links[12][96];
	const char *lv[2 * 16];
	size_t n;
};

/* The link "/runs/ID/REST" (rest NULL: the run's page) as label. */
static void add_link(struct page_links *pl, const char *label, int64_t id, const char *rest)
{
	if (rest)
		snprintf(pl->links[pl->n], sizeof(pl->links[pl->n]), "/runs/%lld/%s", (long long)id, rest);
	else
		snprintf(pl->links[pl->n], sizeof(pl->links[pl->n]), "/runs/%lld", (long long)id);
	pl->lv[2 * pl->n] = label;
	pl->lv[2 * pl->n + 1] = pl->links[pl->n];
	pl->n++;
}

/* The run page's downloads: what the run holds, as the guest wrote it or
 * as exported. */
static void download_links(struct view *v, const struct view_report *rr, int64_t id, int against,
                           struct page_links *pl)
{
	/* the .hp download is the guest's xvdp2: a heap drawn from GHC's
	 * eventlog has none to give */
	struct store_device_info hpdev;
	int hp_device = view_snapshot(v, NULL) == 0 && store_find_device(v->s, id, "xvdp2", &hpdev) == 0 &&
	                hpdev.role == STORE_ROLE_HP;
	static const char *const files[][2] = {
		{".prof", "prof"}, {".hp", "hp"}, {"speedscope JSON", "speedscope.json"},
		{"folded stacks", "folded"}, {"report.html", "report.html"},
	};
	for (size_t i = 0; i < 5; i++) {
		if ((i == 0 || i == 2 || i == 3) && !rr->have_tp)
			continue;
		if (i == 0 && rr->from_samples)
			continue; /* no .prof: the time profile is the stack samples */
		if (i == 1 && (!hp_device || (!rr->have_hp && rr->run.hp_bytes < 0)))
			continue;
		add_link(pl, files[i][0], id, files[i][1]);
	}
	struct store_device_info evdev; /* GHC's eventlog, as the guest wrote it */
	if (view_snapshot(v, NULL) == 0 && store_find_device(v->s, id, "eventlog", &evdev) == 0 &&
	    evdev.role == STORE_ROLE_EVENTLOG && evdev.status == STORE_STATUS_OK)
		add_link(pl, "eventlog", id, "eventlog");
	if (rr->have_trace && !against) { /* the trace for babeltrace2, and for Perfetto */
		add_link(pl, "CTF trace (babeltrace2)", id, "trace.ctf.tar");
		add_link(pl, "Chrome trace (Perfetto, chrome://tracing)", id, "trace.chrome.json");
	}
	if (rr->from_samples) /* pprof's file of the samples */
		add_link(pl, "pprof (go tool pprof)", id, "samples.pb.gz");
}

/* What a live page follows: its events, its trace's timeline, its
 * eventlog's; the addresses kept in u. */
struct live_urls {
	char events[64], tl_follow[64], trace_api[80];
};

static void live_parts(struct report_input *in, const struct view_report *rr, int64_t id, struct live_urls *u)
{
	if (rr->have_trace) {
		snprintf(u->trace_api, sizeof(u->trace_api), "/api/runs/%lld/trace-timeline", (long long)id);
		in->trace_api = u->trace_api;
	}
	if (rr->run.state != STORE_RUN_RUNNING)
		return;
	snprintf(u->events, sizeof(u->events), "/api/runs/%lld/events", (long long)id);
	in->live_events = u->events;
	in->page_script = web_live_js;
	if (rr->from_samples)
		in->refresh_ms = 2000; /* its flame graph grows as samples come */
	if (rr->tl_shown) {
		snprintf(u->tl_follow, sizeof(u->tl_follow), "/api/runs/%lld/eventlog", (long long)id);
		in->timeline_follow = u->tl_follow;
	}
}

/* The report of run id, and of a run to compare it with (the compare page,
 * against: its argument), in rr from view v: 0, or the error page
 * replied. */
static int load_report(struct web *w, struct view *v, struct view_report *rr, int64_t id, const char *against,
                       int live, struct reply *r)
{
	int64_t aid = against ? web_run_id(against, strlen(against)) : 0;
	if (aid < 0) {
		reply_error(r, 400, 0, "a= must be a run id");
		return -1;
	}
	struct view_err e;
	view_err_init(&e);
	if (view_open(v, w->db, &e) != 0) {
		reply_error(r, 503, 0, "%s", view_err_first(&e));
		return -1;
	}
	struct view_run run, arun;
	view_run_at(&run, id);
	int bad = view_report_load(rr, v, &run, live, &e) != 0;
	if (!bad && against) {
		view_run_at(&arun, aid);
		bad = view_report_against(rr, v, &arun, against, &e) != 0;
	}
	if (!bad)
		return 0;
	view_report_free(rr);
	view_close(v);
	const char *err = view_err_first(&e);
	reply_error(r, e.damaged ? 500 : strstr(err, "no run") || strstr(err, "has no") ? 404 : 503, 0, "%s", err);
	return -1;
}

/* The report of run id (against: the compare page), live while the run
 * lasts; file: the report.html download, a page on its own (no links to
 * this server's pages, which a file's reader may not reach). */
static void render_report(struct web *w, int64_t id, const char *against, int live, int file, struct reply *r)
{
	struct view_report rr;
	struct report_input in;
	struct page_links pl = {.n = 0};
	struct live_urls urls;
	/* one view: the report, its links and the earlier runs of one moment */
	struct view v;

	if (load_report(w, &v, &rr, id, against, live, r) != 0)
		return;
	view_report_input(&rr, &in);
	if (!against) {
		download_links(&v, &rr, id, 0, &pl);
	} else { /* the compare page: the two runs' own pages */
		add_link(&pl, "the earlier run's page", rr.arun.run_id, NULL);
		add_link(&pl, "the later run's page", id, NULL);
	}
	struct earlier ea = {rr.run.name, id, {{0}}, {{0}}, 0};
	if (!against)
		find_earlier(&v, &ea);
	view_close(&v);
	for (size_t i = 0; i < ea.n && i < EARLIER_MAX; i++, pl.n++) { /* the newest first */
		size_t k = (ea.n - 1 - i) % EARLIER_MAX;
		pl.lv[2 * pl.n] = ea.labels[k];
		pl.lv[2 * pl.n + 1] = ea.hrefs[k];
	}
	in.links = file ? NULL : pl.lv;
	in.nlinks = file ? 0 : pl.n;
	in.home = file ? NULL : "/"; /* every served page links back to the catalogue */
	if (live)
		live_parts(&in, &rr, id, &urls);
	if (reply_open(r, 200, "text/html; charset=utf-8") == 0) {
		if (report_write(r->f, &in) != 0) {
			reply_close(r);
			view_report_free(&rr);
			return reply_error(r, 500, 0, "the report could not be rendered (out of memory)");
		}
		reply_close(r);
	}
	view_report_free(&rr);
}

void page_timeline(struct web *w, int64_t id, struct reply *r)
{
	struct el_gc g;
	struct el_timeline t;
	struct view_eventlog el;
	struct view v;
	struct view_err e;
	char idbuf[32], follow[64];

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	view_err_init(&e);
	if (view_open(&v, w->db, &e) != 0)
		return reply_error(r, 503, 1, "%s", view_err_first(&e));
	struct store_device_info dev;
	struct store_run run;
	if (view_snapshot(&v, NULL) != 0 || store_get_run(v.s, id, &run) != 0 ||
	    store_find_device(v.s, id, "eventlog", &dev) != 0) {
		view_close(&v);
		return reply_error(r, 404, 1, "run %s has no eventlog", idbuf);
	}
	struct view_run vr;
	view_run_at(&vr, id);
	int ok = view_read_eventlog_timeline(&v, &vr, &g, &t, &el, &e) == 0;
	int running = run.state == STORE_RUN_RUNNING;
	view_close(&v);
	snprintf(follow, sizeof(follow), "/api/runs/%s/eventlog", idbuf);
	/* the section as the run page has it; following on while the run lasts */
	const char *note = e.n && (!ok || !running) ? view_err_first(&e) : NULL;
	if (reply_open(r, 200, "text/html; charset=utf-8") == 0) {
		el_timeline_html(r->f, ok ? &t : NULL, ok ? &g : NULL, running ? follow : NULL, note);
		reply_close(r);
	}
	el_gc_free(&g);
	el_timeline_free(&t);
	view_eventlog_free(&el);
}

/* A run's trace loaded in one snapshot (into run, which the trace's name
 * points into): 0, or an error replied. */
static int trace_of(struct web *w, int64_t id, struct view *v, struct store_run *run, struct view_trace *ct,
                    int json, struct reply *r)
{
	struct view_err e;
	view_err_init(&e);
	if (view_open(v, w->db, &e) != 0) {
		reply_error(r, 503, json, "%s", view_err_first(&e));
		return -1;
	}
	int rc = view_snapshot(v, &e) != 0 ? -1 : store_get_run(v->s, id, run);
	if (rc == STORE_ENOTFOUND) {
		reply_error(r, 404, json, "run %lld has no MirageOS trace", (long long)id);
	} else if (rc != 0) {
		reply_error(r, rc == STORE_ECORRUPT ? 500 : 503, json, "%s", store_errmsg(v->s));
	} else if ((rc = view_trace_load(v->s, run, ct, &e)) != 0) { /* its name: run's */
		/* a packet failing its checksum is the data's damage, not the store away */
		reply_error(r, rc == VIEW_TRACE_NONE ? 404 : e.damaged ? 500 : 503, json, "%s", view_err_first(&e));
	}
	if (rc != 0) {
		view_close(v);
		return -1;
	}
	return 0;
}

/* GET /api/runs/N/trace-timeline[?from=NS&to=NS][&cols=N] | ?thread=ID */
void page_trace_timeline(struct web *w, int64_t id, arg_fn arg, void *req, struct reply *r)
{
	struct web_trace_args ta;
	char err[200];
	if (web_trace_args(arg, req, &ta, err, sizeof(err)) != 0)
		return reply_error(r, 400, 1, "%s", err);
	_Static_assert(WEB_TRACE_MAX_COLS == TT_MAX_COLS, "serve takes the columns the model draws");
	struct tt_window win = {.whole = ta.whole, .from = ta.from, .to = ta.to, .cols = ta.cols};
	struct view v;
	struct view_trace ct;
	struct store_run run;
	if (trace_of(w, id, &v, &run, &ct, 1, r) != 0)
		return;
	view_close(&v);
	if (reply_open(r, 200, "application/json") == 0) {
		int rc = ta.has_thread ? trace_timeline_thread_json(r->f, &ct.t, ta.thread)
		                       : trace_timeline_json(r->f, &ct.t, &win);
		reply_close(r);
		if (rc != 0)
			reply_error(r, 500, 1, "could not render (out of memory)");
	}
	view_trace_free(&ct);
}

/* /runs/N/trace.ctf.tar and trace.chrome.json */
static void download_trace(struct web *w, int64_t id, int tar, struct reply *r)
{
	struct view v;
	struct view_trace ct;
	struct store_run run;
	if (trace_of(w, id, &v, &run, &ct, 0, r) != 0)
		return;
	view_close(&v);
	char dir[48];
	snprintf(dir, sizeof(dir), "run-%lld.ctf", (long long)id);
	if (reply_open(r, 200, tar ? "application/x-tar" : "application/json") == 0) {
		int rc = tar ? trace_render_ctf_tar(r->f, &ct.t, dir, (long long)(store_now_us() / 1000000))
		             : trace_render_chrome(r->f, &ct.t);
		reply_close(r);
		if (rc != 0)
			reply_error(r, 500, 0, "could not render (out of memory)");
		else
			snprintf(r->disposition, sizeof(r->disposition), "attachment; filename=\"run-%lld.%s\"",
			         (long long)id, tar ? "ctf.tar" : "chrome.json");
	}
	view_trace_free(&ct);
}

void page_run(struct web *w, int64_t id, struct reply *r)
{
	render_report(w, id, NULL, 1, 0, r);
}

void page_compare(struct web *w, arg_fn arg, void *req, struct reply *r)
{
	const char *a = arg(req, "a"), *b = arg(req, "b");
	int64_t bid = b ? web_run_id(b, strlen(b)) : -1;
	if (bid < 0 || !a)
		return reply_error(r, 400, 0, "give two runs: /compare?a=EARLIER&b=LATER (run ids)");
	render_report(w, bid, a, 0, 0, r);
}

/* ---- downloads (the raw profiles: download.c) --------------------------------- */

/* The run has stack samples (profile-backend sample). */
static int run_has_samples(struct view *v, const struct view_run *run)
{
	struct store_device_info dev;
	return view_snapshot(v, NULL) == 0 && store_find_device(v->s, run->id, STORE_SAMPLES_VDEV, &dev) == 0;
}

/* A run's stack samples as speedscope.json, folded or pprof's samples.pb.gz. */
static void download_samples(struct web *w, const struct view_run *run, const char *idbuf, const char *what,
                             struct reply *r)
{
	struct view v;
	struct view_err e;
	struct samples_profile sp;
	struct view_profile_read rd;
	view_err_init(&e);
	samples_init(&sp); /* (freed whatever the result) */
	int bad = view_open(&v, w->db, &e) != 0 || view_read_samples(&v, run, &sp, &rd, &e) != 0;
	view_close(&v);
	if (bad) {
		samples_free(&sp);
		return reply_error(r, e.damaged ? 500 : 404, 0, "%s", view_err_first(&e));
	}
	int ss = strcmp(what, "speedscope.json") == 0, folded = strcmp(what, "folded") == 0;
	char caption[400];
	view_profile_caption(&rd.run, caption, sizeof(caption));
	snprintf(r->disposition, sizeof(r->disposition), "attachment; filename=\"run-%s.%s\"", idbuf,
	         ss ? "speedscope.json" : folded ? "folded.txt" : "samples.pb.gz");
	if (reply_open(r, 200, ss ? "application/json" : folded ? "text/plain; charset=utf-8" : "application/gzip") == 0) {
		int rc = ss ? samples_write_speedscope(r->f, &sp, caption)
		         : folded ? samples_write_folded(r->f, &sp) : samples_write_pprof(r->f, &sp);
		if (reply_close(r) != 0 || rc != 0)
			reply_error(r, 500, 0, "could not render (out of memory, or the client went)");
	}
	samples_free(&sp);
}

void page_download(struct web *w, int64_t id, const char *what, struct reply *r)
{
	char idbuf[32];
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id);
	struct view v;
	struct view_err e;
	struct view_run run;
	view_run_at(&run, id);
	view_err_init(&e);
	if (strcmp(what, "report.html") == 0) {
		/* named before it is rendered: a streamed reply's headers go with its
		 * first piece (an error page takes the name away) */
		snprintf(r->disposition, sizeof(r->disposition), "attachment; filename=\"report-%s.html\"", idbuf);
		render_report(w, id, NULL, 0, 1, r);
		return;
	}
	if (strcmp(what, "trace.ctf.tar") == 0 || strcmp(what, "trace.chrome.json") == 0)
		return download_trace(w, id, strcmp(what, "trace.ctf.tar") == 0, r);
	int ss = strcmp(what, "speedscope.json") == 0, folded = strcmp(what, "folded") == 0;
	if (!ss && !folded && strcmp(what, "samples.pb.gz") != 0)
		return reply_error(r, 404, 0, "no such file of a run: %s (there are prof, hp, eventlog, "
		                              "speedscope.json, folded, samples.pb.gz, trace.ctf.tar, "
		                              "trace.chrome.json and report.html)", what);
	if (!ss && !folded)
		return download_samples(w, &run, idbuf, what, r);
	struct time_profile tp;
	struct view_profile_read rd;
	tp_init(&tp);
	int bad = view_open(&v, w->db, &e) != 0 || view_read_time_profile(&v, &run, &tp, &rd, &e) != 0;
	if (bad && !e.damaged && v.s && run_has_samples(&v, &run)) {
		/* No .prof: its stack samples are what these files show (a .prof
		 * that fails its checksum is said, not replaced). */
		tp_free(&tp);
		view_close(&v);
		return download_samples(w, &run, idbuf, what, r);
	}
	view_close(&v);
	if (bad) { /* damaged: an error of the server's, with the store's words (which bytes, profdb check) */
		tp_free(&tp);
		return reply_error(r, e.damaged ? 500 : 404, 0, "%s", view_err_first(&e));
	}
	char caption[400];
	view_profile_caption(&rd.run, caption, sizeof(caption));
	snprintf(r->disposition, sizeof(r->disposition), "attachment; filename=\"run-%s.%s\"", idbuf,
	         ss ? "speedscope.json" : "folded.txt");
	if (reply_open(r, 200, ss ? "application/json" : "text/plain; charset=utf-8") == 0) {
		int rc = ss ? speedscope_write(r->f, &tp, caption) : flame_folded(r->f, &tp, FLAME_TIME);
		if (reply_close(r) != 0 || rc != 0)
			reply_error(r, 500, 0, "could not render (out of memory, or the client went)");
	}
	tp_free(&tp);
}
