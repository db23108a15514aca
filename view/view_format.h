/*
 * view_format.h - times, durations and numbers as profdb and profdb serve
 * show and take them.
 *
 * May call: store/store.h (run state names), util/utc_time.h,
 * profile/render/report.h (counts and sizes as the pages write them).
 */
#ifndef PROFSVC_VIEW_FORMAT_H
#define PROFSVC_VIEW_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Strict decimal parse of a non-negative integer: 0, or -1. */
int view_parse_u64(const char *s, uint64_t *out);
/* "2026-11-21T08:12:03Z" (UTC); "-" when not a time. */
void view_format_time(int64_t us, char *buf, size_t len);
/*
 * A run's duration, the one rule of every view (query runs, show, the
 * catalogue page and its script, the run and compare pages, the JSON's
 * duration_us): from the run's start to its end, both as the writer
 * recorded them (started_us, ended_us), or to now_us while it runs; -1
 * when that is not known (a running run whose backend is gone: nothing
 * is adding to it).  Never negative.
 */
struct store_run;
int64_t view_run_duration_us(const struct store_run *r, int64_t now_us);
/*
 * A duration as every view writes it: "15ms" under a second, "12.3s"
 * under a minute, then "3m20s", "1h02m", "2d03h"; each figure cut, never
 * rounded up (a view never shows more time than has passed, and a
 * running run's count never goes back).  web/duration.js is the same
 * rule for the pages' scripts.
 */
void view_format_duration(int64_t us, char *buf, size_t len);
/*
 * What a run holds, as the catalogue says it (query runs' HOLDS, the
 * catalogue page and its script, web/catalogue.js, the same): its kinds
 * in this order, with the counts of those that have no size column:
 * ".prof, .hp, eventlog, trace (50 packets, 30,000 events), samples
 * (1,006)"; samples not counted (store_run.samples -1) by their size,
 * "samples (53 kB)"; "-" for nothing.
 */
void view_format_holds(const struct store_run *r, char *buf, size_t len);
#define VIEW_HOLDS_MAX 160

/* A run state as the catalogue filters take it (running, complete,
 * crashed) into a store_run_filter's state: 0, or -1. */
int view_parse_state(const char *s, int *state);
/* ISO date/time in UTC (YYYY-MM-DD[THH:MM[:SS]][Z]) or an age (90s, 30m,
 * 2h, 7d) before now.  Returns 0 or -1. */
int view_parse_time(const char *s, int64_t now_us, int64_t *out);

#endif
