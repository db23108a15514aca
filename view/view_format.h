/*
 * view_format.h - times, durations and numbers as profdb and profdb serve
 * show and take them.
 *
 * May call: store/store.h (run state names), util/utc_time.h.
 */
#ifndef PROFSVC_VIEW_FORMAT_H
#define PROFSVC_VIEW_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Strict decimal parse of a non-negative integer: 0, or -1. */
int view_parse_u64(const char *s, uint64_t *out);
/* "2026-11-21T08:12:03Z" (UTC); "-" when not a time. */
void view_format_time(int64_t us, char *buf, size_t len);
/* "1h02m", "3m20s", "12.3s". */
void view_format_duration(int64_t us, char *buf, size_t len);
/* A run state as the catalogue filters take it (running, complete,
 * crashed) into a store_run_filter's state: 0, or -1. */
int view_parse_state(const char *s, int *state);
/* ISO date/time in UTC (YYYY-MM-DD[THH:MM[:SS]][Z]) or an age (90s, 30m,
 * 2h, 7d) before now.  Returns 0 or -1. */
int view_parse_time(const char *s, int64_t now_us, int64_t *out);

#endif
