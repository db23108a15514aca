/*
 * testutil.c - see testutil.h.
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
	if (buf)
		*len = got;
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

struct store *tu_open_store(const char *path, enum store_open_mode mode)
{
	struct store_open_opts o = {.mode = mode};
	struct store *s;
	char err[512];

	if (store_open(&s, path, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "store_open %s: %s\n", path, err);
		tu_failures++;
		tu_abort();
	}
	return s;
}

int tu_buf_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	struct tu_buf *b = ctx;

	(void)off;
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			exit(99);
	}
	if (data)
		memcpy(b->p + b->len, data, len);
	else
		memset(b->p + b->len, 0, len);
	b->len += len;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_fixture_list(void)
{
	static const char *const dirs[] = {"exprcalc", "leak", "phases", "wordfreq"};
	char **list = NULL;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/tests/data/ghc/%s", tu_srcdir(), dirs[i]);
		DIR *d = opendir(dir);
		if (!d) {
			fprintf(stderr, "missing fixture directory %s\n", dir);
			exit(99);
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (!((len > 5 && !strcmp(e->d_name + len - 5, ".prof")) ||
			      (len > 3 && !strcmp(e->d_name + len - 3, ".hp"))))
				continue;
			list = realloc(list, (n + 2) * sizeof(*list));
			list[n] = malloc(strlen(dir) + len + 2);
			sprintf(list[n++], "%s/%s", dir, e->d_name);
		}
		closedir(d);
	}
	if (!list)
		exit(99);
	qsort(list, n, sizeof(*list), cmp_str);
	list[n] = NULL;
	return list;
}

void tu_free_list(char **list)
{
	for (char **p = list; p && *p; p++)
		free(*p);
	free(list);
}

void tu_xensim_start(struct tu_xensim *x)
{
	char bin[4096], sock[600];
	static int seq;

	snprintf(x->dir, sizeof(x->dir), "%s/xs%d", tu_tmpdir(), seq++);
	snprintf(bin, sizeof(bin), "%s/xensim/xensim", tu_builddir());
	x->pid = fork();
	REQUIRE(x->pid >= 0, "fork");
	if (x->pid == 0) {
		/* PROFSVC_VALGRIND=1: the daemon runs under valgrind, and any error
		 * or leak makes it exit non-zero, which tu_xensim_stop checks. */
		if (getenv("PROFSVC_VALGRIND") && *getenv("PROFSVC_VALGRIND") == '1')
			execlp("valgrind", "valgrind", "-q", "--error-exitcode=9", "--leak-check=full",
			       "--errors-for-leak-kinds=definite,indirect", bin, "start", "--dir", x->dir,
			       "--foreground", (char *)NULL);
		else
			execl(bin, "xensim", "start", "--dir", x->dir, "--foreground", (char *)NULL);
		perror(bin);
		_exit(127);
	}
	tu_track_child(x->pid);
	snprintf(sock, sizeof(sock), "%s/dom0/hv.sock", x->dir);
	for (int i = 0; i < 3000 && access(sock, F_OK) != 0; i++) {
		int status;
		REQUIRE(waitpid(x->pid, &status, WNOHANG) == 0, "xensim exited at start (status %d)",
		        status);
		usleep(5000);
	}
	REQUIRE(access(sock, F_OK) == 0, "xensim did not come up in %s", x->dir);
}

void tu_xensim_stop(struct tu_xensim *x)
{
	int status = 0;
	char path[600];

	if (x->pid <= 0)
		return;
	kill(x->pid, SIGTERM);
	for (int i = 0; i < 500 && waitpid(x->pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(x->pid, &status, WNOHANG) == 0) {
		kill(x->pid, SIGKILL);
		waitpid(x->pid, &status, 0);
		CHECK(0, "xensim did not stop on SIGTERM");
	}
	tu_untrack_child(x->pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "xensim exited with status %d", status);
	snprintf(path, sizeof(path), "%s/dom0", x->dir);
	CHECK(access(path, F_OK) != 0, "xensim left %s behind", path);
	x->pid = 0;
}

int tu_xensim_run(struct tu_xensim *x, const char *args, char *out, size_t outlen)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "%s/xensim/xensim %s --dir %s 2>&1", tu_builddir(), args,
	         x->dir);
	FILE *p = popen(cmd, "r");
	size_t len = 0;
	REQUIRE(p, "popen");
	if (out && outlen) {
		len = fread(out, 1, outlen - 1, p);
		out[len] = '\0';
	} else {
		char sink[1024];
		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	int status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

uint32_t tu_xensim_create(struct tu_xensim *x, const char *name)
{
	char args[600], out[256];
	/* Single-quoted for the shell: names may be hostile on purpose. */
	size_t n = (size_t)snprintf(args, sizeof(args), "create --name '");
	for (const char *c = name; *c && n + 6 < sizeof(args); c++) {
		if (*c == '\'') {
			memcpy(args + n, "'\\''", 4);
			n += 4;
		} else {
			args[n++] = *c;
		}
	}
	snprintf(args + n, sizeof(args) - n, "'");
	int rc = tu_xensim_run(x, args, out, sizeof(out));
	REQUIRE(rc == 0, "xensim create %s: %s", name, out);
	return (uint32_t)strtoul(out, NULL, 10);
}
