/*
 * view_eventlog.c - a run's eventlog as events and GC figures
 * (view_eventlog.h), for profdb events and profdb gc.
 *
 * The events are kept as ghc-events show's lines (eventlog_show.c's
 * words) with each one's time, capability and type, then sorted stably by
 * time, as ghc-events show prints them: capabilities' blocks interleave in
 * the log.  The text kept is bounded (VIEW_EVENTS_MAX_TEXT).
 *
 * The timeline's events go to eventlog_timeline.c with the GC's.
 *
 * May call: profile/ (ghc_eventlog.h, eventlog_summary.h, eventlog_timeline.h),
 * util/safe_text.h, util/grow.h, view.h, view_err.h, view_json.h, view_profile.h,
 * jansson.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/grow.h"
#include "util/safe_text.h"
#include "view_eventlog.h"
#include "view_json.h"

int view_eventlog_type_arg(const char *name, uint16_t *num)
{
	if (!name || !*name)
		return -1;
	if (isdigit((unsigned char)name[0])) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(name, &end, 10);
		if (*end || errno || n > 0xfffe)
			return -1;
		*num = (uint16_t)n;
		return 0;
	}
	for (unsigned n = 0; n < 0xffff; n++) {
		const char *t = gel_type_name((uint16_t)n);
		if (t && strcasecmp(t, name) == 0) {
			*num = (uint16_t)n;
			return 0;
		}
	}
	return -1;
}

/* ---- events ---------------------------------------------------------------- */

int view_events_init(struct view_events *ev, const uint16_t *types, size_t ntypes)
{
	memset(ev, 0, sizeof(*ev));
	ev->types = types;
	ev->ntypes = ntypes;
	ev->mem = open_memstream(&ev->text, &ev->text_len);
	return ev->mem ? 0 : -1;
}

static int wanted(const struct view_events *ev, uint16_t type)
{
	if (!ev->ntypes)
		return 1;
	for (size_t i = 0; i < ev->ntypes; i++)
		if (ev->types[i] == type)
			return 1;
	return 0;
}

int view_events_add(void *ctx, const struct gel_event *e)
{
	struct view_events *ev = ctx;
	if (ev->failed || !ev->mem)
		return 1;
	if (e->type != GEL_BLOCK_MARKER)
		ev->seen++;
	if (!wanted(ev, e->type))
		return 0;
	long at = ftell(ev->mem);
	int rc = el_show_event(ev->mem, e);
	long end = ftell(ev->mem);
	if (rc < 0 || at < 0 || end < at || (size_t)end > VIEW_EVENTS_MAX_TEXT) {
		ev->failed = 1;
		return 1;
	}
	if (rc == 0)
		return 0;
	if (ev->n == ev->cap && GROW_FROM(ev->evs, ev->cap, ev->n + 1, 4096) != 0) {
		ev->failed = 1;
		return 1;
	}
	size_t len = (size_t)(end - at);
	ev->evs[ev->n] = (struct view_ev){e->time_ns, ev->n, e->cap, e->type, (size_t)at,
	                                  len > 0 ? len - 1 : 0}; /* its newline left out */
	ev->n++;
	return 0;
}

