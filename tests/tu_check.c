/*
 * tu_check.c - what every C test shares, with no store and no Xen: checks
 * that count failures, the summary, children killed on abort, a seeded
 * PRNG, a scratch directory, files (testutil.h).  The unit tests of util/
 * and the backend's field builder link only this of the test library.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

int tu_failures;
static char *tmpdir;
static int children[16];

void tu_track_child(int pid)
{
	for (int i = 0; i < 16; i++)
		if (!children[i]) {
			children[i] = pid;
			return;
		}
}

void tu_untrack_child(int pid)
{
	for (int i = 0; i < 16; i++)
		if (children[i] == pid)
			children[i] = 0;
}

static void kill_children(void)
{
	for (int i = 0; i < 16; i++)
		if (children[i] > 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
			children[i] = 0;
		}
}

void tu_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d: %s: ", file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	tu_failures++;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void cleanup(void)
{
	if (tmpdir && !getenv("PROFSVC_KEEP"))
		nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	else if (tmpdir)
		fprintf(stderr, "kept %s\n", tmpdir);
	free(tmpdir);
	tmpdir = NULL;
}

void tu_abort(void)
{
	fprintf(stderr, "aborting: %d failure(s)\n", tu_failures);
	kill_children();
	cleanup();
	exit(1);
}

int tu_finish(const char *name)
{
	kill_children();
	cleanup();
	if (tu_failures) {
		fprintf(stderr, "%s: %d failure(s)\n", name, tu_failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}

uint64_t tu_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t tu_rand_below(uint64_t *s, uint64_t n)
{
	return n ? tu_rand(s) % n : 0;
}

uint64_t tu_seed(uint64_t dflt)
{
	const char *env = getenv("PROFSVC_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0) : dflt;

	printf("seed %llu (set PROFSVC_SEED to repeat or vary)\n", (unsigned long long)seed);
	return seed;
}

const char *tu_tmpdir(void)
{
	if (!tmpdir) {
		const char *base = getenv("TMPDIR");
		char tmpl[4096];
		snprintf(tmpl, sizeof(tmpl), "%s/profsvc-test.XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmpl)) {
			perror("mkdtemp");
			exit(99);
		}
		tmpdir = strdup(tmpl);
	}
	return tmpdir;
}

char *tu_path(const char *name)
{
	const char *dir = tu_tmpdir();
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = malloc(len);

	if (!p)
		exit(99);
	snprintf(p, len, "%s/%s", dir, name);
	return p;
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (buf) {
		/* A NUL after the bytes (not counted in *len): callers search a
		 * text file's copy with strstr and friends, which read on to the
		 * first NUL.  Without it they read malloc's leftovers past the end
		 * (a line of a recycled chunk's header once failed test_faults'
		 * check that every line of the backend's log is the backend's). */
		buf[got] = '\0';
		*len = got;
	}
	return buf;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	const char *p = data;

	if (fd < 0)
		return -1;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return close(fd);
}

const char *tu_srcdir(void)
{
	const char *d = getenv("TOP_SRCDIR");
	return d && *d ? d : ".";
}

const char *tu_builddir(void)
{
	const char *d = getenv("TOP_BUILDDIR");
	return d && *d ? d : ".";
}

