/*
 * stub.c - `frontend-stub`: a guest on the platform seam that behaves like
 * the HaLVM profiling writer (halvm), like Linux blkfront (linux), or like
 * a broken or hostile guest (hostile, in stub_hostile.c).
 *
 *   frontend-stub --mode halvm --domid N --prof FILE --hp FILE [--eventlog FILE]
 *                 [--crash-at BYTES | --crash-random SEED] [--word-size 8|4]
 *                 [--reference DIR] [--pace MS] [--sample-log FILE] [--flush-log FILE]
 * --sample-log: each heap sample's number and the CLOCK_MONOTONIC time (ns)
 * its flush was acknowledged, for make bench's live latency; --flush-log
 * the same for each eventlog buffer: the bytes written so far and the time
 *   frontend-stub --mode linux --domid N [--vdev xvdb] [--requests N] [--seed S]
 *   frontend-stub --mode hostile --domid N [--vdev xvdc] [--seed S]
 *   frontend-stub --mode mirage --domid N [--pages P] [--events N] [--rate R]
 *                 [--crash-at EVENT] [--event-log FILE] [--withdraw]
 * common: [--platform sim|xen] [--sim-dir DIR] [-q]
 *
 * On xensim the stub is the domain N it names (created by
 * `profile-backend create` or `xensim create` + `profile-backend attach`):
 * destroying that domain kills the stub, as a crash would.  A halvm
 * --crash-* run stops dead and has the toolstack destroy its domain, as
 * xl does for a crashed guest (on_crash = destroy).
 *
 * This file: the command line and the halvm and linux modes.  May call:
 * the other modes (stub_modes.h), what the modes share (stub_ctx.c),
 * blkfront (blkfront.c), the HaLVM writer (halvm_writer.c), the platform
 * seam, util/grow.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>

#include <xen/io/blkif.h>

#include "util/grow.h"
#include "blkfront.h"
#include "halvm_writer.h"
#include "stub_ctx.h"
#include "stub_modes.h"

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, r;
	uint8_t *buf = malloc(cap);

	if (!f || !buf) {
		fprintf(stderr, "frontend-stub: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap && GROW(buf, cap, cap + 1) != 0) {
			free(buf);
			fclose(f);
			return NULL;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

/* ---- halvm --------------------------------------------------------------------- */

struct hfile {
	struct blkfront *f;     /* NULL: the file is not written */
	struct halvm_writer w;
	int ref_fd;             /* the reference raw image, or -1 */
	uint64_t requests;
	const char *vdev;
};

/* The files a HaLVM guest writes, one disk each. */
#define HALVM_FILES 3

struct halvm_guest {
	struct hfile prof, hp, ev; /* xvdp1, xvdp2, xvdp3 (GHC's eventlog) */
	uint64_t next_id;       /* one counter for both files, from 1 */
	int failed;
};

static struct halvm_guest *the_guest;

static int halvm_submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct hfile *h = ctx;
	struct halvm_guest *g = the_guest;
	struct bf_req r = {.op = BLKIF_OP_WRITE, .sector = sector, .nsect = nsect, .buf = (void *)data,
	                   .wire_id = g->next_id++};

	if (h->ref_fd >= 0 && pwrite(h->ref_fd, data, (size_t)nsect * 512, (off_t)(sector * 512)) < 0) {
		fprintf(stderr, "frontend-stub: reference image: %s\n", strerror(errno));
		return -1;
	}
	h->requests++;
	/* One request outstanding: push, notify, wait for this id. */
	int st = blkfront_do(h->f, &r, 30000);
	if (st == BF_BACKEND_CLOSED) {
		printf("PROFILING: the disk went away (its backend closed it)\n");
		g->failed = 1;
		return -1;
	}
	if (st != BLKIF_RSP_OKAY) {
		printf("PROFILING: Block write failed!\n");
		g->failed = 1;
		return -1;
	}
	return 0;
}

/* Appends up to `budget` bytes of the file; 1 if the budget ran out. */
static int append_budget(struct hfile *h, const uint8_t *data, size_t len, uint64_t *budget)
{
	if (*budget < len) {
		halvm_writer_append(&h->w, data, (size_t)*budget);
		*budget = 0;
		return 1;
	}
	*budget -= len;
	return halvm_writer_append(&h->w, data, len) ? -1 : 0;
}

