/*
 * sample_bench.c - `make bench` for black-box sampling on xensim, every
 * baseline measured in the same run, rounds interleaved:
 *
 *  1. What sampling costs a guest: a CPU-bound program run as a domain
 *     (this program, --spin) counts its iterations over the same wall
 *     time unsampled, sampled at 99 Hz and at 999 Hz; the slowdown is
 *     1 - sampled / unsampled (median of the rounds, with the spread).
 *     Targets: <= 1% at 99 Hz, <= 5% at 999 Hz.  Also the pause window
 *     per sample as the sampler measures it: p50 and p99 of each round,
 *     and the p99 of all rounds' pauses together from the backend's
 *     pause histogram (its metrics; target p99 < 100 us), against the
 *     host's floor, a bare ptrace stop of a thread on the other CPU,
 *     measured in the same run; and the rate it settled at (the budget
 *     lowers it).
 *  2. What it costs a neighbour: a HaLVM guest's round trips (its writer,
 *     one request outstanding) while 64 domains (this program, --duty:
 *     mostly asleep) are sampled at 99 Hz by the same backend, against
 *     the same 64 unsampled.  Target: p99 within 10%.
 *  --quick: 2 rounds of 1 s, 16 domains beside the HaLVM guest.
 *
 * usage: sample_bench [--quick] [--only spin|fleet] [--json FILE].  Reports: a
 * target met or missed is a figure, never the exit status.  Exits 1 when it
 * could not measure, and says which of two kinds stopped it:
 *  - a product failure (FAIL, as a test's check): profile-backend sample
 *    exited non-zero, a guest's write failed, a domain's program died
 *    under the sampler (it ended without its last line), the backend has
 *    no pause histogram;
 *  - a harness error (the bench's own: "harness error"): xensim would not
 *    create or destroy a domain, a --duty domain ended before the window it
 *    was meant to fill closed (the round measured fewer than it says).
 * Destroying a domain whose program had already ended on its own (it
 * wrote its last line) is neither: there is nothing left to destroy.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xen/io/blkif.h>

#include "bench_host.h"
#include "frontend-stub/halvm_writer.h"
#include "tests/harness.h"

#define MAX_ROUNDS 7
#define FLEET 64
static int fleet_n = FLEET; /* --quick: 16 */

static int quick;
static const char *only; /* NULL: both parts */
static char self[4096];
static int harness_errors; /* the bench's own errors (product failures: tu_failures) */

/* The bench's own error (not profsvc's): counted, said, and the run goes
 * on to its report; the exit status is 1. */
static void harness_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void harness_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "sample_bench: harness error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	harness_errors++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the guests: this program as a domain ------------------------------------ */

