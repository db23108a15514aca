/*
 * cli_util.h - what every profdb command shares: the store path, messages
 * on stderr, run lookup, usage, and output files that are never left
 * half-written.  Times and numbers as shown: view/view_format.h.
 *
 * May call: view/, util/, libc.
 */
#ifndef PROFSVC_CLI_UTIL_H
#define PROFSVC_CLI_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "../store/store.h"
#include "../util/safe_text.h"
#include "../view/view_format.h"

#define EXIT_USAGE 2

extern const char *cli_prog; /* "profdb" */

/* Prints "profdb: <message>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --db, else $PROFSVC_DB, else the default. */
const char *cli_db_path(const char *opt);
int cli_open_store(struct store **s, const char *path, enum store_open_mode mode);
struct fleet;
/* The fleet catalogue at url (view/view_fleet.h); NULL after printing why. */
struct fleet *cli_fleet(const char *url);

/* getopt's last cases: 'h' prints usage to stdout (exit 0), anything
 * else to stderr (exit 2).  Returns the exit status. */
int cli_usage(const char *usage, int opt);
/* Exactly n arguments left after the options, else usage (0 or 2). */
int cli_nargs(int argc, int n, const char *usage);

/* "12", "latest": a run id (view/view.h); prints the error itself. */
int cli_resolve_run(struct store *s, const char *arg, int64_t *run_id);

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
