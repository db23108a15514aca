/*
 * fuzz_units.c - libFuzzer target for util/units.c, the parser of every
 * size and duration a command line gives (profile-backend --max-store-bytes,
 * profdb prune --older-than, export-disk --size, ...).  For any bytes, each
 * parser agrees with an oracle written the slow way (a 128-bit value, the
 * grammar checked character by character): it accepts exactly the strings
 * of the grammar whose value fits, with that value, and leaves *out alone
 * otherwise.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

/* digits then one character from units (or none, if none is allowed):
 * the value times the unit's multiplier, or -1 (grammar or overflow). */
static int oracle(const char *s, const char *units, const unsigned __int128 *mul, int bare_ok,
                  unsigned __int128 limit, unsigned __int128 *out)
{
	size_t n = 0;
	unsigned __int128 v = 0;
	int big = 0;
	for (; s[n] >= '0' && s[n] <= '9'; n++) {
		v = v * 10 + (unsigned)(s[n] - '0');
		if (v > ((unsigned __int128)1 << 100))
			big = 1, v = (unsigned __int128)1 << 100;
	}
	if (n == 0)
		return -1;
	unsigned __int128 m;
	if (s[n] == '\0') {
		if (!bare_ok)
			return -1;
		m = 1;
	} else {
		const char *u = strchr(units, s[n]);
		if (!u || s[n + 1] != '\0')
			return -1;
		m = mul[u - units];
	}
	if (big || v * m > limit)
		return -1;
	*out = v * m;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64)
		return 0;
	char s[65];
	memcpy(s, data, size);
	s[size] = '\0'; /* (a NUL inside ends it, as in argv) */

	static const unsigned __int128 size_mul[] = {1024, 1024, 1 << 20, 1 << 20, 1 << 30, 1 << 30,
	                                              (unsigned __int128)1 << 40, (unsigned __int128)1 << 40};
	unsigned __int128 want;
	uint64_t got = 7;
	int ok = oracle(s, "KkMmGgTt", size_mul, 1, UINT64_MAX, &want) == 0;
	int rc = units_parse_size(s, &got);
	assert(ok ? rc == 0 && got == want : rc == -1 && got == 7);

	static const unsigned __int128 dur_mul[] = {1000000, 60000000, 3600000000u,
	                                             (unsigned __int128)86400000000, (unsigned __int128)604800000000};
	int64_t us = 7;
	ok = oracle(s, "smhdw", dur_mul, 0, INT64_MAX, &want) == 0;
	rc = units_parse_duration(s, &us);
	assert(ok ? rc == 0 && (unsigned __int128)us == want : rc == -1 && us == 7);
	return 0;
}