__attribute__((noinline)) static unsigned long work_unit(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* --spin S: iterations over S seconds of wall time, on stdout. */
static int spin(double secs)
{
	unsigned long x = 1, n = 0;
	double end = now() + secs;
	while (now() < end)
		for (int k = 0; k < 64; k++, n++)
			x = work_unit(x);
	printf("iterations %lu %lu\n", n, x & 1);
	return 0;
}

/* The line a --duty domain's program writes when its time is up: a
 * domain whose console has it ended on its own. */
#define DUTY_DONE "duty done"

/* --duty S: busy 0.1 ms in every 10 ms, for S seconds (a bound: the bench
 * destroys it long before), then DUTY_DONE on stdout (the console). */
static int duty(double secs)
{
	unsigned long x = 1;
	double end = now() + secs;
	while (now() < end) {
		double t = now() + 0.0001;
		while (now() < t)
			x = work_unit(x);
		struct timespec ts = {0, 9900000};
		nanosleep(&ts, NULL);
	}
	printf("%s %lu\n", DUTY_DONE, x & 1);
	return 0;
}

/* (--dir goes before --exec: everything after that is the program's) */
static uint32_t exec_domain(const char *name, const char *args)
{
	char out[64] = "", cmd[8192];
	snprintf(cmd, sizeof(cmd), "%s/xensim/xensim create --dir %s --name %s --console %s/%s.console --exec %s %s",
	         tu_builddir(), sim.dir, name, sim.dir, name, self, args);
	FILE *p = popen(cmd, "r");
	int got = p && fgets(out, sizeof(out), p);
	int rc = p ? pclose(p) : -1;
	if (!got || rc != 0) {
		harness_error("xensim create --exec %s: status %d: %s", name, rc, out);
		tu_abort();
	}
	return (uint32_t)strtoul(out, NULL, 10);
}

/* Did domain NAME's program write DUTY_DONE (end on its own)? */
static int duty_done(const char *name)
{
	char path[8192], line[256];
	int done = 0;
	snprintf(path, sizeof(path), "%s/%s.console", sim.dir, name);
	FILE *c = fopen(path, "r");
	while (c && fgets(line, sizeof(line), c))
		done |= !strncmp(line, DUTY_DONE, strlen(DUTY_DONE));
	if (c)
		fclose(c);
	return done;
}

/* Destroys a --duty domain.  One whose program had ended on its own is
 * gone already: no failure.  One whose program ended without its last line
 * died under the sampler: a product failure.  Anything else xensim
 * refuses is the harness's. */
static void destroy_duty(uint32_t domid, const char *name)
{
	char args[64], out[1024];
	snprintf(args, sizeof(args), "destroy %u", domid);
	if (tu_xensim_run(&sim, args, out, sizeof(out)) == 0 || duty_done(name))
		return;
	if (strstr(out, "no such running domain"))
		CHECK(0, "domain %u (%s): its program ended before its time without its last line (killed "
		         "or crashed while sampled?)", domid, name);
	else
		harness_error("xensim destroy %u (%s): %s", domid, name, out);
}

/* ---- 1: a guest's slowdown ----------------------------------------------------- */

struct spin_fig {
	double iters, pause_p50, pause_p99, hz_end;
};

/* ---- the pause histogram: every pause of a mode, over all its rounds ----------- */

#define BUCKETS_MAX 32

/* The backend's pause histogram (profsvc_backend_sample_pause_seconds):
 * its finite bounds (us) and cumulative counts, and the count of all. */
struct pause_hist {
	int nb;
	double le_us[BUCKETS_MAX], cum[BUCKETS_MAX], n;
};

static struct pause_hist pause_scrape(void)
{
	static char text[1 << 20];
	struct pause_hist h = {0};
	char *line = text, *next;
	backend_ask("metrics", text, sizeof(text));
	for (; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		double le, v;
		/* the finite bounds: le="+Inf" reads as inf, and its count is _count's */
		if (sscanf(line, "profsvc_backend_sample_pause_seconds_bucket{le=\"%lf\"} %lf", &le, &v) == 2) {
			if (isfinite(le) && h.nb < BUCKETS_MAX)
				h.le_us[h.nb] = le * 1e6, h.cum[h.nb++] = v;
		} else {
			sscanf(line, "profsvc_backend_sample_pause_seconds_count %lf", &h.n);
		}
	}
	return h;
}

/* Adds what the histogram gained from before to after into *sum. */
static void pause_gain(struct pause_hist *sum, const struct pause_hist *before, const struct pause_hist *after)
{
	sum->nb = after->nb;
	for (int i = 0; i < after->nb; i++)
		sum->le_us[i] = after->le_us[i], sum->cum[i] += after->cum[i] - (i < before->nb ? before->cum[i] : 0);
	sum->n += after->n - before->n;
}

/* Quantile q of the pauses, interpolated in its bucket as Prometheus's
 * histogram_quantile does (past the last bound: that bound). */
static double pause_quantile(const struct pause_hist *h, double q)
{
	double rank = q * h->n, lo = 0, below = 0;
	for (int i = 0; i < h->nb; i++) {
		if (h->cum[i] >= rank && h->cum[i] > below)
			return lo + (h->le_us[i] - lo) * (rank - below) / (h->cum[i] - below);
		lo = h->le_us[i], below = h->cum[i];
	}
	return lo;
}

/* The share of pauses over limit_us (a bound of the histogram), in %. */
static double pause_share_over(const struct pause_hist *h, double limit_us)
{
	for (int i = 0; i < h->nb; i++)
		if (h->le_us[i] == limit_us)
			return h->n ? 100 * (h->n - h->cum[i]) / h->n : 0;
	return -1;
}

/* The domain spins; sampled at hz (0: not); its figures. */
static struct spin_fig spin_once(int hz, double secs, struct pause_hist *pooled)
{
	static int seq;
	char name[64], args[64], path[8192], line[1024];
	struct spin_fig f = {0};
	snprintf(name, sizeof(name), "spin-%d", ++seq);
	snprintf(args, sizeof(args), "--spin %.1f", secs);
	uint32_t dom = exec_domain(name, args);
	if (hz) {
		struct pause_hist before = pause_scrape();
		snprintf(path, sizeof(path), "%s/profile-backend sample %u --hz %d --platform sim --sim-dir %s --run-dir %s",
		         tu_builddir(), dom, hz, sim.dir, rundir);
		FILE *p = popen(path, "r");
		if (!p) {
			harness_error("popen profile-backend sample: %s", strerror(errno));
			tu_abort();
		}
		while (fgets(line, sizeof(line), p)) {
			const char *at = strstr(line, "pause p50 "), *rate = strstr(line, " bytes, ");
			if (at)
				sscanf(at, "pause p50 %lf us, p99 %lf", &f.pause_p50, &f.pause_p99);
			if (rate)
				sscanf(rate, " bytes, %lf Hz", &f.hz_end);
		}
		int st = pclose(p);
		CHECK(st == 0, "profile-backend sample %u --hz %d: exit status %d", dom, hz,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		CHECK(f.pause_p50 > 0 && f.hz_end > 0, "profile-backend sample %u --hz %d said no pause or rate", dom,
		      hz);
		struct pause_hist after = pause_scrape();
		REQUIRE(after.nb > 0, "the backend's metrics have no pause histogram");
		pause_gain(pooled, &before, &after);
	}
	snprintf(path, sizeof(path), "%s/%s.console", sim.dir, name);
	for (int i = 0; i < 200 && f.iters == 0; i++) {
		FILE *c = fopen(path, "r");
		while (c && fgets(line, sizeof(line), c))
			sscanf(line, "iterations %lf", &f.iters);
		if (c)
			fclose(c);
		if (f.iters == 0)
			usleep(50000);
	}
	REQUIRE(f.iters > 0, "%s wrote no count", name);
	return f;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double s[MAX_ROUNDS];
	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double spread(double *v, int n, double *lo)
{
	double a = v[0], b = v[0];
	for (int i = 1; i < n; i++)
		a = fmin(a, v[i]), b = fmax(b, v[i]);
	*lo = a;
	return b;
}

/* ---- the host's floor: a pause with nothing in it -------------------------------- */

/* What this host's kernel takes to stop a thread that runs on another CPU
 * and let it go again, with nothing read: PTRACE_INTERRUPT, its stop
 * looked for without sleeping (as a pause does), one PTRACE_GETREGS,
 * PTRACE_CONT; n times, a tick at 99 Hz apart (jittered as the sampler's:
 * the longer this thread's CPU idled, the slower what follows).  The stop needs an interrupt of
 * the other CPU (an IPI), whose cost is the host's: in a VM whose IPIs
 * go through a hypervisor it is tens of us, so a sampler's pause window
 * is read against this, measured in the same run.  Its p50 and p99 in
 * *p50, *p99; 0, or -1 with one CPU (no other to stop a thread on) or
 * no ptrace (said why). */
static int pause_floor(int n, double *p50, double *p99)
{
	cpu_set_t all, one;
	if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2)
		return -1;
	int here = -1, there = -1;
	for (int c = 0; c < CPU_SETSIZE && there < 0; c++)
		if (CPU_ISSET(c, &all))
			*(here < 0 ? &here : &there) = c;
	pid_t child = fork();
	REQUIRE(child >= 0, "fork");
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never left spinning */
		CPU_ZERO(&one);
		CPU_SET(there, &one);
		sched_setaffinity(0, sizeof(one), &one);
		for (volatile unsigned long x = 0;; x++)
			;
	}
	CPU_ZERO(&one);
	CPU_SET(there, &one);
	sched_setaffinity(child, sizeof(one), &one);
	CPU_ZERO(&one);
	CPU_SET(here, &one);
	sched_setaffinity(0, sizeof(one), &one);
	double *us = calloc((size_t)n, sizeof(*us));
	if (!us || ptrace(PTRACE_SEIZE, child, 0, 0) != 0) {
		fprintf(stderr, "sample_bench: the floor: %s\n", us ? strerror(errno) : "out of memory");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		free(us);
		return -1;
	}
	usleep(50000);
	for (int i = 0; i < n; i++) {
		struct user_regs_struct regs;
		int st;
		double t0 = now();
		ptrace(PTRACE_INTERRUPT, child, 0, 0);
		while (waitpid(child, &st, __WALL | WNOHANG) == 0)
			;
		ptrace(PTRACE_GETREGS, child, 0, &regs);
		ptrace(PTRACE_CONT, child, 0, 0);
		us[i] = (now() - t0) * 1e6;
		usleep(9100 + (unsigned)(i * 7919) % 2000);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, __WALL);
	sched_setaffinity(0, sizeof(all), &all);
	qsort(us, (size_t)n, sizeof(*us), cmp_double);
	*p50 = us[n / 2];
	*p99 = us[n * 99 / 100];
	free(us);
	return 0;
}

/* ---- 2: a neighbour's round trips ------------------------------------------------ */

struct rt_ctx {
	struct blkfront *f;
	double *lat;
	size_t n, cap;
};

static int rt_submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct rt_ctx *h = ctx;
	struct bf_req r = {.op = BLKIF_OP_WRITE, .sector = sector, .nsect = nsect, .buf = (void *)data};
	double t0 = now();
	int st = blkfront_do(h->f, &r, 30000);
	if (h->n < h->cap)
		h->lat[h->n++] = (now() - t0) * 1e6;
	return st;
}

