/*
 * cli_util.c - shared helpers of the profdb commands (see cli_util.h).
 *
 * May call: view/ (view.h, view_format.h, view_fleet.h), util/, libc.
 */
#include "config.h"

#include <getopt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "view/view.h"
#include "view/view_fleet.h"
#include "cli_util.h"

const char *cli_prog = "profdb";

static void message(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", cli_prog, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void say(void *ctx, int warning, const char *fmt, va_list ap)
{
	(void)ctx;
	message(warning ? "warning: " : "", fmt, ap);
}

void cli_view_err(struct view_err *e)
{
	view_err_say(e, say, NULL);
}

void cli_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message("", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message("warning: ", fmt, ap);
	va_end(ap);
}

const char *cli_db_path(const char *opt)
{
	const char *env = getenv("PROFSVC_DB");

	if (opt && *opt)
		return opt;
	if (env && *env)
		return env;
	return PROFSVC_DEFAULT_DB;
}

int cli_usage(const char *usage, int opt)
{
	fputs(usage, opt == 'h' ? stdout : stderr);
	return opt == 'h' ? 0 : EXIT_USAGE;
}

int cli_nargs(int argc, int n, const char *usage)
{
	if (argc - optind == n)
		return 0;
	fputs(usage, stderr);
	return EXIT_USAGE;
}

int cli_parse_opts(const struct cli_optspec *spec, int argc, char **argv, void *ctx, int *json)
{
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, spec->shortopts, spec->longopts, NULL)) != -1) {
		int rc = CLI_NOT_MINE;
		if (c == 'j' && json) {
			*json = 1;
			continue;
		}
		if (c != 'h' && c != '?' && spec->own)
			rc = spec->own(c, optarg, ctx);
		if (rc == CLI_NOT_MINE)
			return cli_usage(spec->usage, c);
		if (rc != 0)
			return rc;
	}
	if (spec->nargs >= 0 && cli_nargs(argc, spec->nargs, spec->usage) != 0)
		return EXIT_USAGE;
	return CLI_GO_ON;
}

int cli_since_opt(const char *arg, int64_t now, int64_t *since_us)
{
	if (view_parse_time(arg, now, since_us) == 0)
		return 0;
	cli_err("--since: '%s' is not a UTC time (2026-11-21T08:00) or an age (30m, 2h, 7d)", arg);
	return EXIT_USAGE;
}

int cli_filter_opt(int c, const char *arg, int64_t now, struct store_run_filter *f)
{
	uint64_t v;

	switch (c) {
	case 's':
		if (view_parse_state(arg, &f->state) == 0)
			return 0;
		cli_err("--state must be running, complete or crashed, not '%s'", arg);
		return EXIT_USAGE;
	case 'n':
		f->name_glob = arg;
		return 0;
	case 't':
		return cli_since_opt(arg, now, &f->since_us);
	case 'l':
		if (view_parse_u64(arg, &v) != 0 || v == 0 || v > INT64_MAX) {
			cli_err("--limit must be a positive number, not '%s'", arg);
			return EXIT_USAGE;
		}
		f->limit = (int64_t)v;
		return 0;
	}
	return CLI_NOT_MINE;
}

int cli_rows_opt(const char *arg, uint64_t *rows)
{
	if (view_parse_u64(arg, rows) == 0)
		return 0;
	cli_err("-n takes a whole number (0: all), not '%s'", arg);
	return EXIT_USAGE;
}

int cli_open_store(struct store **s, const char *path, enum store_open_mode mode)
{
	struct view_err e;
	cli_view_err(&e);
	int rc = view_store_open(s, path, mode, &e);
	/* a writer's open that upgraded the store says what it did */
	if (rc == 0 && store_open_note(*s)[0])
		fprintf(stderr, "profdb: %s\n", store_open_note(*s));
	return rc;
}

int cli_need_files(struct store *s, const char *cmd)
{
	if (!store_is_remote(s))
		return 0;
	cli_err("%s needs root: the store %s is root's (0600), and its other readers go through "
	        "profile-backend's read service, which only reads runs; run it as root",
	        cmd, store_path(s));
	return 1;
}

struct view_fleet *cli_fleet(const char *url)
{
	struct view_fleet *f;
	struct view_err e;
	cli_view_err(&e);
	return view_fleet_open(&f, url, &e) == 0 ? f : NULL;
}

