/*
 * capture_bench.c - `make bench` for capture: the whole path from a guest's
 * blkfront through xensim and profile-backend into a sink, for every sink
 * in the same run:
 *
 *   null        the backend discards the data after the grant copy: the
 *               transport ceiling
 *   raw         a raw image in the page cache (QEMU qdisk with libxl's
 *               cache=writeback): the backend users would otherwise run
 *   raw-direct  a raw image with O_DIRECT + libaio (tapdisk)
 *   store       the profsvc store, --durability process (the default)
 *   store-power the store, --durability power
 *   store-sql   the store without its intake log (--intake off): each batch
 *               committed to SQLite before it is answered, as before
 *
 * Workloads: halvm (one outstanding request, a 4 KiB page then the 512-byte
 * status block, as the HaLVM writer does), bulk (Linux-like: 32 x 44 KiB
 * outstanding, and 8 x 1 MiB indirect), fleet (64 guests x 2 devices
 * at once); and, only with --workload xsflood, a neighbour's round trips
 * beside a guest flooding its own xenstore nodes.  Also the backend's CPU time per MiB, instructions per request
 * (callgrind, reproducible), and its memory with the fleet connected and
 * across 1M requests.  Prints a table with the targets as ratios of figures
 * from this run; --json FILE writes them.  Reports; never fails a build.
 */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xen/io/blkif.h>
#include <xenstore.h>

#include "bench_host.h"
#include "frontend-stub/halvm_writer.h"
#include "tests/harness.h"

enum { S_NULL, S_RAW, S_RAW_DIRECT, S_STORE, S_STORE_POWER, S_STORE_SQL, NSINKS };
static const char *const sink_names[NSINKS] = {"null", "raw", "raw-direct", "store", "store-power", "store-sql"};

enum { W_HALVM, W_BULK44, W_BULK1M, W_FLEET, W_SINGLE, NWORK };

struct figures {
	double mb_s;          /* MB/s of data (halvm: of profile) */
	double p50, p99;      /* round trip, us */
	double cpu_per_mib;   /* backend CPU s per MiB */
	double worst_ratio;   /* fleet: the worst guest's p99 / p50 */
	double p99_max;       /* fleet: the worst guest's p99 */
	uint64_t requests;
};

/* ROUNDS rounds of every sink, the sinks taking turns within a round (so
 * that the machine's drift over minutes falls on all of them alike); a
 * figure is the median of the rounds, shown with their range.  A target
 * is met when the median meets it (the run's figure, as every target of
 * make bench is read), and the line says in how many rounds it held, so
 * that one that holds only by the median is visible as such. */
#define ROUNDS 3
static int nrounds = ROUNDS; /* --quick: 2 */
static struct figures fig[NSINKS][NWORK];        /* the round being measured, then the medians */
static struct figures figr[ROUNDS][NSINKS][NWORK];
static double rss_fleet_kib[NSINKS], anon_fleet_kib[NSINKS], shmem_fleet_kib[NSINKS];
static int quick;
static char rawdir[4096];
static int guest_seq;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- latencies ------------------------------------------------------------- */

struct lat {
	double *v;
	size_t n, cap;
};

static void lat_add(struct lat *l, double us)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n++] = us;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(struct lat *l, double p)
{
	if (l->n == 0)
		return 0;
	qsort(l->v, l->n, sizeof(*l->v), cmp_double);
	size_t i = (size_t)(p * (double)(l->n - 1) + 0.5);
	return l->v[i];
}

/* ---- the backend process: CPU and memory -------------------------------------- */

static double backend_cpu_s(void)
{
	char path[64], buf[1024];
	FILE *f;
	unsigned long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)backend_pid);
	if (!(f = fopen(path, "r")))
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* VmRSS or VmHWM of the backend, KiB. */
static double backend_mem_kib(const char *field)
{
	long v = proc_status_kib(backend_pid, field);
	return v < 0 ? 0 : (double)v;
}

/* Every workload starts with no dirty data of the previous one waiting to
 * be written back (it would throttle this one's writes). */
static void settle(void)
{
	sync();
}

static void start_sink(int s, const char *extra)
{
	char args[9000];

	store_remove_files(db);
	/* The streams run for seconds: past the default 4 GiB per run. */
	char more[256];
	snprintf(more, sizeof(more), "--max-run-bytes 1024G %.200s", extra);
	extra = more;
	switch (s) {
	case S_NULL:
		snprintf(args, sizeof(args), "--sink null %s", extra);
		break;
	case S_RAW:
		snprintf(args, sizeof(args), "--sink raw=%s %s", rawdir, extra);
		break;
	case S_RAW_DIRECT:
		snprintf(args, sizeof(args), "--sink raw-direct=%s %s", rawdir, extra);
		break;
	case S_STORE_POWER:
		snprintf(args, sizeof(args), "--durability power %s", extra);
		break;
	case S_STORE_SQL:
		snprintf(args, sizeof(args), "--intake off %s", extra);
		break;
	default:
		snprintf(args, sizeof(args), "%s", extra);
		break;
	}
	backend_start(args);
}

static void clean_rawdir(void)
{
	DIR *d = opendir(rawdir);
	struct dirent *e;
	char p[8192];

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", rawdir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
}

/* ---- guests ------------------------------------------------------------------ */

static const struct blkfront_opts linux_opts = {.ring_order = 0, .data_pages = 32 * 11 + 8};
static const struct blkfront_opts halvm_opts = {.halvm = 1, .data_pages = 8};

static struct blkfront *new_guest(struct guest *g, const char *vdev, const struct blkfront_opts *o)
{
	char name[64];
	snprintf(name, sizeof(name), "bench-%d", ++guest_seq);
	guest_new(g, name, "vdev=xvdp1 vdev=xvdp2");
	struct blkfront *f = connect_dev(g, vdev, o);
	REQUIRE(f, "connect %s", vdev);
	return f;
}

static void end_guest(struct guest *g, struct blkfront *f)
{
	blkfront_close(f, 1);
	destroy_domain(g->domid);
	guest_free(g);
}

/* ---- halvm: one outstanding request ------------------------------------------- */

struct halvm_ctx {
	struct blkfront *f;
	struct lat *lat;
	uint64_t requests;
};

static int halvm_submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct halvm_ctx *h = ctx;
	struct bf_req r = {.op = BLKIF_OP_WRITE, .sector = sector, .nsect = nsect, .buf = (void *)data};
	double t0 = now();
	int st = blkfront_do(h->f, &r, 30000);
	lat_add(h->lat, (now() - t0) * 1e6);
	h->requests++;
	return st;
}