/* The heap profile during the run: flushed after every END_SAMPLE. */
static int replay_hp(struct hfile *h, const uint8_t *hp, size_t len, uint64_t *budget,
                     const struct stub_ctx *c)
{
	static const char mark[] = "END_SAMPLE";
	size_t pos = 0;
	uint64_t samples = 0;

	while (pos < len) {
		size_t next = len;
		int sample_end = 0;
		for (size_t i = pos; i + sizeof(mark) - 1 <= len; i++)
			if ((i == 0 || hp[i - 1] == '\n') && !memcmp(hp + i, mark, sizeof(mark) - 1)) {
				const uint8_t *nl = memchr(hp + i, '\n', len - i);
				next = nl ? (size_t)(nl - hp) + 1 : len;
				sample_end = 1;
				break;
			}
		int rc = append_budget(h, hp + pos, next - pos, budget);
		if (rc)
			return rc;
		pos = next;
		if (sample_end && halvm_writer_flush(&h->w))
			return -1;
		if (sample_end && c->sample_log) { /* acknowledged: the backend committed it */
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			fprintf(c->sample_log, "%llu %lld\n", (unsigned long long)samples++,
			        (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
			fflush(c->sample_log);
		}
		if (sample_end && c->pace_ms) /* the program runs on until its next sample */
			usleep(c->pace_ms * 1000u);
	}
	return 0;
}

/* GHC's eventlog during the run (+RTS -l): flushed after every
 * HALVM_EVENTLOG_FLUSH_BYTES, as halvm_writer_replay writes it; with
 * --pace, the program runs on for that long after each flush. */
static int replay_eventlog(struct hfile *h, const uint8_t *ev, size_t len, uint64_t *budget,
                           const struct stub_ctx *c)
{
	for (size_t pos = 0; pos < len;) {
		size_t n = len - pos < HALVM_EVENTLOG_FLUSH_BYTES ? len - pos : HALVM_EVENTLOG_FLUSH_BYTES;
		int rc = append_budget(h, ev + pos, n, budget);
		if (rc)
			return rc;
		pos += n;
		if (halvm_writer_flush(&h->w))
			return -1;
		if (c->flush_log) { /* acknowledged: the backend committed it */
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			fprintf(c->flush_log, "%zu %lld\n", pos, (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
			fflush(c->flush_log);
		}
		if (c->pace_ms && pos < len)
			usleep(c->pace_ms * 1000u);
	}
	return 0;
}

static int open_ref(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 64 << 20) != 0) {
		fprintf(stderr, "frontend-stub: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Opens the devices of the files the guest writes (and their reference
 * images), each with its HaLVM writer. */
static int halvm_open(struct halvm_guest *g, struct hfile *const files[HALVM_FILES], struct stub_ctx *c)
{
	/* HaLVM's blkfront waits for its backend as long as it takes; 60 s
	 * keeps a test bounded while a backend restarts again and again (a
	 * sanitized backend on a loaded machine once needed more than 10). */
	struct blkfront_opts o = {.halvm = 1, .data_pages = 1, .timeout_ms = 60000};
	char err[512];

	for (int i = 0; i < HALVM_FILES; i++) {
		struct hfile *h = files[i];
		if (!h)
			continue;
		if (blkfront_open(&h->f, c->plat, c->xs, h->vdev, &o, err, sizeof(err)) != 0) {
			fprintf(stderr, "frontend-stub: %s: %s\n", h->vdev, err);
			return -1;
		}
		const char *ref = h == &g->prof ? "prof.disk" : h == &g->hp ? "hp.disk" : "eventlog.disk";
		if (c->reference && (h->ref_fd = open_ref(c->reference, ref)) < 0)
			return -1;
		halvm_writer_init(&h->w, c->word_size, halvm_submit, h);
	}
	return 0;
}

/* The bytes of each file the guest writes (NULL: not written). */
struct halvm_input {
	uint8_t *prof, *hp, *ev;
	size_t plen, hlen, elen;
};

/* The program's run: the eventlog grows buffer by buffer, then the heap
 * profile sample by sample; at exit GHC writes the .prof and closes every
 * file.  -1 failed, 0 closed, 1 crashed (the budget ran out). */
static int halvm_write(struct halvm_guest *g, const struct halvm_input *in, uint64_t *budget,
                       const struct stub_ctx *c)
{
	const uint8_t *prof = in->prof, *hp = in->hp;
	size_t plen = in->plen, hlen = in->hlen;
	int crashed = 0;
	if (in->ev) {
		int r = replay_eventlog(&g->ev, in->ev, in->elen, budget, c);
		if (r < 0)
			return -1;
		crashed = r == 1;
	}
	if (!crashed && hp) {
		int r = replay_hp(&g->hp, hp, hlen, budget, c);
		if (r < 0)
			return -1;
		crashed = r == 1;
	}
	if (!crashed && prof) {
		int r = append_budget(&g->prof, prof, plen, budget);
		if (r < 0)
			return -1;
		crashed = r == 1;
		if (!crashed && halvm_writer_close(&g->prof.w))
			return -1;
	}
	if (!crashed && hp && halvm_writer_close(&g->hp.w))
		return -1;
	if (!crashed && in->ev && halvm_writer_close(&g->ev.w))
		return -1;
	return crashed;
}

/* A crash as asked: stop dead, no close; on xensim the toolstack destroys
 * the domain. */
static _Noreturn void halvm_crash(struct stub_ctx *c, struct hfile *const files[HALVM_FILES], uint64_t total)
{
	uint64_t done = 0;
	for (int i = 0; i < HALVM_FILES; i++)
		done += files[i] ? files[i]->w.size : 0;
	stub_say("crashed after %llu of %llu bytes, as asked (no close)", (unsigned long long)done,
	         (unsigned long long)total);
	for (int i = 0; i < HALVM_FILES; i++)
		if (files[i] && files[i]->ref_fd >= 0)
			close(files[i]->ref_fd);
	fflush(stdout);
	if (c->kind == PLAT_SIM)
		stub_destroy_self(c); /* kills us */
	_exit(0);
}

static int run_halvm(struct stub_ctx *c)
{
	struct halvm_guest g = {.next_id = 1};
	struct halvm_input in = {0};
	in.prof = c->prof ? read_file(c->prof, &in.plen) : NULL;
	in.hp = c->hp ? read_file(c->hp, &in.hlen) : NULL;
	in.ev = c->eventlog ? read_file(c->eventlog, &in.elen) : NULL;
	uint8_t *prof = in.prof, *hp = in.hp;
	size_t plen = in.plen, hlen = in.hlen;
	int rc = 1;

	g.prof.ref_fd = g.hp.ref_fd = g.ev.ref_fd = -1;
	if ((c->prof && !prof) || (c->hp && !hp) || (c->eventlog && !in.ev))
		goto out;
	the_guest = &g;
	g.prof.vdev = "xvdp1";
	g.hp.vdev = "xvdp2";
	g.ev.vdev = "xvdp3";
	struct hfile *files[HALVM_FILES] = {hp ? &g.hp : NULL, prof ? &g.prof : NULL, in.ev ? &g.ev : NULL};
	if (halvm_open(&g, files, c) != 0)
		goto out;
	uint64_t total = plen + hlen + in.elen;
	uint64_t budget = c->crash_at;
	if (c->crash_random) {
		uint64_t s = c->crash_seed;
		budget = stub_rand(&s) % (total + 1);
	}
	stub_say("halvm guest %u: %s%s%s%s%s (%llu bytes)%s", c->domid, in.ev ? "eventlog" : "",
	         in.ev && (hp || prof) ? " and " : "", hp ? "heap profile" : "", hp && prof ? " and " : "",
	         prof ? "time profile" : "", (unsigned long long)total, budget != UINT64_MAX ? ", will crash" : "");
	int w = halvm_write(&g, &in, &budget, c);
	if (w < 0)
		goto out;
	if (w == 1)
		halvm_crash(c, files, total);
	stub_say("done: .prof %llu bytes in %llu requests, .hp %llu bytes in %llu requests",
	         (unsigned long long)plen, (unsigned long long)g.prof.requests,
	         (unsigned long long)hlen, (unsigned long long)g.hp.requests);
	if (in.ev)
		stub_say("done: eventlog %llu bytes in %llu requests", (unsigned long long)in.elen,
		         (unsigned long long)g.ev.requests);
	rc = 0;
out:
	for (int i = 0; i < HALVM_FILES; i++) {
		struct hfile *h = i == 0 ? &g.hp : i == 1 ? &g.prof : &g.ev;
		if (h->f)
			blkfront_close(h->f, 0); /* HaLVM never closes the device */
		if (h->ref_fd >= 0)
			close(h->ref_fd);
	}
	free(prof);
	free(hp);
	free(in.ev);
	return g.failed ? 1 : rc;
}

/* ---- linux ----------------------------------------------------------------------- */

#define MAX_SLOTS 1024      /* 1 MiB regions of the disk the test uses */
#define REGION_SECT 2048u

/* A linux guest's disk as it should read, and its requests in flight. */
struct linux_run {
	struct blkfront *f;
	uint64_t rng;
	int regions, depth;
	uint8_t *model, *written;
	struct bf_req reqs[32];
	uint8_t *bufs[32];
	int busy_region[32], region_busy[MAX_SLOTS];
	uint64_t issued, completed;
	int errors, verified;
};

/* Request slot i's next request, on a free region; that region. */
static int linux_make(struct linux_run *l, int i)
{
	int region;
	do
		region = (int)(stub_rand(&l->rng) % (uint64_t)l->regions);
	while (l->region_busy[region]);
	uint32_t kind = (uint32_t)(stub_rand(&l->rng) % 10);
	uint32_t nsect = kind < 6 ? 1 + (uint32_t)(stub_rand(&l->rng) % 88)      /* direct */
	               : kind < 8 ? 89 + (uint32_t)(stub_rand(&l->rng) % 1959) /* indirect */
	                          : 1 + (uint32_t)(stub_rand(&l->rng) % 64);
	uint32_t off = (uint32_t)(stub_rand(&l->rng) % (REGION_SECT - nsect + 1));
	uint64_t sector = (uint64_t)region * REGION_SECT + off;
	uint8_t op = kind == 9 ? BLKIF_OP_READ : kind == 8 ? BLKIF_OP_FLUSH_DISKCACHE : BLKIF_OP_WRITE;
	l->reqs[i] = (struct bf_req){.op = op, .sector = sector, .nsect = op == BLKIF_OP_FLUSH_DISKCACHE ? 0 : nsect,
	                             .buf = l->bufs[i]};
	if (op == BLKIF_OP_WRITE)
		for (uint32_t k = 0; k < nsect * 512; k += 8) {
			uint64_t v = stub_rand(&l->rng);
			memcpy(l->bufs[i] + k, &v, 8);
		}
	return region;
}

/* Keep up to 32 requests outstanding, on distinct regions so their order
 * does not matter. */
static void linux_issue(struct linux_run *l, uint64_t requests)
{
	for (int i = 0; i < l->depth && l->issued < requests; i++) {
		if (!l->reqs[i].done || l->busy_region[i] >= 0)
			continue;
		int region = linux_make(l, i);
		if (blkfront_queue(l->f, &l->reqs[i]) != 0) {
			l->reqs[i].done = 1;
			break; /* pool full: wait for some */
		}
		l->busy_region[i] = region;
		l->region_busy[region] = 1;
		l->issued++;
	}
}

/* A response: a write goes into the model, a read is checked against it. */
static void linux_complete(struct linux_run *l, struct bf_req *r)
{
	int i = (int)(r - l->reqs);
	l->completed++;
	if (r->status != BLKIF_RSP_OKAY) {
		l->errors++;
	} else if (r->op == BLKIF_OP_WRITE) {
		memcpy(l->model + r->sector * 512, r->buf, (size_t)r->nsect * 512);
		memset(l->written + r->sector, 1, r->nsect);
	} else if (r->op == BLKIF_OP_READ) {
		/* What we wrote reads back; what we never wrote reads zero. */
		if (memcmp(l->model + r->sector * 512, r->buf, (size_t)r->nsect * 512) != 0) {
			fprintf(stderr, "frontend-stub: read of sector %llu (+%u) differs from what was "
			                "written\n",
			        (unsigned long long)r->sector, r->nsect);
			l->errors++;
		} else {
			l->verified++;
		}
	}
	l->region_busy[l->busy_region[i]] = 0;
	l->busy_region[i] = -1;
}

/* Read everything back at the end. */
static void linux_read_back(struct linux_run *l)
{
	for (int region = 0; region < l->regions; region++) {
		struct bf_req r = {.op = BLKIF_OP_READ, .sector = (uint64_t)region * REGION_SECT,
		                   .nsect = REGION_SECT, .buf = l->bufs[0]};
		if (blkfront_do(l->f, &r, 30000) != BLKIF_RSP_OKAY ||
		    memcmp(l->bufs[0], l->model + (size_t)region * REGION_SECT * 512, REGION_SECT * 512u) != 0) {
			fprintf(stderr, "frontend-stub: region %d does not read back\n", region);
			l->errors++;
		}
	}
}

static int run_linux(struct stub_ctx *c)
{
	struct blkfront_opts o = {.ring_order = 2, .protocol = "x86_64-abi", .data_pages = 2048};
	char err[512];
	int rc = 1;
	struct linux_run *l = calloc(1, sizeof(*l));
	if (!l)
		return 1;
	l->rng = c->seed;
	l->regions = c->span_mb;
	/* Outstanding requests use distinct regions: no more of them than regions. */
	l->depth = l->regions < 32 ? l->regions : 32;
	l->model = calloc((size_t)l->regions, REGION_SECT * 512u);
	l->written = calloc((size_t)l->regions, REGION_SECT);

	if (!l->model || !l->written)
		goto out;
	if (blkfront_open(&l->f, c->plat, c->xs, c->vdev ? c->vdev : "xvdb", &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "frontend-stub: %s\n", err);
		goto out;
	}
	for (int i = 0; i < 32; i++) {
		l->bufs[i] = malloc(REGION_SECT * 512u);
		l->busy_region[i] = -1;
		l->reqs[i].done = 1;
	}
	stub_say("linux guest %u: %llu requests on %s over %d MiB, up to 32 outstanding", c->domid,
	         (unsigned long long)c->requests, c->vdev ? c->vdev : "xvdb", l->regions);
	while (l->completed < c->requests) {
		linux_issue(l, c->requests);
		blkfront_kick(l->f);
		struct bf_req *r = blkfront_wait(l->f, 30000);
		if (!r) {
			fprintf(stderr, "frontend-stub: no response in 30 s\n");
			goto out;
		}
		linux_complete(l, r);
	}
	linux_read_back(l);
	stub_say("linux guest %u: %llu requests, %d reads verified, final read-back of %d MiB, %d "
	         "errors",
	         c->domid, (unsigned long long)l->completed, l->verified, l->regions, l->errors);
	blkfront_close(l->f, 1);
	rc = l->errors ? 1 : 0;
out:
	for (int i = 0; i < 32; i++)
		free(l->bufs[i]);
	free(l->model);
	free(l->written);
	free(l);
	return rc;
}

/* ---- main ------------------------------------------------------------------------ */

static const char usage[] =
	"usage: frontend-stub --mode halvm --domid N --prof FILE --hp FILE [--eventlog FILE (to xvdp3)]\n"
	"       (--domid: $XENSIM_DOMID when xensim runs it as the domain)\n"
	"                     [--crash-at BYTES | --crash-random SEED] [--word-size 8|4] [--reference DIR]\n"
	"                     [--pace MS (a pause after each heap sample, as GHC's -i, and each eventlog\n"
	"                     buffer flushed)] [--sample-log FILE] [--flush-log FILE]\n"
	"       frontend-stub --mode linux --domid N [--vdev xvdb] [--requests N] [--seed S] [--span MB]\n"
	"       frontend-stub --mode hostile --domid N [--vdev xvdc] [--seed S]\n"
	"       frontend-stub --mode mirage --domid N [--pages P (16)] [--events N (--requests)]\n"
	"                     [--rate EVENTS/S (0: flat out)] [--crash-at EVENT] [--event-log FILE]\n"
	"                     [--withdraw (remove the node at the end)] [--hostile KIND]\n"
	"common: [--platform sim|xen] [--sim-dir DIR (or $XENSIM_DIR)] [-q]\n";

/* What the command line says: the guest's context, the mode, the platform. */
struct stub_args {
	struct stub_ctx c;
	const char *mode, *platform;
	int have_domid;
};

#define GO_ON (-1) /* an option taken: parse on; else the exit code */

/* --span, --pace, --pages: numbers in a range. */
static int take_number(struct stub_ctx *c, int opt)
{
	char *end;
	unsigned long v;
	switch (opt) {
	case 'M':
		c->span_mb = atoi(optarg);
		if (c->span_mb < 1 || c->span_mb > MAX_SLOTS) {
			fprintf(stderr, "frontend-stub: --span is 1..%d MiB\n", MAX_SLOTS);
			return 2;
		}
		return GO_ON;
	case 'i':
		v = strtoul(optarg, &end, 10);
		if (*optarg == '\0' || *end || v > 60000) {
			fprintf(stderr, "frontend-stub: --pace is 0..60000 ms\n");
			return 2;
		}
		c->pace_ms = (unsigned)v;
		return GO_ON;
	default: /* 'G' */
		v = strtoul(optarg, NULL, 10);
		if (v < 1 || v > 65536) {
			fprintf(stderr, "frontend-stub: --pages is 1..65536\n");
			return 2;
		}
		c->mirage_pages = (uint32_t)v;
		return GO_ON;
	}
}

/* --sample-log, --flush-log, --event-log: a file opened for writing. */
static int take_log(FILE **log, const char *option)
{
	if (!(*log = fopen(optarg, "w"))) {
		fprintf(stderr, "frontend-stub: %s %s: %s\n", option, optarg, strerror(errno));
		return 1;
	}
	return GO_ON;
}

/* The options of a mode's guest. */
static int take_guest_option(struct stub_ctx *c, int opt)
{
	switch (opt) {
	case 'P':
		c->prof = optarg;
		break;
	case 'H':
		c->hp = optarg;
		break;
	case 'l':
		c->eventlog = optarg;
		break;
	case 'c':
		c->crash_at = strtoull(optarg, NULL, 10);
		break;
	case 'r':
		c->crash_random = 1;
		c->crash_seed = strtoull(optarg, NULL, 10);
		break;
	case 'w':
		c->word_size = atoi(optarg);
		break;
	case 'R':
		c->reference = optarg;
		break;
	case 'v':
		c->vdev = optarg;
		break;
	case 'n':
		c->requests = strtoull(optarg, NULL, 10);
		break;
	case 'S':
		c->seed = strtoull(optarg, NULL, 10);
		break;
	case 'e':
		c->mirage_rate = (unsigned)strtoul(optarg, NULL, 10);
		break;
	case 'W':
		c->mirage_withdraw = 1;
		break;
	default: /* 'K' */
		c->mirage_hostile = optarg;
		break;
	}
	return GO_ON;
}

/* One option: GO_ON, or the exit code it ends the program with. */
static int take_option(struct stub_args *a, int opt)
{
	switch (opt) {
	case 'm':
		a->mode = optarg;
		return GO_ON;
	case 'd':
		a->c.domid = (uint32_t)strtoul(optarg, NULL, 10);
		a->have_domid = 1;
		return GO_ON;
	case 'p':
		a->platform = optarg;
		return GO_ON;
	case 's':
		a->c.sim_dir = optarg;
		return GO_ON;
	case 'P': case 'H': case 'l': case 'c': case 'r': case 'w': case 'R':
	case 'v': case 'n': case 'S': case 'e': case 'W': case 'K':
		return take_guest_option(&a->c, opt);
	case 'M': case 'i': case 'G':
		return take_number(&a->c, opt);
	case 'L':
		return take_log(&a->c.sample_log, "--sample-log");
	case 'F':
		return take_log(&a->c.flush_log, "--flush-log");
	case 'E':
		return take_log(&a->c.event_log, "--event-log");
	case 'q':
		stub_quiet = 1;
		return GO_ON;
	case 'h':
		fputs(usage, stdout);
		return 0;
	case 'V':
		printf("frontend-stub (profsvc) %s\n", PACKAGE_VERSION);
		return 0;
	default:
		fputs(usage, stderr);
		return 2;
	}
}

/* The command line into a; GO_ON, or the exit code. */
static int parse_args(int argc, char **argv, struct stub_args *a)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, 'm'},      {"domid", required_argument, NULL, 'd'},
		{"platform", required_argument, NULL, 'p'},  {"sim-dir", required_argument, NULL, 's'},
		{"prof", required_argument, NULL, 'P'},      {"hp", required_argument, NULL, 'H'},
		{"eventlog", required_argument, NULL, 'l'},
		{"crash-at", required_argument, NULL, 'c'},  {"crash-random", required_argument, NULL, 'r'},
		{"word-size", required_argument, NULL, 'w'}, {"reference", required_argument, NULL, 'R'},
		{"vdev", required_argument, NULL, 'v'},      {"requests", required_argument, NULL, 'n'},
		{"seed", required_argument, NULL, 'S'},      {"span", required_argument, NULL, 'M'},
		{"pace", required_argument, NULL, 'i'},      {"sample-log", required_argument, NULL, 'L'},
		{"flush-log", required_argument, NULL, 'F'},
		{"pages", required_argument, NULL, 'G'},     {"events", required_argument, NULL, 'n'},
		{"rate", required_argument, NULL, 'e'},      {"event-log", required_argument, NULL, 'E'},
		{"withdraw", no_argument, NULL, 'W'},        {"hostile", required_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		int rc = take_option(a, opt);
		if (rc != GO_ON)
			return rc;
	}
	/* Run by xensim as the domain itself (create --exec, or a config's
	 * kernel): the domain it is. */
	const char *env = getenv("XENSIM_DOMID");
	if (!a->have_domid && env && *env) {
		a->c.domid = (uint32_t)strtoul(env, NULL, 10);
		a->have_domid = 1;
	}
	if (!a->mode || !a->have_domid || optind != argc || (a->c.word_size != 4 && a->c.word_size != 8) ||
	    (!strcmp(a->mode, "halvm") && !a->c.prof && !a->c.hp && !a->c.eventlog)) {
		fputs(usage, stderr);
		return 2;
	}
	if (plat_parse_kind(a->platform, &a->c.kind) != 0) {
		fprintf(stderr, "frontend-stub: --platform is sim or xen\n");
		return 2;
	}
	return GO_ON;
}

/* The modes, by their --mode name. */
static const struct {
	const char *name;
	int (*run)(struct stub_ctx *c);
} modes[] = {
	{"halvm", run_halvm},
	{"linux", run_linux},
	{"hostile", run_hostile},
	{"mirage", run_mirage},
};

int main(int argc, char **argv)
{
	struct stub_args a = {.c = {.sim_dir = getenv("XENSIM_DIR"), .word_size = 8, .crash_at = UINT64_MAX,
	                            .requests = 2000, .seed = 1, .span_mb = 256, .mirage_pages = 16}};
	struct stub_ctx *c = &a.c;
	int rc = parse_args(argc, argv, &a);
	if (rc != GO_ON)
		return rc;
	struct plat_opts po = {.kind = c->kind, .sim_dir = c->sim_dir, .sim_domid = c->domid,
	                       .sim_guest = 1};
	char err[512];
	if (plat_open(&c->plat, &po, err, sizeof(err)) != 0) {
		fprintf(stderr, "frontend-stub: %s\n", err);
		return 1;
	}
	c->xs = plat_xs_open(c->plat);
	if (!c->xs) {
		fprintf(stderr, "frontend-stub: cannot open xenstore: %s\n", strerror(errno));
		plat_close(c->plat);
		return 1;
	}
	rc = 2;
	size_t m = 0;
	while (m < sizeof(modes) / sizeof(modes[0]) && strcmp(modes[m].name, a.mode) != 0)
		m++;
	if (m < sizeof(modes) / sizeof(modes[0]))
		rc = modes[m].run(c);
	else
		fputs(usage, stderr);
	xs_close(c->xs);
	plat_close(c->plat);
	return rc;
}
