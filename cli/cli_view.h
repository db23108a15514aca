/*
 * cli_view.h - profdb on the view library (view/): views opened and
 * profiles read with their errors and warnings printed as profdb prints
 * them, and a heap band drawn in the terminal.
 *
 * May call: view/, cli_util.h.
 */
#ifndef PROFSVC_CLI_VIEW_H
#define PROFSVC_CLI_VIEW_H

#include "view/view.h"
#include "view/view_profile.h"
#include "view/view_samples.h"
#include "view/view_focus.h"
#include "view/view_sampled.h"

/* view_open, view_resolve: 0, or -1 (reported). */
int cli_view_open(struct view *v, const char *db);
int cli_view_resolve(struct view *v, const char *arg, struct view_run *run);
/* "12", "latest" on a host's store that is no view (view_resolve_host):
 * 0, or -1 (reported). */
int cli_resolve_host(struct store *s, const char *arg, struct view_run *run);
/* A view of db, arg resolved in it, its snapshot begun and the run's row
 * read (for the commands that read the store themselves: show, export):
 * 0, or 1 (reported, the view closed). */
int cli_open_run(struct view *v, const char *db, const char *arg, struct view_run *run,
                 struct store_run *row);
/* view_read_time_profile, view_read_heap_profile: 0, or -1 (reported;
 * a salvage's warning too). */
int cli_read_time_profile(struct view *v, const struct view_run *run, struct time_profile *p,
                          struct view_profile_read *rd);
int cli_read_heap_profile(struct view *v, const struct view_run *run, struct hp_profile *p,
                          struct hp_tail *tail, struct view_profile_read *rd);
/* The run's time profile, or with *samples its stack samples as one
 * (top --samples, flame --samples); a run with samples and no .prof
 * device gives its samples too, *samples set and a warning saying so,
 * and one whose .prof cannot be read says that it has samples.  0, or -1
 * (reported). */
int cli_read_profile_or_samples(struct view *v, const struct view_run *run, int *samples,
                                struct time_profile *p, struct view_profile_read *rd);

/* --focus RE (ignore 0) or --ignore RE (ignore 1) added to f: 0, or
 * EXIT_USAGE (said why: a bad regular expression). */
int cli_focus_opt(struct view_focus *f, int ignore, const char *re);
/* p's call tree cut to the stacks f keeps (view_focus_profile) when f
 * filters anything; *kept_pct their share of the time (100 when it does
 * not).  0, or 1 (reported: out of memory, or no stack kept). */
int cli_focus_profile(const struct view_focus *f, struct time_profile *p, int64_t run_id, double *kept_pct);

struct hp_chart;
struct hp_chart_band;
/* A band's shape over time in `cols` block characters on stdout (its own
 * scale: the band's peak is a full block). */
void cli_sparkline(const struct hp_chart *c, const struct hp_chart_band *b, int cols);

#endif