/* Writes `bytes` of profile; returns the seconds it took. */
static double run_halvm(struct blkfront *f, size_t bytes, struct lat *lat, uint64_t *requests)
{
	struct halvm_writer w;
	struct halvm_ctx h = {f, lat, 0};
	static uint8_t page[HALVM_PAGE_SIZE];
	double t0 = now();

	fill(page, sizeof(page), 7);
	halvm_writer_init(&w, 8, halvm_submit, &h);
	for (size_t done = 0; done < bytes; done += sizeof(page))
		REQUIRE(halvm_writer_append(&w, page, sizeof(page)) == 0, "halvm write failed");
	REQUIRE(halvm_writer_close(&w) == 0, "halvm close failed");
	*requests = h.requests;
	return now() - t0;
}

static void bench_halvm(int s)
{
	struct guest g;
	struct lat lat = {0};
	uint64_t reqs = 0;
	size_t bytes = (quick ? 2u : 8u) << 20;
	struct blkfront *f = new_guest(&g, "xvdp2", &halvm_opts);
	double c0 = backend_cpu_s();
	double secs = run_halvm(f, bytes, &lat, &reqs);
	double cpu = backend_cpu_s() - c0;

	end_guest(&g, f);
	fig[s][W_HALVM] = (struct figures){.mb_s = (double)bytes / secs / 1e6,
	                                   .p50 = pct(&lat, 0.50),
	                                   .p99 = pct(&lat, 0.99),
	                                   .cpu_per_mib = cpu / ((double)bytes / 1048576.0),
	                                   .requests = reqs};
	free(lat.v);
}

/* ---- bulk: many outstanding ---------------------------------------------------- */

struct stream {
	struct blkfront *f;
	struct bf_req *r;
	double *t0;
	uint8_t *buf;
	unsigned depth, free_n, *free_slots;
	uint32_t nsect;
	uint64_t sector, region, issued, done, total, failed;
	/* Only requests issued and answered inside [win_from, win_to] count
	 * for latency and window_bytes (the fleet's steady state). */
	double win_from, win_to;
	uint64_t window_bytes;
	double worst_us, worst_at; /* the slowest answer in the window, and when */
};

static void stream_init(struct stream *st, struct blkfront *f, unsigned depth, uint32_t nsect,
                        uint64_t total, uint64_t region_sectors)
{
	memset(st, 0, sizeof(*st));
	st->f = f;
	st->depth = depth;
	st->nsect = nsect;
	st->total = total;
	st->region = region_sectors;
	st->r = calloc(depth, sizeof(*st->r));
	st->t0 = calloc(depth, sizeof(*st->t0));
	st->free_slots = calloc(depth, sizeof(*st->free_slots));
	st->buf = malloc((size_t)nsect * 512);
	if (!st->r || !st->t0 || !st->free_slots || !st->buf)
		abort();
	fill(st->buf, (size_t)nsect * 512, 11);
	for (unsigned i = 0; i < depth; i++)
		st->free_slots[st->free_n++] = i;
	st->win_from = 0;
	st->win_to = 1e300;
}

static void stream_free(struct stream *st)
{
	free(st->r);
	free(st->t0);
	free(st->free_slots);
	free(st->buf);
}

/* Queues requests while slots are free; kicks once. */
static void stream_issue(struct stream *st)
{
	int queued = 0;
	while (st->free_n > 0 && st->issued < st->total) {
		unsigned i = st->free_slots[--st->free_n];
		st->r[i] = (struct bf_req){.op = BLKIF_OP_WRITE, .sector = st->sector, .nsect = st->nsect,
		                           .buf = st->buf};
		if (blkfront_queue(st->f, &st->r[i]) != 0) {
			st->free_slots[st->free_n++] = i;
			break;
		}
		st->t0[i] = now();
		st->issued++;
		st->sector += st->nsect;
		if (st->region && st->sector + st->nsect > st->region)
			st->sector = 0;
		queued = 1;
	}
	if (queued)
		blkfront_kick(st->f);
}

/* Takes the responses there are (timeout_ms for the first). */
static unsigned stream_reap(struct stream *st, int timeout_ms, struct lat *lat)
{
	unsigned n = 0;
	struct bf_req *r;
	while ((r = blkfront_wait(st->f, n ? 0 : timeout_ms))) {
		unsigned i = (unsigned)(r - st->r);
		if (i >= st->depth)
			continue;
		double t = now();
		if (t >= st->win_from && t <= st->win_to) {
			st->window_bytes += (uint64_t)st->nsect * 512;
			if (lat && st->t0[i] >= st->win_from) {
				double us = (t - st->t0[i]) * 1e6;
				lat_add(lat, us);
				if (us > st->worst_us) {
					st->worst_us = us;
					st->worst_at = t;
				}
			}
		}
		st->failed += r->status != BLKIF_RSP_OKAY;
		st->free_slots[st->free_n++] = i;
		st->done++;
		n++;
	}
	return n;
}

static int stream_run(struct stream *st, struct lat *lat)
{
	while (st->done < st->total) {
		stream_issue(st);
		if (stream_reap(st, 30000, lat) == 0)
			return -1;
	}
	return st->failed ? -1 : 0;
}

static void bench_bulk(int s, int w, unsigned depth, uint32_t nsect, size_t bytes)
{
	struct guest g;
	struct lat lat = {0};
	struct stream st;
	struct blkfront_opts o = linux_opts;
	unsigned pages = (nsect + 7) / 8;
	o.data_pages = depth * (pages + (pages > BLKIF_MAX_SEGMENTS_PER_REQUEST)) + 8;
	struct blkfront *f = new_guest(&g, "xvdp1", &o);
	uint64_t total = bytes / ((size_t)nsect * 512);

	stream_init(&st, f, depth, nsect, total, 0);
	double c0 = backend_cpu_s(), t0 = now();
	REQUIRE(stream_run(&st, &lat) == 0, "bulk writes failed on %s", sink_names[s]);
	double secs = now() - t0, cpu = backend_cpu_s() - c0;
	end_guest(&g, f);
	fig[s][w] = (struct figures){.mb_s = (double)(total * nsect * 512) / secs / 1e6,
	                             .p50 = pct(&lat, 0.50),
	                             .p99 = pct(&lat, 0.99),
	                             .cpu_per_mib = cpu / ((double)(total * nsect * 512) / 1048576.0),
	                             .requests = total};
	stream_free(&st);
	free(lat.v);
}

/* ---- fleet: 64 guests x 2 devices, one process per guest ---------------------------- */

#define FLEET_MAX 64
static int FLEET_GUESTS = FLEET_MAX; /* CAPTURE_BENCH_FLEET=N: fewer, to look closer */

