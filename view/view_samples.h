/*
 * view_samples.h - a run's stack samples (its "samples" device, taken by
 * profile-backend's sampler) read from the store for the views
 * (view_samples.c): as the samples model (exports) or as a time profile
 * (top, flame, diff, the report), read in the view's one snapshot.
 *
 * May call: store/store.h, profile/samples/samples.h, view.h, view_profile.h,
 * view_err.h.
 */
#ifndef PROFSVC_VIEW_SAMPLES_H
#define PROFSVC_VIEW_SAMPLES_H

#include "profile/samples/samples.h"
#include "view.h"
#include "view_profile.h"

/* run's samples parsed to the end of what is stored (a stream still being
 * written ends at its last whole record).  0, or -1 with the reason in e
 * ("run 12 has no samples: sample it with profile-backend sample"). */
int view_read_samples(struct view *v, const struct view_run *run, struct samples_profile *p,
                      struct view_profile_read *rd, struct view_err *e);
/* A samples device's bytes fed to p (holes as zeros) and finished, in the
 * caller's read of s: 0, -1 (the store failed: its words in e), or
 * VIEW_SAMPLES_REFUSED (the stream is refused: samples_error's words in e). */
#define VIEW_SAMPLES_REFUSED (-2)
int view_samples_feed_device(struct store *s, const struct store_device_info *dev, struct samples_profile *p,
                             struct view_err *e);
/* The same as a time profile (samples_to_time_profile). */
int view_read_samples_profile(struct view *v, const struct view_run *run, struct time_profile *p,
                              struct view_profile_read *rd, struct view_err *e);

/* How many stack samples run r holds, into r->samples, read in the
 * caller's read of s.  It stays -1 when r has none, when its stream does
 * not read, or when budget is not NULL and the stream is over
 * VIEW_SAMPLES_COUNT_MAX bytes or over what *budget has left (a
 * listing's bound: each stream read is taken from it).  NULL: counted
 * whatever its size (one run's view). */
#define VIEW_SAMPLES_COUNT_MAX (2u << 20)
#define VIEW_SAMPLES_LIST_BUDGET (16u << 20)
void view_count_samples(struct store *s, struct store_run *r, uint64_t *budget);

/* The run's time profile: its .prof, or when it has none but stack
 * samples, the samples (*from_samples says which).  0, or -1 with e. */
int view_read_time_profile_or_samples(struct view *v, const struct view_run *run, struct time_profile *p,
                                      struct view_profile_read *rd, int *from_samples, struct view_err *e);

#endif
