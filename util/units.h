/*
 * units.h - sizes and durations as people type them on a command line:
 * "4G", "512", "64k"; "90m", "30d", "2w".  One parser for every program
 * (profile-backend, profdb, the simulators), so that an option that takes
 * a size takes the same sizes everywhere.
 */
#ifndef PROFSVC_UNITS_H
#define PROFSVC_UNITS_H

#include <stdint.h>

/* Decimal digits and an optional binary suffix, K, M, G or T in either
 * case (1K = 1024).  0 and *out set, or -1 (*out untouched) for anything
 * else: no digits, a sign, space, another suffix, or more than 2^64 - 1. */
int units_parse_size(const char *s, uint64_t *out);

/* Decimal digits and one unit: s, m (minutes), h, d or w.  0 and *out in
 * microseconds, or -1 (*out untouched) for anything else, including a
 * duration of more than INT64_MAX microseconds (some 292,000 years). */
int units_parse_duration(const char *s, int64_t *out_us);

#endif
