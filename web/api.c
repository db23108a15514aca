/*
 * api.c - profdb serve's JSON API under /api/ (README "profdb serve"):
 * the catalogue, one run with its devices, heap samples since sample K,
 * the cost-centre tree and the diff of two runs.  Built with jansson;
 * runs and devices are view/view_json.c's shared objects, and
 * every guest string goes through view_json_guest (the exact text; its
 * controls and a byte that is not UTF-8 as \u escapes, so the document
 * holds none raw), and the documents are served as application/json with
 * nosniff and < > & as \u escapes, so a hostile name is data, never
 * markup.
 *
 * May call: view/ (view_format.h, view_backend.h, view_diff.h,
 * view_profile.h, view_samples.h, view_json.h), profile/ (heap/heap_compare.h,
 * heap/heap_profile.h, prof/prof_compare.h, prof/time_profile.h), reply.c
 * and args.c (web_internal.h), jansson.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "view/view_format.h"
#include "view/view_backend.h"
#include "view/view_diff.h"
#include "view/view_profile.h"
#include "view/view_samples.h"
#include "profile/heap/heap_compare.h"
#include "profile/heap/heap_profile.h"
#include "profile/prof/prof_compare.h"
#include "profile/prof/time_profile.h"
#include "web_internal.h"

/* The catalogue's runs are the shared run object (docs/json.md). */
json_t *api_run_object(const struct store_run *r, int64_t now_us)
{
	return view_json_run(r, now_us);
}

struct list_ctx {
	json_t *a;
	int64_t now;
	struct store *s; /* a host's store (not a fleet's mirror, whose bytes come later): samples counted */
	uint64_t budget;
};

static int add_run(void *ctx, const struct store_run *run)
{
	struct list_ctx *c = ctx;
	struct store_run r = *run;
	if (c->s)
		view_count_samples(c->s, &r, &c->budget); /* within the listing's bound */
	return json_array_append_new(c->a, api_run_object(&r, c->now)) != 0;
}

json_t *api_run_list(struct web *w, const struct store_run_filter *f, char *err, size_t len)
{
	struct store *s;
	char e[256];
	struct list_ctx c = {json_array(), store_now_us(), NULL, VIEW_SAMPLES_LIST_BUDGET};
	if (store_open(&s, w->db, &(struct store_open_opts){.mode = STORE_READ, .read_socket = view_read_socket()},
	               e, sizeof(e)) != 0) {
		snprintf(err, len, "%s", e);
		json_decref(c.a);
		return NULL;
	}
	if (!w->mirror)
		c.s = s;
	int rc = store_list_runs(s, f, add_run, &c);
	if (rc != 0) {
		snprintf(err, len, "%s", rc < 0 ? store_errmsg(s) : "out of memory");
		json_decref(c.a);
		c.a = NULL;
	}
	store_close(s);
	return c.a;
}

void api_runs(struct web *w, arg_fn arg, void *req, struct reply *r)
{
	struct store_run_filter f;
	char err[300];
	if (web_filter(arg, req, &f, err, sizeof(err)) != 0)
		return reply_error(r, 400, 1, "%s", err);
	json_t *a = api_run_list(w, &f, err, sizeof(err));
	if (!a)
		return reply_error(r, 503, 1, "%s", err);
	/* a full page may have older runs: where the next page starts */
	json_t *oldest = json_array_size(a) ? json_object_get(json_array_get(a, 0), "run_id") : NULL;
	json_int_t next = (int64_t)json_array_size(a) == f.limit && json_is_integer(oldest) ? json_integer_value(oldest) : 0;
	reply_json(r, json_pack("{s:o, s:o}", "runs", a, "before", next > 1 ? json_integer(next) : json_null()));
}

static int add_device(void *ctx, const struct store_device_info *d)
{
	return json_array_append_new(ctx, view_json_device(d)) != 0;
}

void api_run(struct web *w, int64_t id, struct reply *r)
{
	struct store *s;
	struct store_run run;
	char e[256];
	if (store_open(&s, w->db, &(struct store_open_opts){.mode = STORE_READ, .read_socket = view_read_socket()},
	               e, sizeof(e)) != 0)
		return reply_error(r, 503, 1, "%s", e);
	int rc = store_read_begin(s);
	if (rc == 0)
		rc = store_get_run(s, id, &run);
	if (rc != 0) {
		reply_error(r, rc == STORE_ENOTFOUND ? 404 : 503, 1, "%s", store_errmsg(s));
		store_close(s);
		return;
	}
	if (!w->mirror)
		view_count_samples(s, &run, NULL);
	json_t *o = api_run_object(&run, store_now_us()), *devs = json_array();
	store_list_devices(s, id, add_device, devs);
	store_read_end(s);
	store_close(s);
	json_object_set_new(o, "devices", devs);
	reply_json(r, o);
}

