/*
 * view_profile.h - a run's profile, read from a view (view.h) for what
 * looks at it (heap, top, flame, diff, reports, the web API): inside the
 * view's one snapshot, streamed in pieces to a parser, for running,
 * complete and crashed runs alike.  What a crashed guest left is read as
 * export --salvage would give it, and a warning says so; nothing here
 * writes.
 *
 * May call: store/store.h, store/store_export.h, profile/ (the parsers),
 * view.h, view_err.h.  A run's eventlog too: decoded (profile/eventlog/ghc_eventlog.h),
 * and its heap samples (profile/eventlog/eventlog_summary.h) are the run's heap
 * profile when it has no .hp.
 */
#ifndef PROFSVC_VIEW_PROFILE_H
#define PROFSVC_VIEW_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/eventlog/ghc_eventlog.h"
#include "store/store.h"
#include "view.h"

/* Gets the bytes in order; non-zero stops the read. */
typedef int (*view_profile_sink)(void *ctx, const void *data, size_t len);

struct view_profile_read {
	struct store_run run;
	uint64_t bytes;     /* read */
	int salvaged;       /* the status block did not vouch for all of it */
	char note[300];     /* what salvage did, for the user */
	char cut[384];      /* an unclosed eventlog: where it was cut (store_export.h) */
	char damage[VIEW_ERR_LEN]; /* the read failed on damaged data: the store's words
	                            * (which bytes fail their checksum, run profdb check) */
};

/*
 * Streams run's .prof or .hp (role "prof"/"hp") to sink, in v's
 * snapshot.  0, or -1 with the reason in e ("run 12 has no .hp device
 * (xvdp2)"), or when the sink stopped it (the sink's owner says why).
 */
int view_profile_read(struct view *v, const struct view_run *run, const char *role,
                      view_profile_sink sink, void *ctx, struct view_profile_read *out,
                      struct view_err *e);

/*
 * run's .prof, .hp or eventlog as view_profile_read gives it, read in
 * pieces, each in a snapshot of its own (serve's downloads: a reply to a
 * slow client holds no read transaction between its pieces, so the WAL
 * can be checkpointed whatever the client's pace).  view_pieces_begin's
 * snapshot fixes what is read: the run, its device, and the bytes (the
 * status block's size then, salvaged as view_profile_read salvages; an
 * unclosed eventlog cut at its last whole event); it ends that snapshot.
 * A finished run's bytes never change, and a running guest only appends
 * (the bytes before its status block's size stay as they are), so the
 * pieces are the file as it was at that first snapshot.  A device gone
 * meanwhile (the run deleted) fails the next piece.
 */
struct view_pieces {
	int64_t device_id;
	char vdev[32];
	uint64_t size, at;           /* the bytes to give, those given */
	struct view_profile_read rd; /* the run, bytes (size), salvaged, note, cut */
};
/* 0, or -1 with the reason in e (as view_profile_read's). */
int view_pieces_begin(struct view *v, const struct view_run *run, const char *role, struct view_pieces *p,
                      struct view_err *e);
/* The next bytes, at most max, from p->at to sink, in a snapshot of its
 * own (ended before it returns); p->at advanced.  0 (p->at == p->size:
 * the end), or -1 with the reason in e (damage said by view_damage), or
 * when the sink stopped it. */
int view_pieces_next(struct view *v, struct view_pieces *p, size_t max, view_profile_sink sink, void *ctx,
                     struct view_err *e);

struct time_profile;
struct hp_profile;
struct hp_tail;
/* run's .prof or .hp parsed to its end (tail: what a cut .hp left out,
 * may be NULL); a salvaged read is a warning in e.  0, or -1 (the reason
 * in e). */
int view_read_time_profile(struct view *v, const struct view_run *run, struct time_profile *p,
                           struct view_profile_read *rd, struct view_err *e);
int view_read_heap_profile(struct view *v, const struct view_run *run, struct hp_profile *p,
                           struct hp_tail *tail, struct view_profile_read *rd, struct view_err *e);

