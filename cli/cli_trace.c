/*
 * cli_trace.c - a run's MirageOS trace out of the store: loaded into
 * memory in sequence order, exported (CTF for babeltrace2, JSON, Chrome
 * trace events) and summarised for `profdb show`.
 *
 * May call: view/view_trace.h (the trace and its renderers), store/store.h,
 *           cli_util.h, cli_view.h (the run's view), cli_json.h.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_json.h"
#include "cli_trace.h"
#include "cli_util.h"
#include "cli_view.h"

/* ---- export ------------------------------------------------------------------------ */

struct render_job {
	const struct mprof_trace *t;
};

static int render_metadata(FILE *f, void *ctx)
{
	const struct mprof_trace *t = ((struct render_job *)ctx)->t;
	mprof_write_metadata(f, t->name, t->run_id);
	return ferror(f) ? -1 : 0;
}

static int render_stream(FILE *f, void *ctx)
{
	return trace_render_ctf_stream(f, ((struct render_job *)ctx)->t);
}

static int render_json(FILE *f, void *ctx)
{
	return trace_render_json(f, ((struct render_job *)ctx)->t);
}

static int render_chrome(FILE *f, void *ctx)
{
	return trace_render_chrome(f, ((struct render_job *)ctx)->t);
}

/* DIR is made, or must be an empty directory: a trace directory holding
 * another trace's stream would be read as one trace. */