void cli_safe_filename(const char *s, char *out, size_t len)
{
	size_t o = 0;

	/* Letters, digits, '-', '_'; a '.' only right after a letter or digit
	 * (so never "..", never a leading dot); a '-' never first (a file
	 * named "-rf-4.hp" is an option to the next `rm *`); everything else
	 * is '_', and runs of '_' collapse. */
	for (; *s && o + 1 < len && o < 64; s++) {
		unsigned char c = (unsigned char)*s;
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		int prev_alnum = o > 0 && out[o - 1] != '_' && out[o - 1] != '-' && out[o - 1] != '.';
		char ch = alnum || (c == '-' && o > 0) ? (char)c : c == '.' && prev_alnum ? '.' : '_';
		if (ch == '_' && o > 0 && out[o - 1] == '_')
			continue;
		out[o++] = ch;
	}
	out[o] = '\0';
	if (o == 0 || strcmp(out, "_") == 0)
		snprintf(out, len, "run");
}

int outfile_render(const char *path, int (*render)(FILE *f, void *ctx), void *ctx, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	struct outfile o;
	int rc = 1;
	FILE *m = open_memstream(&buf, &len);

	if (!m || render(m, ctx) != 0 || fclose(m) != 0) {
		cli_err("out of memory writing %s", path);
		free(buf);
		return 1;
	}
	if (outfile_open(&o, path) == 0) {
		if (outfile_write(&o, buf, len) == 0 && outfile_commit(&o) == 0) {
			rc = 0;
			if (strcmp(path, "-") != 0)
				fprintf(stderr, "%s: %s, %zu bytes\n", path, what, len);
		} else {
			outfile_abort(&o);
		}
	}
	free(buf);
	return rc;
}

int outfile_open(struct outfile *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (strcmp(path, "-") == 0) {
		o->is_stdout = 1;
		o->fd = STDOUT_FILENO;
		return 0;
	}
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
			cli_err("%s is a %s: not written (give a file, a FIFO or a character device such as "
			        "/dev/stdout)",
			        path, S_ISBLK(st.st_mode) ? "block device" : S_ISSOCK(st.st_mode) ? "socket" : "special file");
			return -1;
		}
		o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (o->fd < 0 || !(o->path = strdup(path))) {
			cli_err("cannot write %s: %s", path, strerror(errno));
			outfile_abort(o);
			return -1;
		}
		o->is_stream = 1;
		return 0;
	}
	size_t len = strlen(path) + 16;
	o->path = strdup(path);
	o->tmp = malloc(len);
	if (!o->path || !o->tmp) {
		cli_err("out of memory");
		outfile_abort(o);
		return -1;
	}
	snprintf(o->tmp, len, "%s.tmp.XXXXXX", path);
	o->fd = mkstemp(o->tmp);
	if (o->fd < 0) {
		cli_err("cannot create %s: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		outfile_abort(o);
		return -1;
	}
	/* mkstemp makes 0600; an export is an ordinary file of the user's. */
	mode_t um = umask(0);
	umask(um);
	if (fchmod(o->fd, 0666 & ~um) != 0) {
		/* not fatal: the file is merely more private */
	}
	return 0;
}

int outfile_write(struct outfile *o, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(o->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_err("writing %s: %s", o->is_stdout ? "standard output" : o->path,
			        strerror(errno));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int outfile_commit(struct outfile *o)
{
	int rc = 0;

	if (o->is_stdout) {
		o->fd = -1;
		return 0;
	}
	if (o->is_stream) {
		if (close(o->fd) != 0) {
			cli_err("writing %s: %s", o->path, strerror(errno));
			rc = -1;
		}
		o->fd = -1;
		free(o->path);
		o->path = NULL;
		return rc;
	}
	if (fsync(o->fd) != 0 && errno != EINVAL) {
		cli_err("writing %s: %s", o->path, strerror(errno));
		rc = -1;
	}
	if (close(o->fd) != 0 && !rc) {
		cli_err("writing %s: %s", o->path, strerror(errno));
		rc = -1;
	}
	o->fd = -1;
	if (!rc && rename(o->tmp, o->path) != 0) {
		cli_err("cannot create %s: %s", o->path, strerror(errno));
		rc = -1;
	}
	if (rc)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return rc;
}

void outfile_abort(struct outfile *o)
{
	if (!o->is_stdout && o->fd >= 0)
		close(o->fd);
	o->is_stream = 0;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	o->fd = -1;
}
