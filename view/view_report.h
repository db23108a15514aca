/*
 * view_report.h - a run's report (profile/render/report.h) assembled from a view:
 * both profiles read and charted, the facts and the warnings that say
 * what a crash or a salvage cost, and optionally a second run to compare
 * with.  What `profdb report` writes to a file and `profdb serve` sends
 * as /runs/N and /compare.
 *
 * May call: view.h, view_profile.h, view_trace.h, view_format.h,
 * view_eventlog.h, view_err.h, profile/, store/store.h.
 */
#ifndef PROFSVC_VIEW_REPORT_H
#define PROFSVC_VIEW_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "profile/eventlog/eventlog_summary.h"
#include "profile/eventlog/eventlog_timeline.h"
#include "profile/heap/heap_chart.h"
#include "profile/heap/heap_profile.h"
#include "profile/render/report.h"
#include "profile/prof/time_profile.h"
#include "profile/samples/samples.h"
#include "store/store.h"
#include "view.h"
#include "view_trace.h"

struct view_report {
	struct store_run run;
	int have_tp, have_hp, have_trace;
	int no_heap;                   /* a trace alone: no heap profile to come */
	int from_samples;              /* tp is the run's stack samples (it has no .prof) */
	int sp_read, have_sp;          /* sp was read (free it), and holds samples */
	struct samples_profile sp;     /* those samples, for the page's Samples section */
	char sp_how[400];              /* how they were taken, as the page says it */
	struct view_trace trace;       /* a MirageOS run's trace */
	struct time_profile tp;
	struct hp_profile hp;
	struct hp_chart chart;
	char caption[400];
	const char *warn[10];
	char wbuf[6][640];
	size_t nw;
	int tp_damaged, hp_damaged;    /* the profile failed its checksum (a warning says which bytes) */
	/* GHC's eventlog: its timeline and GC figures (have_tl: read; tl_shown:
	 * the run has an eventlog device, so the section is there) */
	int have_tl, tl_shown;
	struct el_gc gc;
	struct el_timeline tl;
	char tl_note[VIEW_ERR_LEN];
	/* the run compared with */
	int against, a_tp, a_hp, a_chart;
	int a_tp_damaged, a_hp_damaged; /* its profile fails its checksum (a warning says so) */
	struct time_profile atp;
	struct hp_profile ahp;
	struct hp_chart achart;
	char against_caption[400];
	/* the comparison: both runs' facts and profiles, what makes them
	 * compare badly */
	struct store_run arun;
	struct report_side sides[2];
	char side_time[2][2][64], side_kinds[2][240];
	char kind_warn[600];
	const char *cwarn[6];
	char cwbuf[6][400];
	size_t ncw;
	/* the facts' values */
	char started[64], ended[64], dur[64], domid[16], pbytes[64], hbytes[64], ebytes[64];
	const char *facts[26];
	size_t nfacts; /* pairs: 12, 13 with GHC's eventlog's size */
};

/* Reads run in v.  0, or -1 with the error in e ("run 12 has no readable
 * profile to report"; what the profile readers said on the way is in e
 * either way); even_empty makes a run without any readable profile yet
 * a report of its facts (a live page waiting for the guest).
 * view_report_free() in both cases. */
int view_report_load(struct view_report *r, struct view *v, const struct view_run *run, int even_empty,
                     struct view_err *e);
/* Adds the run to compare with (the compare page, --against): its
 * profiles read and both sides' facts.  0, or -1 when it is no run (e
 * says "--against AS_GIVEN: no run N", as_given what the user called it). */
int view_report_against(struct view_report *r, struct view *v, const struct view_run *against,
                        const char *as_given, struct view_err *e);
/* The report input for it; the caller may add links and live parts. */
void view_report_input(const struct view_report *r, struct report_input *in);
void view_report_free(struct view_report *r);

#endif