static int ctf_dir_ready(const char *dir)
{
	if (mkdir(dir, 0777) == 0)
		return 0;
	if (errno != EEXIST) {
		cli_err("--ctf %s: %s", dir, strerror(errno));
		return -1;
	}
	DIR *d = opendir(dir);
	if (!d) {
		cli_err("--ctf %s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int empty = 1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	if (!empty) {
		cli_err("--ctf %s: the directory is not empty (a CTF trace is a directory of its own: "
		        "name a new one)", dir);
		return -1;
	}
	return 0;
}

int cli_trace_export(struct view *v, const struct view_run *vr, const char *ctf_dir, const char *json_path,
                     const char *chrome_path)
{
	struct store *s = v->s;
	struct store_run run;
	struct view_trace ct;
	struct view_err e;
	int rc = 1;

	cli_view_err(&e);
	if (view_snapshot(v, &e) != 0)
		return 1;
	if (store_get_run(s, vr->id, &run) != 0) {
		cli_err("%s", store_errmsg(s));
		return 1;
	}
	int64_t id = run.run_id;
	struct view_err le;
	view_err_init(&le);
	int lr = view_trace_load(s, &run, &ct, &le);
	view_snapshot_end(v);
	if (lr == VIEW_TRACE_NONE) {
		cli_err("run %lld has no MirageOS trace (only guests that share a mirage-profile buffer have "
		        "one)", (long long)id);
		return 1;
	}
	if (lr) {
		cli_err("run %lld's trace: %s", (long long)id, view_err_first(&le));
		return 1;
	}
	struct render_job job = {&ct.t};
	char what[96], path[4096];
	if (ctf_dir) {
		if (ctf_dir_ready(ctf_dir) != 0)
			goto out;
		snprintf(what, sizeof(what), "run %lld's CTF metadata", (long long)id);
		snprintf(path, sizeof(path), "%s/metadata", ctf_dir);
		if (outfile_render(path, render_metadata, &job, what) != 0)
			goto out;
		snprintf(what, sizeof(what), "run %lld's CTF stream, %zu packets", (long long)id, ct.t.n);
		snprintf(path, sizeof(path), "%s/mprof_stream", ctf_dir);
		if (outfile_render(path, render_stream, &job, what) != 0)
			goto out;
	}
	if (json_path) {
		snprintf(what, sizeof(what), "run %lld's trace events as JSON", (long long)id);
		if (outfile_render(json_path, render_json, &job, what) != 0)
			goto out;
	}
	if (chrome_path) {
		snprintf(what, sizeof(what), "run %lld's trace in Chrome's trace-event format", (long long)id);
		if (outfile_render(chrome_path, render_chrome, &job, what) != 0)
			goto out;
	}
	rc = 0;
out:
	view_trace_free(&ct);
	return rc;
}

/* ---- show -------------------------------------------------------------------------- */

void cli_trace_show(struct store *s, const struct store_run *run, json_t **out)
{
	int json = out != NULL;

	struct view_trace ct;
	struct mprof_stats st;
	char lost[512], t0[32];

	if (view_trace_load(s, run, &ct, NULL) != 0)
		return;
	trace_render_stats(&ct.t, &st);
	trace_render_lost_ranges(&ct.t, lost, sizeof(lost));
	double span = st.events ? (double)(st.last_ts - st.first_ts) / 1e9 : 0;
	if (json) {
		json_t *kinds = json_object(), *counters = json_array();
		for (unsigned k = 0; k < MPROF_EVENT_KINDS; k++)
			json_object_set_new(kinds, mprof_event_name(k), json_integer((json_int_t)st.per_kind[k]));
		for (size_t i = 0; i < st.ncounters; i++)
			json_array_append_new(counters,
			                      json_pack("{s:o, s:I, s:I}", "name", view_json_guest(st.counters[i].name),
			                                "value", (json_int_t)st.counters[i].value, "updates",
			                                (json_int_t)st.counters[i].updates));
		/* uint64 counts and guest timestamps as JSON integers: jansson's
		 * are int64, which a guest clock in ns reaches in 292 years */
		*out = json_pack("{s:I, s:I, s:o, s:I, s:b, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:o, s:o}",
		                 "packets_kept", (json_int_t)st.kept, "packets_lost", (json_int_t)st.lost,
		                 "lost_ranges", view_json_guest(lost), "packets_cut", (json_int_t)st.cut,
		                 "ended", st.final, "bytes", (json_int_t)ct.nbytes, "events",
		                 (json_int_t)st.events, "first_ts", (json_int_t)st.first_ts, "last_ts",
		                 (json_int_t)st.last_ts, "gc", "count", (json_int_t)st.gc_count, "total_ns",
		                 (json_int_t)st.gc_total_ns, "max_ns", (json_int_t)st.gc_max_ns, "labels",
		                 (json_int_t)st.labels, "per_event", kinds, "counters", counters);
	} else {
		printf("trace (MirageOS, mirage-profile)\n");
		printf("  packets         %" PRIu64 " kept (%zu bytes), %" PRIu64 " lost%s%s%s\n", st.kept,
		       ct.nbytes, st.lost, st.lost ? " (" : "", st.lost ? lost : "", st.lost ? ")" : "");
		if (st.cut)
			printf("  torn            %" PRIu64 " packets end in an event the guest was overwriting\n",
			       st.cut);
		if (!st.kept && run->ended_us &&
		    strncmp(run->end_reason, STORE_TRACE_NOT_CAPTURED, strlen(STORE_TRACE_NOT_CAPTURED)) == 0) {
			printf("  ended           never mapped: ");
			safe_text_print(stdout, run->end_reason + strlen(STORE_TRACE_NOT_CAPTURED), 0);
			putchar('\n');
		} else {
			printf("  ended           %s\n", st.final ? "yes (its last packet was taken)" : "no (still being captured, or its domain died while no backend ran)");
		}
		snprintf(t0, sizeof(t0), "%.3f s", span);
		printf("  events          %" PRIu64 " over %s of the guest's clock\n", st.events, t0);
		printf("  by kind        ");
		for (unsigned k = 0; k < MPROF_EVENT_KINDS; k++)
			if (st.per_kind[k])
				printf(" %s %" PRIu64, mprof_event_name(k), st.per_kind[k]);
		printf("\n");
		if (st.gc_count)
			printf("  GC pauses       %" PRIu64 ", %.3f ms in all, longest %.3f ms\n", st.gc_count,
			       (double)st.gc_total_ns / 1e6, (double)st.gc_max_ns / 1e6);
		printf("  labels          %" PRIu64 "\n", st.labels);
		for (size_t i = 0; i < st.ncounters; i++) {
			printf("  counter         ");
			safe_text_print(stdout, st.counters[i].name, 0);
			printf(" = %" PRId64 " (%" PRIu64 " updates)\n", st.counters[i].value, st.counters[i].updates);
		}
		if (st.counters_dropped)
			printf("  counters        %" PRIu64 " updates of further counters not shown\n",
			       st.counters_dropped);
	}
	view_trace_free(&ct);
}
