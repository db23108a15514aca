/*
 * view_report.c - a run's report assembled from a view (view_report.h),
 * all of it read in the view's one snapshot.
 *
 * May call: view.h, view_profile.h, view_trace.h, view_format.h,
 * view_eventlog.h, view_err.h, profile/, store/store.h, view_samples.c,
 * view_sampled.c (how a sampled run's samples were taken).
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "view_eventlog.h"
#include "view_format.h"
#include "view_profile.h"
#include "view_report.h"
#include "view_samples.h"
#include "view_sampled.h"
#include "profile/heap/heap_compare.h"

/* A run with a trace: which profile devices it has (each read only if
 * there).  Any doubt leaves both wanted, and the readers say what is
 * wrong. */
static void probe_devices(struct view *v, const struct view_run *run, int *want_tp, int *want_hp, int *samples)
{
	struct store_device_info dev;

	if (view_snapshot(v, NULL) != 0)
		return;
	*samples = store_find_device(v->s, run->id, STORE_SAMPLES_VDEV, &dev) == 0;
	if (*samples || store_find_device(v->s, run->id, STORE_TRACE_VDEV, &dev) == 0) {
		*want_tp = store_find_device(v->s, run->id, "xvdp1", &dev) == 0;
		*want_hp = store_find_device(v->s, run->id, "xvdp2", &dev) == 0;
	}
}

/* The run's MirageOS trace, if it has one: 0, or -1. */
static int load_trace(struct view_report *r, struct view *v)
{
	if (view_snapshot(v, NULL) != 0)
		return -1;
	return view_trace_load(v->s, &r->run, &r->trace, NULL) == 0 ? 0 : -1;
}

