/*
 * units.c - the command-line sizes and durations of units.h.  Written out
 * digit by digit rather than with strtoull: strtoull takes leading space,
 * a sign (and "-1" becomes 2^64 - 1) and any base-10 prefix the locale
 * allows, each of which once made a bad option value mean something.
 *
 * May call: libc only.
 */
#include "config.h"

#include "units.h"

/* The leading digits of s as *v; how many there were (0: none, or past
 * 2^64 - 1: -1). */
static int digits(const char *s, uint64_t *v)
{
	int n = 0;

	*v = 0;
	for (; s[n] >= '0' && s[n] <= '9'; n++) {
		unsigned d = (unsigned)(s[n] - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return n;
}

int units_parse_size(const char *s, uint64_t *out)
{
	uint64_t v;
	int n = digits(s, &v);

	if (n <= 0)
		return -1;
	unsigned shift;
	switch (s[n]) {
	case '\0': shift = 0; break;
	case 'K': case 'k': shift = 10; break;
	case 'M': case 'm': shift = 20; break;
	case 'G': case 'g': shift = 30; break;
	case 'T': case 't': shift = 40; break;
	default: return -1;
	}
	if (shift && s[n + 1] != '\0')
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

int units_parse_duration(const char *s, int64_t *out_us)
{
	uint64_t v;
	int n = digits(s, &v);

	if (n <= 0)
		return -1;
	int64_t seconds;
	switch (s[n]) {
	case 's': seconds = 1; break;
	case 'm': seconds = 60; break;
	case 'h': seconds = 3600; break;
	case 'd': seconds = 86400; break;
	case 'w': seconds = 604800; break;
	default: return -1; /* (no unit, too) */
	}
	if (s[n + 1] != '\0' || v > (uint64_t)(INT64_MAX / 1000000 / seconds))
		return -1;
	*out_us = (int64_t)v * seconds * 1000000;
	return 0;
}