/* sep, then v (consumed) as inert JSON text, into r's open body. */
static void put_json(struct reply *r, const char *sep, json_t *v)
{
	char *t = json_dump_inert(v);
	json_decref(v);
	if (!t) {
		r->status = 500; /* (out of memory: the body is cut, its end missing) */
		return;
	}
	fputs(sep, r->f);
	fputs(t, r->f);
	free(t);
}

/* Raw bands, not the chart's: every name once (its index is its id in
 * the samples), and per sample only the bands present in it. */
void api_heap(struct web *w, int64_t id, arg_fn arg, void *req, struct reply *r)
{
	struct hp_profile hp;
	struct hp_tail tail;
	struct view_profile_read rd;
	uint64_t since = 0;
	const char *sv = arg(req, "since");
	if (sv && *sv && view_parse_u64(sv, &since) != 0)
		return reply_error(r, 400, 1, "since must be a sample number (0 is the first)");
	struct view v;
	struct view_err e;
	view_err_init(&e);
	hp_init(&hp);
	struct view_run run;
	view_run_at(&run, id);
	int bad = view_open(&v, w->db, &e) != 0 || view_read_heap_profile(&v, &run, &hp, &tail, &rd, &e) != 0;
	view_close(&v);
	if (bad) {
		reply_error(r, e.damaged ? 500 : 404, 1, "%s", view_err_first(&e));
		hp_free(&hp);
		return;
	}
	/* Written a sample at a time (serve streams it: web/reply.c): the
	 * whole document as jansson values took 372 MB for a 48 MB .hp, and
	 * three slow readers 1.1 GB.  The same bytes as that document. */
	if (reply_open(r, 200, "application/json") != 0) {
		hp_free(&hp);
		return;
	}
	fprintf(r->f, "{\"since\":%llu,\"nsamples\":%llu,\"bands\":[", (unsigned long long)since,
	        (unsigned long long)hp.nsamples);
	for (size_t i = 0; i < hp.nbands; i++)
		put_json(r, i ? "," : "", view_json_guest(hp.bands[i].name));
	fputs("],\"samples\":[", r->f);
	struct hp_cursor *cur = calloc(hp.nbands ? hp.nbands : 1, sizeof(*cur));
	for (size_t k = since; cur && k < hp.nsamples && !ferror(r->f); k++) {
		json_t *vals = json_array();
		for (size_t i = 0; i < hp.nbands; i++) {
			uint64_t b = hp_band_at(&hp.bands[i], &cur[i], (uint32_t)k);
			if (b)
				json_array_append_new(vals, json_pack("[I,I]", (json_int_t)i, (json_int_t)b));
		}
		put_json(r, k > since ? "," : "", json_pack("{s:f, s:o}", "time", hp.times[k], "values", vals));
	}
	free(cur);
	fputs("],\"job\":", r->f);
	put_json(r, "", view_json_guest(hp.job ? hp.job : ""));
	fprintf(r->f, ",\"dropped_bytes\":%lld,\"salvaged\":%s}", (long long)tail.dropped_bytes,
	        rd.salvaged ? "true" : "false");
	hp_free(&hp);
	reply_close(r);
}

