/*
 * trace_view.h - a MirageOS trace as a section of the HTML report
 * (profile/render/report.c): facts, events by kind, GC figures, the thread
 * timeline (trace_timeline.h's model inlined, trace_timeline.js drawing
 * it), counters, labels.
 */
#ifndef PROFSVC_TRACE_VIEW_H
#define PROFSVC_TRACE_VIEW_H

#include <stdio.h>

#include "trace_render.h"

/* api: the served page's /api/runs/N/trace-timeline (the timeline asks it
 * for a window's detail and a thread's events), NULL in a saved report.
 * 0, or -1 when out of memory or writing failed. */
int trace_view_html(FILE *f, const struct mprof_trace *t, const char *api);

#endif
