/*
 * test_units.c - util/units: the sizes and durations every program's
 * options take, at their edges (the largest value, one past it, each
 * suffix) and the inputs strtoull would have let through (space, signs,
 * a suffix alone, trailing text).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"
#include "testutil.h"

static void size_case(const char *s, int ok, uint64_t want)
{
	uint64_t v = 12345;
	int rc = units_parse_size(s, &v);
	CHECK(ok ? rc == 0 && v == want : rc == -1 && v == 12345,
	      "size \"%s\": rc %d, value %llu (want %s %llu)", s, rc, (unsigned long long)v,
	      ok ? "accepted as" : "refused,", (unsigned long long)want);
}

static void duration_case(const char *s, int ok, int64_t want)
{
	int64_t v = 12345;
	int rc = units_parse_duration(s, &v);
	CHECK(ok ? rc == 0 && v == want : rc == -1 && v == 12345, "duration \"%s\": rc %d, value %lld",
	      s, rc, (long long)v);
}

int main(void)
{
	size_case("0", 1, 0);
	size_case("512", 1, 512);
	size_case("4k", 1, 4096);
	size_case("4K", 1, 4096);
	size_case("3m", 1, 3u << 20);
	size_case("4G", 1, UINT64_C(4) << 30);
	size_case("2t", 1, UINT64_C(2) << 40);
	size_case("18446744073709551615", 1, UINT64_MAX);
	size_case("16777215T", 1, UINT64_C(16777215) << 40);
	size_case("16777216T", 0, 0);             /* 2^64 */
	size_case("18446744073709551616", 0, 0);  /* 2^64 */
	size_case("99999999999999999999999", 0, 0);
	size_case("", 0, 0);
	size_case("K", 0, 0); /* a suffix alone is not 0 */
	size_case("-1", 0, 0);
	size_case("+1", 0, 0);
	size_case(" 1", 0, 0);
	size_case("1 ", 0, 0);
	size_case("1KB", 0, 0);
	size_case("1P", 0, 0);
	size_case("0x10", 0, 0);
	size_case("1.5G", 0, 0);

	duration_case("45s", 1, INT64_C(45) * 1000000);
	duration_case("90m", 1, INT64_C(90) * 60 * 1000000);
	duration_case("12h", 1, INT64_C(12) * 3600 * 1000000);
	duration_case("30d", 1, INT64_C(30) * 86400 * 1000000);
	duration_case("2w", 1, INT64_C(2) * 604800 * 1000000);
	duration_case("0s", 1, 0);
	duration_case("9223372036854s", 1, INT64_C(9223372036854) * 1000000);
	duration_case("9223372036855s", 0, 0); /* past INT64_MAX us */
	duration_case("15250284w", 1, INT64_C(15250284) * 604800 * 1000000);
	duration_case("15250285w", 0, 0);
	duration_case("30", 0, 0);
	duration_case("d", 0, 0);
	duration_case("", 0, 0);
	duration_case("30D", 0, 0);
	duration_case("30dd", 0, 0);
	duration_case("-3d", 0, 0);
	duration_case(" 3d", 0, 0);
	duration_case("99999999999999999999999d", 0, 0);

	return tu_finish("test_units");
}
