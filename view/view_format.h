/*
 * view_format.h - times, durations and numbers as profdb and profdb serve
 * show and take them.
 *
 * May call: util/utc_time.h.
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
/* ISO date/time in UTC (YYYY-MM-DD[THH:MM[:SS]][Z]) or an age (90s, 30m,
 * 2h, 7d) before now.  Returns 0 or -1. */
int view_parse_time(const char *s, int64_t now_us, int64_t *out);

#endif
