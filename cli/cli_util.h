/*
 * cli_util.h - what every profdb command shares: the store path, messages
 * on stderr, run lookup, usage and the options commands have in common,
 * and output files that are never left half-written.  Times and numbers
 * as shown: view/view_format.h.
 *
 * May call: view/, util/, libc, store/ (store.h).
 */
#ifndef PROFSVC_CLI_UTIL_H
#define PROFSVC_CLI_UTIL_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"
#include "util/safe_text.h"
#include "view/view_format.h"

#define EXIT_USAGE 2

extern const char *cli_prog; /* "profdb" */

/* Prints "profdb: <message>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct view_err;
/* e says each of its messages at once as cli_err/cli_warn would, whole
 * (the view library's errors in profdb). */
void cli_view_err(struct view_err *e);

/* --db, else $PROFSVC_DB, else the default. */
const char *cli_db_path(const char *opt);
int cli_open_store(struct store **s, const char *path, enum store_open_mode mode);
/* A command that needs the store's files (check, sync, delete, prune):
 * 0 when s is opened on them; 1 when it is read through the backend's
 * read service (this user may not open them), said: "CMD needs root". */
int cli_need_files(struct store *s, const char *cmd);
struct view_fleet;
/* The fleet catalogue at url, connected (view/view_fleet.h: the caller
 * closes it); NULL after printing why. */
struct view_fleet *cli_fleet(const char *url);

/* getopt's last cases: 'h' prints usage to stdout (exit 0), anything
 * else to stderr (exit 2).  Returns the exit status. */
int cli_usage(const char *usage, int opt);
/* Exactly n arguments left after the options, else usage (0 or 2). */
int cli_nargs(int argc, int n, const char *usage);

/* ---- a command's options ---------------------------------------------------- */

/* cli_parse_opts's answer when the command goes on. */
#define CLI_GO_ON (-1)
/* An option handler's answer for an option that is not its own. */
#define CLI_NOT_MINE (-2)

/* What a command takes: its usage; getopt's short options ("h" and the
 * command's own; a leading '+' stops at the first argument); its long
 * options; how many arguments follow them (-1: the command counts them
 * itself); and its own options, each put into the command's struct ctx:
 * 0, EXIT_USAGE (said why), or CLI_NOT_MINE. */
struct cli_optspec {
	const char *usage;
	const char *shortopts;
	const struct option *longopts;
	int nargs;
	int (*own)(int c, const char *arg, void *ctx);
};

/* getopt_long over argv from its start: --json ('j') sets *json (NULL: a
 * command without it), the command's options go to spec->own, --help and
 * what getopt or the command refuses are cli_usage's; then spec->nargs
 * arguments (cli_nargs).  CLI_GO_ON, or the exit status. */
int cli_parse_opts(const struct cli_optspec *spec, int argc, char **argv, void *ctx, int *json);

/* The catalogue's filters (query, prune) into f: --state ('s'), --name
 * ('n'), --since ('t', an age counted back from now), --limit ('l').
 * 0, EXIT_USAGE (said why), or CLI_NOT_MINE for another option. */
int cli_filter_opt(int c, const char *arg, int64_t now, struct store_run_filter *f);
/* --since TIME (a UTC time or an age back from now): 0, or EXIT_USAGE. */
int cli_since_opt(const char *arg, int64_t now, int64_t *since_us);
/* -n N, a number of rows to show (0: all): 0, or EXIT_USAGE. */
int cli_rows_opt(const char *arg, uint64_t *rows);

/* Guest strings in a terminal or JSON: util/safe_text.h. */
/* Guest strings in file names: [A-Za-z0-9._-] only, no leading dot. */
void cli_safe_filename(const char *s, char *out, size_t len);

/* An output file written to a temporary name and renamed into place when
 * complete; "-" is stdout.  A path that names a FIFO or a character device
 * (/dev/null, /dev/stdout) is written in place, as a stream: never renamed
 * over (as root that replaced /dev/null with a file); any other special
 * file (a block device, a socket) is refused. */
struct outfile {
	int fd;
	int is_stdout;
	int is_stream;  /* a FIFO or character device named by path: written in place */
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