struct fleet_result {
	uint64_t bytes, failed, requests; /* in the measured window */
	double p50, p90, p99, max;
	double t_max;                     /* when the slowest answer came, s after go */
	int ok;
};

/* One guest of the fleet: its two devices stream 44 KiB writes, 32
 * outstanding each, for secs from "go"; the first warm seconds (everyone
 * connecting their first requests) and the drain after the end do not
 * count.  Every guest stops at the same time, so no guest's figures come
 * from a fleet that had already thinned out. */
static void fleet_guest(uint32_t domid, int ndev, int ready_fd, int go_fd, int out_fd, double secs,
                        double warm)
{
	struct plat *p;
	struct xs_handle *xs;
	struct blkfront *f[2];
	struct stream st[2];
	struct lat lat = {0};
	struct fleet_result res = {0};
	char err[512];
	struct plat_opts o = {.kind = PLAT_SIM, .sim_dir = sim.dir, .sim_domid = domid};
	const char *vdevs[2] = {"xvdp1", "xvdp2"};
	uint32_t nsect = 88; /* 44 KiB */

	if (plat_open(&p, &o, err, sizeof(err)) != 0 || !(xs = plat_xs_open(p)))
		_exit(3);
	struct blkfront_opts bo = linux_opts;
	bo.data_pages = 32 * 11 + 8;
	for (int i = 0; i < ndev; i++) {
		if (blkfront_open(&f[i], p, xs, vdevs[i], &bo, err, sizeof(err)) != 0) {
			fprintf(stderr, "fleet guest %u: %s\n", domid, err);
			_exit(4);
		}
		stream_init(&st[i], f[i], 32, nsect, UINT64_MAX, 0);
	}
	char c = 'r';
	if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 0)
		_exit(5);
	double t_go = now();
	for (int i = 0; i < ndev; i++) {
		st[i].win_from = t_go + warm;
		st[i].win_to = t_go + secs;
	}
	res.ok = 1;
	for (int i = 0; i < ndev; i++)
		stream_issue(&st[i]);
	while (st[0].done < st[0].total || (ndev > 1 && st[1].done < st[1].total)) {
		struct pollfd pfd[2] = {{blkfront_event_fd(f[0]), POLLIN, 0},
		                        {ndev > 1 ? blkfront_event_fd(f[1]) : -1, POLLIN, 0}};
		if (poll(pfd, 2, 30000) <= 0) {
			res.ok = 0;
			break;
		}
		int over = now() >= t_go + secs;
		for (int i = 0; i < ndev; i++) {
			stream_reap(&st[i], 0, &lat);
			if (over)
				st[i].total = st[i].issued; /* stop; drain what is out */
			stream_issue(&st[i]);
		}
	}
	for (int i = 0; i < ndev; i++) {
		res.bytes += st[i].window_bytes;
		res.failed += st[i].failed;
		blkfront_close(f[i], 1);
		stream_free(&st[i]);
	}
	res.p50 = pct(&lat, 0.50);
	res.p90 = pct(&lat, 0.90);
	res.p99 = pct(&lat, 0.99);
	res.requests = lat.n;
	for (int i = 0; i < ndev; i++)
		if (st[i].worst_us > res.max) {
			res.max = st[i].worst_us;
			res.t_max = st[i].worst_at - t_go;
		}
	if (write(out_fd, &res, sizeof(res)) != sizeof(res))
		_exit(6);
	_exit(0);
}

/* nguests guests with ndev devices each at once (1 x 1: the single-guest
 * stream the fleet is compared with, under the same conditions). */
static void bench_fleet(int s, int w, int nguests, int ndev)
{
	struct guest g[FLEET_MAX];
	pid_t pid[FLEET_MAX];
	int ready[2], go[2], out[2];
	/* Two seconds: at 1-1.5 GB/s a raw image in the page cache grows it
	 * by 2-3 GB, past where this VM's writes slow down (its round trips
	 * then jump: the raw sink's worst guest at 5-6 times its median);
	 * the store's write-behind keeps its own share of the cache small
	 * (store/store_writeback.c). */
	double secs = quick ? 0.8 : 2.0, warm = quick ? 0.25 : 0.5;
	struct fleet_result res[FLEET_MAX];
	char name[64];

	REQUIRE(pipe(ready) == 0 && pipe(go) == 0 && pipe(out) == 0, "pipe");
	for (int i = 0; i < nguests; i++) {
		snprintf(name, sizeof(name), "fleet-%d", ++guest_seq);
		g[i].domid = tu_xensim_create(&sim, name);
		REQUIRE(cli("attach %u vdev=xvdp1%s", g[i].domid, ndev > 1 ? " vdev=xvdp2" : "") == 0,
		        "attach fleet guest");
	}
	for (int i = 0; i < nguests; i++) {
		pid[i] = fork();
		REQUIRE(pid[i] >= 0, "fork");
		if (pid[i] == 0) {
			close(ready[0]);
			close(go[1]);
			close(out[0]);
			fleet_guest(g[i].domid, ndev, ready[1], go[0], out[1], secs, warm);
		}
	}
	close(ready[1]);
	close(go[0]);
	close(out[1]);
	for (int i = 0; i < nguests; i++) {
		char c;
		REQUIRE(read(ready[0], &c, 1) == 1, "fleet guest %d did not connect", i);
	}
	double c0 = backend_cpu_s(), t0 = now();
	close(go[1]); /* go */
	if (w == W_FLEET) {
		/* The daemon's size with every device busy, mid-window. */
		usleep((useconds_t)((warm + (secs - warm) / 2) * 1e6));
		rss_fleet_kib[s] = backend_mem_kib("VmRSS");
		anon_fleet_kib[s] = backend_mem_kib("RssAnon");
		shmem_fleet_kib[s] = backend_mem_kib("RssShmem");
	}
	int got = 0;
	for (; got < nguests; got++)
		if (read(out[0], &res[got], sizeof(res[got])) != (ssize_t)sizeof(res[got]))
			break;
	double wall = now() - t0, cpu = backend_cpu_s() - c0;
	for (int i = 0; i < nguests; i++) {
		int st;
		waitpid(pid[i], &st, 0);
		destroy_domain(g[i].domid);
	}
	close(ready[0]);
	close(out[0]);
	REQUIRE(got == nguests, "only %d fleet guests reported", got);

	struct lat p50s = {0};
	double bytes = 0, worst = 0, p99max = 0;
	uint64_t failed = 0;
	for (int i = 0; i < got; i++) {
		REQUIRE(res[i].ok, "a fleet guest timed out");
		bytes += (double)res[i].bytes;
		failed += res[i].failed;
		lat_add(&p50s, res[i].p50);
		if (res[i].p50 > 0 && res[i].p99 / res[i].p50 > worst)
			worst = res[i].p99 / res[i].p50;
		if (res[i].p99 > p99max)
			p99max = res[i].p99;
	}
	REQUIRE(failed == 0, "%llu fleet writes failed", (unsigned long long)failed);
	/* CAPTURE_BENCH_FLEET_DUMP=FILE: every guest's figures, to look closer */
	const char *dump = getenv("CAPTURE_BENCH_FLEET_DUMP");
	FILE *df = dump && *dump && w == W_FLEET ? fopen(dump, "a") : NULL;
	if (df) {
		fprintf(df, "# %s: guest p50 p90 p99 max (us), p99/p50, when the max came (s after go)\n",
		        sink_names[s]);
		for (int i = 0; i < got; i++)
			fprintf(df, "%s %d %.0f %.0f %.0f %.0f %.2f %.3f\n", sink_names[s], i, res[i].p50,
			        res[i].p90, res[i].p99, res[i].max, res[i].p50 > 0 ? res[i].p99 / res[i].p50 : 0,
			        res[i].t_max);
		fclose(df);
	}
	/* Throughput over the window; CPU over the whole run (approximate:
	 * the window is most of it). */
	fig[s][w] = (struct figures){.mb_s = bytes / (secs - warm) / 1e6,
	                                   .p50 = pct(&p50s, 0.5),
	                                   .p99 = p99max,
	                                   .cpu_per_mib = cpu / (bytes / 1048576.0) * (secs - warm) / wall,
	                                   .worst_ratio = worst,
	                                   .p99_max = p99max,
	                                   .requests = (uint64_t)(bytes / (88 * 512))};
	free(p50s.v);
}