/* The backend (sampling every domain or not) with fleet_n --duty domains;
 * a HaLVM guest writes; its round trip p99 in us. */
static double fleet_once(int sampled, double secs)
{
	static int seq;
	uint32_t doms[FLEET];
	char args[64], names[FLEET][64];
	backend_start(sampled ? "--sample-hz 99" : "");
	/* A bound, not the window: every domain is destroyed when the window
	 * closes, however long the 64 took to start (seconds on a busy host). */
	snprintf(args, sizeof(args), "--duty %.1f", secs + 120);
	for (int i = 0; i < fleet_n; i++) {
		snprintf(names[i], sizeof(names[i]), "duty-%d-%d", seq, i);
		doms[i] = exec_domain(names[i], args);
	}
	usleep(500000); /* the samplers started */
	struct guest g;
	char gname[64];
	snprintf(gname, sizeof(gname), "rt-%d", ++seq);
	struct blkfront *f = guest_with_disk(&g, gname, "xvdp2", &(struct blkfront_opts){.halvm = 1, .data_pages = 8});
	struct rt_ctx h = {f, calloc(1u << 20, sizeof(double)), 0, 1u << 20};
	struct halvm_writer w;
	static uint8_t page[HALVM_PAGE_SIZE];
	fill(page, sizeof(page), 3);
	halvm_writer_init(&w, 8, rt_submit, &h);
	double end = now() + secs;
	while (now() < end)
		REQUIRE(halvm_writer_append(&w, page, sizeof(page)) == 0, "halvm write failed");
	REQUIRE(halvm_writer_close(&w) == 0, "halvm close failed");
	/* the window measured fleet_n domains only if all of them outlived it */
	int early = 0;
	for (int i = 0; i < fleet_n; i++)
		early += duty_done(names[i]);
	if (early)
		harness_error("%d of the %d --duty domains ended before the window closed (their time, %s, "
		              "is too short): the round measured fewer",
		              early, fleet_n, args);
	qsort(h.lat, h.n, sizeof(double), cmp_double);
	double p99 = h.n ? h.lat[(size_t)(h.n * 0.99)] : 0;
	CHECK(h.n > 0, "the HaLVM guest made no round trip");
	free(h.lat);
	blkfront_close(f, 1);
	destroy_domain(g.domid);
	guest_free(&g);
	for (int i = 0; i < fleet_n; i++)
		destroy_duty(doms[i], names[i]);
	backend_stop(SIGTERM);
	return p99;
}

