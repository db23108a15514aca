/*
 * utc_time.c - a UTC time formatted without gmtime() and strftime(): a
 * listing of 100,000 runs spent a third of its time in them.  Days to a
 * civil date as in Howard Hinnant's chrono algorithms (the proleptic
 * Gregorian calendar, as gmtime's); tests/test_utc_time checks it against
 * gmtime_r and strftime.
 *
 * May call: libc only.
 */
#include "config.h"

#include "utc_time.h"

static void put2(char *p, int v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

int utc_format_fast(int64_t us, char *buf, size_t len)
{
	/* 253402300800 s: 10000-01-01T00:00:00Z */
	if (us <= 0 || us >= INT64_C(253402300800000000) || len < 21)
		return -1;
	int64_t secs = us / 1000000, days = secs / 86400, sod = secs % 86400;
	int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	int d = (int)(doy - (153 * mp + 2) / 5 + 1), m = (int)(mp < 10 ? mp + 3 : mp - 9);
	int y = (int)(yoe + era * 400 + (m <= 2));
	put2(buf, y / 100);
	put2(buf + 2, y % 100);
	buf[4] = '-';
	put2(buf + 5, m);
	buf[7] = '-';
	put2(buf + 8, d);
	buf[10] = 'T';
	put2(buf + 11, (int)(sod / 3600));
	buf[13] = ':';
	put2(buf + 14, (int)(sod / 60 % 60));
	buf[16] = ':';
	put2(buf + 17, (int)(sod % 60));
	buf[19] = 'Z';
	buf[20] = 0;
	return 0;
}