/* ---- memory over 1M requests (store) -------------------------------------------------- */

#define RSS_SAMPLES 5
static double rss_over[RSS_SAMPLES];
static uint64_t rss_at[RSS_SAMPLES];

static void bench_rss_long(void)
{
	struct guest g;
	struct stream st;
	uint64_t total = quick ? 40000 : 1000000;
	struct blkfront *f = new_guest(&g, "xvdp1", &linux_opts);

	/* 4 KiB writes, 32 outstanding, over the same 64 MiB: the store's size
	 * stays put, so what grows is the backend. */
	stream_init(&st, f, 32, 8, total, 64u << 11);
	for (int k = 0; k < RSS_SAMPLES; k++) {
		st.total = total * (uint64_t)k / (RSS_SAMPLES - 1);
		REQUIRE(stream_run(&st, NULL) == 0, "long run writes failed");
		rss_at[k] = st.done;
		rss_over[k] = backend_mem_kib("VmRSS");
	}
	end_guest(&g, f);
	stream_free(&st);
}

/* ---- instructions per request (callgrind) ------------------------------------------------ */

static double cg_halvm = -1, cg_bulk = -1;

static int run_quiet(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Total instructions of the newest callgrind dump in dir. */
static double cg_last_total(const char *dir)
{
	char cmd[8400], line[512];
	double v = -1;
	snprintf(cmd, sizeof(cmd), "ls -t %s/cg.out.* 2>/dev/null | head -1 | xargs -r grep -h "
	         "'^\\(totals\\|summary\\):' | head -1", dir);
	FILE *p = popen(cmd, "r");
	if (p && fgets(line, sizeof(line), p))
		v = strtod(strchr(line, ':') + 1, NULL);
	if (p)
		pclose(p);
	return v;
}

static void bench_callgrind(void)
{
	/* CAPTURE_BENCH_CALLGRIND_DIR=DIR keeps the profiles for callgrind_annotate. */
	const char *keep = getenv("CAPTURE_BENCH_CALLGRIND_DIR");
	char *dir = keep && *keep ? strdup(keep) : tu_path("callgrind"), out[4200], cmd[8400];
	struct guest g;
	struct lat lat = {0};
	uint64_t reqs = 0;

	/* a missing peer breaks the bench: it never reports what it did not measure */
	REQUIRE(run_quiet("valgrind --version >/dev/null 2>&1 && command -v callgrind_control >/dev/null") == 0,
	        "valgrind (callgrind) is not installed (Debian package valgrind; ./quickstart test installs it)");
	mkdir(dir, 0700);
	snprintf(out, sizeof(out), "%s/cg.out", dir);
	setenv("PROFSVC_CALLGRIND", out, 1);
	start_sink(S_STORE, "");
	unsetenv("PROFSVC_CALLGRIND");

	/* halvm: 256 pages = 512 requests, after a warm-up page. */
	struct blkfront *f = new_guest(&g, "xvdp2", &halvm_opts);
	run_halvm(f, 4096, &lat, &reqs);
	usleep(200 * 1000); /* the warm-up's fold not counted */
	snprintf(cmd, sizeof(cmd), "callgrind_control -z %d >/dev/null 2>&1", (int)backend_pid);
	run_quiet(cmd);
	run_halvm(f, 256 * 4096, &lat, &reqs);
	/* the store folds its intake log 1 ms after the guest pauses (20 ms
	 * at most): wait for it, so that the count holds the fold of every
	 * request measured, and no other's, whatever the host's timing */
	usleep(200 * 1000);
	snprintf(cmd, sizeof(cmd), "callgrind_control -d %d >/dev/null 2>&1", (int)backend_pid);
	run_quiet(cmd);
	double t = cg_last_total(dir);
	REQUIRE(t > 0, "callgrind wrote no instruction count for the halvm workload (in %s)", dir);
	cg_halvm = t / (double)reqs;
	end_guest(&g, f);

	/* bulk: 320 requests of 44 KiB, 32 outstanding. */
	struct stream st;
	f = new_guest(&g, "xvdp1", &linux_opts);
	stream_init(&st, f, 32, 88, 32, 0);
	REQUIRE(stream_run(&st, NULL) == 0, "callgrind: bulk warm-up writes failed");
	usleep(200 * 1000);
	snprintf(cmd, sizeof(cmd), "callgrind_control -z %d >/dev/null 2>&1", (int)backend_pid);
	run_quiet(cmd);
	st.total += 320;
	REQUIRE(stream_run(&st, NULL) == 0, "callgrind: bulk writes failed");
	usleep(200 * 1000); /* (as above: writeback and folds done) */
	snprintf(cmd, sizeof(cmd), "callgrind_control -d %d >/dev/null 2>&1", (int)backend_pid);
	run_quiet(cmd);
	t = cg_last_total(dir);
	REQUIRE(t > 0, "callgrind wrote no instruction count for the bulk workload (in %s)", dir);
	cg_bulk = t / 320.0;
	end_guest(&g, f);
	stream_free(&st);
	free(lat.v);
	backend_stop(SIGTERM);
	if (!keep || !*keep) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		run_quiet(cmd);
	}
	free(dir);
}

