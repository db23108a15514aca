/*
 * view_profile.h - a run's profile, read from a view (view.h) for what
 * looks at it (heap, top, flame, diff, reports, the web API): inside the
 * view's one snapshot, streamed in pieces to a parser, for running,
 * complete and crashed runs alike.  What a crashed guest left is read as
 * export --salvage would give it, and a warning says so; nothing here
 * writes.
 *
 * May call: store/store.h, store/store_export.h, profile/ (the parsers),
 * view.h, view_err.h.
 */
#ifndef PROFSVC_VIEW_PROFILE_H
#define PROFSVC_VIEW_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../store/store.h"
#include "view.h"

/* Gets the bytes in order; non-zero stops the read. */
typedef int (*view_profile_sink)(void *ctx, const void *data, size_t len);

struct view_profile_read {
	struct store_run run;
	uint64_t bytes;     /* read */
	int salvaged;       /* the status block did not vouch for all of it */
	char note[300];     /* what salvage did, for the user */
};

/*
 * Resolves RUN ("12", "latest") in v and streams its .prof or .hp (role
 * "prof"/"hp") to sink.  0 ok; 1 on an error, in e ("run 12 has no .hp
 * device (xvdp2)"), or when the sink stopped it (the sink's owner says
 * why).
 */
int view_profile_read(struct view *v, const char *run_arg, const char *role,
                      view_profile_sink sink, void *ctx, struct view_profile_read *out,
                      struct view_err *e);

struct time_profile;
struct hp_profile;
struct hp_tail;
/* RUN's .prof or .hp parsed to its end (tail: what a cut .hp left out,
 * may be NULL); a salvaged read is a warning in e.  0, or 1 (the reason
 * in e). */
int view_read_time_profile(struct view *v, const char *arg, struct time_profile *p,
                           struct view_profile_read *rd, struct view_err *e);
int view_read_heap_profile(struct view *v, const char *arg, struct hp_profile *p,
                           struct hp_tail *tail, struct view_profile_read *rd, struct view_err *e);

/* Follows a running guest's heap profile: feeds p the bytes its status
 * block added since *fed (never past what the guest wrote; the guest
 * rewrites the status block after each flushed sample, so it ends on a
 * whole sample), inside the caller's read transaction.  0, or -1 with
 * the store's or the parser's error in err (the parser's stays). */
int view_follow_heap(struct store *s, int64_t run_id, struct hp_profile *p, uint64_t *fed, char *err,
                     size_t len);

/* "run 12 halvm-leak (complete)", raw: the name is the guest's, so the
 * caller escapes it for where it goes (safe_text_print, markup_text). */
void view_profile_caption(const struct store_run *r, char *out, size_t len);

#endif
