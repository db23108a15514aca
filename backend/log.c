/*
 * log.c - profile-backend's log: one line per event, naming the domain,
 * device and run it concerns; syslog when daemonised, stderr with
 * --foreground; -v adds the per-request detail.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "backend.h"
#include "util/safe_text.h"

static int use_syslog;
static int verbose;

void log_open(int foreground, int v)
{
	use_syslog = !foreground;
	verbose = v;
	if (use_syslog)
		openlog("profile-backend", LOG_PID, LOG_DAEMON);
}

static void vlog(int prio, const char *prefix, const char *fmt, va_list ap)
{
	char raw[1024], msg[1024];

	/* The whole line is escaped here, once: messages quote guest-chosen
	 * names and xenstore values, and a newline or ESC in one of them
	 * must not forge a log line or steer the terminal reading it. */
	vsnprintf(raw, sizeof(raw), fmt, ap);
	safe_text(msg, sizeof(msg), raw);
	if (use_syslog) {
		syslog(prio, "%s%s", prefix, msg);
		return;
	}
	struct timespec ts;
	struct tm tm;
	char when[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(stderr, "profile-backend %s.%03ld %s%s\n", when, ts.tv_nsec / 1000000, prefix, msg);
	fflush(stderr);
}

void blog(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(LOG_INFO, "", fmt, ap);
	va_end(ap);
}

void bdebug(const char *fmt, ...)
{
	va_list ap;
	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, "", fmt, ap);
	va_end(ap);
}

void dlog(const struct device *d, const char *fmt, ...)
{
	char prefix[96];
	va_list ap;

	if (d->run)
		snprintf(prefix, sizeof(prefix), "dom%u %s run %lld: ", d->domid, d->vdev,
		         (long long)d->run->run_id);
	else
		snprintf(prefix, sizeof(prefix), "dom%u %s: ", d->domid, d->vdev[0] ? d->vdev : "?");
	va_start(ap, fmt);
	vlog(LOG_INFO, prefix, fmt, ap);
	va_end(ap);
}