/* ---- the eventlog (xvdp3) ------------------------------------------------------ */

struct view_eventlog {
	struct view_profile_read rd; /* the run, the bytes read */
	struct gel_decoder d;        /* its header's types stay until view_eventlog_free */
	struct gel_tail tail;
	int whole;                   /* the log ended with its end marker */
};

/*
 * Streams run's eventlog through the decoder, fn called
 * once per whole event (fn may be NULL).  0; or -1 with the reason in e
 * (no eventlog device, a damaged log: "run 3: eventlog damaged at offset
 * 812: ..."), or when fn stopped the decoder (fn's owner says why; then
 * el->d.stopped).  An unclosed log (the guest crashed or still runs) is a
 * warning in e saying where it was cut.  view_eventlog_free afterwards,
 * whatever the result.
 */
int view_read_eventlog(struct view *v, const struct view_run *run, gel_event_fn fn, void *ctx,
                       struct view_eventlog *el, struct view_err *e);
void view_eventlog_free(struct view_eventlog *el);

/* Whether run has an eventlog the guest wrote and no .hp (no
 * device, or one whose status block it never wrote): the heap view then
 * reads the eventlog's heap samples. */
int view_eventlog_heap_fallback(struct view *v, const struct view_run *run);

/* run's eventlog heap samples in the .hp model (eventlog_heap.c), for
 * hp2ps's rules as a .hp's; 0, or -1 (the reason in e; "has no heap
 * samples" when the log was made without -h). */
int view_read_eventlog_heap(struct view *v, const struct view_run *run, struct hp_profile *p, struct hp_tail *tail,
                            struct view_profile_read *rd, struct view_err *e);

/* Follows a running guest's heap profile: feeds p the bytes its status
 * block added since *fed (never past what the guest wrote; the guest
 * rewrites the status block after each flushed sample, so it ends on a
 * whole sample), inside the caller's read transaction.  0, or -1 with
 * the store's or the parser's error in e (the parser's stays). */
int view_follow_heap(struct store *s, const struct view_run *run, struct hp_profile *p, uint64_t *fed,
                     struct view_err *e);

/* The bytes [from, to) of a run's profile device (role "hp", "eventlog")
 * to sink, inside the caller's read transaction, never past what the
 * guest wrote (its status block's size): *end is where they stopped
 * (from when nothing is there yet).  0, or -1 with the store's error in
 * e, or when the sink stopped it (e left as it was: the sink's owner
 * knows why).  The bytes before a status block's size never change, so a
 * range read in one snapshot is the same in any later one (what lets
 * serve's event streams share one read per change). */
int view_read_device_bytes(struct store *s, const struct view_run *run, const char *role, uint64_t from, uint64_t to,
                           view_profile_sink sink, void *ctx, uint64_t *end, struct view_err *e);

/* Where a running run's heap profile comes from, inside the caller's
 * read transaction: VIEW_HEAP_HP once the guest wrote its .hp's status
 * block, else VIEW_HEAP_EVENTLOG once it wrote its eventlog's (the heap
 * samples in it), else VIEW_HEAP_NONE (nothing yet, or a store error). */
enum view_heap_source { VIEW_HEAP_NONE, VIEW_HEAP_HP, VIEW_HEAP_EVENTLOG };
enum view_heap_source view_heap_source(struct store *s, const struct view_run *run);

/* Follows a running guest's eventlog the same way: feeds d the bytes its
 * status block added since *fed (the decoder keeps a cut event until its
 * rest comes).  0, or -1 with the store's or the decoder's error in e. */
int view_follow_eventlog(struct store *s, const struct view_run *run, struct gel_decoder *d, uint64_t *fed,
                         struct view_err *e);

/* "run 12 halvm-leak (complete)", raw: the name is the guest's, so the
 * caller escapes it for where it goes (safe_text_print, markup_text). */
void view_profile_caption(const struct store_run *r, char *out, size_t len);

#endif
