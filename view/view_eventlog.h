/*
 * view_eventlog.h - what a run's GHC eventlog shows, read through
 * view_read_eventlog (view_profile.h): its events as `ghc-events show`
 * words them (profdb events) and its GC figures (profdb gc), with their
 * JSON (docs/json.md).  (Its heap samples are view_profile.c's: the heap
 * view of a run without a .hp.)
 *
 * And its timeline (the report's section, profile/eventlog/eventlog_timeline.h).
 *
 * May call: profile/ (ghc_eventlog.h, eventlog_summary.h, eventlog_timeline.h),
 * util/safe_text.h, view.h, view_err.h, view_json.h, view_profile.h,
 * jansson.
 */
#ifndef PROFSVC_VIEW_EVENTLOG_H
#define PROFSVC_VIEW_EVENTLOG_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/eventlog_timeline.h"
#include "profile/eventlog/ghc_eventlog.h"
#include "view.h"
#include "view_profile.h"

/* ---- events ---------------------------------------------------------------- */

/* A type as --type names it: GC_START (any case), or its number.  0 and
 * *num, or -1 when the name is unknown. */
int view_eventlog_type_arg(const char *name, uint16_t *num);

#define VIEW_EVENTS_MAX_TEXT ((size_t)256 << 20) /* of show text kept, at most */
#define VIEW_EVENTS_MAX_JSON 1000000u /* events in one JSON document, at most */

struct view_ev {
	uint64_t time_ns, seq;
	int32_t cap;
	uint16_t type;
	size_t at, len;              /* the line in text (its newline left out) */
};

/* The events of a log in ghc-events show's order (stably by time), with
 * their show lines; a filter of types when ntypes > 0. */
struct view_events {
	const uint16_t *types;
	size_t ntypes;
	FILE *mem;
	char *text;
	size_t text_len;
	struct view_ev *evs;
	size_t n, cap;
	uint64_t seen;               /* events the decoder gave, block markers aside */
	int failed;                  /* out of memory, or past VIEW_EVENTS_MAX_TEXT */
};
/* 0, or -1 when out of memory. */
int view_events_init(struct view_events *ev, const uint16_t *types, size_t ntypes);
/* A gel_event_fn (ctx: the struct view_events). */
int view_events_add(void *ctx, const struct gel_event *e);
/* Ends the adding: sorts; 0 or -1. */
int view_events_finish(struct view_events *ev);
void view_events_free(struct view_events *ev);

/* The text of `ghc-events show` (the type table, then the events), or
 * with a filter the matching lines alone; guest text escaped as
 * safe_text_spelled does (a log of printable text prints as ghc-events
 * prints it).  0, or -1 on a write error. */
int view_events_write(FILE *f, const struct view_events *ev, const struct gel_decoder *d, int with_types);
/* {"run", "whole", "bytes", "cut_bytes", "events_read", "types", "events"}
 * (docs/json.md); NULL when there are more than VIEW_EVENTS_MAX_JSON events
 * (the document would take gigabytes). */
json_t *view_events_json(const struct view_events *ev, const struct view_eventlog *el,
                         int64_t now_us);

/* ---- GC -------------------------------------------------------------------- */

/* run's eventlog read into g (el_gc_init'ed here, finished); 0, or -1
 * (the reason in e).  el_gc_free(g) and view_eventlog_free(el) after. */
int view_read_eventlog_gc(struct view *v, const struct view_run *run, struct el_gc *g, struct view_eventlog *el,
                          struct view_err *e);
/* {"run", "whole", "collections", "gc_starts", "by_generation", ...} (docs/json.md). */
json_t *view_gc_json(const struct el_gc *g, const struct view_eventlog *el, int64_t now_us);

/* ---- the timeline ------------------------------------------------------------ */

/* run's eventlog read once into its GC figures (g) and its timeline (t),
 * both initialised here and finished; 0, or -1 (the reason in e; a log
 * not closed yet is a warning there).  el_gc_free(g), el_timeline_free(t)
 * and view_eventlog_free(el) after, whatever the result. */
int view_read_eventlog_timeline(struct view *v, const struct view_run *run, struct el_gc *g, struct el_timeline *t,
                                struct view_eventlog *el, struct view_err *e);

#endif
