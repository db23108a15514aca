/*
 * metrics.c - profdb serve's /metrics and /healthz (metrics.h).
 *
 * /metrics is Prometheus's text format (0.0.4), three parts:
 *   - serve's own: replies by status code, how long replies took (event
 *     streams counted when they end, not timed), streams open now;
 *   - the store's: runs by state (one grouped scan), bytes on disk;
 *   - the backend's on this host (profile-backend's "metrics", through its
 *     control socket: view_backend.c), passed on as it sent them, or
 *     profsvc_backend_reachable 0 when none answers (a stopped backend is
 *     worth an alert, not a failed scrape).
 * Every label value is ours (a state name, a status code): no guest text.
 * /healthz answers 200 "ok" when the store opens and reads, else 503
 * with the reason: what a load balancer or a unit's watchdog asks.
 *
 * May call: store/store.h, view/view_backend.h, reply.c (web_internal.h),
 * libc.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "view/view_backend.h"
#include "metrics.h"
#include "web_internal.h"

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* What the backend may send: its families are a few lines per device. */
#define BACKEND_METRICS_MAX (4 << 20)
#define BACKEND_METRICS_TIMEOUT_MS 2000

static const int64_t duration_bounds_us[WEB_DURATION_BUCKETS] = {1000,   5000,   10000,   25000,   50000,
                                                                100000, 250000, 500000, 1000000, 5000000};

void web_metrics_reply(struct web_metrics *m, int status, int64_t us, int stream)
{
	if (status >= 100 && status < 600)
		atomic_fetch_add(&m->by_status[status], 1);
	if (stream)
		return;
	for (int i = 0; i < WEB_DURATION_BUCKETS; i++)
		if (us <= duration_bounds_us[i])
			atomic_fetch_add(&m->duration_le[i], 1);
	atomic_fetch_add(&m->duration_count, 1);
	atomic_fetch_add(&m->duration_sum_us, (uint_fast64_t)(us > 0 ? us : 0));
}

void web_metrics_streams(struct web_metrics *m, int delta)
{
	if (delta > 0)
		atomic_fetch_add(&m->streams, delta);
	else
		atomic_fetch_sub(&m->streams, -delta);
}

void web_metrics_snapshot_read(struct web_metrics *m)
{
	atomic_fetch_add(&m->snapshot_reads, 1);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void serve_part(struct web_metrics *m, FILE *f)
{
	family(f, "profsvc_serve_replies_total", "counter", "Replies profdb serve sent, by HTTP status.");
	for (int s = 100; s < 600; s++) {
		uint_fast64_t n = atomic_load(&m->by_status[s]);
		if (n)
			fprintf(f, "profsvc_serve_replies_total{code=\"%d\"} %llu\n", s, (unsigned long long)n);
	}
	family(f, "profsvc_serve_reply_seconds", "histogram",
	       "Time from a request to its reply sent (event streams not included).");
	for (int i = 0; i < WEB_DURATION_BUCKETS; i++)
		fprintf(f, "profsvc_serve_reply_seconds_bucket{le=\"%g\"} %llu\n", (double)duration_bounds_us[i] / 1e6,
		        (unsigned long long)atomic_load(&m->duration_le[i]));
	unsigned long long count = atomic_load(&m->duration_count);
	fprintf(f, "profsvc_serve_reply_seconds_bucket{le=\"+Inf\"} %llu\n", count);
	fprintf(f, "profsvc_serve_reply_seconds_sum %.6f\n", (double)atomic_load(&m->duration_sum_us) / 1e6);
	fprintf(f, "profsvc_serve_reply_seconds_count %llu\n", count);
	family(f, "profsvc_serve_event_streams", "gauge", "Server-Sent Event streams open now.");
	fprintf(f, "profsvc_serve_event_streams %d\n", atomic_load(&m->streams));
	family(f, "profsvc_serve_snapshot_reads_total", "counter",
	       "Read transactions of the store made for run event streams (one per change of a run, shared by its streams).");
	fprintf(f, "profsvc_serve_snapshot_reads_total %llu\n", (unsigned long long)atomic_load(&m->snapshot_reads));
}

static void store_part(struct web *w, FILE *f)
{
	struct store *s = NULL;
	int64_t counts[3];
	char err[512];

	int ok = store_open(&s, w->db, &(struct store_open_opts){.mode = STORE_READ, .read_socket = view_read_socket()},
	               err, sizeof(err)) == 0 && store_count_runs_by_state(s, counts) == 0;
	family(f, "profsvc_store_readable", "gauge", "1 when the store opens and reads.");
	fprintf(f, "profsvc_store_readable %d\n", ok);
	if (ok) {
		family(f, "profsvc_store_runs", "gauge", "Runs in the store, by state.");
		for (int st = 0; st < 3; st++)
			fprintf(f, "profsvc_store_runs{state=\"%s\"} %lld\n", store_run_state_name((enum store_run_state)st),
			        (long long)counts[st]);
	}
	if (s)
		store_close(s);
	int64_t bytes = store_files_usage(w->db);
	if (bytes >= 0) {
		family(f, "profsvc_store_disk_bytes", "gauge",
		       "Bytes the store takes on disk (database, WAL and data file, as allocated).");
		fprintf(f, "profsvc_store_disk_bytes %lld\n", (long long)bytes);
	}
}

static void backend_part(FILE *f)
{
	char *text = NULL;
	size_t len = 0;
	int asked = view_backend_ask("metrics", BACKEND_METRICS_TIMEOUT_MS, BACKEND_METRICS_MAX, &text, &len, NULL) == 0;
	/* Its families, whole lines only (a reply cut at the size bound
	 * loses its last, partial line). */
	char *end = asked ? strrchr(text, '\n') : NULL;
	int up = end && strncmp(text, "# HELP profsvc_backend_", 23) == 0;
	family(f, "profsvc_backend_reachable", "gauge",
	       "1 when a profile-backend answered on this host's control socket.");
	fprintf(f, "profsvc_backend_reachable %d\n", up);
	if (up)
		fwrite(text, 1, (size_t)(end + 1 - text), f);
	free(text);
}

void page_metrics(struct web *w, struct reply *r)
{
	if (reply_open(r, 200, PROM_TYPE) != 0)
		return;
	serve_part(w->metrics, r->f);
	store_part(w, r->f);
	backend_part(r->f);
}

void page_healthz(struct web *w, struct reply *r)
{
	struct store *s = NULL;
	int64_t counts[3];
	char err[512];

	if (store_open(&s, w->db, &(struct store_open_opts){.mode = STORE_READ, .read_socket = view_read_socket()},
	               err, sizeof(err)) == 0 && store_count_runs_by_state(s, counts) == 0) {
		store_close(s);
		if (reply_open(r, 200, "text/plain; charset=utf-8") == 0)
			fputs("ok\n", r->f);
		return;
	}
	if (s) {
		snprintf(err, sizeof(err), "%s", store_errmsg(s));
		store_close(s);
	}
	if (reply_open(r, 503, "text/plain; charset=utf-8") == 0)
		fprintf(r->f, "store: %s\n", err);
}
