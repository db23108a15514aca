/*
 * view_diff.h - one side of a comparison of two runs (profdb diff, serve's
 * /api/diff): both profiles of a run, each read if it reads, in the view's
 * snapshot; profile/prof/prof_compare.h and profile/heap/heap_compare.h
 * match the two sides.
 *
 * May call: view.h, view_profile.h, view_eventlog.h, view_err.h, profile/.
 */
#ifndef PROFSVC_VIEW_DIFF_H
#define PROFSVC_VIEW_DIFF_H

#include "profile/eventlog/eventlog_summary.h"
#include "profile/heap/heap_profile.h"
#include "profile/prof/time_profile.h"
#include "view.h"
#include "view_profile.h"

struct view_diff_side {
	struct time_profile tp;
	struct hp_profile hp;
	struct view_profile_read rd;   /* the run (the .prof's read, else the .hp's) */
	int have_tp, have_hp;          /* read whole (a .hp may have no sample) */
	int tp_damaged, hp_damaged;    /* not read: stored bytes fail their checksum (said in e) */
	struct el_gc gc;               /* GHC's eventlog's GC figures, when it has one */
	int have_gc;
};

/* Reads both of run's profiles, and its eventlog's GC
 * figures when it has an eventlog: a run without one is compared on the
 * others, so what does not read is only said in e.  0 when at least one
 * read, else -1.  view_diff_side_free() either way. */
int view_diff_side_load(struct view *v, const struct view_run *run, struct view_diff_side *s,
                        struct view_err *e);
void view_diff_side_free(struct view_diff_side *s);

#endif
