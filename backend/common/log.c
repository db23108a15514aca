/*
 * log.c - profile-backend's log: one line per event, naming the domain,
 * device and run it concerns, at a priority that means something (err:
 * the backend or the store failed; warning: a guest misbehaved or was
 * refused; notice: runs and devices coming and going; info: the rest;
 * debug: per-request detail, only with -v).
 *
 * Where a line goes:
 *   - the journal, with DOMID=/VDEV=/RUN= fields (log_fields.c), when
 *     stderr is the journal's stream (--foreground under systemd:
 *     JOURNAL_STREAM names stderr's device:inode, systemd's documented
 *     test), or when daemonised and journald takes the line;
 *   - syslog when daemonised and there is no journald;
 *   - stderr with --foreground otherwise (a terminal, a test's log file).
 * The last error is kept so that a start that fails can say why on the
 * terminal that started it (daemon.c).
 *
 * May call: log_fields.c, util/safe_text, util/journal_stream, syslog (the journal) or stderr; any part may call it.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include <systemd/sd-journal.h>

#include "state.h"
#include "log.h"
#include "log_fields.h"
#include "util/journal_stream.h"
#include "util/safe_text.h"

enum log_dest { TO_STDERR, TO_JOURNAL, TO_FIELDS };

static enum log_dest dest = TO_STDERR;
static int daemonised;
static int verbose;
static char last_error[1200];

void be_log_open(int foreground, int v, int fields)
{
	verbose = v;
	daemonised = !foreground;
	if (fields)
		dest = TO_FIELDS; /* --log-format=fields: the journal's fields on stderr (tests) */
	else if (!foreground || journal_stream_is_stderr())
		dest = TO_JOURNAL;
	else
		dest = TO_STDERR;
	if (daemonised)
		openlog("profile-backend", LOG_PID, LOG_DAEMON);
}

const char *be_log_last_error(void)
{
	return last_error[0] ? last_error : NULL;
}

static void emit(int prio, int64_t domid, const char *vdev, int64_t run, const char *prefix,
                 const char *fmt, va_list ap)
{
	char raw[1024], both[1200], line[1200], buf[1600];
	struct iovec iov[LOG_FIELDS_MAX];

	if (prio >= LOG_DEBUG && !verbose)
		return;
	/* The whole line is escaped here, once: messages quote guest-chosen
	 * names and xenstore values, and a newline or ESC in one of them
	 * must not forge a log line or steer the terminal reading it. */
	vsnprintf(raw, sizeof(raw), fmt, ap);
	snprintf(both, sizeof(both), "%s%s", prefix, raw);
	safe_text(line, sizeof(line), both);
	if (prio <= LOG_ERR)
		snprintf(last_error, sizeof(last_error), "%s", line);
	struct be_log_event e = {.prio = prio, .domid = domid, .vdev = vdev, .run = run, .message = line};
	switch (dest) {
	case TO_JOURNAL: {
		int n = be_log_fields(&e, buf, sizeof(buf), iov);
		if (sd_journal_sendv(iov, n) == 0)
			return;
		if (!daemonised)
			break; /* stderr is the journal's stream, gone: stderr still says it */
		syslog(prio, "%s", line);
		return;
	}
	case TO_FIELDS: {
		int n = be_log_fields(&e, buf, sizeof(buf), iov);
		for (int i = 0; i < n; i++)
			fprintf(stderr, "%.*s\n", (int)iov[i].iov_len, (const char *)iov[i].iov_base);
		fputc('\n', stderr);
		fflush(stderr);
		return;
	}
	case TO_STDERR:
		break;
	}
	struct timespec ts;
	struct tm tm;
	char when[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(stderr, "profile-backend %s.%03ld %s\n", when, ts.tv_nsec / 1000000, line);
	fflush(stderr);
}

void be_blog_at(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(prio, -1, NULL, -1, "", fmt, ap);
	va_end(ap);
}

void be_bdebug(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(LOG_DEBUG, -1, NULL, -1, "", fmt, ap);
	va_end(ap);
}

void be_rlog_at(int prio, int64_t domid, int64_t run_id, const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "dom%lld run %lld: ", (long long)domid, (long long)run_id);
	va_start(ap, fmt);
	emit(prio, domid, NULL, run_id, prefix, fmt, ap);
	va_end(ap);
}

void be_elog_at(int prio, int64_t domid, int64_t run_id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(prio, domid, NULL, run_id, "", fmt, ap);
	va_end(ap);
}

static void vdlog(int prio, const struct be_device *d, const char *fmt, va_list ap)
{
	char prefix[96];

	if (d->run)
		snprintf(prefix, sizeof(prefix), "dom%u %s run %lld: ", d->domid, d->vdev,
		         (long long)d->run->run_id);
	else
		snprintf(prefix, sizeof(prefix), "dom%u %s: ", d->domid, d->vdev[0] ? d->vdev : "?");
	emit(prio, d->domid, d->vdev[0] ? d->vdev : NULL, d->run ? d->run->run_id : -1, prefix, fmt, ap);
}

void be_dlog_at(int prio, const struct be_device *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdlog(prio, d, fmt, ap);
	va_end(ap);
}
