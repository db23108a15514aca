/*
 * run_report.c - a run's report assembled from the store (run_report.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_profile.h"
#include "cli_util.h"
#include "run_report.h"

/* A run with a trace: which profile devices it has (each read only if
 * there).  Any doubt leaves both wanted, and the readers say what is
 * wrong. */
static void probe_devices(const char *db, int64_t id, int *want_tp, int *want_hp)
{
	struct store *s;
	struct store_device_info dev;

	if (store_open(&s, db, &(struct store_open_opts){.mode = STORE_READ}, NULL, 0) != 0)
		return;
	if (store_find_device(s, id, STORE_TRACE_VDEV, &dev) == 0) {
		*want_tp = store_find_device(s, id, "xvdp1", &dev) == 0;
		*want_hp = store_find_device(s, id, "xvdp2", &dev) == 0;
	}
	store_close(s);
}

/* The run's MirageOS trace, if it has one: 0, or -1. */
static int load_trace(struct run_report *r, const char *db)
{
	struct store *s;
	int rc = -1;

	if (cli_open_store(&s, db, STORE_READ) != 0)
		return -1;
	if (store_read_begin(s) == 0) {
		rc = cli_trace_load(s, &r->run, &r->trace) == 0 ? 0 : -1;
		store_read_end(s);
	}
	store_close(s);
	return rc;
}

/* The run compared with: each profile it has; 0, or 1 when it has none. */
static int load_against(struct run_report *r, const char *db, const char *arg)
{
	struct cli_profile_read rd, hrd;
	r->a_tp = cli_read_time_profile(db, arg, &r->atp, &rd) == 0;
	if (r->a_tp)
		cli_profile_caption(&rd.run, r->against_caption, sizeof(r->against_caption));
	if (cli_read_heap_profile(db, arg, &r->ahp, NULL, &hrd) == 0 && r->ahp.nsamples) {
		r->a_hp = 1;
		if (!r->a_tp)
			cli_profile_caption(&hrd.run, r->against_caption, sizeof(r->against_caption));
	}
	if (!r->a_tp && !r->a_hp) {
		cli_err("--against %s: the run has no readable profile to compare with", arg);
		return 1;
	}
	r->against = 1;
	return 0;
}