void api_tree(struct web *w, int64_t id, struct reply *r)
{
	struct time_profile tp;
	struct view_profile_read rd;
	struct view v;
	struct view_err e;
	view_err_init(&e);
	tp_init(&tp);
	struct view_run run;
	view_run_at(&run, id);
	int bad = view_open(&v, w->db, &e) != 0 || view_read_time_profile(&v, &run, &tp, &rd, &e) != 0;
	view_close(&v);
	if (bad) {
		reply_error(r, e.damaged ? 500 : 404, 1, "%s", view_err_first(&e));
		tp_free(&tp);
		return;
	}
	/* Written a node at a time (serve streams it), as api_heap. */
	if (reply_open(r, 200, "application/json") != 0) {
		tp_free(&tp);
		return;
	}
	fputs("{\"command\":", r->f);
	put_json(r, "", view_json_guest(tp.command ? tp.command : ""));
	put_json(r, ",\"total_secs\":", json_real(tp.total_secs));
	fprintf(r->f, ",\"total_ticks\":%lld,\"total_alloc\":%lld,\"nodes\":[", (long long)tp.total_ticks,
	        (long long)tp.total_alloc);
	for (size_t i = 0; i < tp.nnodes && !ferror(r->f); i++) {
		const struct tp_node *n = &tp.nodes[i];
		const struct tp_cc *c = &tp.ccs[n->cc];
		put_json(r, i ? "," : "", json_pack("{s:I, s:i, s:o, s:o, s:o, s:I, s:f, s:f, s:f, s:f}",
		        "parent", n->parent == TP_NONE ? (json_int_t)-1 : (json_int_t)n->parent, "depth",
		        (int)n->depth, "name", view_json_guest(c->name), "module", view_json_guest(c->module), "src",
		        view_json_guest(c->src), "entries", (json_int_t)n->entries, "time", n->time, "alloc",
		        n->alloc, "inh_time", n->inh_time, "inh_alloc", n->inh_alloc));
	}
	fprintf(r->f, "],\"salvaged\":%s}", rd.salvaged ? "true" : "false");
	tp_free(&tp);
	reply_close(r);
}

/* ?a=N&b=M: call stacks and heap bands, the biggest movers first, as
 * profdb diff --json has them. */
void api_diff(struct web *w, arg_fn arg, void *req, struct reply *r)
{
	const char *a = arg(req, "a"), *b = arg(req, "b");
	int64_t ids[2] = {a ? web_run_id(a, strlen(a)) : -1, b ? web_run_id(b, strlen(b)) : -1};
	struct view_run runs[2];
	if (ids[0] < 0 || ids[1] < 0)
		return reply_error(r, 400, 1, "give two runs: /api/diff?a=RUN&b=RUN (run ids)");
	view_run_at(&runs[0], ids[0]);
	view_run_at(&runs[1], ids[1]);
	struct view_diff_side side[2];
	struct view v;
	struct view_err e;
	view_err_init(&e);
	memset(side, 0, sizeof(side));
	if (view_open(&v, w->db, &e) == 0) /* both runs in one snapshot */
		for (int i = 0; i < 2; i++)
			view_diff_side_load(&v, &runs[i], &side[i], &e);
	view_close(&v);
	json_t *o = json_pack("{s:I, s:I}", "a", (json_int_t)ids[0], "b", (json_int_t)ids[1]);
	if (side[0].have_tp && side[1].have_tp) {
		size_t n;
		struct cmp_stack *cs = cmp_stacks(&side[0].tp, &side[1].tp, &n);
		json_t *st = json_array();
		for (size_t i = 0; cs && i < n && i < 200; i++) {
			char *path = cmp_stack_path(&cs[i], &side[0].tp, &side[1].tp);
			json_array_append_new(st, json_pack("{s:o, s:[f,f], s:[f,f], s:[I,I]}", "stack",
			        view_json_guest(path ? path : ""), "time", cs[i].time[0], cs[i].time[1], "alloc",
			        cs[i].alloc[0], cs[i].alloc[1], "entries", (json_int_t)cs[i].entries[0],
			        (json_int_t)cs[i].entries[1]));
			free(path);
		}
		free(cs);
		json_object_set_new(o, "stacks", st);
	}
	if (side[0].have_hp && side[1].have_hp) {
		size_t n;
		struct cmp_band *cb = cmp_bands(&side[0].hp, &side[1].hp, &n);
		json_t *bd = json_array();
		for (size_t i = 0; cb && i < n && i < 200; i++)
			json_array_append_new(bd, json_pack("{s:o, s:b, s:b, s:[f,f], s:[f,f]}", "band",
			        view_json_guest(cb[i].name), "before", cb[i].present[0], "after", cb[i].present[1],
			        "peak", cb[i].peak[0], cb[i].peak[1], "area", cb[i].area[0], cb[i].area[1]));
		if (cb)
			cmp_bands_free(cb, n);
		json_object_set_new(o, "bands", bd);
	}
	view_diff_side_free(&side[0]);
	view_diff_side_free(&side[1]);
	if (!json_object_get(o, "stacks") && !json_object_get(o, "bands")) {
		json_decref(o);
		return reply_error(r, e.damaged ? 500 : 404, 1,
		                   "the two runs have no profile of the same kind to compare: %s",
		                   e.damaged ? e.damage : e.n ? view_err_first(&e) : "nothing readable");
	}
	if (e.damaged) /* what was left out, and why: not a profile the run lacks */
		json_object_set_new(o, "damaged", view_json_guest(e.damage));
	reply_json(r, o);
}
