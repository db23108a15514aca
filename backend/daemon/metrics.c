/*
 * metrics.c - the backend's counters in Prometheus's text format (0.0.4),
 * the answer to the control socket's "metrics": what `profdb serve`
 * passes on at /metrics, beside its own and the store's.  One family per
 * figure, each with HELP and TYPE; labels only of what the backend named
 * (a domid, a vdev it derived from the device id, a run id): nothing a
 * guest chose, so nothing to escape.
 *
 * Owns no state.  May call: sampling.c (its families), sync_push.c (its
 * status), domains.c and runs.c (their counts), io.c (the batches' counts
 * and the commit histogram), xenbus_state.c (state names), the store's
 * intake statistics (store/store_intake.h); it reads the backend's state
 * (common/state.h), changes nothing.
 */
#include "config.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#include <jansson.h>

#include "backend/common/state.h"
#include "backend/control/domains.h"
#include "backend/control/runs.h"
#include "backend/control/sampling.h"
#include "backend/control/sync_push.h"
#include "backend/control/xenbus_state.h"
#include "metrics.h"
#include "backend/datapath/io.h"
#include "store/store_intake.h"

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void devices(struct be_backend *b, FILE *f)
{
	static const char *const fams[][3] = {
		{"profsvc_backend_device_requests_total", "counter", "Requests a device answered since it connected."},
		{"profsvc_backend_device_bytes_total", "counter", "Bytes a device stored since it connected."},
		{"profsvc_backend_device_errors_total", "counter", "Requests a device refused or failed."},
	};
	int n = 0, connected = 0;
	for (struct be_device *d = b->devices; d; d = d->next) {
		n++;
		connected += d->connected;
	}
	family(f, "profsvc_backend_devices", "gauge", "Devices served, by whether their ring is connected.");
	fprintf(f, "profsvc_backend_devices{connected=\"yes\"} %d\nprofsvc_backend_devices{connected=\"no\"} %d\n",
	        connected, n - connected);
	for (int k = 0; k < 3; k++) {
		family(f, fams[k][0], fams[k][1], fams[k][2]);
		for (struct be_device *d = b->devices; d; d = d->next) {
			uint64_t v = k == 0 ? d->requests : k == 1 ? d->bytes : d->errors;
			fprintf(f, "%s{domid=\"%u\",vdev=\"%s\",run=\"%lld\"} %" PRIu64 "\n", fams[k][0], d->domid,
			        d->vdev, d->run ? (long long)d->run->run_id : -1LL, v);
		}
	}
}

static void commits(struct be_backend *b, FILE *f)
{
	struct be_io_stats io;
	be_io_stats(b->io, &io);
	one(f, "profsvc_backend_batches_total", "counter", "Batches of guest requests handled.", io.batches);
	one(f, "profsvc_backend_commits_failed_total", "counter", "Batches the store refused to commit.",
	    io.commits_failed);
	family(f, "profsvc_backend_commit_seconds", "histogram",
	       "Time a batch took in the store, from its begin to its commit (and sync).");
	for (int i = 0; i < BE_IO_COMMIT_BUCKETS; i++)
		fprintf(f, "profsvc_backend_commit_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
		        (double)be_io_commit_buckets_us[i] / 1e6, io.commit_le[i]);
	fprintf(f, "profsvc_backend_commit_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", io.commit_count);
	fprintf(f, "profsvc_backend_commit_seconds_sum %.6f\n", (double)io.commit_sum_us / 1e6);
	fprintf(f, "profsvc_backend_commit_seconds_count %" PRIu64 "\n", io.commit_count);
}

static void intake(struct be_backend *b, FILE *f)
{
	struct store_intake_stats st;
	if (!b->env.store)
		return;
	store_intake_stats(b->env.store, &st);
	one(f, "profsvc_backend_intake_queued_bytes", "gauge",
	    "Acknowledged batches in the intake log not folded into SQLite yet.", st.queued_bytes);
	one(f, "profsvc_backend_intake_folds_total", "counter", "Transactions that folded the intake log.",
	    st.folds);
	family(f, "profsvc_backend_intake_fold_seconds_total", "counter", "Time spent folding the intake log.");
	fprintf(f, "profsvc_backend_intake_fold_seconds_total %.6f\n", (double)st.fold_us / 1e6);
}

static void sync_queue(struct be_backend *b, FILE *f)
{
	json_t *s = be_sync_push_status_json(b->sync);
	if (!json_is_object(s)) {
		json_decref(s);
		return;
	}
	one(f, "profsvc_backend_sync_connected", "gauge", "1 while the fleet catalogue is connected.",
	    json_is_true(json_object_get(s, "connected")));
	one(f, "profsvc_backend_sync_waiting_runs", "gauge", "Ended runs waiting to be pushed to the fleet catalogue.",
	    (uint64_t)json_integer_value(json_object_get(s, "waiting")));
	one(f, "profsvc_backend_sync_pushed_runs_total", "counter", "Runs pushed to the fleet catalogue.",
	    (uint64_t)json_integer_value(json_object_get(s, "pushed")));
	one(f, "profsvc_backend_sync_pushed_bytes_total", "counter", "Bytes pushed to the fleet catalogue.",
	    (uint64_t)json_integer_value(json_object_get(s, "pushed_bytes")));
	one(f, "profsvc_backend_sync_failures_total", "counter", "Connections or pushes to the catalogue that failed.",
	    (uint64_t)json_integer_value(json_object_get(s, "failures")));
	json_decref(s);
}

void be_metrics_text(struct be_backend *b, FILE *f)
{
	struct mallinfo2 mi = mallinfo2();
	int runs = 0;

	family(f, "profsvc_backend_info", "gauge", "The running profile-backend (always 1).");
	fprintf(f, "profsvc_backend_info{version=\"%s\",platform=\"%s\",pid=\"%ld\"} 1\n", PACKAGE_VERSION,
	        plat_kind_name(b->env.opt.platform), (long)getpid());
	family(f, "profsvc_backend_up_seconds", "gauge", "Seconds since the backend started.");
	fprintf(f, "profsvc_backend_up_seconds %.3f\n", (double)(store_now_us() - b->env.started_us) / 1e6);
	one(f, "profsvc_backend_heap_bytes", "gauge", "Memory malloc has handed out and not had back.", mi.uordblks);
	for (const struct be_run *r = be_runs_first(b->runs); r; r = r->next)
		runs++;
	one(f, "profsvc_backend_runs_in_progress", "gauge", "Runs the backend is capturing.", (uint64_t)runs);
	devices(b, f);
	commits(b, f);
	intake(b, f);
	struct be_xs_stats xs;
	be_domains_stats(b->domains, &xs);
	one(f, "profsvc_backend_xenstore_events_total", "counter", "xenstore watch events seen.", xs.events);
	sync_queue(b, f);
	be_sampling_metrics(b->sampling, f);
}
