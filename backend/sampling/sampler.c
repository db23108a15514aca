/*
 * sampler.c - one domain sampled on a thread of its own (sampler.h).
 *
 * Invariants:
 *  1. Between pause and unpause only registers are read and stacks
 *     walked; naming, encoding and emitting wait until the domain runs.
 *  2. Guest memory is read through a cache of whole pages that lives for
 *     one pause only (the guest changes its memory when it runs), so a
 *     walk costs one read per page it touches, not one per word.
 *  3. A walk's reads are budgeted (walk.h): however the stack is laid out,
 *     one sample's pause is bounded.
 *  4. Ticks are jittered by up to a tenth of the period either way.
 *  5. When the pauses of the last second took more than the budget (10%
 *     of it), the rate halves; after a cheap second it doubles back
 *     towards what was asked.  Every change is a RATE record.
 *  6. A domain whose every vCPU is blocked is sampled [idle] without a
 *     pause (the platform can tell: plat_inspect_idle), up to
 *     IDLE_TICKS_MAX ticks in a row; then a real pause looks again, and
 *     finds the vCPUs a platform counts by pausing (xensim's threads).
 *  7. Every plat_inspect_* call, open and close included, is made on the
 *     sampler's thread (on sim it is the traced program's tracer: the
 *     ptrace relation is one thread's), and between ticks the thread
 *     sleeps in plat_inspect_wait, where the platform serves the domain.
 *
 * May call: the platform seam (and its libxenstore handle, for the ELF the
 * toolstack noted), sample_stack.c, symbols.c, kallsyms.c, ghc_rts.c,
 * profile/samples_stream.c, util/clock.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>

#include "sample_stack.h"
#include "sampler.h"
#include "util/clock.h"

#define PAGE 4096u
#define CACHE_PAGES 32u
#define WALK_READS 4096u
#define PAUSE_RING 1024u
#define MAX_VCPUS 64u /* sampled per tick; more are not (the log says so) */
#define IDLE_TICKS_MAX 15u

struct page_cache {
	struct plat_inspect *in;
	uint64_t cr3;
	uint32_t n;
	uint64_t va[CACHE_PAGES];
	uint16_t len[CACHE_PAGES]; /* bytes readable from the page's start */
	uint8_t data[CACHE_PAGES][PAGE];
};

struct sampler {
	struct sampler_opts o;
	char *symbols, *program, *kernel_symbols;
	sampler_emit_fn emit;
	void *ctx;
	pthread_t thread;
	int stop_fd, done_fd;
	struct plat *plat;
	struct plat_inspect *in;
	struct stack_namer nm;
	struct ghc_rts ghc;
	struct page_cache cache;
	pthread_mutex_t lock; /* stats */
	struct sampler_stats st;
	uint32_t pause_us[PAUSE_RING];
	uint64_t npauses;
	struct stack_taken taken[MAX_VCPUS];
	/* invariant 6: the vCPUs the last pause found online, and how many
	 * ticks since found the domain idle without pausing it */
	uint32_t online[MAX_VCPUS], nonline;
	uint32_t idle_ticks;
};

/* ---- guest memory, a page at a time (invariant 2) ------------------------------ */

static long cached_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	struct page_cache *c = ctx;
	uint64_t page = va & ~(uint64_t)(PAGE - 1);
	size_t off = (size_t)(va - page);

	if (off + len > PAGE)
		len = PAGE - off; /* a word across pages: the caller sees it short */
	uint32_t i = 0;
	while (i < c->n && c->va[i] != page)
		i++;
	if (i == c->n) {
		if (c->n == CACHE_PAGES)
			i = (uint32_t)(page / PAGE % CACHE_PAGES); /* full: replace one */
		else
			c->n++;
		long got = plat_inspect_read(c->in, c->cr3, page, c->data[i], PAGE);
		c->va[i] = page;
		c->len[i] = got > 0 ? (uint16_t)got : 0;
	}
	if (off >= c->len[i])
		return -1;
	size_t have = c->len[i] - off < len ? c->len[i] - off : len;
	memcpy(buf, c->data[i] + off, have);
	return (long)have;
}

/* ---- one tick ------------------------------------------------------------------ */

static void note_pause(struct sampler *s, int64_t us)
{
	pthread_mutex_lock(&s->lock);
	s->pause_us[s->npauses++ % PAUSE_RING] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	pthread_mutex_unlock(&s->lock);
}