static void add_cwarn(struct view_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The run compared with: each profile it has, charted.  0, or -1 when it
 * is not a run.  A run with no profile to compare is still one side of
 * the comparison: the page says what it has instead. */
static int load_against(struct view_report *r, struct view *v, const struct view_run *arun,
                        const char *as_given, struct view_err *e)
{
	struct view_profile_read rd, hrd;
	struct hp_chart_opts co;
	long long aid = (long long)arun->id;
	if (view_snapshot(v, NULL) != 0 || store_get_run(v->s, arun->id, &r->arun) != 0) {
		view_error(e, "--against %s: no run %lld", as_given, aid);
		return -1;
	}
	view_profile_caption(&r->arun, r->against_caption, sizeof(r->against_caption));
	struct view_err quiet; /* what the other run lacks is said on the page */
	view_err_init(&quiet);
	int want_tp = 1, want_hp = 1, samples = 0;
	probe_devices(v, arun, &want_tp, &want_hp, &samples);
	r->a_tp = want_tp && view_read_time_profile(v, arun, &r->atp, &rd, &quiet) == 0;
	if (want_hp && view_read_heap_profile(v, arun, &r->ahp, NULL, &hrd, &quiet) == 0 && r->ahp.nsamples) {
		r->a_hp = 1;
		hp_chart_defaults(&co);
		r->a_chart = hp_chart_make(&r->ahp, &co, &r->achart) == 0;
	}
	r->against = 1;
	/* damage is said, never taken for a profile the run lacks */
	if ((r->a_tp_damaged = want_tp && !r->a_tp && rd.damage[0]))
		add_cwarn(r, "Run %lld's time profile (.prof) is not compared: %s.", aid, rd.damage);
	if ((r->a_hp_damaged = want_hp && !r->a_hp && hrd.damage[0]))
		add_cwarn(r, "Run %lld's heap profile (.hp) is not compared: %s.", aid, hrd.damage);
	if (quiet.damaged)
		view_damage(e, "%s", quiet.damage); /* for an exit status (the page says it above) */
	return 0;
}

static void add_warning(struct view_report *r, size_t *nbuf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_warning(struct view_report *r, size_t *nbuf, const char *fmt, ...)
{
	va_list ap;
	if (*nbuf >= sizeof(r->wbuf) / sizeof(r->wbuf[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(r->wbuf[*nbuf], sizeof(r->wbuf[*nbuf]), fmt, ap);
	va_end(ap);
	r->warn[r->nw++] = r->wbuf[(*nbuf)++];
}

static void add_cwarn(struct view_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_cwarn(struct view_report *r, const char *fmt, ...)
{
	va_list ap;
	if (r->ncw >= sizeof(r->cwbuf) / sizeof(r->cwbuf[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(r->cwbuf[r->ncw], sizeof(r->cwbuf[r->ncw]), fmt, ap);
	va_end(ap);
	r->cwarn[r->ncw] = r->cwbuf[r->ncw];
	r->ncw++;
}

/* One side's facts and the profiles it has, in words. */
static void side_fill(struct view_report *r, int k, const struct store_run *run, int have_tp, int from_samples,
                      const struct hp_profile *hp, int have_hp, struct view *v)
{
	struct report_side *sd = &r->sides[k];
	struct store_device_info dev;
	char *o = r->side_kinds[k];
	size_t cap = sizeof(r->side_kinds[k]), n = 0;
	sd->run_id = run->run_id;
	sd->name = run->name;
	sd->host = run->host;
	sd->state = store_run_state_name(run->state);
	view_format_time(run->started_us, r->side_time[k][0], sizeof(r->side_time[k][0]));
	if (run->ended_us)
		view_format_time(run->ended_us, r->side_time[k][1], sizeof(r->side_time[k][1]));
	else
		snprintf(r->side_time[k][1], sizeof(r->side_time[k][1]), "(running)");
	sd->started = r->side_time[k][0];
	sd->ended = r->side_time[k][1];
	o[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(o + n, n < cap ? cap - n : 0, __VA_ARGS__), n = n < cap ? n : cap - 1)
	if (have_tp)
		ADD("%s", from_samples ? "stack samples (no .prof)" : "time profile (.prof)");
	if (have_hp)
		ADD("%sheap profile (.hp) by %s", n ? ", " : "", cmp_hp_kind_name(cmp_hp_kind(hp->job)));
	if (view_snapshot(v, NULL) == 0) {
		if (store_find_device(v->s, run->run_id, "eventlog", &dev) == 0)
			ADD("%sGHC eventlog", n ? ", " : "");
		if (store_find_device(v->s, run->run_id, STORE_TRACE_VDEV, &dev) == 0)
			ADD("%sMirageOS trace", n ? ", " : "");
	}
	if (!n)
		ADD("no readable profile");
#undef ADD
	sd->profiles = o;
}

/* Both sides of the comparison, and what makes them compare badly. */
static void fill_compare(struct view_report *r, struct view *v)
{
	side_fill(r, 0, &r->arun, r->a_tp, 0, &r->ahp, r->a_hp, v);
	side_fill(r, 1, &r->run, r->have_tp, r->from_samples, &r->hp, r->have_hp, v);
	long long a = (long long)r->arun.run_id, b = (long long)r->run.run_id;
	if (r->a_hp && r->have_hp) {
		char ka = cmp_hp_kind(r->ahp.job), kb = cmp_hp_kind(r->hp.job);
		if (cmp_kind_warning(r->kind_warn, sizeof(r->kind_warn), a, r->ahp.job, b, r->hp.job))
			;
		else if (!ka != !kb)
			add_cwarn(r, "Run %lld's heap profile does not say what it is by (no -h option on its JOB "
			             "line), run %lld's is by %s: the bands may be different things.",
			          ka ? b : a, ka ? a : b, cmp_hp_kind_name(ka ? ka : kb));
	} else if (r->a_hp != r->have_hp && !r->a_hp_damaged && !r->hp_damaged) {
		add_cwarn(r, "Only run %lld has a heap profile (.hp): there is no heap to compare with run %lld's.",
		          r->a_hp ? a : b, r->a_hp ? b : a);
	}
	if (r->a_tp && r->have_tp && r->from_samples)
		add_cwarn(r, "Run %lld's time profile is GHC's cost centres (.prof), run %lld's is stack samples "
		             "taken from dom0: the call stacks are different kinds of thing.",
		          a, b);
	else if (r->a_tp != r->have_tp && !r->a_tp_damaged && !r->tp_damaged)
		add_cwarn(r, "Only run %lld has a time profile%s: there is no differential flame graph and no "
		             "call stacks to compare.",
		          r->a_tp ? a : b, r->a_tp ? " (.prof)" : "");
	if (!r->a_tp && !r->a_hp)
		add_cwarn(r, "Run %lld has no heap or time profile to compare (%s).", a, r->side_kinds[0]);
	if (strcmp(r->arun.name, r->run.name) != 0)
		add_cwarn(r, "The two runs are of different guests.");
	if (r->arun.run_id > r->run.run_id)
		add_cwarn(r, "Run %lld came after run %lld: the changes shown are backwards in time.", a, b);
}

/* How the samples were taken, as the page says it. */
static void sampling_sentence(struct view_report *r)
{
	struct view_sampling h;
	char span[32], all[32];
	view_sampling_of(&r->sp, &h);
	view_format_duration((int64_t)(h.span_ns / 1000), span, sizeof(span));
	view_format_duration((int64_t)(h.total_ns / 1000), all, sizeof(all));
	int n = snprintf(r->sp_how, sizeof(r->sp_how), "Sampled from dom0 at %u Hz", h.hz_asked);
	if (h.hz_kept != h.hz_asked && n > 0 && (size_t)n < sizeof(r->sp_how))
		n += snprintf(r->sp_how + n, sizeof(r->sp_how) - (size_t)n, " asked, %u Hz kept (the sampler's budget lowered it)",
		              h.hz_kept);
	if (n > 0 && (size_t)n < sizeof(r->sp_how))
		snprintf(r->sp_how + n, sizeof(r->sp_how) - (size_t)n,
		         ": %llu samples taken, %llu lost, %u vCPU%s, over %s; shares %s (%s in all).",
		         (unsigned long long)h.samples, (unsigned long long)h.lost, h.vcpus, h.vcpus == 1 ? "" : "s", span,
		         h.cpu_time ? "by CPU time: a sample weighs its vCPU's CPU time since its last one"
		         : h.some_cpu_time ? "by CPU time where the sampler told it, else 1/rate a sample"
		                           : "by samples, 1/rate each",
		         all);
}

/* The run's stack samples, kept for the Samples section, and as its time profile. */
static int read_samples(struct view_report *r, struct view *v, const struct view_run *run,
                        struct view_profile_read *prd, struct view_err *e)
{
	r->sp_read = 1;
	if (view_read_samples(v, run, &r->sp, prd, e) != 0)
		return -1;
	if (r->sp.nsamples == 0) {
		view_error(e, "run %lld has no stack samples yet", (long long)run->id);
		return -1;
	}
	if (samples_to_time_profile(&r->sp, &r->tp) != 0) {
		view_error(e, "out of memory");
		return -1;
	}
	r->have_sp = 1;
	sampling_sentence(r);
	return 0;
}


/* The run's profiles: each one it has, charted, with what a salvage or a
 * cut cost as warnings.  hp_read: the .hp was read, even if empty. */
static void load_profiles(struct view_report *r, struct view *v, const struct view_run *run, int *hp_read,
                          struct view_profile_read *prd, struct view_profile_read *hrd,
                          size_t *nbuf, struct view_err *e)
{
	struct hp_tail tail;
	struct hp_chart_opts co;

	/* A MirageOS run has a trace and no profile devices: the profile
	 * readers are not asked (they would say that the devices are missing). */
	int want_tp = 1, want_hp = 1, samples = 0;
	probe_devices(v, run, &want_tp, &want_hp, &samples);
	r->have_tp = want_tp && view_read_time_profile(v, run, &r->tp, prd, e) == 0;
	/* A run with stack samples and no .prof: the samples are its time
	 * profile (the cost centres and the flame graph are its functions). */
	if (!want_tp && samples) {
		tp_free(&r->tp);
		r->from_samples = 1;
		r->have_tp = read_samples(r, v, run, prd, e) == 0;
	} else if (samples) {
		add_warning(r, nbuf, "this run has stack samples too: profdb top %lld --samples", (long long)run->id);
	}
	if (r->have_tp && prd->salvaged)
		add_warning(r, nbuf, "time profile salvaged: %s", prd->note);
	*hp_read = want_hp && view_read_heap_profile(v, run, &r->hp, &tail, hrd, e) == 0;
	if (!*hp_read)
		return;
	hp_chart_defaults(&co);
	r->have_hp = r->hp.nsamples > 0 && hp_chart_make(&r->hp, &co, &r->chart) == 0;
	if (hrd->salvaged)
		add_warning(r, nbuf, "heap profile salvaged: %s", hrd->note);
	if (tail.dropped_bytes)
		add_warning(r, nbuf, "heap profile cut %s: the last %llu bytes are not in the chart",
		            tail.partial_sample ? "in the middle of a sample" : "after its last sample",
		            (unsigned long long)tail.dropped_bytes);
}

/* What the report says is missing or went wrong.  A profile that fails
 * its checksum is said to be damaged, with the store's words (which bytes,
 * and profdb check), never "no readable profile": the guest wrote it, and
 * the store no longer holds it whole. */
static void add_state_warnings(struct view_report *r, int hp_read, const struct view_profile_read *prd,
                               const struct view_profile_read *hrd, size_t *nbuf)
{
	const struct store_run *run = &r->run;
	int mirage_only = r->have_trace && !r->have_tp && !hp_read; /* no HaLVM profile to miss */
	r->no_heap = mirage_only && !r->tl_shown; /* nor a heap from GHC's eventlog */
	if (!r->have_tp && prd->damage[0]) {
		r->tp_damaged = 1;
		add_warning(r, nbuf, "the %s is not shown (no cost centres or flame graph): %s",
		            r->from_samples ? "stack samples' time profile" : "time profile (.prof)", prd->damage);
	}
	if (!hp_read && hrd->damage[0]) {
		r->hp_damaged = 1;
		add_warning(r, nbuf, "the heap profile (.hp) is not shown (no heap chart): %s", hrd->damage);
	}
	if (r->from_samples)
		return; /* sampled from dom0: no profile was expected of the guest */
	if (!r->have_tp && !mirage_only && !prd->damage[0])
		r->warn[r->nw++] = run->state == STORE_RUN_RUNNING
			? "no time profile (.prof) yet: GHC writes it when the program exits"
			: "no readable time profile (.prof): no cost centres or flame graph";
	if (!r->have_hp && !mirage_only && !hrd->damage[0])
		r->warn[r->nw++] = run->state == STORE_RUN_RUNNING ? "no heap sample yet"
		                                                    : "no readable heap profile (.hp): no heap chart";
	if (run->state == STORE_RUN_CRASHED)
		r->warn[r->nw++] = "the guest crashed or was destroyed: what it wrote and was told was saved "
		                   "is shown; a profile it never flushed is missing";
}

/* The facts' table: name, value pairs (values kept in r). */
static void fill_facts(struct view_report *r)
{
	const struct store_run *run = &r->run;
	view_profile_caption(run, r->caption, sizeof(r->caption));
	view_format_time(run->started_us, r->started, sizeof(r->started));
	/* the duration as every view gives it (view_format.h); a live page
	 * counts it on (live.js) */
	int64_t us = view_run_duration_us(run, store_now_us());
	char d[32];
	view_format_duration(us, d, sizeof(d));
	if (run->ended_us) {
		view_format_time(run->ended_us, r->ended, sizeof(r->ended));
		snprintf(r->dur, sizeof(r->dur), "%s", d);
	} else {
		snprintf(r->ended, sizeof(r->ended), "(running)");
		snprintf(r->dur, sizeof(r->dur), us < 0 ? "unknown (no backend running)" : "%s (still running)", d);
	}
	snprintf(r->domid, sizeof(r->domid), run->domid >= 0 ? "%d" : "-", run->domid);
	/* sizes as the pages show them: "8.2 kB (8,176 bytes)" */
	snprintf(r->pbytes, sizeof(r->pbytes), "-");
	snprintf(r->hbytes, sizeof(r->hbytes), "-");
	if (run->prof_bytes >= 0)
		report_fmt_size((uint64_t)run->prof_bytes, r->pbytes, sizeof(r->pbytes));
	if (run->hp_bytes >= 0)
		report_fmt_size((uint64_t)run->hp_bytes, r->hbytes, sizeof(r->hbytes));
	report_fmt_size(run->eventlog_bytes > 0 ? (uint64_t)run->eventlog_bytes : 0, r->ebytes, sizeof(r->ebytes));
	const char *facts[] = {
		"guest", run->name, "domain id", r->domid, "uuid", run->uuid,
		"state", store_run_state_name(run->state), "started", r->started, "ended", r->ended,
		"duration", r->dur, "host", run->host, "backend", run->backend_version,
		"source", run->source, ".prof", r->pbytes, ".hp", r->hbytes,
		"eventlog", r->ebytes, /* a run with GHC's eventlog only */
	};
	_Static_assert(sizeof(facts) == sizeof(r->facts), "the facts' table holds them all");
	memcpy(r->facts, facts, sizeof(facts));
	r->nfacts = run->eventlog_bytes >= 0 ? 13 : 12;
}

/* The run's eventlog, when it has the device: its timeline and GC figures
 * (a live run's log with no whole event yet leaves the section waiting);
 * what the read said goes in the section, not the report's warnings. */
static void load_timeline(struct view_report *r, struct view *v, const struct view_run *run)
{
	struct store_device_info dev;
	struct view_eventlog el;
	struct view_err e;

	el_gc_init(&r->gc);
	el_timeline_init(&r->tl);
	if (view_snapshot(v, NULL) != 0 || store_find_device(v->s, run->id, "eventlog", &dev) != 0)
		return;
	r->tl_shown = 1;
	view_err_init(&e);
	r->have_tl = view_read_eventlog_timeline(v, run, &r->gc, &r->tl, &el, &e) == 0;
	/* a running guest's log is not closed yet: that is no news */
	if (e.n && (!r->have_tl || el.rd.run.state != STORE_RUN_RUNNING))
		snprintf(r->tl_note, sizeof(r->tl_note), "%s", view_err_first(&e));
	view_eventlog_free(&el);
}

int view_report_load(struct view_report *r, struct view *v, const struct view_run *run, int even_empty,
                     struct view_err *e)
{
	struct view_profile_read prd, hrd;
	size_t nbuf = 0;
	int hp_read;
	int64_t id = run->id;

	memset(r, 0, sizeof(*r));
	el_gc_init(&r->gc);
	el_timeline_init(&r->tl);
	tp_init(&r->tp);
	hp_init(&r->hp);
	tp_init(&r->atp);
	hp_init(&r->ahp);
	memset(&prd, 0, sizeof(prd));
	memset(&hrd, 0, sizeof(hrd));
	load_profiles(r, v, run, &hp_read, &prd, &hrd, &nbuf, e);
	if (!r->have_tp && !hp_read) {
		/* No profile: a run still waiting for its guest (even_empty), a
		 * MirageOS guest's, whose trace is the report, or one with GHC's
		 * eventlog alone, whose timeline is. */
		struct store_device_info dev;
		if (view_snapshot(v, NULL) != 0 || store_get_run(v->s, id, &hrd.run) != 0 ||
		    (!even_empty && store_find_device(v->s, id, STORE_TRACE_VDEV, &dev) != 0 &&
		     store_find_device(v->s, id, "eventlog", &dev) != 0)) {
			if (prd.damage[0] || hrd.damage[0]) /* (said in e already) */
				view_error(e, "run %lld has no profile to report that passes its checksums (profdb "
				           "check lists the damage)", (long long)id);
			else
				view_error(e, "run %lld has no readable profile to report", (long long)id);
			return -1;
		}
	}
	r->run = r->have_tp ? prd.run : hrd.run;
	r->have_trace = load_trace(r, v) == 0;
	load_timeline(r, v, run);
	add_state_warnings(r, hp_read, &prd, &hrd, &nbuf);
	fill_facts(r);
	return 0;
}

int view_report_against(struct view_report *r, struct view *v, const struct view_run *against,
                        const char *as_given, struct view_err *e)
{
	if (load_against(r, v, against, as_given, e) != 0)
		return -1;
	fill_compare(r, v);
	return 0;
}

void view_report_input(const struct view_report *r, struct report_input *in)
{
	memset(in, 0, sizeof(*in));
	in->title = r->caption;
	in->facts = r->facts;
	in->nfacts = r->nfacts;
	in->warnings = r->warn;
	in->nwarnings = r->nw;
	in->hp = r->have_hp ? &r->hp : NULL;
	in->chart = r->have_hp ? &r->chart : NULL;
	in->tp = r->have_tp ? &r->tp : NULL;
	in->trace = r->have_trace ? &r->trace.t : NULL;
	in->no_heap = r->no_heap;
	in->timeline_shown = r->tl_shown;
	in->timeline = r->have_tl ? &r->tl : NULL;
	in->timeline_gc = r->have_tl ? &r->gc : NULL;
	in->timeline_note = r->tl_note[0] ? r->tl_note : NULL;
	if (r->have_sp) {
		in->samples = &r->sp;
		in->samples_how = r->sp_how;
	}
	if (r->against) {
		in->against_title = r->against_caption;
		in->against_tp = r->a_tp ? &r->atp : NULL;
		in->against_hp = r->a_hp ? &r->ahp : NULL;
		in->against_chart = r->a_chart ? &r->achart : NULL;
		in->sides = r->sides;
		in->kind_warning = r->kind_warn[0] ? r->kind_warn : NULL;
		in->compare_warnings = r->cwarn;
		in->ncompare_warnings = r->ncw;
	}
}

void view_report_free(struct view_report *r)
{
	if (r->have_trace)
		view_trace_free(&r->trace);
	el_gc_free(&r->gc);
	el_timeline_free(&r->tl);
	tp_free(&r->atp);
	if (r->a_chart)
		hp_chart_free(&r->achart);
	hp_free(&r->ahp);
	hp_chart_free(&r->chart);
	hp_free(&r->hp);
	tp_free(&r->tp);
	if (r->sp_read)
		samples_free(&r->sp);
}
