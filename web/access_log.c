/*
 * access_log.c - profdb serve's access log (access_log.h).
 *
 * Under systemd, profdb-serve.service's stderr is the journal: each request
 * becomes one entry at info with fields an admin can select on
 * (journalctl -u profdb-serve HTTP_STATUS=404): HTTP_METHOD, HTTP_PATH,
 * HTTP_STATUS, HTTP_BYTES, HTTP_DURATION_US, REMOTE_ADDR.  Elsewhere
 * `profdb serve --access-log` prints the same as one line on stderr; a
 * terminal is not filled with lines otherwise.  The path and method are
 * the client's bytes: escaped (util/safe_text) in the line and in every
 * field, so neither can forge an entry or steer a terminal.
 *
 * May call: util/safe_text.h, util/journal_stream.h, libsystemd (sd-journal),
 * libc.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-journal.h>

#include "util/journal_stream.h"
#include "util/safe_text.h"
#include "access_log.h"

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

enum access_log_dest access_log_dest(int asked)
{
	if (journal_stream_is_stderr())
		return ACCESS_LOG_JOURNAL;
	return asked ? ACCESS_LOG_STDERR : ACCESS_LOG_OFF;
}

struct access_entry *access_entry_new(const char *method, const char *path, const char *client)
{
	struct access_entry *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->start_us = mono_us();
	snprintf(a->method, sizeof(a->method), "%s", method ? method : "");
	snprintf(a->path, sizeof(a->path), "%s", path ? path : "");
	snprintf(a->client, sizeof(a->client), "%s", client ? client : "");
	return a;
}

int64_t access_entry_age_us(const struct access_entry *a)
{
	return mono_us() - a->start_us;
}

void access_entry_finish(enum access_log_dest dest, struct access_entry *a)
{
	if (!a)
		return;
	if (dest != ACCESS_LOG_OFF) {
		char method[64], path[1600];
		int64_t us = mono_us() - a->start_us;
		safe_text(method, sizeof(method), a->method);
		safe_text(path, sizeof(path), a->path);
		if (dest == ACCESS_LOG_JOURNAL)
			sd_journal_send("MESSAGE=%s %s %s %d %llu bytes %.1f ms", a->client[0] ? a->client : "-",
			                method, path, a->status, (unsigned long long)a->bytes, us / 1000.0,
			                "PRIORITY=6", "SYSLOG_IDENTIFIER=profdb", "HTTP_METHOD=%s", method,
			                "HTTP_PATH=%s", path, "HTTP_STATUS=%d", a->status,
			                "HTTP_BYTES=%llu", (unsigned long long)a->bytes,
			                "HTTP_DURATION_US=%lld", (long long)us, "REMOTE_ADDR=%s", a->client,
			                NULL);
		else
			fprintf(stderr, "profdb: %s %s %s %d %llu bytes %.1f ms\n", a->client[0] ? a->client : "-",
			        method, path, a->status, (unsigned long long)a->bytes, us / 1000.0);
	}
	free(a);
}
