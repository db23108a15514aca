/*
 * test_log_fields.c - backend/common/log_fields.c: the journal fields of a log
 * line (MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, DOMID, VDEV, RUN), those the
 * event lacks left out, a guest-chosen vdev unable to end its field and
 * forge another, and a small buffer cutting values without overrunning.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "backend/common/log_fields.h"
#include "testutil.h"

/* The fields joined by '|', for comparing in one go. */
static const char *joined(const struct be_log_event *e, size_t buflen)
{
	static char out[2048];
	char buf[1024];
	struct iovec iov[LOG_FIELDS_MAX];
	int n = be_log_fields(e, buf, buflen, iov);
	size_t at = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%.*s", i ? "|" : "", (int)iov[i].iov_len,
		                       (const char *)iov[i].iov_base);
	return out;
}

static void expect(const char *what, const char *got, const char *want)
{
	CHECK(strcmp(got, want) == 0, "%s:\n  got  %s\n  want %s", what, got, want);
}

int main(void)
{
	struct be_log_event all = {LOG_NOTICE, 5, "xvdp1", 12, "dom5 xvdp1 run 12: connected"};
	expect("every field", joined(&all, 1024),
	       "MESSAGE=dom5 xvdp1 run 12: connected|PRIORITY=5|SYSLOG_IDENTIFIER=profile-backend|"
	       "DOMID=5|VDEV=xvdp1|RUN=12");
	struct be_log_event none = {LOG_ERR, -1, NULL, -1, "cannot open the store"};
	expect("no domain, device or run", joined(&none, 1024),
	       "MESSAGE=cannot open the store|PRIORITY=3|SYSLOG_IDENTIFIER=profile-backend");
	struct be_log_event run = {LOG_WARNING, 0, NULL, 7, "dom0 run 7: gone"};
	expect("domid 0 is a domain", joined(&run, 1024),
	       "MESSAGE=dom0 run 7: gone|PRIORITY=4|SYSLOG_IDENTIFIER=profile-backend|DOMID=0|RUN=7");
	struct be_log_event evil = {LOG_WARNING, 3, "x\nRUN=99\033[2J", -1, "m"};
	expect("a hostile vdev stays in its field", joined(&evil, 1024),
	       "MESSAGE=m|PRIORITY=4|SYSLOG_IDENTIFIER=profile-backend|DOMID=3|VDEV=x\\x0aRUN=99\\x1b[2J");
	expect("a small buffer cuts, never overruns", joined(&all, 20), "MESSAGE=dom5 xvdp1 ");
	expect("an empty vdev is no vdev", joined(&(struct be_log_event){LOG_INFO, 1, "", -1, "x"}, 1024),
	       "MESSAGE=x|PRIORITY=6|SYSLOG_IDENTIFIER=profile-backend|DOMID=1");
	return tu_finish("test_log_fields");
}
