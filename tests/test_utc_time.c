/*
 * test_utc_time.c - util/utc_time: the fast formatter against gmtime_r and
 * strftime on every day boundary from 1970 to 9999, leap days and years
 * (1972, 2000, 2100, 2400), and a million random instants.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/utc_time.h"
#include "testutil.h"

/* A million instants: the first failures are enough to read. */
#define SAY_AT_MOST 10

static void check(int64_t us)
{
	char fast[32], ref[32];
	time_t t = (time_t)(us / 1000000);
	struct tm tm;
	int refused = utc_format_fast(us, fast, sizeof(fast)) != 0;
	gmtime_r(&t, &tm);
	strftime(ref, sizeof(ref), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!refused && strcmp(fast, ref) == 0)
		return;
	if (tu_failures >= SAY_AT_MOST) {
		tu_failures++;
		return;
	}
	CHECK(!refused, "%lld refused", (long long)us);
	CHECK(refused || strcmp(fast, ref) == 0, "%lld: %s, gmtime says %s", (long long)us, fast, ref);
}

int main(void)
{
	const int64_t end = INT64_C(253402300800); /* 10000-01-01 */
	for (int64_t day = 0; day * 86400 < end; day++) {
		if (day)
			check(day * 86400 * 1000000);
		check((day * 86400 + 86399) * 1000000 + 999999);
	}
	srand(20261125);
	for (int i = 0; i < 1000000; i++) {
		uint64_t r = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 10) ^ (uint64_t)rand();
		check(1 + (int64_t)(r % (uint64_t)(end * 1000000 - 1)));
	}
	char buf[32] = "untouched";
	CHECK(utc_format_fast(0, buf, sizeof(buf)) != 0 && utc_format_fast(-5, buf, sizeof(buf)) != 0 &&
	      utc_format_fast(end * 1000000, buf, sizeof(buf)) != 0 && utc_format_fast(1, buf, 20) != 0 &&
	      strcmp(buf, "untouched") == 0, "out of range not refused, or buf touched");
	return tu_finish("test_utc_time");
}