/* ---- rounds ------------------------------------------------------------------------ */

static void sort3(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* The median of n sorted values. */
static double mid(const double *v, int n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A field of every round: its median, min and max. */
#define FIELD(s, w, field, out)                                   \
	do {                                                      \
		double v_[ROUNDS];                                \
		for (int r_ = 0; r_ < nrounds; r_++)              \
			v_[r_] = figr[r_][s][w].field;            \
		sort3(v_, nrounds);                               \
		(out)[0] = mid(v_, nrounds);                      \
		(out)[1] = v_[0];                                 \
		(out)[2] = v_[nrounds - 1];                       \
	} while (0)

/* fig[][] becomes the rounds' medians (the table and the JSON). */
static void medians(void)
{
	for (int s = 0; s < NSINKS; s++)
		for (int w = 0; w < NWORK; w++) {
			double m[3];
			struct figures *f = &fig[s][w];
			FIELD(s, w, mb_s, m);
			f->mb_s = m[0];
			FIELD(s, w, p50, m);
			f->p50 = m[0];
			FIELD(s, w, p99, m);
			f->p99 = m[0];
			FIELD(s, w, cpu_per_mib, m);
			f->cpu_per_mib = m[0];
			FIELD(s, w, worst_ratio, m);
			f->worst_ratio = m[0];
			FIELD(s, w, p99_max, m);
			f->p99_max = m[0];
		}
}

/* A ratio of two figures, per round: median, min, max (0s when a round
 * did not measure it). */
struct ratio {
	double med, min, max;
	int met;  /* rounds that meet the target */
};

/* The figure at off of every round's figures[s][w] (0 when not measured). */
static double at(int k, int s, int w, size_t off)
{
	return *(const double *)((const char *)&figr[k][s][w] + off);
}

static struct ratio summarize(double v[ROUNDS], double limit, int le)
{
	struct ratio r = {0};
	for (int k = 0; k < nrounds; k++)
		r.met += v[k] > 0 && (le ? v[k] <= limit : v[k] >= limit);
	sort3(v, nrounds);
	r.med = mid(v, nrounds);
	r.min = v[0];
	r.max = v[nrounds - 1];
	return r;
}

static struct ratio ratio_of(int sa, int wa, size_t off, int sb, int wb, size_t offb, double limit, int le)
{
	double v[ROUNDS];
	for (int k = 0; k < nrounds; k++)
		v[k] = at(k, sb, wb, offb) > 0 ? at(k, sa, wa, off) / at(k, sb, wb, offb) : 0;
	return summarize(v, limit, le);
}

static struct ratio value_of(int s, int w, size_t off, double limit, int le)
{
	double v[ROUNDS];
	for (int k = 0; k < nrounds; k++)
		v[k] = at(k, s, w, off);
	return summarize(v, limit, le);
}

/* ---- xsflood: a neighbour's round trips beside a guest flooding xenstore ------------------ */

/* One guest (xvdp1, xvdp2 connected, xvdp3 attached) writes its own
 * xenstore nodes as fast as it can, from its own connection, while an
 * honest HaLVM guest writes one sector at a time.  Three phases per round:
 * quiet; the flood on nodes the backend does not watch (what xensim itself
 * costs on the shared cores); the flood on its frontend state nodes (the
 * backend's watches fire).  The figures are ratios within a round. */
enum { XF_QUIET, XF_HOST, XF_WATCHED, XF_PHASES };
enum { XF_P50, XF_P99, XF_MAX, XF_CPU, XF_EVENTS, XF_FIGS };
static const char *const xf_phase_names[XF_PHASES] = {"quiet", "flood, unwatched nodes", "flood, watched nodes"};
static double xf[ROUNDS][XF_PHASES][XF_FIGS];
static int xf_rounds;

static unsigned long long xf_status_events(void)
{
	char status[16384];
	unsigned long long ev = 0;
	backend_status(status, sizeof(status));
	const char *x = strstr(status, "xenstore events ");
	if (x)
		sscanf(x, "xenstore events %llu", &ev);
	return ev;
}

static void xf_flooder(uint32_t domid, int watched)
{
	struct plat *p;
	struct xs_handle *xs;
	char err[512], nodes[6][128];
	struct plat_opts o = {.kind = PLAT_SIM, .sim_dir = sim.dir, .sim_domid = domid};
	int n = 0;

	if (plat_open(&p, &o, err, sizeof(err)) != 0 || !(xs = plat_xs_open(p)))
		_exit(3);
	if (watched) {
		/* its devices' state nodes (connected: 3 and 4 change nothing),
		 * a node below one, and its trace node */
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/device/vbd/51953/state", domid);
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/device/vbd/51954/state", domid);
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/device/vbd/51955/state", domid);
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/device/vbd/51953/state/x", domid);
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/data/mprof/ring-ref", domid);
	} else {
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/device/vbd/51953/ring-ref", domid);
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/device/vbd/51954/event-channel", domid);
		snprintf(nodes[n++], sizeof(nodes[0]), "/local/domain/%u/data/junk", domid);
	}
	for (unsigned long i = 0;; i++) {
		const char *v = strstr(nodes[i % (unsigned)n], "state") ? (i / (unsigned)n) & 1 ? "4" : "3" : "x";
		xs_write(xs, XBT_NULL, nodes[i % (unsigned)n], v, 1);
	}
}

static void xf_phase(int round, int phase, struct blkfront *f, uint32_t flooder)
{
	struct lat lat = {0};
	pid_t pid = -1;
	int n = quick ? 1500 : 4000;

	if (phase != XF_QUIET) {
		pid = fork();
		REQUIRE(pid >= 0, "fork");
		if (pid == 0)
			xf_flooder(flooder, phase == XF_WATCHED);
		usleep(300000); /* the flood is on */
	}
	unsigned long long ev0 = xf_status_events();
	double c0 = backend_cpu_s(), t0 = now();
	for (int i = 0; i < n; i++) {
		double t = now();
		REQUIRE(write_seeded(f, (uint64_t)(i % 512) * 8 + 8, 8, (uint64_t)i) == 0, "neighbour write %d", i);
		lat_add(&lat, (now() - t) * 1e6);
	}
	double wall = now() - t0, cpu = backend_cpu_s() - c0;
	unsigned long long ev1 = xf_status_events();
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	xf[round][phase][XF_P50] = pct(&lat, 0.50);
	xf[round][phase][XF_P99] = pct(&lat, 0.99);
	xf[round][phase][XF_MAX] = pct(&lat, 1.0);
	xf[round][phase][XF_CPU] = cpu / wall * 100;
	xf[round][phase][XF_EVENTS] = (double)(ev1 - ev0) / wall;
	free(lat.v);
	usleep(300000); /* what the flood left queued is gone */
}

static void bench_xsflood(int round)
{
	struct guest g, h;
	struct blkfront *f = new_guest(&g, "xvdp2", &halvm_opts);
	char name[64];
	snprintf(name, sizeof(name), "bench-%d", ++guest_seq);
	guest_new(&h, name, "vdev=xvdp1 vdev=xvdp2 vdev=xvdp3");
	struct blkfront *h1 = connect_dev(&h, "xvdp1", &halvm_opts), *h2 = connect_dev(&h, "xvdp2", &halvm_opts);
	REQUIRE(h1 && h2, "the flooder's devices connect");
	for (int phase = 0; phase < XF_PHASES; phase++)
		xf_phase(round, phase, f, h.domid);
	blkfront_close(h1, 1);
	blkfront_close(h2, 1);
	destroy_domain(h.domid);
	guest_free(&h);
	end_guest(&g, f);
	xf_rounds = round + 1;
}

static void report_xsflood(FILE *j)
{
	static const char *const fig_names[XF_FIGS] = {"p50 us", "p99 us", "max us", "backend CPU %",
	                                               "xs events/s"};
	double v[ROUNDS];
	printf("\nxenstore flood: an honest HaLVM guest's 4 KiB writes beside a guest writing its own\n"
	       "xenstore nodes as fast as it can (median, then min-max, of %d rounds)\n\n", xf_rounds);
	for (int p = 0; p < XF_PHASES; p++) {
		printf("  %-24s", xf_phase_names[p]);
		for (int k = 0; k < XF_FIGS; k++) {
			for (int r = 0; r < nrounds; r++)
				v[r] = r < xf_rounds ? xf[r][p][k] : 0;
			sort3(v, xf_rounds);
			printf("  %s %.1f (%.1f-%.1f)", fig_names[k], mid(v, xf_rounds), v[0], v[xf_rounds - 1]);
		}
		printf("\n");
	}
	static const char *const rname[] = {"p99 watched flood / unwatched flood", "p99 watched flood / quiet",
	                                    "max watched flood / unwatched flood"};
	double med[3] = {0};
	for (int q = 0; q < 3; q++) {
		for (int r = 0; r < xf_rounds; r++) {
			double *w = xf[r][XF_WATCHED];
			v[r] = q == 0 ? w[XF_P99] / xf[r][XF_HOST][XF_P99]
			       : q == 1 ? w[XF_P99] / xf[r][XF_QUIET][XF_P99]
			                : w[XF_MAX] / xf[r][XF_HOST][XF_MAX];
		}
		sort3(v, xf_rounds);
		med[q] = mid(v, xf_rounds);
		printf("  %-40s %6.2f (%.2f-%.2f)%s\n", rname[q], med[q], v[0], v[xf_rounds - 1],
		       q == 0 ? (med[q] <= 1.5 ? "  (<= 1.50) met" : "  (<= 1.50) MISSED") : "  (for reference)");
	}
	if (j)
		fprintf(j, "{\"xsflood\":{\"p99_watched_over_unwatched\":%.3f,\"p99_watched_over_quiet\":%.3f,"
		           "\"max_watched_over_unwatched\":%.3f,\"rounds\":%d}}\n", med[0], med[1], med[2], xf_rounds);
}

/* ---- report ------------------------------------------------------------------------ */

/* One target line: the median of the rounds with their range, met when
 * the median meets it, and in how many rounds it held.  A figure this run did not measure
 * (--only, --workload) is "n/a".  limit 0: shown for reference. */
static void target(const char *label, struct ratio r, double limit, int le)
{
	printf("  %-46s", label);
	if (!isfinite(r.med) || r.min <= 0)
		printf("   n/a  (not measured in this run)\n");
	else if (limit <= 0)
		printf("%6.2f (%.2f-%.2f)  (for reference)\n", r.med, r.min, r.max);
	else
		printf("%6.2f (%.2f-%.2f)  (%s %.2f)  %s, in %d of %d rounds\n", r.med, r.min, r.max,
		       le ? "<=" : ">=", limit, (le ? r.med <= limit : r.med >= limit) ? "met" : "MISSED",
		       r.met, nrounds);
}

static const char *verdict(double v, double limit, int le)
{
	return (le ? v <= limit : v >= limit) ? "met" : "MISSED";
}

static void report(FILE *j)
{
	static const char *const wname[NWORK] = {"halvm", "bulk 32 x 44 KiB", "bulk 8 x 1 MiB indirect",
	                                         "fleet 64 guests x 2 devices",
	                                         "single guest, same window as the fleet"};
	printf("\ncapture benchmark: guest blkfront -> xensim -> profile-backend -> sink, every sink\n"
	       "measured in this run (%s); medians of %d rounds\n\n", quick ? "--quick" : "full size", nrounds);
	printf("%-34s", "");
	for (int s = 0; s < NSINKS; s++)
		printf(" %11s", sink_names[s]);
	printf("\n");
#define ROW(label, expr)                                     \
	do {                                                 \
		printf("%-34s", label);                      \
		for (int s = 0; s < NSINKS; s++)             \
			printf(" %11.1f", (double)(expr));   \
		printf("\n");                                \
	} while (0)
	ROW("halvm round trip p50 (us)", fig[s][W_HALVM].p50);
	ROW("halvm round trip p99 (us)", fig[s][W_HALVM].p99);
	ROW("halvm profile MB/s", fig[s][W_HALVM].mb_s);
	ROW("bulk 32 x 44 KiB MB/s", fig[s][W_BULK44].mb_s);
	ROW("bulk 8 x 1 MiB indirect MB/s", fig[s][W_BULK1M].mb_s);
	char fl_label[64], rss_label[64];
	snprintf(fl_label, sizeof(fl_label), "fleet %dx2 aggregate MB/s", FLEET_GUESTS);
	snprintf(rss_label, sizeof(rss_label), "backend RSS MiB, %d devices busy", FLEET_GUESTS * 2);
	ROW(fl_label, fig[s][W_FLEET].mb_s);
	ROW("1 guest, same window, MB/s", fig[s][W_SINGLE].mb_s);
	ROW("fleet per-guest p50 (us, median)", fig[s][W_FLEET].p50);
	ROW("fleet per-guest p99 (us, worst)", fig[s][W_FLEET].p99_max);
	ROW("fleet worst guest p99/p50", fig[s][W_FLEET].worst_ratio);
	ROW("backend CPU ms/MiB, halvm", fig[s][W_HALVM].cpu_per_mib * 1e3);
	ROW("backend CPU ms/MiB, bulk 44 KiB", fig[s][W_BULK44].cpu_per_mib * 1e3);
	ROW(rss_label, rss_fleet_kib[s] / 1024);
	ROW("  of which private (RssAnon)", anon_fleet_kib[s] / 1024);
	ROW("  of which guest memory (RssShmem)", shmem_fleet_kib[s] / 1024);
#undef ROW

#define P50 offsetof(struct figures, p50)
#define P99 offsetof(struct figures, p99)
#define MBS offsetof(struct figures, mb_s)
	printf("\nround trips per round (us; median, then min-max, of %d rounds):\n", nrounds);
	for (int s = 0; s < NSINKS; s++) {
		double a[3], b[3];
		FIELD(s, W_HALVM, p50, a);
		FIELD(s, W_HALVM, p99, b);
		if (a[0] > 0)
			printf("  %-12s halvm p50 %7.1f (%.1f-%.1f)   p99 %7.1f (%.1f-%.1f)\n", sink_names[s], a[0], a[1],
			       a[2], b[0], b[1], b[2]);
	}
	struct ratio h_raw = ratio_of(S_STORE, W_HALVM, P50, S_RAW, W_HALVM, P50, 1.05, 1);
	struct ratio h99_raw = ratio_of(S_STORE, W_HALVM, P99, S_RAW, W_HALVM, P99, 1.5, 1);
	struct ratio h_rawd = ratio_of(S_STORE, W_HALVM, P50, S_RAW_DIRECT, W_HALVM, P50, 0, 1);
	struct ratio h_null = ratio_of(S_STORE, W_HALVM, P50, S_NULL, W_HALVM, P50, 2.0, 1);
	struct ratio h_sql = ratio_of(S_STORE, W_HALVM, P50, S_STORE_SQL, W_HALVM, P50, 0, 1);
	struct ratio b_raw = ratio_of(S_STORE, W_BULK44, MBS, S_RAW, W_BULK44, MBS, 0.8, 0);
	struct ratio b1_raw = ratio_of(S_STORE, W_BULK1M, MBS, S_RAW, W_BULK1M, MBS, 0.8, 0);
	struct ratio fl = ratio_of(S_STORE, W_FLEET, MBS, S_STORE, W_SINGLE, MBS, 0.9, 0);
	struct ratio fr = value_of(S_STORE, W_FLEET, offsetof(struct figures, worst_ratio), 3.0, 1);
	/* The daemon's own memory: RssShmem is xensim's guest memory, mapped
	 * for grant copies (on Xen a grant copy maps nothing). */
	double rss_max = 0;
	for (int s = 0; s < NSINKS; s++) {
		double own = rss_fleet_kib[s] - shmem_fleet_kib[s];
		rss_max = own > rss_max ? own : rss_max;
	}
	double growth = rss_over[RSS_SAMPLES - 1] - rss_over[1];

	printf("\ntargets (ratios within each round; store = --durability process)\n");
	target("halvm round trip p50, store / raw", h_raw, 1.05, 1);
	target("halvm round trip p99, store / raw", h99_raw, 1.5, 1);
	target("halvm round trip p50, store / null", h_null, 2.0, 1);
	target("halvm round trip p50, store / raw-direct", h_rawd, 0, 1);
	target("halvm round trip p50, store / store-sql", h_sql, 0, 1);
	target("bulk 44 KiB MB/s, store / raw", b_raw, 0.8, 0);
	target("bulk 1 MiB MB/s, store / raw", b1_raw, 0.8, 0);
	target("fleet aggregate / single guest, same window", fl, 0.9, 0);
	target("fleet worst guest p99 / p50", fr, 3.0, 1);
	struct ratio rss_r = {rss_max / 1024, rss_max / 1024, rss_max / 1024, rss_max / 1024 <= 32 ? nrounds : 0};
	snprintf(rss_label, sizeof(rss_label), "backend RSS MiB, %d busy devices, own (max)", FLEET_GUESTS * 2);
	target(rss_label, rss_r, 32, 1);
	if (rss_at[RSS_SAMPLES - 1] > 0) {
		printf("  backend RSS over %llu requests, MiB:",
		       (unsigned long long)rss_at[RSS_SAMPLES - 1]);
		for (int k = 0; k < RSS_SAMPLES; k++)
			printf(" %.1f", rss_over[k] / 1024);
		printf("  (growth after warm-up %.1f MiB: %s)\n", growth / 1024,
		       verdict(growth / 1024, 1.0, 1));
	} else {
		printf("  %-46s   n/a  (not measured in this run)\n", "backend RSS over 1M requests");
	}
	if (cg_halvm > 0)
		printf("  instructions per request (callgrind, store): halvm %.0f, bulk 44 KiB %.0f\n",
		       cg_halvm, cg_bulk);

	if (!j)
		return;
	fprintf(j, "{\"sinks\":{");
	for (int s = 0; s < NSINKS; s++) {
		fprintf(j, "%s\n \"%s\":{", s ? "," : "", sink_names[s]);
		for (int w = 0; w < NWORK; w++) {
			struct figures *f = &fig[s][w];
			fprintf(j, "%s\"%s\":{\"mb_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
			           "\"cpu_ms_per_mib\":%.3f,\"requests\":%llu%s",
			        w ? "," : "", wname[w], f->mb_s, f->p50, f->p99, f->cpu_per_mib * 1e3,
			        (unsigned long long)f->requests, w == W_FLEET ? "" : "}");
			if (w == W_FLEET)
				fprintf(j, ",\"worst_p99_over_p50\":%.2f}", f->worst_ratio);
		}
		fprintf(j, ",\"rss_kib_128_devices\":%.0f,\"rss_anon_kib\":%.0f,\"rss_guest_shmem_kib\":%.0f}",
		        rss_fleet_kib[s], anon_fleet_kib[s], shmem_fleet_kib[s]);
	}
	fprintf(j, "\n},\"ratios\":{\"halvm_store_over_raw\":%.3f,\"halvm_store_over_null\":%.3f,"
	           "\"halvm_store_over_raw_direct\":%.3f,\"bulk44_store_over_raw\":%.3f,"
	           "\"bulk1m_store_over_raw\":%.3f,\"fleet_over_single\":%.3f,"
	           "\"fleet_worst_p99_over_p50\":%.3f,\"halvm_p99_store_over_raw\":%.3f,"
	           "\"halvm_store_over_store_sql\":%.3f,\"rounds\":%d},",
	        h_raw.med, h_null.med, h_rawd.med, b_raw.med, b1_raw.med, fl.med, fr.med, h99_raw.med, h_sql.med, nrounds);
	fprintf(j, "\"rss_kib_over_requests\":[");
	for (int k = 0; k < RSS_SAMPLES; k++)
		fprintf(j, "%s[%llu,%.0f]", k ? "," : "", (unsigned long long)rss_at[k], rss_over[k]);
	fprintf(j, "],\"instructions_per_request\":{\"halvm\":%.0f,\"bulk44\":%.0f}}\n", cg_halvm,
	        cg_bulk);
}

static char logpath[4200];
static int saved_stderr = -1, finished_ok;

static void show_log_on_failure(void)
{
	char cmd[4400];
	if (finished_ok || saved_stderr < 0)
		return;
	dup2(saved_stderr, 1);
	dup2(saved_stderr, 2);
	fprintf(stderr, "capture_bench failed; the end of %s:\n", logpath);
	snprintf(cmd, sizeof(cmd), "tail -40 '%s' >&2", logpath);
	if (system(cmd) != 0)
		fprintf(stderr, "(cannot show it)\n");
}

int main(int argc, char **argv)
{
	const char *json = NULL, *only = NULL, *only_work = NULL;
	int no_callgrind = 0, keep_log = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--no-callgrind"))
			no_callgrind = 1;
		else if (!strcmp(argv[i], "--keep-log"))
			keep_log = 1;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--workload") && i + 1 < argc)
			only_work = argv[++i];
		else {
			fprintf(stderr, "usage: capture_bench [--quick] [--no-callgrind] [--keep-log] "
			                "[--only SINK] [--workload halvm|bulk|fleet|xsflood] [--json FILE]\n");
			return 2;
		}
	}
	double t_start = now();
	bench_host_print("capture_bench");
	/* The store, the raw images and the baseline share one filesystem:
	 * $TMPDIR, else /var/tmp (a disk, where /tmp may be tmpfs). */
	if (!getenv("TMPDIR") || !*getenv("TMPDIR"))
		setenv("TMPDIR", "/var/tmp", 1);
	signal(SIGPIPE, SIG_IGN);
	if (quick) /* few rounds, a smaller fleet, shorter windows */
		nrounds = 2, FLEET_GUESTS = 16;
	if (getenv("CAPTURE_BENCH_FLEET")) {
		FLEET_GUESTS = atoi(getenv("CAPTURE_BENCH_FLEET"));
		FLEET_GUESTS = FLEET_GUESTS < 1 ? 1 : FLEET_GUESTS > FLEET_MAX ? FLEET_MAX : FLEET_GUESTS;
	}
	/* The daemons log every guest; that goes to a file, the table to
	 * stdout, and a failure shows the end of the log. */
	snprintf(logpath, sizeof(logpath), "%s/profsvc-capture-bench.log", getenv("TMPDIR"));
	int logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd >= 0) {
		saved_stderr = dup(2);
		dup2(logfd, 2);
		close(logfd);
		atexit(show_log_on_failure);
	}
	harness_start();
	snprintf(rawdir, sizeof(rawdir), "%s/raw", tu_tmpdir());
	mkdir(rawdir, 0700);

	if (only_work && !strcmp(only_work, "xsflood")) {
		for (int round = 0; round < nrounds; round++) {
			printf("capture_bench: round %d of %d, xenstore flood ...\n", round + 1, nrounds);
			fflush(stdout);
			start_sink(S_STORE, "");
			bench_xsflood(round);
			backend_stop(SIGTERM);
		}
		FILE *j = json ? fopen(json, "w") : NULL;
		report_xsflood(j);
		if (j)
			fclose(j);
		rmdir(rawdir);
		harness_stop();
		int rc = tu_finish("capture_bench");
		finished_ok = rc == 0;
		if (finished_ok && !keep_log)
			unlink(logpath);
		return rc;
	}
	double rss_max[NSINKS] = {0};
	for (int round = 0; round < nrounds; round++)
	for (int s = 0; s < NSINKS; s++) {
		if ((only && strcmp(only, sink_names[s])) || (only_work && !strcmp(only_work, "callgrind")))
			continue;
		printf("capture_bench: %4.0f s: round %d of %d, sink %s ...\n", now() - t_start, round + 1, nrounds,
		       sink_names[s]);
		fflush(stdout);
		start_sink(s, "");
		if (!only_work || !strcmp(only_work, "halvm")) {
			settle();
			bench_halvm(s);
		}
		if (!only_work || !strcmp(only_work, "bulk")) {
			settle();
			bench_bulk(s, W_BULK44, 32, 88, (quick ? 32u : 256u) << 20);
			settle();
			bench_bulk(s, W_BULK1M, 8, 2048, (quick ? 32u : 256u) << 20);
		}
		clean_rawdir();
		if (!only_work || !strcmp(only_work, "fleet")) {
			settle();
			bench_fleet(s, W_FLEET, FLEET_GUESTS, 2);
			rss_max[s] = rss_fleet_kib[s] > rss_max[s] ? rss_fleet_kib[s] : rss_max[s];
			settle();
			bench_fleet(s, W_SINGLE, 1, 1);
		}
		backend_stop(SIGTERM);
		clean_rawdir();
		memcpy(figr[round][s], fig[s], sizeof(fig[s]));
	}
	medians();
	for (int s = 0; s < NSINKS; s++)
		if (rss_max[s] > 0)
			rss_fleet_kib[s] = rss_max[s];
	if (only_work && !strcmp(only_work, "callgrind"))
		bench_callgrind();
	if (!only && !only_work) {
		printf("capture_bench: %4.0f s: backend memory over %s requests ...\n", now() - t_start,
		       quick ? "40k" : "1M");
		fflush(stdout);
		start_sink(S_STORE, "");
		bench_rss_long();
		backend_stop(SIGTERM);
		if (!no_callgrind) {
			printf("capture_bench: %4.0f s: instructions per request (callgrind) ...\n", now() - t_start);
			fflush(stdout);
			bench_callgrind();
		}
	}
	FILE *j = json ? fopen(json, "w") : NULL;
	report(j);
	if (j) {
		fclose(j);
		printf("wrote %s\n", json);
	}
	rmdir(rawdir);
	harness_stop();
	int rc = tu_finish("capture_bench");
	finished_ok = rc == 0;
	if (finished_ok && !keep_log)
		unlink(logpath);
	else if (keep_log)
		printf("daemon log: %s\n", logpath);
	return rc;
}