static void add_warning(struct run_report *r, size_t *nbuf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_warning(struct run_report *r, size_t *nbuf, const char *fmt, ...)
{
	va_list ap;
	if (*nbuf >= sizeof(r->wbuf) / sizeof(r->wbuf[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(r->wbuf[*nbuf], sizeof(r->wbuf[*nbuf]), fmt, ap);
	va_end(ap);
	r->warn[r->nw++] = r->wbuf[(*nbuf)++];
}

int run_report_load(struct run_report *r, const char *db, int64_t id, const char *against,
                    int even_empty)
{
	struct cli_profile_read prd, hrd;
	struct hp_tail tail;
	struct hp_chart_opts co;
	char idbuf[32];
	size_t nbuf = 0;

	memset(r, 0, sizeof(*r));
	tp_init(&r->tp);
	hp_init(&r->hp);
	tp_init(&r->atp);
	hp_init(&r->ahp);
	cli_run_ref(id, idbuf, sizeof(idbuf));
	/* A MirageOS run has a trace and no profile devices: the profile
	 * readers are not asked (they would say that the devices are missing). */
	int want_tp = 1, want_hp = 1;
	probe_devices(db, id, &want_tp, &want_hp);
	r->have_tp = want_tp && cli_read_time_profile(db, idbuf, &r->tp, &prd) == 0;
	if (r->have_tp && prd.salvaged)
		add_warning(r, &nbuf, "time profile salvaged: %s", prd.note);
	int hp_read = want_hp && cli_read_heap_profile(db, idbuf, &r->hp, &tail, &hrd) == 0;
	if (hp_read) {
		hp_chart_defaults(&co);
		r->have_hp = r->hp.nsamples > 0 && hp_chart_make(&r->hp, &co, &r->chart) == 0;
		if (hrd.salvaged)
			add_warning(r, &nbuf, "heap profile salvaged: %s", hrd.note);
		if (tail.dropped_bytes)
			add_warning(r, &nbuf, "heap profile cut %s: the last %llu bytes are not in the chart",
			            tail.partial_sample ? "in the middle of a sample" : "after its last sample",
			            (unsigned long long)tail.dropped_bytes);
	}
	if (!r->have_tp && !hp_read) {
		/* No profile: a run still waiting for its guest (even_empty), or
		 * a MirageOS guest's, whose trace is the report. */
		struct store *s;
		int bad = cli_open_store(&s, db, STORE_READ) != 0;
		if (!bad) {
			struct store_device_info dev;
			bad = store_get_run(s, id, &hrd.run) != 0 ||
			      (!even_empty && store_find_device(s, id, STORE_TRACE_VDEV, &dev) != 0);
			store_close(s);
		}
		if (bad) {
			cli_err("run %lld has no readable profile to report", (long long)id);
			return 1;
		}
	}
	r->run = r->have_tp ? prd.run : hrd.run;
	const struct store_run *run = &r->run;
	r->have_trace = load_trace(r, db) == 0;
	int mirage_only = r->have_trace && !r->have_tp && !hp_read; /* no HaLVM profile to miss */
	if (!r->have_tp && !mirage_only)
		r->warn[r->nw++] = run->state == STORE_RUN_RUNNING
			? "no time profile (.prof) yet: GHC writes it when the program exits"
			: "no readable time profile (.prof): no cost centres or flame graph";
	if (!r->have_hp && !mirage_only)
		r->warn[r->nw++] = run->state == STORE_RUN_RUNNING ? "no heap sample yet"
		                                                    : "no readable heap profile (.hp): no heap chart";
	if (run->state == STORE_RUN_CRASHED)
		r->warn[r->nw++] = "the guest crashed or was destroyed: what it wrote and was told was saved "
		                   "is shown; a profile it never flushed is missing";

	cli_profile_caption(run, r->caption, sizeof(r->caption));
	cli_format_time(run->started_us, r->started, sizeof(r->started));
	if (run->ended_us) {
		cli_format_time(run->ended_us, r->ended, sizeof(r->ended));
		cli_format_duration(run->ended_us - run->started_us, r->dur, sizeof(r->dur));
	} else {
		snprintf(r->ended, sizeof(r->ended), "(running)");
		snprintf(r->dur, sizeof(r->dur), "-");
	}
	snprintf(r->domid, sizeof(r->domid), run->domid >= 0 ? "%d" : "-", run->domid);
	snprintf(r->pbytes, sizeof(r->pbytes), run->prof_bytes < 0 ? "-" : "%lld", (long long)run->prof_bytes);
	snprintf(r->hbytes, sizeof(r->hbytes), run->hp_bytes < 0 ? "-" : "%lld", (long long)run->hp_bytes);
	const char *facts[] = {
		"guest", run->name, "domain id", r->domid, "uuid", run->uuid,
		"state", store_run_state_name(run->state), "started", r->started, "ended", r->ended,
		"duration", r->dur, "host", run->host, "backend", run->backend_version,
		"source", run->source, ".prof bytes", r->pbytes, ".hp bytes", r->hbytes,
	};
	memcpy(r->facts, facts, sizeof(facts));
	if (against && load_against(r, db, against) != 0)
		return 1;
	return 0;
}

void run_report_input(const struct run_report *r, struct report_input *in)
{
	memset(in, 0, sizeof(*in));
	in->title = r->caption;
	in->facts = r->facts;
	in->nfacts = 12;
	in->warnings = r->warn;
	in->nwarnings = r->nw;
	in->hp = r->have_hp ? &r->hp : NULL;
	in->chart = r->have_hp ? &r->chart : NULL;
	in->tp = r->have_tp ? &r->tp : NULL;
	in->trace = r->have_trace ? &r->trace.t : NULL;
	if (r->against) {
		in->against_title = r->against_caption;
		in->against_tp = r->a_tp ? &r->atp : NULL;
		in->against_hp = r->a_hp ? &r->ahp : NULL;
	}
}

void run_report_free(struct run_report *r)
{
	if (r->have_trace)
		cli_trace_free(&r->trace);
	tp_free(&r->atp);
	hp_free(&r->ahp);
	hp_chart_free(&r->chart);
	hp_free(&r->hp);
	tp_free(&r->tp);
}
