/*
 * view_format.c - times, durations and numbers as profdb and profdb serve
 * show and take them (view_format.h).  Moved from the CLI's helpers so
 * that both front ends sit on one copy.
 *
 * May call: store/store.h (run state names), util/utc_time.h,
 * profile/render/report.h (counts and sizes as the pages write them), libc.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/render/report.h"
#include "store/store.h"
#include "util/utc_time.h"
#include "view_format.h"

int view_parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

void view_format_time(int64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (utc_format_fast(us, buf, len) == 0)
		return;
	if (us <= 0 || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "N<a>MM<b>": a count, a unit letter, two digits, a unit letter. */
static void put_duration(char *buf, int64_t a, char ua, int64_t b, char ub, int tenth)
{
	char d[24], *p = buf;
	int n = 0;
	do
		d[n++] = (char)('0' + a % 10);
	while ((a /= 10));
	while (n)
		*p++ = d[--n];
	if (tenth) { /* 12.3s */
		*p++ = '.';
		*p++ = (char)('0' + b);
		*p++ = ub;
	} else {
		*p++ = ua;
		*p++ = (char)('0' + b / 10);
		*p++ = (char)('0' + b % 10);
		*p++ = ub;
	}
	*p = 0;
}

int64_t view_run_duration_us(const struct store_run *r, int64_t now_us)
{
	if (r->backend_gone)
		return -1;
	int64_t end = r->ended_us ? r->ended_us : now_us;
	return end > r->started_us ? end - r->started_us : 0;
}

void view_format_duration(int64_t us, char *out, size_t len)
{
	char buf[32]; /* the whole text, then what fits of it */
	if (us < 0)
		us = 0;
	int64_t s = us / 1000000;
	/* by hand: a listing of 100,000 runs formats as many */
	if (s < 1)
		snprintf(buf, sizeof(buf), "%lldms", (long long)(us / 1000));
	else if (s < 60)
		put_duration(buf, s, 's', us / 100000 % 10, 's', 1);
	else if (s < 3600)
		put_duration(buf, s / 60, 'm', s % 60, 's', 0);
	else if (s < 86400)
		put_duration(buf, s / 3600, 'h', s / 60 % 60, 'm', 0);
	else
		put_duration(buf, s / 86400, 'd', s / 3600 % 24, 'h', 0);
	if (len)
		snprintf(out, len, "%s", buf);
}

void view_format_holds(const struct store_run *r, char *buf, size_t len)
{
	char a[32], b[32];
	size_t n = 0;
	buf[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__), n = n < len ? n : len - 1)
	if (r->prof_bytes >= 0)
		ADD(".prof");
	if (r->hp_bytes >= 0)
		ADD("%s.hp", n ? ", " : "");
	if (r->eventlog_bytes >= 0)
		ADD("%seventlog", n ? ", " : "");
	if (r->trace_bytes >= 0 && r->trace_packets >= 0) {
		report_fmt_count((uint64_t)r->trace_packets, a, sizeof(a));
		report_fmt_count((uint64_t)(r->trace_events > 0 ? r->trace_events : 0), b, sizeof(b));
		ADD("%strace (%s packet%s, %s event%s)", n ? ", " : "", a, r->trace_packets == 1 ? "" : "s", b,
		    r->trace_events == 1 ? "" : "s");
	} else if (r->trace_bytes >= 0) {
		ADD("%strace", n ? ", " : "");
	}
	if (r->samples_bytes >= 0) {
		if (r->samples >= 0)
			report_fmt_count((uint64_t)r->samples, a, sizeof(a));
		else
			report_fmt_bytes((double)r->samples_bytes, a, sizeof(a));
		ADD("%ssamples (%s)", n ? ", " : "", a);
	}
	if (!n)
		ADD("-");
#undef ADD
}

int view_parse_time(const char *s, int64_t now_us, int64_t *out)
{
	struct tm tm;
	char *end;
	int n = 0;

	/* An age: digits and one unit. */
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end != s && errno == 0 && v >= 0 && end[0] && !end[1] && *s != '-' && *s != '+' &&
	    end - s < 10) {
		long long mul = end[0] == 's' ? 1 : end[0] == 'm' ? 60 : end[0] == 'h' ? 3600
		              : end[0] == 'd' ? 86400 : end[0] == 'w' ? 604800 : 0;
		if (mul) {
			/* An age older than the epoch is "since always", not a
			 * signed overflow (999999999w once was). */
			*out = v > now_us / (mul * 1000000) ? 0 : now_us - v * mul * 1000000;
			return 0;
		}
	}
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3)
		return -1;
	const char *rest = s + n;
	if (*rest == 'T' || *rest == ' ') {
		int m = 0;
		if (sscanf(rest + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &m) != 2)
			return -1;
		rest += 1 + m;
		if (*rest == ':') {
			if (sscanf(rest + 1, "%2d%n", &tm.tm_sec, &m) != 1)
				return -1;
			rest += 1 + m;
		}
	}
	if (*rest == 'Z')
		rest++;
	if (*rest || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (int64_t)t * 1000000;
	return 0;
}

int view_parse_state(const char *s, int *state)
{
	enum store_run_state st;
	if (store_run_state_parse(s, &st) != 0)
		return -1;
	*state = (int)st;
	return 0;
}