/* By time, then in the log's order: stable whatever qsort does. */
static int cmp_ev(const void *a, const void *b)
{
	const struct view_ev *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int view_events_finish(struct view_events *ev)
{
	if (ev->failed || !ev->mem)
		return -1;
	int rc = fclose(ev->mem);
	ev->mem = NULL;
	if (rc != 0)
		return -1;
	/* each line is a string of its own: its newline becomes its end */
	for (size_t i = 0; i < ev->n; i++)
		ev->text[ev->evs[i].at + ev->evs[i].len] = '\0';
	if (ev->n)
		qsort(ev->evs, ev->n, sizeof(*ev->evs), cmp_ev);
	return 0;
}

void view_events_free(struct view_events *ev)
{
	if (ev->mem)
		fclose(ev->mem);
	free(ev->text);
	free(ev->evs);
	memset(ev, 0, sizeof(*ev));
}

/* Writes text line by line, each escaped as safe_text_spelled does. */
static int write_lines(FILE *f, char *text)
{
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		safe_text_spelled(f, line, NULL);
		fputc('\n', f);
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

int view_events_write(FILE *f, const struct view_events *ev, const struct gel_decoder *d, int with_types)
{
	if (with_types) {
		char *types = NULL;
		size_t types_len = 0;
		FILE *m = open_memstream(&types, &types_len);
		if (!m)
			return -1;
		int rc = el_show_types(m, d);
		if (fclose(m) != 0 || rc != 0) {
			free(types);
			return -1;
		}
		write_lines(f, types);
		free(types);
		fputs("\nEvents:\n", f);
	}
	for (size_t i = 0; i < ev->n; i++) {
		safe_text_spelled(f, ev->text + ev->evs[i].at, NULL);
		fputc('\n', f);
	}
	if (with_types)
		fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

json_t *view_events_json(const struct view_events *ev, const struct view_eventlog *el, int64_t now_us)
{
	if (ev->n > VIEW_EVENTS_MAX_JSON)
		return NULL;
	json_t *types = json_array(), *events = json_array();
	for (size_t i = 0; i < el->d.ntypes; i++) {
		const struct gel_type *t = &el->d.types[i];
		const char *name = gel_type_name(t->num);
		json_array_append_new(types, json_pack("{s:i, s:o, s:o, s:o}", "type", (int)t->num, "name",
		                                       name ? json_string(name) : json_null(), "description",
		                                       view_json_guest(t->desc ? t->desc : ""), "size",
		                                       t->size == GEL_VARIABLE ? json_null()
		                                                               : json_integer(t->size)));
	}
	for (size_t i = 0; i < ev->n; i++) {
		const struct view_ev *v = &ev->evs[i];
		const char *name = gel_type_name(v->type);
		json_array_append_new(events,
		                      json_pack("{s:I, s:o, s:i, s:o, s:o}", "time_ns", (json_int_t)v->time_ns, "cap",
		                                v->cap < 0 ? json_null() : json_integer(v->cap), "type", (int)v->type,
		                                "name", name ? json_string(name) : json_null(), "line",
		                                view_json_guest(ev->text + v->at)));
	}
	return json_pack("{s:o, s:b, s:I, s:I, s:I, s:o, s:o}", "run", view_json_run(&el->rd.run, now_us), "whole",
	                 el->whole, "bytes", (json_int_t)el->rd.bytes, "cut_bytes", (json_int_t)el->tail.cut_bytes,
	                 "events_read", (json_int_t)ev->seen, "types", types, "events", events);
}

/* ---- GC -------------------------------------------------------------------- */

static int gc_cb(void *ctx, const struct gel_event *ev)
{
	return el_gc_add(ctx, ev) != 0;
}

int view_read_eventlog_gc(struct view *v, const struct view_run *run, struct el_gc *g, struct view_eventlog *el,
                          struct view_err *e)
{
	el_gc_init(g);
	if (view_read_eventlog(v, run, gc_cb, g, el, e) != 0) {
		if (el->d.stopped)
			view_error(e, "run %lld: out of memory reading its GCs", (long long)el->rd.run.run_id);
		return -1;
	}
	if (el_gc_finish(g) != 0) {
		view_error(e, "run %lld: out of memory reading its GCs", (long long)el->rd.run.run_id);
		return -1;
	}
	return 0;
}

json_t *view_gc_json(const struct el_gc *g, const struct view_eventlog *el, int64_t now_us)
{
	json_t *gens = json_array();
	for (unsigned i = 0; i < EL_GENS; i++)
		json_array_append_new(gens, json_integer((json_int_t)g->by_gen[i]));
	/* trailing generations that never collected are left out (GHC has 2 by default) */
	while (json_array_size(gens) > 1 &&
	       json_integer_value(json_array_get(gens, json_array_size(gens) - 1)) == 0)
		json_array_remove(gens, json_array_size(gens) - 1);
	return json_pack("{s:o, s:b, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I}",
	                 "run", view_json_run(&el->rd.run, now_us), "whole", el->whole, "collections",
	                 (json_int_t)g->collections, "gc_starts", (json_int_t)g->starts, "by_generation", gens,
	                 "pauses", (json_int_t)g->pauses_n, "total_pause_ns", (json_int_t)g->total_pause_ns,
	                 "longest_pause_ns", (json_int_t)g->longest_pause_ns, "p50_ns", (json_int_t)g->p50_ns,
	                 "p90_ns", (json_int_t)g->p90_ns, "p99_ns", (json_int_t)g->p99_ns, "elapsed_ns",
	                 (json_int_t)g->elapsed_ns, "gc_share", g->gc_share, "peak_live_bytes",
	                 (json_int_t)g->peak_live, "peak_heap_bytes", (json_int_t)g->peak_heap, "allocated_bytes",
	                 (json_int_t)g->allocated, "copied_bytes", (json_int_t)g->copied, "unmatched",
	                 (json_int_t)g->unmatched);
}

/* ---- the timeline ------------------------------------------------------------ */

struct tl_ctx {
	struct el_gc *g;
	struct el_timeline *t;
};

static int tl_cb(void *ctx, const struct gel_event *ev)
{
	struct tl_ctx *c = ctx;
	return el_gc_add(c->g, ev) != 0 || el_timeline_add(c->t, ev) != 0;
}

int view_read_eventlog_timeline(struct view *v, const struct view_run *run, struct el_gc *g, struct el_timeline *t,
                                struct view_eventlog *el, struct view_err *e)
{
	struct tl_ctx c = {g, t};
	el_gc_init(g);
	el_timeline_init(t);
	if (view_read_eventlog(v, run, tl_cb, &c, el, e) != 0) {
		if (el->d.stopped)
			view_error(e, "run %lld: out of memory reading its eventlog", (long long)el->rd.run.run_id);
		return -1;
	}
	if (el_gc_finish(g) != 0) {
		view_error(e, "run %lld: out of memory reading its GCs", (long long)el->rd.run.run_id);
		return -1;
	}
	el_timeline_finish(t);
	return 0;
}