/* Pauses, walks every vCPU, unpauses: the vCPUs' stacks in taken[];
 * returns how many, or -1 (errno ESRCH: the domain is gone). */
static int take(struct sampler *s, struct stack_taken *taken, uint32_t max, int64_t *pause_us)
{
	int64_t t0 = clock_mono_us();
	if (plat_inspect_pause(s->in) != 0)
		return -1;
	int nv = plat_inspect_vcpus(s->in), n = 0;
	for (int v = 0; v < nv && (uint32_t)n < max; v++) {
		struct plat_vcpu_regs r;
		if (plat_inspect_regs(s->in, (uint32_t)v, &r) != 0 || !r.online)
			continue;
		s->cache.n = 0;
		s->cache.cr3 = r.cr3;
		struct walk_mem m = {cached_read, &s->cache, WALK_READS};
		taken[n].vcpu = (uint32_t)v;
		stack_take(&m, &s->nm, &r, &taken[n]);
		s->online[n] = (uint32_t)v;
		n++;
	}
	s->nonline = (uint32_t)n;
	int rc = plat_inspect_unpause(s->in);
	*pause_us = clock_mono_us() - t0;
	return rc == 0 ? n : -1;
}

static int emit_buf(struct sampler *s, struct samples_buf *b)
{
	if (b->len)
		s->emit(s->ctx, b->data, b->len);
	b->len = 0;
	return 0;
}

