/*
 * harness.c - see harness.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xenstore.h>

#include <xen/io/blkif.h>

#include "harness.h"
#include "store/store_export.h"

struct tu_xensim sim;
char *db, *rundir;
pid_t backend_pid;

void harness_start(void)
{
	tu_xensim_start(&sim);
	db = tu_path("backend.db");
	rundir = tu_path("run");
	/* The backend's run directory is /run/profsvc on a host: tmpfs.  A
	 * benchmark may put it on one too (its response journals are
	 * MAP_SHARED files there, which a disk's writeback makes fault). */
	const char *rd = getenv("PROFSVC_TEST_RUN_DIR");
	if (rd && *rd) {
		free(rundir);
		rundir = strdup(rd);
	}
	mkdir(rundir, 0700);
}

void harness_stop(void)
{
	if (backend_pid)
		backend_stop(SIGTERM);
	tu_xensim_stop(&sim);
	free(db);
	free(rundir);
}


/* ---- the backend process --------------------------------------------------- */

void backend_start(const char *extra)
{
	char bin[4096], sock[600];

	snprintf(bin, sizeof(bin), "%s/profile-backend", tu_builddir());
	snprintf(sock, sizeof(sock), "%s/backend.sock", rundir);
	unlink(sock);
	backend_pid = fork();
	REQUIRE(backend_pid >= 0, "fork");
	if (backend_pid == 0) {
		char *argv[32] = {bin, "start", "--foreground", "--platform", "sim", "--sim-dir", sim.dir,
		                  "--db", db, "--run-dir", rundir};
		int n = 11;
		char copy[256];
		if (getenv("PROFSVC_BACKEND_VERBOSE"))
			argv[n++] = "-v";
		if (extra) {
			snprintf(copy, sizeof(copy), "%s", extra);
			for (char *t = strtok(copy, " "); t && n < 30; t = strtok(NULL, " "))
				argv[n++] = t;
		}
		/* benchmarks: options every backend of the run gets (e.g. --sync
		 * to an unreachable catalogue, bench/fleet_bench.py) */
		char more[512];
		const char *env = getenv("PROFSVC_BACKEND_EXTRA");
		if (env && *env) {
			snprintf(more, sizeof(more), "%s", env);
			for (char *t = strtok(more, " "); t && n < 30; t = strtok(NULL, " "))
				argv[n++] = t;
		}
		argv[n] = NULL;
		const char *cg = getenv("PROFSVC_CALLGRIND"); /* the benchmarks' instruction counts */
		if (cg && *cg) {
			char out[4200];
			char *vg[40] = {"valgrind", "-q", "--tool=callgrind", out};
			int k = 4;
			snprintf(out, sizeof(out), "--callgrind-out-file=%s", cg);
			for (int i = 0; i < n; i++)
				vg[k++] = argv[i];
			vg[k] = NULL;
			execvp("valgrind", vg);
			_exit(127);
		}
		if (getenv("PROFSVC_VALGRIND") && *getenv("PROFSVC_VALGRIND") == '1') {
			char *vg[40] = {"valgrind", "-q", "--error-exitcode=9", "--leak-check=full",
			                "--errors-for-leak-kinds=definite,indirect"};
			int k = 5;
			for (int i = 0; i < n; i++)
				vg[k++] = argv[i];
			vg[k] = NULL;
			execvp("valgrind", vg);
		}
		execv(bin, argv);
		_exit(127);
	}
	tu_track_child(backend_pid);
	for (int i = 0; i < 3000 && access(sock, F_OK) != 0; i++) {
		int st;
		REQUIRE(waitpid(backend_pid, &st, WNOHANG) == 0, "profile-backend exited at start (%d)", st);
		usleep(5000);
	}
	REQUIRE(access(sock, F_OK) == 0, "profile-backend did not come up");
}

/* Stops the backend; with SIGTERM it must exit 0 (under valgrind, 0 also
 * means no memory errors and no leaks). */
