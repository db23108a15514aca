/*
 * metrics.h - profdb serve's /metrics (Prometheus text) and /healthz, and
 * the counters of the requests it answered (metrics.c).  The counters are
 * the server's (struct web holds a pointer to them: web_internal.h does
 * not include this header); its parts count through the functions here.
 *
 * May call: libc (stdatomic).
 */
#ifndef PROFSVC_WEB_METRICS_H
#define PROFSVC_WEB_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#define WEB_DURATION_BUCKETS 10

struct web_metrics {
	atomic_uint_fast64_t by_status[600];         /* replies by HTTP status (100..599) */
	atomic_uint_fast64_t duration_le[WEB_DURATION_BUCKETS], duration_count, duration_sum_us;
	atomic_int streams;                          /* event streams open now */
	atomic_uint_fast64_t snapshot_reads;         /* run streams' read transactions (events.c) */
};

/* A reply has gone: its status, and (not a stream) how long it took. */
void web_metrics_reply(struct web_metrics *m, int status, int64_t us, int stream);
/* An event stream opened (delta 1) or ended (-1). */
void web_metrics_streams(struct web_metrics *m, int delta);
/* A run stream's read transaction of the store (events.c). */
void web_metrics_snapshot_read(struct web_metrics *m);

struct web;
struct reply;
/* GET /metrics: serve's counters, the store's and, when it answers on
 * this host, the backend's. */
void page_metrics(struct web *w, struct reply *r);
/* GET /healthz: 200 "ok" when the store opens and reads, 503 why not. */
void page_healthz(struct web *w, struct reply *r);

#endif
