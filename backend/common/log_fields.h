/*
 * log_fields.h - the structured form of one profile-backend log line: the
 * journal fields (MESSAGE=, PRIORITY=, SYSLOG_IDENTIFIER=, DOMID=, VDEV=,
 * RUN=) built apart from sending them, so that a test can check exactly
 * what journald would be given without a journald.
 * log_fields.c calls only util/safe_text.
 */
#ifndef PROFSVC_LOG_FIELDS_H
#define PROFSVC_LOG_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define LOG_FIELDS_MAX 6

struct be_log_event {
	int prio;            /* syslog priority, LOG_ERR .. LOG_DEBUG */
	int64_t domid;       /* -1: the line concerns no domain */
	const char *vdev;    /* NULL: no device (guest-chosen: escaped here) */
	int64_t run;         /* -1: no run */
	const char *message; /* the whole line, already escaped by the caller */
};

/* Fills iov[0..n) with "KEY=value" fields held in buf (len bytes) and
 * returns n (at most LOG_FIELDS_MAX); a value cut short by len stays
 * valid text.  Keys absent from the event are left out. */
int be_log_fields(const struct be_log_event *e, char *buf, size_t len, struct iovec *iov);

#endif
