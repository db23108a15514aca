/*
 * trace_view.h - a MirageOS trace as a section of the HTML report
 * (profile/report.c): facts, events by kind, GC pauses and counters over
 * time, labels.  Inline SVG, no script.
 */
#ifndef PROFSVC_TRACE_VIEW_H
#define PROFSVC_TRACE_VIEW_H

#include <stdio.h>

#include "trace_render.h"

/* 0, or -1 when out of memory or writing failed. */
int trace_view_html(FILE *f, const struct mprof_trace *t);

#endif