/* One sample of every vCPU, named and emitted; -1 when the domain is gone. */
static int tick(struct sampler *s, uint64_t t_ns, struct samples_buf *b, int64_t *pause_us)
{
	struct stack_taken *taken = s->taken;
	uint32_t ids[WALK_MAX_FRAMES + 2];
	int n;

	if (s->nonline && s->idle_ticks < IDLE_TICKS_MAX && plat_inspect_idle(s->in) == 1) {
		/* invariant 6: idle, and not stopped to be told so */
		for (uint32_t i = 0; i < s->nonline; i++)
			taken[i] = (struct stack_taken){.vcpu = s->online[i], .idle = 1};
		n = (int)s->nonline;
		s->idle_ticks++;
		*pause_us = 0;
	} else {
		s->idle_ticks = 0;
		if ((n = take(s, taken, MAX_VCPUS, pause_us)) < 0)
			return -1;
		note_pause(s, *pause_us);
	}
	for (int i = 0; i < n; i++) {
		int depth = stack_name(&s->nm, &taken[i], b, ids, WALK_MAX_FRAMES + 2);
		if (depth <= 0 || samples_put_sample(b, t_ns, taken[i].vcpu, 1, ids, (uint32_t)depth,
		                                     taken[i].w.stop) != 0) {
			samples_put_lost(b, t_ns, 1, SAMPLES_LOST_STORE);
			pthread_mutex_lock(&s->lock);
			s->st.lost++;
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		pthread_mutex_lock(&s->lock);
		s->st.samples++;
		pthread_mutex_unlock(&s->lock);
	}
	return emit_buf(s, b);
}

/* ---- the rate (invariants 4 and 5) ------------------------------------------------ */

struct pacer {
	uint32_t hz, asked;
	int64_t next_us, second_us, paused_us;
	uint32_t jitter; /* xorshift state */
};

static int64_t period_us(const struct pacer *p)
{
	return 1000000 / p->hz;
}

static void pacer_schedule(struct pacer *p)
{
	int64_t per = period_us(p);
	p->jitter ^= p->jitter << 13;
	p->jitter ^= p->jitter >> 17;
	p->jitter ^= p->jitter << 5;
	int64_t spread = per / 5;
	p->next_us += per + (spread ? (int64_t)(p->jitter % (uint32_t)(spread + 1)) - spread / 2 : 0);
}

/* At each second's end: the rate for the next; 1 when it changed. */
static int pacer_second(struct pacer *p, int64_t now, uint32_t budget_us)
{
	if (now - p->second_us < 1000000)
		return 0;
	uint32_t was = p->hz;
	if (p->paused_us > budget_us && p->hz > 1)
		p->hz /= 2;
	else if (p->paused_us * 4 < budget_us && p->hz < p->asked)
		p->hz = p->hz * 2 > p->asked ? p->asked : p->hz * 2;
	p->second_us = now;
	p->paused_us = 0;
	return p->hz != was;
}

static void finish(struct sampler *s, const char *why)
{
	pthread_mutex_lock(&s->lock);
	s->st.finished = 1;
	snprintf(s->st.why, sizeof(s->st.why), "%s", why);
	pthread_mutex_unlock(&s->lock);
}

static int open_all(struct sampler *s, char *err, size_t errlen);

static void *run(void *arg)
{
	struct sampler *s = arg;
	struct samples_buf b = {0};
	char err[512];
	if (open_all(s, err, sizeof(err)) != 0) {
		plat_inspect_close(s->in); /* invariant 7 */
		s->in = s->cache.in = NULL;
		pthread_mutex_lock(&s->lock);
		s->st.failed = 1;
		pthread_mutex_unlock(&s->lock);
		finish(s, err);
		uint64_t one = 1;
		if (write(s->done_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
			/* readable anyway */
		}
		return NULL;
	}
	struct pacer p = {s->o.hz, s->o.hz, 0, 0, 0, 0x9e3779b9u ^ s->o.domid};
	int64_t start = clock_mono_us(), end = s->o.duration_us ? start + (int64_t)s->o.duration_us : 0;
	uint32_t budget = s->o.budget_us ? s->o.budget_us : SAMPLER_DEFAULT_BUDGET_US;
	uint32_t reason = SAMPLES_END_STOPPED;
	const char *why = "stopped";

	p.next_us = p.second_us = start;
	for (;;) {
		pacer_schedule(&p);
		if (end && p.next_us >= end) {
			reason = SAMPLES_END_TIME, why = "its time is up";
			break;
		}
		/* the platform does what the domain needs meanwhile (sim:
		 * resumes the stops of the program it traces) */
		int w = plat_inspect_wait(s->in, p.next_us, s->stop_fd);
		if (w < 0) {
			reason = SAMPLES_END_DOMAIN, why = "the domain ended";
			break;
		}
		if (w > 0)
			break;
		int64_t now = clock_mono_us(), pause_us = 0;
		uint64_t t_ns = (uint64_t)(now - start) * 1000;
		if (tick(s, t_ns, &b, &pause_us) != 0) {
			reason = SAMPLES_END_DOMAIN, why = "the domain ended";
			break;
		}
		p.paused_us += pause_us;
		if (pacer_second(&p, now, budget)) {
			samples_put_rate(&b, t_ns, p.hz);
			emit_buf(s, &b);
		}
		pthread_mutex_lock(&s->lock);
		s->st.ticks++;
		s->st.hz_now = p.hz;
		pthread_mutex_unlock(&s->lock);
	}
	/* Closed here, not by sampler_stop's caller: on sim this thread is
	 * the program's tracer, and only it may let the program go. */
	plat_inspect_close(s->in);
	s->in = s->cache.in = NULL;
	samples_put_end(&b, (uint64_t)(clock_mono_us() - start) * 1000, reason);
	emit_buf(s, &b);
	samples_buf_free(&b);
	finish(s, why);
	uint64_t one = 1;
	if (write(s->done_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
		/* an eventfd write fails only on overflow: it is readable anyway */
	}
	return NULL;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- start, stop, stats ------------------------------------------------------------ */

static void free_sampler(struct sampler *s)
{
	if (s->nm.syms)
		symtab_close(s->nm.syms);
	stack_namer_free(&s->nm);
	if (s->in)
		plat_inspect_close(s->in);
	if (s->plat)
		plat_close(s->plat);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	if (s->done_fd >= 0)
		close(s->done_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->symbols);
	free(s->kernel_symbols);
	ksyms_free(s->nm.ksyms);
	free(s->program);
	free((char *)s->o.kernel_node);
	free(s);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The ELF the toolstack noted for the domain (kernel_node), read through
 * this thread's own xenstore handle; NULL when none. */
static char *noted_symbols(struct sampler *s)
{
	if (!s->o.kernel_node)
		return NULL;
	struct xs_handle *xs = plat_xs_open(s->plat);
	unsigned len = 0;
	char *v = xs ? xs_read(xs, XBT_NULL, s->o.kernel_node, &len) : NULL;
	if (xs)
		xs_close(xs);
	if (v && (len == 0 || v[0] != '/' || strlen(v) != len)) {
		free(v);
		v = NULL;
	}
	return v;
}

/* The symbols and, for a GHC program, where its RTS keeps things. */
static int open_symbols(struct sampler *s, char *err, size_t errlen)
{
	if (s->kernel_symbols && !(s->nm.ksyms = ksyms_open(s->kernel_symbols, err, errlen)))
		return -1;
	int noted = 0;
	if (!s->symbols && !(noted = 1, s->symbols = noted_symbols(s)))
		return 0;
	struct symtab *t = symtab_open(s->symbols, err, errlen);
	if (!t && noted) {
		/* The toolstack's kernel is a guess: a PV Linux guest's is a
		 * bzImage, no ELF; the domain is sampled without it. */
		pthread_mutex_lock(&s->lock);
		snprintf(s->st.note, sizeof(s->st.note), "%s (the config's kernel): addresses only", err);
		pthread_mutex_unlock(&s->lock);
		free(s->symbols);
		s->symbols = NULL;
		return 0;
	}
	if (!t)
		return -1;
	s->nm.syms = t;
	snprintf(s->nm.dso, sizeof(s->nm.dso), "%s", base_name(s->symbols));
	if (ghc_rts_from_symbols(&s->ghc, symtab_addr_of, t, err, errlen) != 0)
		return -1;
	s->nm.ghc = &s->ghc;
	return 0;
}

/* On the thread: the platform, the domain (which may still be starting:
 * the sim platform waits for its program's exec), then the symbols, which
 * the toolstack notes before it starts the domain; BEGIN emitted. */
static int open_all(struct sampler *s, char *err, size_t errlen)
{
	if (plat_open(&s->plat, &s->o.plat, err, errlen) != 0)
		return -1;
	if (!(s->in = plat_inspect_open(s->plat, s->o.domid, err, errlen)))
		return -1;
	s->cache.in = s->in;
	if (open_symbols(s, err, errlen) != 0)
		return -1;
	struct samples_buf b = {0};
	const char *program = s->program[0] ? s->program : s->symbols ? s->symbols : "";
	int rc = samples_put_begin(&b, s->o.hz, wall_ns(), 0, program);
	if (rc == 0)
		s->emit(s->ctx, b.data, b.len);
	samples_buf_free(&b);
	if (rc != 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_lock(&s->lock);
	s->st.ready = 1;
	snprintf(s->st.symbols, sizeof(s->st.symbols), "%s", s->symbols ? s->symbols : "");
	s->st.kernel_symbols = ksyms_count(s->nm.ksyms);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int sampler_start(struct sampler **out, const struct sampler_opts *o, sampler_emit_fn emit, void *ctx,
                  char *err, size_t errlen)
{
	struct sampler *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->o = *o;
	s->o.kernel_node = o->kernel_node ? strdup(o->kernel_node) : NULL;
	s->emit = emit;
	s->ctx = ctx;
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->symbols = o->symbols ? strdup(o->symbols) : NULL;
	s->kernel_symbols = o->kernel_symbols ? strdup(o->kernel_symbols) : NULL;
	s->program = strdup(o->program ? o->program : "");
	if (o->hz == 0 || o->hz > SAMPLER_MAX_HZ) {
		snprintf(err, errlen, "sampling rate %u Hz: give 1..%u", o->hz, SAMPLER_MAX_HZ);
		goto fail;
	}
	if (s->stop_fd < 0 || s->done_fd < 0 || !s->program || (o->symbols && !s->symbols) ||
	    (o->kernel_symbols && !s->kernel_symbols) ||
	    (o->kernel_node && !s->o.kernel_node)) {
		snprintf(err, errlen, "out of resources: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&s->thread, NULL, run, s) != 0) {
		snprintf(err, errlen, "cannot start the sampling thread");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	free_sampler(s);
	return -1;
}

void sampler_stop(struct sampler *s, struct sampler_stats *last)
{
	uint64_t one = 1;
	if (!s)
		return;
	if (write(s->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
		/* cannot fail on a fresh eventfd */
	}
	pthread_join(s->thread, NULL);
	if (last)
		sampler_get_stats(s, last);
	free_sampler(s);
}

int sampler_done_fd(const struct sampler *s)
{
	return s->done_fd;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

void sampler_get_stats(struct sampler *s, struct sampler_stats *out)
{
	static __thread uint32_t sorted[PAUSE_RING];
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	size_t n = s->npauses < PAUSE_RING ? (size_t)s->npauses : PAUSE_RING;
	memcpy(sorted, s->pause_us, n * sizeof(sorted[0]));
	pthread_mutex_unlock(&s->lock);
	if (!n)
		return;
	qsort(sorted, n, sizeof(sorted[0]), cmp_u32);
	out->pause_us_p50 = sorted[n / 2];
	out->pause_us_p99 = sorted[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	out->pause_us_max = sorted[n - 1];
}
