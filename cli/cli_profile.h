/*
 * cli_profile.h - a run's profile, read from the store for the commands
 * that look at it (heap, top): one snapshot, streamed in pieces to a
 * parser, for running, complete and crashed runs alike.  What a crashed
 * guest left is read as export --salvage would give it, and the reader
 * says so; nothing here writes.
 */
#ifndef PROFSVC_CLI_PROFILE_H
#define PROFSVC_CLI_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../store/store.h"

/* Gets the bytes in order; non-zero stops the read. */
typedef int (*cli_profile_sink)(void *ctx, const void *data, size_t len);

struct cli_profile_read {
	struct store_run run;
	uint64_t bytes;     /* read */
	int salvaged;       /* the status block did not vouch for all of it */
	char note[300];     /* what salvage did, for the user */
};

/*
 * Opens db, resolves RUN ("12", "latest"), streams its .prof or .hp
 * (role "prof"/"hp") to sink.  0 ok; 1 on an error, already reported
 * ("run 12 has no .hp device (xvdp2)").
 */
int cli_profile_read(const char *db, const char *run_arg, const char *role,
                     cli_profile_sink sink, void *ctx, struct cli_profile_read *out);

struct time_profile;
struct hp_profile;
struct hp_tail;
/* RUN's .prof or .hp parsed to its end (tail: what a cut .hp left out,
 * may be NULL); a salvaged read is warned about.  0, or 1 (reported). */
int cli_read_time_profile(const char *db, const char *arg, struct time_profile *p,
                          struct cli_profile_read *rd);
int cli_read_heap_profile(const char *db, const char *arg, struct hp_profile *p, struct hp_tail *tail,
                          struct cli_profile_read *rd);

/* Follows a running guest's heap profile: feeds p the bytes its status
 * block added since *fed (never past what the guest wrote; the guest
 * rewrites the status block after each flushed sample, so it ends on a
 * whole sample), inside the caller's read transaction.  0, or -1 with
 * the store's or the parser's error in err (the parser's stays). */
int cli_follow_heap(struct store *s, int64_t run_id, struct hp_profile *p, uint64_t *fed, char *err,
                    size_t len);

struct hp_chart;
struct hp_chart_band;
/* A band's shape over time in `cols` block characters on stdout (its own
 * scale: the band's peak is a full block). */
void cli_sparkline(const struct hp_chart *c, const struct hp_chart_band *b, int cols);

/* "run 12 halvm-leak (complete)", raw: the name is the guest's, so the
 * caller escapes it for where it goes (safe_text_print, markup_text). */
void cli_profile_caption(const struct store_run *r, char *out, size_t len);

#endif
