/*
 * flame.h - a time profile's call tree as a flame graph: folded stacks
 * (flamegraph.pl's input, "MAIN.MAIN;Main.main;Main.go 123" a line) and
 * an SVG drawn here, widths by time (ticks) or allocation (bytes).
 *
 * A profile without ticks and bytes columns (-p rather than -P) carries
 * only percentages; its values are then the percentages of the totals in
 * the header, rounded: close, and summing to about the total.  A stack
 * under 0.05% is rounded to nothing: the SVG says under the chart how
 * much of the time (or allocation) it could not place, the total less
 * what the stacks sum to.  -P and -pj profiles are drawn from their ticks
 * and bytes, exactly.
 */
#ifndef PROFSVC_FLAME_H
#define PROFSVC_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "profile/prof/time_profile.h"

enum flame_by { FLAME_TIME, FLAME_ALLOC };

/* Each node's own value, and with everything below it (arrays of nnodes,
 * the caller frees both).  0, or -1 when out of memory. */
int flame_values(const struct time_profile *p, enum flame_by by, uint64_t **self, uint64_t **total);

/* Folded stacks, one line per call stack with a value; frame names are
 * "Module.name" as spelled (a backslash is itself), controls shown as
 * escapes (no control, no ';', no newline).  0 or -1. */
int flame_folded(FILE *f, const struct time_profile *p, enum flame_by by);

/* The same stacks as JSON: {"by", "unit", "stacks": [{"frames": [{module,
 * name}, ... outermost first], "value"}]}, names as safe_text_json_bytes
 * gives them (the exact text).  0 or -1. */
int flame_json(FILE *f, const struct time_profile *p, enum flame_by by);

/* The script each SVG carries (flame.js, compiled in). */
extern const char flame_js[];

/* A whole SVG document: caption is the guest's text, escaped here.  It is
 * interactive in a browser (click a frame to zoom to it, "Reset zoom",
 * "Search" with the matched share, labels cut to their box's measured
 * width) and a readable static chart without script. */
int flame_svg(FILE *f, const struct time_profile *p, enum flame_by by, const char *caption);

/* A differential flame graph: p's frames, coloured by how much each call
 * stack's share changed since `before` (matched by its path of
 * functions): red grew, blue shrank, as flamegraph.pl's difffolded.  Its
 * title is the caption, then "(red grew, blue shrank, against AGAINST)"
 * (what `before` is, e.g. "run 4"; NULL: the caption says it). */
int flame_svg_diff(FILE *f, const struct time_profile *before, const struct time_profile *p,
                   enum flame_by by, const char *caption, const char *against);

#endif