int backend_stop(int sig)
{
	int st = 0;
	kill(backend_pid, sig);
	for (int i = 0; i < 1000 && waitpid(backend_pid, &st, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(backend_pid, &st, WNOHANG) == 0) {
		kill(backend_pid, SIGKILL);
		waitpid(backend_pid, &st, 0);
	}
	tu_untrack_child(backend_pid);
	backend_pid = 0;
	if (sig == SIGTERM)
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "profile-backend exited with status %d", st);
	return st;
}

int cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli(const char *fmt, ...)
{
	char args[1024], cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd),
	         "%s/profile-backend %s --platform sim --sim-dir %s --run-dir %s >/dev/null 2>&1",
	         tu_builddir(), args, sim.dir, rundir);
	/* The subcommand comes first: rebuild as "CMD --opts ARGS". */
	char *sp = strchr(args, ' ');
	if (sp) {
		*sp = '\0';
		snprintf(cmd, sizeof(cmd),
		         "%s/profile-backend %s --platform sim --sim-dir %s --run-dir %s %s >/dev/null 2>&1",
		         tu_builddir(), args, sim.dir, rundir, sp + 1);
	}
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `profile-backend status` of the running backend, in out (cap bytes, NUL
 * terminated).  Empty if the backend did not answer. */
const char *backend_status(char *out, size_t cap)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "%s/profile-backend status --run-dir %s", tu_builddir(), rundir);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(out, 1, cap - 1, p) : 0;
	if (p)
		pclose(p);
	out[n] = '\0';
	return out;
}

const char *backend_ask(const char *what, char *out, size_t cap)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = 0;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/backend.sock", rundir);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    dprintf(fd, "%s\n", what) > 0) {
		ssize_t got;
		while (n + 1 < cap && (got = read(fd, out + n, cap - 1 - n)) > 0)
			n += (size_t)got;
	}
	if (fd >= 0)
		close(fd);
	out[n] = '\0';
	return out;
}

/* ---- guests ------------------------------------------------------------------ */

void guest_new(struct guest *g, const char *name, const char *vdevs)
{
	char err[512];
	g->domid = tu_xensim_create(&sim, name);
	if (vdevs)
		REQUIRE(cli("attach %u %s", g->domid, vdevs) == 0, "attach %s to %s", vdevs, name);
	struct plat_opts o = {.kind = PLAT_SIM, .sim_dir = sim.dir, .sim_domid = g->domid};
	REQUIRE(plat_open(&g->p, &o, err, sizeof(err)) == 0, "%s", err);
	g->xs = plat_xs_open(g->p);
	REQUIRE(g->xs, "xs_open as a guest");
}

void guest_free(struct guest *g)
{
	if (g->xs)
		xs_close(g->xs);
	plat_close(g->p);
	memset(g, 0, sizeof(*g));
}

void destroy_domain(uint32_t domid)
{
	char args[64];
	snprintf(args, sizeof(args), "destroy %u", domid);
	CHECK(tu_xensim_run(&sim, args, NULL, 0) == 0, "xensim destroy %u", domid);
}

void guest_destroy(struct guest *g)
{
	uint32_t domid = g->domid;
	guest_free(g);
	destroy_domain(domid);
}

struct blkfront *connect_dev(struct guest *g, const char *vdev, const struct blkfront_opts *o)
{
	struct blkfront *f;
	char err[512];
	if (blkfront_open(&f, g->p, g->xs, vdev, o, err, sizeof(err)) != 0) {
		CHECK(0, "blkfront_open %s: %s", vdev, err);
		return NULL;
	}
	return f;
}

struct blkfront *guest_with_disk(struct guest *g, const char *name, const char *vdev,
                                 const struct blkfront_opts *o)
{
	char vdevs[64];
	snprintf(vdevs, sizeof(vdevs), "vdev=%s", vdev);
	guest_new(g, name, vdevs);
	struct blkfront *f = connect_dev(g, vdev, o);
	REQUIRE(f, "connect %s of %s", vdev, name);
	return f;
}

/* ---- guest I/O --------------------------------------------------------------- */

int write_seeded(struct blkfront *f, uint64_t sector, uint32_t nsect, uint64_t seed)
{
	uint8_t *buf = malloc((size_t)nsect * 512);
	fill(buf, (size_t)nsect * 512, seed);
	struct bf_req w = {.op = BLKIF_OP_WRITE, .sector = sector, .nsect = nsect, .buf = buf};
	int st = blkfront_do(f, &w, 10000);
	free(buf);
	return st;
}

