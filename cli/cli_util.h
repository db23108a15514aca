/*
 * cli_util.h - what every profdb command shares: the store path, run
 * lookup, time formats, safe output of guest-controlled text, and output
 * files that are never left half-written.
 */
#ifndef PROFSVC_CLI_UTIL_H
#define PROFSVC_CLI_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "../store/store.h"
#include "../util/safe_text.h"

#define EXIT_USAGE 2

extern const char *cli_prog; /* "profdb" */

/* Prints "profdb: <message>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* From now on this thread's first cli_err/cli_warn message is kept in
 * buf (cut to len) instead of printed, the rest dropped; NULL prints them
 * again. */
void cli_capture_errors(char *buf, size_t len);

/* --db, else $PROFSVC_DB, else the default. */
const char *cli_db_path(const char *opt);
int cli_open_store(struct store **s, const char *path, enum store_open_mode mode);

/* getopt's last cases: 'h' prints usage to stdout (exit 0), anything
 * else to stderr (exit 2).  Returns the exit status. */
int cli_usage(const char *usage, int opt);
/* Exactly n arguments left after the options, else usage (0 or 2). */
int cli_nargs(int argc, int n, const char *usage);

/* "12", "latest": a run id; prints the error itself. */
int cli_resolve_run(struct store *s, const char *arg, int64_t *run_id);
/* A run already resolved, as an argument cli_resolve_run gives back as
 * that same run (over a fleet catalogue, its id in the private copy). */
void cli_run_ref(int64_t id, char *buf, size_t len);
/* Strict decimal parse of a non-negative integer. */
int cli_parse_u64(const char *s, uint64_t *out);

/* "2026-11-21T08:12:03Z" (UTC). */
void cli_format_time(int64_t us, char *buf, size_t len);
/* "1h02m", "3m20s", "12.3s". */
void cli_format_duration(int64_t us, char *buf, size_t len);
/* ISO date/time in UTC (YYYY-MM-DD[THH:MM[:SS]][Z]) or an age (90s, 30m,
 * 2h, 7d) before now.  Returns 0 or -1. */
int cli_parse_time(const char *s, int64_t now_us, int64_t *out);

/* Guest strings in a terminal or JSON: util/safe_text.h. */
/* Guest strings in file names: [A-Za-z0-9._-] only, no leading dot. */
void cli_safe_filename(const char *s, char *out, size_t len);

/* An output file written to a temporary name and renamed into place when
 * complete; "-" is stdout. */
struct outfile {
	int fd;
	int is_stdout;
	char *path;
	char *tmp;
};
int outfile_open(struct outfile *o, const char *path);
/* Renders a whole document in memory (render returns 0 or -1), then
 * writes it to path ("-": stdout) through an outfile, and says
 * "PATH: WHAT, N bytes" on stderr.  0, or 1 (reported). */
int outfile_render(const char *path, int (*render)(FILE *f, void *ctx), void *ctx, const char *what);
int outfile_write(struct outfile *o, const void *data, size_t len);
int outfile_commit(struct outfile *o);
void outfile_abort(struct outfile *o);

#endif