/* ---- the daemons' log --------------------------------------------------------------- */

/* xensim's and the backend's lines (hundreds a run) go to a file, the
 * figures to stdout; a run that fails shows its failures and the end of
 * the log, one that ends well removes it. */
static char logpath[4200];
static int saved_stderr = -1, finished_ok;

static void show_log_on_failure(void)
{
	char cmd[9000];
	if (finished_ok || saved_stderr < 0)
		return;
	fflush(stdout);
	dup2(saved_stderr, 1);
	dup2(saved_stderr, 2);
	fprintf(stderr, "sample_bench failed: its failures, then the end of %s:\n", logpath);
	snprintf(cmd, sizeof(cmd), "grep -E '^(FAIL|aborting|sample_bench:)' '%s' >&2; echo ... >&2; tail -30 '%s' >&2",
	         logpath, logpath);
	if (system(cmd) != 0)
		fprintf(stderr, "(cannot show it)\n");
}

static void log_to_file(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(logpath, sizeof(logpath), "%s/profsvc-sample-bench.%d.log", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return; /* the log stays on stderr */
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
	atexit(show_log_on_failure);
}

/* ---- the report -------------------------------------------------------------------- */

static void row(FILE *j, const char *key, const char *label, double *v, int n, const char *unit,
                double limit, int le)
{
	static int written;
	double lo, hi = spread(v, n, &lo), m = median(v, n);
	const char *verdict = limit < 0 ? "" : (le ? m <= limit : m >= limit) ? "  met" : "  NOT MET";
	printf("  %-46s %9.3f%s  (%.3f .. %.3f)%s\n", label, m, unit, lo, hi, verdict);
	if (j && isfinite(m) && isfinite(lo) && isfinite(hi))
		fprintf(j, "%s\"%s\":{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g,\"target\":%.6g}", written++ ? "," : "",
		        key, m, lo, hi, limit);
	else if (j) /* JSON has no inf or NaN */
		fprintf(j, "%s\"%s\":null", written++ ? "," : "", key);
}

/* A mode's pauses over all its rounds: the p99 per sample (the target)
 * and, exactly, the share over the 100 us it stands for; the p99 is
 * returned (the floor's rows compare it). */
static double pooled_rows(FILE *j, const char *key, const char *hz, const struct pause_hist *h)
{
	char k[64], label[96];
	double p99 = pause_quantile(h, 0.99), over = pause_share_over(h, 100);
	snprintf(k, sizeof(k), "pause_p99_us_%s_all", key);
	snprintf(label, sizeof(label), "  p99 of all rounds' %.0f pauses", h->n);
	row(j, k, label, &p99, 1, "", 100, 1);
	snprintf(k, sizeof(k), "pauses_over_100us_pct_%s", key);
	snprintf(label, sizeof(label), "  pauses over 100 us at %s (%%)", hz);
	row(j, k, label, &over, 1, "%", 1, 1);
	return p99;
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--spin") && i + 1 < argc)
			return spin(atof(argv[i + 1]));
		if (!strcmp(argv[i], "--duty") && i + 1 < argc)
			return duty(atof(argv[i + 1]));
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc && (!strcmp(argv[i + 1], "spin") || !strcmp(argv[i + 1], "fleet")))
			only = argv[++i];
		else {
			fprintf(stderr, "usage: sample_bench [--quick] [--only spin|fleet] [--json FILE]\n");
			return 2;
		}
	}
	REQUIRE(realpath("/proc/self/exe", self) != NULL, "own path");
	bench_host_print("sample_bench");
	int rounds = quick ? 2 : 5;
	if (quick)
		fleet_n = 16;
	double secs = quick ? 1.0 : 2.0;
	double s0[MAX_ROUNDS] = {0}, s99[MAX_ROUNDS] = {0}, s999[MAX_ROUNDS] = {0}, p50[MAX_ROUNDS] = {0}, p99[MAX_ROUNDS] = {0};
	double p50k[MAX_ROUNDS] = {0}, p99k[MAX_ROUNDS] = {0}, rt0[MAX_ROUNDS] = {0}, rt1[MAX_ROUNDS] = {0};
	double hzk[MAX_ROUNDS] = {0};
	struct pause_hist pooled[3] = {{0}}; /* by mode: -, 99 Hz, 999 Hz */
	int spins = !only || !strcmp(only, "spin"), fleets = !only || !strcmp(only, "fleet");
	log_to_file();
	harness_start();
	backend_start("--max-run-bytes 1024G");
	if (spins)
		printf("sample_bench: a guest's slowdown, %d rounds of %.0f s ...\n", rounds, secs);
	fflush(stdout);
	for (int r = 0; r < rounds && spins; r++) {
		/* the order turns each round: no mode always runs first */
		for (int k = 0; k < 3; k++) {
			int m = (k + r) % 3;
			struct spin_fig f = spin_once(m == 0 ? 0 : m == 1 ? 99 : 999, secs, &pooled[m]);
			if (m == 0)
				s0[r] = f.iters;
			else if (m == 1)
				s99[r] = f.iters, p50[r] = f.pause_p50, p99[r] = f.pause_p99;
			else
				s999[r] = f.iters, p50k[r] = f.pause_p50, p99k[r] = f.pause_p99, hzk[r] = f.hz_end;
		}
	}
	backend_stop(SIGTERM);
	double floor50 = 0, floor99 = 0;
	int floored = spins && pause_floor(quick ? 300 : 1000, &floor50, &floor99) == 0;
	if (spins && !floored)
		printf("sample_bench: no floor measured (one CPU, or no ptrace): the pause is not compared with it\n");
	if (fleets)
		printf("sample_bench: a neighbour's round trips beside %d sampled domains ...\n", fleet_n);
	fflush(stdout);
	for (int r = 0; r < rounds && fleets; r++) {
		int first = r % 2;
		double a = fleet_once(first, secs * 2), b = fleet_once(!first, secs * 2);
		rt0[r] = first ? b : a;
		rt1[r] = first ? a : b;
	}
	harness_stop();
	double slow99[MAX_ROUNDS], slow999[MAX_ROUNDS], rtr[MAX_ROUNDS];
	for (int r = 0; r < rounds; r++) {
		slow99[r] = 100 * (1 - s99[r] / s0[r]);
		slow999[r] = 100 * (1 - s999[r] / s0[r]);
		rtr[r] = rt1[r] / rt0[r];
	}
	FILE *j = json ? fopen(json, "w") : NULL;
	if (j)
		fputc('{', j);
	printf("\nsampling (medians of %d rounds, min .. max)\n", rounds);
	if (spins) {
		row(j, "iterations_unsampled", "baseline: the guest's iterations unsampled", s0, rounds, "", -1, 1);
		row(j, "slowdown_99hz_pct", "guest slowdown at 99 Hz (%)", slow99, rounds, "%", 1, 1);
		row(j, "slowdown_999hz_pct", "guest slowdown at 999 Hz (%)", slow999, rounds, "%", 5, 1);
		row(j, "pause_p50_us_99hz", "pause window p50 at 99 Hz (us)", p50, rounds, "", -1, 1);
		row(j, "pause_p99_us_99hz", "  p99 of a round's pauses", p99, rounds, "", -1, 1);
		double all99 = pooled_rows(j, "99hz", "99 Hz", &pooled[1]);
		row(j, "pause_p50_us_999hz", "pause window p50 at 999 Hz (us)", p50k, rounds, "", -1, 1);
		row(j, "pause_p99_us_999hz", "  p99 of a round's pauses", p99k, rounds, "", -1, 1);
		double allk = pooled_rows(j, "999hz", "999 Hz", &pooled[2]);
		if (floored) {
			double over99 = all99 / floor99, overk = allk / floor99;
			row(j, "floor_p50_us", "the host's floor: a bare stop on another CPU, p50", &floor50, 1, "", -1, 1);
			row(j, "floor_p99_us", "  its p99 (us)", &floor99, 1, "", -1, 1);
			row(j, "pause_p99_over_floor_99hz", "p99 of all pauses at 99 Hz / the floor's p99", &over99, 1, "x", -1, 1);
			row(j, "pause_p99_over_floor_999hz", "p99 of all pauses at 999 Hz / the floor's p99", &overk, 1, "x", -1, 1);
		}
		row(j, "rate_at_end_999hz", "999 Hz asked: the rate at the end (Hz)", hzk, rounds, "", 999, 0);
	}
	if (fleets) {
		char l1[64], l2[64];
		snprintf(l1, sizeof(l1), "HaLVM p99, %d sampled / unsampled", fleet_n);
		snprintf(l2, sizeof(l2), "baseline: HaLVM p99 beside %d unsampled (us)", fleet_n);
		row(j, "fleet_rt_p99_ratio", l1, rtr, rounds, "x", 1.10, 1);
		row(j, "fleet_rt_p99_unsampled_us", l2, rt0, rounds, "", -1, 1);
	}
	if (j) {
		fputs("}\n", j);
		fclose(j);
		printf("wrote %s\n", json);
	}
	fflush(stdout);
	if (harness_errors)
		fprintf(stderr, "sample_bench: %d harness error(s) (the bench's own, above), %d product failure(s)\n",
		        harness_errors, tu_failures);
	else if (tu_failures)
		fprintf(stderr, "sample_bench: %d product failure(s) (FAIL, above)\n", tu_failures);
	tu_failures += harness_errors; /* the last line counts both */
	int rc = tu_finish("sample_bench");
	finished_ok = rc == 0;
	if (finished_ok && logpath[0])
		unlink(logpath);
	return rc;
}