int read_seeded(struct blkfront *f, uint64_t sector, uint32_t nsect, uint64_t seed)
{
	uint8_t *buf = malloc((size_t)nsect * 512), *want = malloc((size_t)nsect * 512);
	fill(want, (size_t)nsect * 512, seed);
	struct bf_req r = {.op = BLKIF_OP_READ, .sector = sector, .nsect = nsect, .buf = buf};
	int ok = blkfront_do(f, &r, 10000) == 0 && memcmp(buf, want, (size_t)nsect * 512) == 0;
	free(buf);
	free(want);
	return ok;
}

int halvm_link_submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct halvm_link *l = ctx;
	struct bf_req r = {.op = BLKIF_OP_WRITE, .sector = sector, .nsect = nsect, .buf = (void *)data};
	if (blkfront_do(l->f, &r, 5000) != BLKIF_RSP_OKAY) {
		l->failures++;
		return -1;
	}
	return 0;
}

char *dom0_read(const char *path)
{
	char sock[600];
	snprintf(sock, sizeof(sock), "%s/dom0/xs.sock", sim.dir);
	setenv("XENSTORED_PATH", sock, 1);
	struct xs_handle *h = xs_open(0);
	unsigned len;
	char *v = h ? xs_read(h, XBT_NULL, path, &len) : NULL;
	if (h)
		xs_close(h);
	return v;
}

/* Waits for a xenstore node to reach a value (NULL: to be gone). */
int wait_node(const char *path, const char *want, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		char *v = dom0_read(path);
		int ok = want ? v && strcmp(v, want) == 0 : v == NULL;
		free(v);
		if (ok)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* The newest run of a guest name, from the store. */
int find_run(const char *name, struct store_run *out)
{
	struct store *s = tu_open_store(db, STORE_READ);
	int64_t latest = 0;
	struct store_run r;
	int found = 0;
	if (store_latest_run(s, &latest) == 0)
		for (int64_t id = latest; id > 0 && !found; id--)
			if (store_get_run(s, id, &r) == 0 && strcmp(r.name, name) == 0) {
				*out = r;
				found = 1;
			}
	store_close(s);
	return found;
}

/* How many runs carry a guest name: one per boot, whatever the backend went through. */
int count_runs(const char *name)
{
	struct store *s = tu_open_store(db, STORE_READ);
	int64_t latest = 0;
	struct store_run r;
	int n = 0;
	if (store_latest_run(s, &latest) == 0)
		for (int64_t id = latest; id > 0; id--)
			n += store_get_run(s, id, &r) == 0 && strcmp(r.name, name) == 0;
	store_close(s);
	return n;
}

int wait_run_state(const char *name, enum store_run_state st, int ms)
{
	struct store_run r;
	for (int i = 0; i < ms / 20; i++) {
		if (find_run(name, &r) && r.state == st)
			return 1;
		usleep(20000);
	}
	return 0;
}

uint8_t *export_profile(int64_t run, const char *role, size_t *len, int *how)
{
	struct store *s = tu_open_store(db, STORE_READ);
	struct store_device_info d;
	struct store_extract_report rep;
	struct tu_buf b = {0};
	uint8_t *out = NULL;
	store_read_begin(s);
	if (store_find_device(s, run, role, &d) == 0 &&
	    store_extract_profile(s, &d, 0, tu_buf_cb, &b, &rep) == 0) {
		out = b.p ? b.p : malloc(1);
		*len = b.len;
		if (how)
			*how = rep.how;
	} else {
		free(b.p);
	}
	store_read_end(s);
	store_close(s);
	return out;
}

int list_has_dying(void)
{
	char out[4096];
	tu_xensim_run(&sim, "list", out, sizeof(out));
	return strstr(out, "dying") != NULL;
}

void fill(uint8_t *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tu_rand(&seed);
		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

long proc_status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t fl = strlen(field);
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, field, fl) == 0 && line[fl] == ':')
			v = strtol(line + fl + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}
