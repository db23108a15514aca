/*
 * testutil.c - the C tests' helpers that need the store or xensim (see
 * testutil.h): a store opened or the test aborted, a read collected, the
 * GHC fixtures listed, a private xensim.  The rest is tu_check.c's.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

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
