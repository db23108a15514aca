/*
 * cli_util.c - shared helpers of the profdb commands (see cli_util.h).
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

#include "../util/utc_time.h"
#include "cli_fleet.h"
#include "cli_util.h"

const char *cli_prog = "profdb";

/* Where this thread's messages go instead of stderr (profdb serve puts a
 * request's errors on its error page). */
static _Thread_local struct {
	char *buf;
	size_t len;
	int have_error;
} capture;

void cli_capture_errors(char *buf, size_t len)
{
	capture.buf = buf;
	capture.len = len;
	capture.have_error = 0;
	if (buf && len)
		buf[0] = '\0';
}

static void message(const char *prefix, const char *fmt, va_list ap)
{
	if (capture.buf && capture.len) {
		/* the first error is the cause (what follows is its echo); a
		 * warning only until there is an error */
		int is_err = !*prefix;
		if (!capture.have_error && (is_err || !capture.buf[0])) {
			capture.have_error = is_err;
			snprintf(capture.buf, capture.len, "%s", prefix);
			size_t used = strlen(capture.buf);
			vsnprintf(capture.buf + used, capture.len - used, fmt, ap);
		}
		return;
	}
	fprintf(stderr, "%s: %s", cli_prog, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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

int cli_open_store(struct store **s, const char *path, enum store_open_mode mode)
{
	/* Writers put whole chunks in the data file, as the backend does: an
	 * import through the WAL made the backend's own checkpoints of it
	 * stall live guests. */
	struct store_open_opts o = {.mode = mode, .bulk_file = mode != STORE_READ};
	char err[512];

	if (fleet_is_url(path)) {
		/* a fleet catalogue: runs are read from a private copy */
		if (mode != STORE_READ) {
			cli_err("a fleet catalogue is only read here; change runs on their host's store");
			return -1;
		}
		if (!(path = cli_fleet_store(path)))
			return -1;
	}

	if (store_open(s, path, &o, err, sizeof(err)) != 0) {
		cli_err("%s", err);
		return -1;
	}
	return 0;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_resolve_run(struct store *s, const char *arg, int64_t *run_id)
{
	uint64_t v;

	if (cli_fleet_active() && arg[0] == '@' && cli_parse_u64(arg + 1, &v) == 0 && v > 0 &&
	    v <= INT64_MAX) {
		*run_id = (int64_t)v; /* cli_run_ref's: a run copied already */
		return 0;
	}
	if (cli_fleet_active())
		return cli_fleet_resolve(arg, run_id);
	if (strcmp(arg, "latest") == 0) {
		if (store_latest_run(s, run_id) != 0) {
			cli_err("%s", store_errmsg(s));
			return -1;
		}
		return 0;
	}
	if (cli_parse_u64(arg, &v) != 0 || v == 0 || v > INT64_MAX) {
		cli_err("'%s' is not a run id (a number from 'profdb query runs', or 'latest')", arg);
		return -1;
	}
	*run_id = (int64_t)v;
	return 0;
}

void cli_run_ref(int64_t id, char *buf, size_t len)
{
	snprintf(buf, len, cli_fleet_active() ? "@%lld" : "%lld", (long long)id);
}

void cli_format_time(int64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (utc_format_fast(us, buf, len) == 0)
		return;
	if (us <= 0 || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "N<a>MM<b>": a count, a unit letter, two digits, a unit letter. */
static void put_duration(char *buf, size_t len, int64_t a, char ua, int64_t b, char ub, int tenth)
{
	char d[24], *p = buf;
	int n = 0;
	if (len < 32)
		return (void)snprintf(buf, len, "%lld%c", (long long)a, ua);
	do
		d[n++] = (char)('0' + a % 10);
	while ((a /= 10));
	while (n)
		*p++ = d[--n];
	if (tenth) { /* 12.3s */
		*p++ = '.';
		*p++ = (char)('0' + b);
		*p++ = ub;
	} else {
		*p++ = ua;
		*p++ = (char)('0' + b / 10);
		*p++ = (char)('0' + b % 10);
		*p++ = ub;
	}
	*p = 0;
}

void cli_format_duration(int64_t us, char *buf, size_t len)
{
	if (us < 0)
		us = 0;
	int64_t s = us / 1000000;
	/* by hand: a listing of 100,000 runs formats as many */
	if (s < 60)
		put_duration(buf, len, s, 's', us / 100000 % 10, 's', 1);
	else if (s < 3600)
		put_duration(buf, len, s / 60, 'm', s % 60, 's', 0);
	else if (s < 86400)
		put_duration(buf, len, s / 3600, 'h', s / 60 % 60, 'm', 0);
	else
		put_duration(buf, len, s / 86400, 'd', s / 3600 % 24, 'h', 0);
}

int cli_parse_time(const char *s, int64_t now_us, int64_t *out)
{
	struct tm tm;
	char *end;
	int n = 0;

	/* An age: digits and one unit. */
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end != s && errno == 0 && v >= 0 && end[0] && !end[1] && *s != '-' && *s != '+' &&
	    end - s < 10) {
		long long mul = end[0] == 's' ? 1 : end[0] == 'm' ? 60 : end[0] == 'h' ? 3600
		              : end[0] == 'd' ? 86400 : end[0] == 'w' ? 604800 : 0;
		if (mul) {
			/* An age older than the epoch is "since always", not a
			 * signed overflow (999999999w once was). */
			*out = v > now_us / (mul * 1000000) ? 0 : now_us - v * mul * 1000000;
			return 0;
		}
	}
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3)
		return -1;
	const char *rest = s + n;
	if (*rest == 'T' || *rest == ' ') {
		int m = 0;
		if (sscanf(rest + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &m) != 2)
			return -1;
		rest += 1 + m;
		if (*rest == ':') {
			if (sscanf(rest + 1, "%2d%n", &tm.tm_sec, &m) != 1)
				return -1;
			rest += 1 + m;
		}
	}
	if (*rest == 'Z')
		rest++;
	if (*rest || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (int64_t)t * 1000000;
	return 0;
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
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	o->fd = -1;
}
