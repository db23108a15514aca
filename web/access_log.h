/*
 * access_log.h - profdb serve's access log: one entry per request answered,
 * written when its reply has gone (an event stream: when it ends).
 *
 * May call: util/safe_text.h, util/journal_stream.h, libsystemd (sd-journal),
 * libc (access_log.c).
 */
#ifndef PROFSVC_ACCESS_LOG_H
#define PROFSVC_ACCESS_LOG_H

#include <stdint.h>

enum access_log_dest {
	ACCESS_LOG_OFF,     /* a terminal, without --access-log */
	ACCESS_LOG_STDERR,  /* --access-log: a line on stderr */
	ACCESS_LOG_JOURNAL, /* stderr is the journal: an entry with fields */
};

/* Where entries go: the journal when stderr is its stream (under
 * systemd), else stderr if asked (--access-log), else nowhere. */
enum access_log_dest access_log_dest(int asked);

struct access_entry {
	int64_t start_us;   /* CLOCK_MONOTONIC, when the request came */
	char method[8];     /* GET, HEAD, or what the client said, cut */
	char path[256];     /* the client's path, cut */
	char client[64];    /* its address, or "" */
	int status;         /* 0 until a reply is queued */
	uint64_t bytes;     /* of the body sent (0 for HEAD) */
};

/* A new entry (NULL when out of memory: the request is served, unlogged). */
struct access_entry *access_entry_new(const char *method, const char *path, const char *client);
/* Microseconds since the request came. */
int64_t access_entry_age_us(const struct access_entry *a);
/* Writes the entry where dest says and frees it (NULL: nothing). */
void access_entry_finish(enum access_log_dest dest, struct access_entry *a);

#endif
