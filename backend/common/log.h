/*
 * log.h - one line per event, to syslog (the journal, with its fields) or
 * stderr.  Every part of the backend may call it; log.c calls only
 * log_fields.c and util/.
 */
#ifndef PROFSVC_BE_LOG_H
#define PROFSVC_BE_LOG_H

#include <stdint.h>
#include <syslog.h> /* LOG_ERR .. LOG_DEBUG, the priorities of log.c */

struct be_device;

/* fields: --log-format=fields, the journal's fields on stderr (tests). */
void be_log_open(int foreground, int verbose, int fields);
/* The last line logged at LOG_ERR or worse, NULL if none. */
const char *be_log_last_error(void);
/* prio: LOG_ERR the backend or store failed, LOG_WARNING a guest
 * misbehaved or was refused, LOG_NOTICE runs and devices coming and going,
 * LOG_INFO the rest, LOG_DEBUG per-request detail (only with -v). */
void be_blog_at(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void be_dlog_at(int prio, const struct be_device *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "domD run R: ..." with DOMID= and RUN= in the journal. */
void be_rlog_at(int prio, int64_t domid, int64_t run_id, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A line that names its domain and run itself (-1: none), with the fields. */
void be_elog_at(int prio, int64_t domid, int64_t run_id, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* LOG_DEBUG, without a priority to choose. */
void be_bdebug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
