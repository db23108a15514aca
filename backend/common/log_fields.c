/*
 * log_fields.c - builds the journal fields of one log line (see
 * log_fields.h); log.c sends them with sd_journal_sendv.
 *
 * May call: only util/safe_text.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "log_fields.h"
#include "util/safe_text.h"

static int add(struct iovec *iov, int n, char *buf, size_t len, size_t *used, const char *key,
               const char *value)
{
	if (*used >= len)
		return n;
	int w = snprintf(buf + *used, len - *used, "%s=%s", key, value);
	if (w < 0)
		return n;
	size_t got = (size_t)w < len - *used ? (size_t)w : len - *used - 1;
	iov[n].iov_base = buf + *used;
	iov[n].iov_len = got;
	*used += got + 1;
	return n + 1;
}

int be_log_fields(const struct be_log_event *e, char *buf, size_t len, struct iovec *iov)
{
	char num[32], vdev[128];
	size_t used = 0;
	int n = 0;

	n = add(iov, n, buf, len, &used, "MESSAGE", e->message);
	snprintf(num, sizeof(num), "%d", e->prio);
	n = add(iov, n, buf, len, &used, "PRIORITY", num);
	n = add(iov, n, buf, len, &used, "SYSLOG_IDENTIFIER", "profile-backend");
	if (e->domid >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)e->domid);
		n = add(iov, n, buf, len, &used, "DOMID", num);
	}
	if (e->vdev && e->vdev[0]) {
		/* The vdev came from the guest's xenstore directory: a newline in
		 * it must not end the field and start a forged one. */
		safe_text(vdev, sizeof(vdev), e->vdev);
		n = add(iov, n, buf, len, &used, "VDEV", vdev);
	}
	if (e->run >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)e->run);
		n = add(iov, n, buf, len, &used, "RUN", num);
	}
	return n;
}
