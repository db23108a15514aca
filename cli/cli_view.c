/*
 * cli_view.c - profdb on the view library (cli_view.h).
 *
 * May call: view/, profile/heap/heap_chart.h, profile/prof/time_profile.h,
 * cli_util.h.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "profile/heap/heap_chart.h"
#include "profile/prof/time_profile.h"
#include "cli_util.h"
#include "cli_view.h"

int cli_focus_opt(struct view_focus *f, int ignore, const char *re)
{
	char why[200];
	if (view_focus_add(f, ignore, re, why, sizeof(why)) == 0)
		return 0;
	cli_err("--%s '%s': %s", ignore ? "ignore" : "focus", re, why);
	return EXIT_USAGE;
}

int cli_focus_profile(const struct view_focus *f, struct time_profile *p, int64_t run_id, double *kept_pct)
{
	*kept_pct = 100;
	if (!view_focus_any(f))
		return 0;
	if (view_focus_profile(f, p, kept_pct) != 0) {
		cli_err("out of memory cutting run %lld's call tree", (long long)run_id);
		return 1;
	}
	if (p->nnodes == 0) {
		cli_err("run %lld: no call stack is left by --focus and --ignore", (long long)run_id);
		return 1;
	}
	return 0;
}

int cli_view_open(struct view *v, const char *db)
{
	struct view_err e;
	cli_view_err(&e);
	return view_open(v, db, &e);
}

int cli_view_resolve(struct view *v, const char *arg, struct view_run *run)
{
	struct view_err e;
	cli_view_err(&e);
	return view_resolve(v, arg, run, &e);
}

int cli_resolve_host(struct store *s, const char *arg, struct view_run *run)
{
	struct view_err e;
	cli_view_err(&e);
	return view_resolve_host(s, arg, run, &e);
}

int cli_open_run(struct view *v, const char *db, const char *arg, struct view_run *run,
                 struct store_run *row)
{
	struct view_err e;
	cli_view_err(&e);
	if (view_open(v, db, &e) != 0)
		return 1;
	if (view_resolve(v, arg, run, &e) != 0 || view_snapshot(v, &e) != 0) {
		view_close(v);
		return 1;
	}
	if (store_get_run(v->s, run->id, row) != 0) {
		cli_err("%s", store_errmsg(v->s));
		view_close(v);
		return 1;
	}
	return 0;
}

int cli_read_time_profile(struct view *v, const struct view_run *run, struct time_profile *p,
                          struct view_profile_read *rd)
{
	struct view_err e;
	cli_view_err(&e);
	return view_read_time_profile(v, run, p, rd, &e);
}

int cli_read_profile_or_samples(struct view *v, const struct view_run *run, int *samples,
                                struct time_profile *p, struct view_profile_read *rd)
{
	struct view_err e;
	cli_view_err(&e);
	if (*samples)
		return view_read_samples_profile(v, run, p, rd, &e);
	int rc = view_read_time_profile_or_samples(v, run, p, rd, samples, &e);
	if (rc == 0 && *samples)
		cli_warn("run %lld has no .prof: its stack samples are shown (as with --samples)",
		         (long long)rd->run.run_id);
	/* a .prof not (yet) readable, and samples beside it: say where they are */
	struct store_device_info dev;
	if (rc != 0 && !*samples && view_snapshot(v, NULL) == 0 &&
	    store_find_device(v->s, run->id, STORE_SAMPLES_VDEV, &dev) == 0)
		cli_err("run %lld has stack samples too: add --samples to see them", (long long)run->id);
	return rc;
}

int cli_read_heap_profile(struct view *v, const struct view_run *run, struct hp_profile *p,
                          struct hp_tail *tail, struct view_profile_read *rd)
{
	struct view_err e;
	cli_view_err(&e);
	return view_read_heap_profile(v, run, p, tail, rd, &e);
}

/* A band's shape over time in `cols` block characters (its own scale). */
void cli_sparkline(const struct hp_chart *c, const struct hp_chart_band *b, int cols)
{
	static const char *const blocks[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
	                                     "\u2585", "\u2586", "\u2587", "\u2588"};
	double t0 = c->times[0], span = c->times[c->nsamples - 1] - t0;
	size_t k = 0;
	for (int col = 0; col < cols; col++) {
		double hi = t0 + span * (col + 1) / cols, m = -1;
		/* the largest sample in the column; none there: the one before */
		for (; k < c->nsamples && (c->times[k] < hi || col == cols - 1); k++)
			m = fmax(m, b->values[k]);
		if (m < 0)
			m = b->values[k ? k - 1 : 0];
		int lvl = b->peak ? (int)ceil(m / (double)b->peak * 8) : 0;
		fputs(blocks[lvl < 0 ? 0 : lvl > 8 ? 8 : lvl], stdout);
	}
}

