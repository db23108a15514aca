/*
 * sampler.c - domains sampled by one sampling thread (sampler.h).
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
 *     sampling thread (on sim it is the traced programs' tracer: the
 *     ptrace relation is one thread's), and between ticks the thread
 *     sleeps in plat_inspect_wait, where the platform serves the domains.
 *  8. One sampling thread serves every domain a process samples: its
 *     wake-ups are the ticks of all of them, taken in turn, not one
 *     thread (and one timer signal) per domain, which 64 domains at 99 Hz
 *     made 6,336 wake-ups a second that a neighbour guest's round trips
 *     paid for.  Nothing on it may block for long: a sampler's platform
 *     and symbols (an ELF read whole) are opened, and its domain waited
 *     for, on a thread of its own that then hands it over; the thread
 *     runs while it has samplers and ends with the last.  What remains
 *     shared is time: one domain's pause that waits for a slow thread
 *     (20 ms at most on sim), its naming and encoding, delay the next
 *     domain's tick, and on sim the others' stops are served when this
 *     thread waits (a thread per domain served them meanwhile).
 *     be_sampler_start and be_sampler_stop are one thread's (the daemon's
 *     event loop).
 *  9. A sampler is freed only after the sampling thread has let it go
 *     (closed: its inspection closed, END emitted), under the pool's lock.
 * 10. What the program has mapped (modules.h) is read by the opener, with
 *     the symbols: the program and its interpreter are mapped by then, its
 *     libraries perhaps not yet.  A tick whose walk meets an address in no
 *     module reads the maps again, after the unpause and at most every
 *     MAPS_EVERY_US, so that a guest jumping to wild addresses costs a
 *     read of its maps four times a second, no more.  The sample of that
 *     tick is named after the new read.
 * 11. A sample counts for the time its vCPU ran since its last sample
 *     (the platform's CPU time of the vCPU: Xen's cpu_time, a thread's
 *     schedstat), capped by the wall time since then, as perf's cpu-clock
 *     counts CPU time: a vCPU the host kept runnable but did not run is
 *     not charged where it stood.  An [idle] sample counts the wall time
 *     since the last.  Written as a TIME record before the SAMPLE.
 *
 * May call: the platform seam (and its libxenstore handle, for the ELF the
 * toolstack noted), sample_stack.c, symbols.c, modules.c, kallsyms.c, ghc_rts.c,
 * profile/samples/samples_stream.c, util/clock, platform/ (platform.h).
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
#define MAPS_EVERY_US 250000 /* invariant 10 */

struct page_cache {
	struct plat_inspect *in;
	uint64_t cr3;
	uint32_t n;
	uint64_t va[CACHE_PAGES];
	uint16_t len[CACHE_PAGES]; /* bytes readable from the page's start */
	uint8_t data[CACHE_PAGES][PAGE];
};

struct be_sampler {
	struct be_sampler_opts o;
	char *symbols, *program, *kernel_symbols;
	be_sampler_emit_fn emit;
	void *ctx;
	pthread_t opener;      /* opens the platform and the symbols (invariant 8) */
	int done_fd;
	char open_err[512];    /* why the opener failed ("": it did not) */
	/* under the pool's lock (invariant 9) */
	int stop_asked, closed;
	struct be_sampler *next;  /* on the pool's incoming or active list */
	/* the sampling thread's */
	struct pacer_state {
		uint32_t hz, asked;
		int64_t next_us, second_us, paused_us;
		uint32_t jitter; /* xorshift state */
	} p;
	int64_t start_us, end_us;
	uint32_t budget;
	struct samples_buf b;
	struct plat *plat;
	struct plat_inspect *in;
	struct be_stack_namer nm;
	struct be_ghc_rts ghc;
	struct page_cache cache;
	pthread_mutex_t lock; /* stats */
	struct be_sampler_stats st;
	uint32_t pause_us[PAUSE_RING];
	uint64_t npauses;
	struct be_stack_taken taken[MAX_VCPUS];
	/* invariant 6: the vCPUs the last pause found online, and how many
	 * ticks since found the domain idle without pausing it */
	uint32_t online[MAX_VCPUS], nonline;
	uint32_t idle_ticks;
	int64_t maps_us;       /* when the mappings were last read (invariant 10) */
	/* invariant 11: each vCPU's last sample (time, CPU time) */
	struct vcpu_clock { uint64_t t_ns, cpu_ns; } clock[MAX_VCPUS];
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

const uint32_t be_sampler_pause_le_us[SAMPLER_PAUSE_BUCKETS] = {10,  20,  30,  40,  50,   60,   80,   100,
                                                             150, 200, 300, 500, 1000, 2000, 5000, 20000};

static void note_pause(struct be_sampler *s, int64_t us)
{
	uint32_t u = us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us, i = 0;
	while (i < SAMPLER_PAUSE_BUCKETS && u > be_sampler_pause_le_us[i])
		i++;
	pthread_mutex_lock(&s->lock);
	s->pause_us[s->npauses++ % PAUSE_RING] = u;
	s->st.pauses++;
	s->st.pause_sum_us += u;
	if (i < SAMPLER_PAUSE_BUCKETS)
		s->st.pause_in[i]++;
	pthread_mutex_unlock(&s->lock);
}

/* Pauses, walks every vCPU, unpauses: the vCPUs' stacks in taken[];
 * returns how many, or -1 (errno ESRCH: the domain is gone). */
static int take(struct be_sampler *s, struct be_stack_taken *taken, uint32_t max, int64_t *pause_us)
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
		struct be_walk_mem m = {cached_read, &s->cache, WALK_READS};
		taken[n].vcpu = (uint32_t)v;
		be_stack_take(&m, &s->nm, &r, &taken[n]);
		taken[n].cpu_ns = r.cpu_ns;
		s->online[n] = (uint32_t)v;
		n++;
	}
	s->nonline = (uint32_t)n;
	int rc = plat_inspect_unpause(s->in);
	*pause_us = clock_mono_us() - t0;
	return rc == 0 ? n : -1;
}

static int emit_buf(struct be_sampler *s, struct samples_buf *b)
{
	if (b->len)
		s->emit(s->ctx, b->data, b->len);
	b->len = 0;
	return 0;
}

/* The mappings read again after a tick whose walk met an address in no
 * module (a library loaded since), at most every MAPS_EVERY_US. */
static void refresh_mods(struct be_sampler *s, const struct be_stack_taken *taken, int n)
{
	int64_t now = clock_mono_us();
	if (!s->nm.mods || now - s->maps_us < MAPS_EVERY_US)
		return;
	for (int i = 0; i < n; i++)
		for (uint32_t k = 0; k < taken[i].w.n; k++)
			if (taken[i].w.kind[k] == WALK_FRAME_C && !be_mods_has(s->nm.mods, taken[i].w.pc[k])) {
				size_t len;
				char why[256];
				char *maps = plat_domain_maps(s->plat, s->o.domid, &len, why, sizeof(why));
				s->maps_us = now;
				if (maps)
					be_mods_report_maps(s->nm.mods, maps, len, why, sizeof(why));
				free(maps);
				return;
			}
}

/* Invariant 11: the time a sample of t stands for, into *ns: 1 when
 * told (a TIME record), 0 when the reader's default (1/hz) is all that
 * can be said (a vCPU whose CPU time is not known). */
static int sample_time(struct be_sampler *s, const struct be_stack_taken *t, uint64_t t_ns, uint64_t *ns)
{
	if (t->vcpu >= MAX_VCPUS)
		return 0;
	struct vcpu_clock *c = &s->clock[t->vcpu];
	uint64_t period = 1000000000ull / (s->p.hz ? s->p.hz : 1);
	uint64_t wall = c->t_ns && t_ns > c->t_ns ? t_ns - c->t_ns : period;
	int told = 1;
	if (t->idle)
		*ns = wall;
	else if (t->cpu_ns && c->cpu_ns && t->cpu_ns >= c->cpu_ns)
		*ns = t->cpu_ns - c->cpu_ns < wall ? t->cpu_ns - c->cpu_ns : wall;
	else if (t->cpu_ns)
		*ns = period; /* its first: what it ran before is not this profile's */
	else
		told = 0;
	c->t_ns = t_ns;
	if (t->cpu_ns)
		c->cpu_ns = t->cpu_ns;
	return told;
}

/* One sample of every vCPU, named and emitted; -1 when the domain is gone. */
static int tick(struct be_sampler *s, uint64_t t_ns, struct samples_buf *b, int64_t *pause_us)
{
	struct be_stack_taken *taken = s->taken;
	uint32_t ids[WALK_MAX_FRAMES + 2];
	int n;

	if (s->nonline && s->idle_ticks < IDLE_TICKS_MAX && plat_inspect_idle(s->in) == 1) {
		/* invariant 6: idle, and not stopped to be told so */
		for (uint32_t i = 0; i < s->nonline; i++)
			taken[i] = (struct be_stack_taken){.vcpu = s->online[i], .idle = 1};
		n = (int)s->nonline;
		s->idle_ticks++;
		*pause_us = 0;
	} else {
		s->idle_ticks = 0;
		if ((n = take(s, taken, MAX_VCPUS, pause_us)) < 0)
			return -1;
		note_pause(s, *pause_us);
		if (n == 0) {
			/* A pause that found no vCPU stopped (on xensim: no
			 * thread stopped within the pause's wait, as on a host
			 * loaded far past its CPUs) is a tick lost, and said so:
			 * every pause is a sample or a loss. */
			samples_put_lost(b, t_ns, 1, SAMPLES_LOST_PAUSE);
			pthread_mutex_lock(&s->lock);
			s->st.lost++;
			pthread_mutex_unlock(&s->lock);
			return emit_buf(s, b);
		}
	}
	refresh_mods(s, taken, n);
	for (int i = 0; i < n; i++) {
		int depth = be_stack_name(&s->nm, &taken[i], b, ids, WALK_MAX_FRAMES + 2);
		uint64_t ns;
		if (depth > 0 && sample_time(s, &taken[i], t_ns, &ns) && samples_put_time(b, ns) != 0)
			depth = -1;
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

#define pacer pacer_state

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
	int64_t spread = per / 5, now = clock_mono_us();
	p->next_us += per + (spread ? (int64_t)(p->jitter % (uint32_t)(spread + 1)) - spread / 2 : 0);
	if (p->next_us < now - per)
		p->next_us = now; /* ticks missed (a loaded host) are not caught up in a burst */
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

static void finish(struct be_sampler *s, const char *why)
{
	pthread_mutex_lock(&s->lock);
	s->st.finished = 1;
	snprintf(s->st.why, sizeof(s->st.why), "%s", why);
	pthread_mutex_unlock(&s->lock);
}

/* ---- the sampling thread (invariants 7 to 9) ------------------------------------------ */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;      /* a sampler closed; the thread ended */
	struct be_sampler *incoming; /* handed over by their openers, not yet open */
	struct be_sampler *active;   /* the thread's own list (only it walks it) */
	int wake_fd;              /* eventfd: incoming, a stop asked */
	int running, joinable;
	unsigned members;         /* started and not yet stopped */
	pthread_t thread;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .wake_fd = -1};

/* An eventfd made readable: the pool's wake-up, a sampler's done. */
static void post(int efd)
{
	uint64_t one = 1;
	if (write(efd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
		/* an eventfd write fails only on overflow: it is readable anyway */
	}
}

static void pool_wake(void)
{
	post(pool.wake_fd);
}

static void say_done(struct be_sampler *s)
{
	post(s->done_fd);
}

static void let_go(struct be_sampler *s)
{
	pthread_mutex_lock(&pool.lock);
	s->closed = 1;
	pthread_cond_broadcast(&pool.cond);
	pthread_mutex_unlock(&pool.lock);
}

/* It never got ready: why says why. */
static void fail_open(struct be_sampler *s, const char *why)
{
	if (s->in)
		plat_inspect_close(s->in); /* invariant 7 */
	s->in = s->cache.in = NULL;
	pthread_mutex_lock(&s->lock);
	s->st.failed = 1;
	pthread_mutex_unlock(&s->lock);
	finish(s, why);
	say_done(s);
	let_go(s);
}

/* Its end: the inspection closed here (on sim only this thread may let
 * the program go), END emitted, the owner told. */
static void end_sampler(struct be_sampler *s, uint32_t reason, const char *why)
{
	plat_inspect_close(s->in);
	s->in = s->cache.in = NULL;
	samples_put_end(&s->b, (uint64_t)(clock_mono_us() - s->start_us) * 1000, reason);
	emit_buf(s, &s->b);
	samples_buf_free(&s->b);
	finish(s, why);
	say_done(s);
	let_go(s);
}

static int open_domain(struct be_sampler *s, char *err, size_t errlen);

/* Ended when its next tick would come at or after its end (a duration
 * asked): right after its last tick, or before its first; 1 if so. */
static int ended_in_time(struct be_sampler *s)
{
	if (!s->end_us || s->p.next_us < s->end_us)
		return 0;
	end_sampler(s, SAMPLES_END_TIME, "its time is up");
	return 1;
}

/* A sampler its opener handed over: the domain opened here, then ticks. */
static int begin(struct be_sampler *s)
{
	char err[512];
	if (s->open_err[0]) {
		fail_open(s, s->open_err);
		return -1;
	}
	if (open_domain(s, err, sizeof(err)) != 0) {
		fail_open(s, err);
		return -1;
	}
	s->p = (struct pacer){s->o.hz, s->o.hz, 0, 0, 0, 0x9e3779b9u ^ s->o.domid};
	s->start_us = clock_mono_us();
	s->end_us = s->o.duration_us ? s->start_us + (int64_t)s->o.duration_us : 0;
	s->budget = s->o.budget_us ? s->o.budget_us : SAMPLER_DEFAULT_BUDGET_US;
	s->p.next_us = s->p.second_us = s->start_us;
	pacer_schedule(&s->p);
	return ended_in_time(s) ? -1 : 0;
}

/* One domain's tick, when due; 1 when the sampler ended (then it may
 * be freed by its owner at once: not to be touched again). */
static int due(struct be_sampler *s)
{
	int64_t now = clock_mono_us(); /* each its own: the ticks before took time */
	if (plat_inspect_ended(s->in)) {
		end_sampler(s, SAMPLES_END_DOMAIN, "the domain ended");
		return 1;
	}
	if (s->p.next_us > now)
		return 0;
	int64_t pause_us = 0;
	uint64_t t_ns = (uint64_t)(now - s->start_us) * 1000;
	if (tick(s, t_ns, &s->b, &pause_us) != 0) {
		end_sampler(s, SAMPLES_END_DOMAIN, "the domain ended");
		return 1;
	}
	s->p.paused_us += pause_us;
	if (pacer_second(&s->p, now, s->budget)) {
		samples_put_rate(&s->b, t_ns, s->p.hz);
		emit_buf(s, &s->b);
	}
	pthread_mutex_lock(&s->lock);
	s->st.ticks++;
	s->st.hz_now = s->p.hz;
	pthread_mutex_unlock(&s->lock);
	pacer_schedule(&s->p);
	return ended_in_time(s);
}

static void *run(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&pool.lock);
		struct be_sampler *in = pool.incoming;
		pool.incoming = NULL;
		if (!in && !pool.active) {
			pool.running = 0; /* invariant 8: ends with the last */
			pthread_cond_broadcast(&pool.cond);
			pthread_mutex_unlock(&pool.lock);
			return NULL;
		}
		pthread_mutex_unlock(&pool.lock);
		while (in) {
			struct be_sampler *s = in;
			in = s->next;
			if (begin(s) == 0) {
				s->next = pool.active;
				pool.active = s;
			}
		}
		/* stops asked, and the next tick of all */
		int64_t next = INT64_MAX;
		struct plat *plat = NULL;
		for (struct be_sampler **pp = &pool.active; *pp;) {
			struct be_sampler *s = *pp;
			pthread_mutex_lock(&pool.lock);
			int stop = s->stop_asked;
			pthread_mutex_unlock(&pool.lock);
			if (stop) {
				*pp = s->next;
				end_sampler(s, SAMPLES_END_STOPPED, "stopped");
				continue;
			}
			next = s->p.next_us < next ? s->p.next_us : next;
			plat = s->plat;
			pp = &s->next;
		}
		if (!pool.active)
			continue;
		/* the platform does what the domains need meanwhile (sim:
		 * resumes the stops of the programs this thread traces) */
		if (plat_inspect_wait(plat, next, pool.wake_fd) > 0) {
			uint64_t v;
			if (read(pool.wake_fd, &v, sizeof(v)) < 0) {
				/* not readable: an inspection ended, taken below */
			}
		}
		for (struct be_sampler **pp = &pool.active; *pp;) {
			struct be_sampler *s = *pp, *after = s->next; /* s may be freed once it ended (invariant 9) */
			if (due(s))
				*pp = after;
			else
				pp = &s->next;
		}
	}
}

/* The opener's: the platform and the symbols, then handed to the
 * sampling thread, which it starts when it is not running. */
static int open_symbols(struct be_sampler *s, char *err, size_t errlen);

static void *opener(void *arg)
{
	struct be_sampler *s = arg;
	char err[512] = "";
	/* The domain may still be starting (the sim platform waits for its
	 * program's exec): waited for here, so that the sampling thread's
	 * open is quick; the symbols after it, which the toolstack notes
	 * before it starts the domain. */
	if (plat_open(&s->plat, &s->o.plat, err, sizeof(err)) != 0 ||
	    plat_inspect_ready(s->plat, s->o.domid, err, sizeof(err)) != 0 ||
	    open_symbols(s, err, sizeof(err)) != 0)
		snprintf(s->open_err, sizeof(s->open_err), "%s", err[0] ? err : "cannot open the platform");
	pthread_mutex_lock(&pool.lock);
	s->next = pool.incoming;
	pool.incoming = s;
	int rc = 0;
	if (!pool.running) {
		if (pool.joinable)
			pthread_join(pool.thread, NULL); /* it ended (running 0): nothing more of it locks */
		rc = pthread_create(&pool.thread, NULL, run, NULL);
		pool.joinable = pool.running = rc == 0;
		if (rc != 0)
			pool.incoming = s->next; /* still first: the lock was held */
	}
	pthread_mutex_unlock(&pool.lock);
	if (rc != 0) {
		fail_open(s, "cannot start the sampling thread");
		return NULL;
	}
	pool_wake();
	return NULL;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- start, stop, stats ------------------------------------------------------------ */

static void free_sampler(struct be_sampler *s)
{
	if (s->nm.syms)
		be_symtab_close(s->nm.syms);
	be_mods_free(s->nm.mods);
	be_stack_namer_free(&s->nm);
	if (s->in)
		plat_inspect_close(s->in);
	if (s->plat)
		plat_close(s->plat);
	if (s->done_fd >= 0)
		close(s->done_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->symbols);
	free(s->kernel_symbols);
	be_ksyms_free(s->nm.ksyms);
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
static char *noted_symbols(struct be_sampler *s)
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

/* What the domain has mapped (invariant 10): its modules, when the
 * platform tells them (xensim: the program's maps); 0, or -1 with a
 * message.  Not told (Xen) is no error. */
static int open_mods(struct be_sampler *s, char *err, size_t errlen)
{
	size_t len;
	char why[256];
	char *maps = plat_domain_maps(s->plat, s->o.domid, &len, why, sizeof(why));
	s->maps_us = clock_mono_us();
	if (!maps)
		return errno == ENOTSUP ? 0 : (snprintf(err, errlen, "%s", why), -1);
	int rc = (s->nm.mods = be_mods_new(err, errlen)) ? be_mods_report_maps(s->nm.mods, maps, len, err, errlen) : -1;
	free(maps);
	return rc;
}

/* The symbols and, for a GHC program, where its RTS keeps things: the
 * ELF given, else the one the toolstack noted, else the program's own
 * (the maps' first file). */
static int open_symbols(struct be_sampler *s, char *err, size_t errlen)
{
	if (s->kernel_symbols && !(s->nm.ksyms = be_ksyms_open(s->kernel_symbols, err, errlen)))
		return -1;
	if (open_mods(s, err, errlen) != 0)
		return -1;
	const char *main_path = NULL;
	uint64_t bias = 0;
	int have_main = s->nm.mods && be_mods_main(s->nm.mods, &main_path, &bias) == 0;
	int noted = 0;
	if (!s->symbols && !(noted = 1, s->symbols = noted_symbols(s)) && have_main)
		s->symbols = strdup(main_path);
	if (!s->symbols)
		return 0;
	struct be_symtab *t = be_symtab_open(s->symbols, err, errlen);
	if (!t && noted) {
		/* The toolstack's kernel is a guess: a PV Linux guest's is a
		 * bzImage, no ELF; the program's own may be stripped: the
		 * domain is sampled without it. */
		pthread_mutex_lock(&s->lock);
		snprintf(s->st.note, sizeof(s->st.note), "%s (%s): %s", err,
		         have_main && !strcmp(s->symbols, main_path) ? "the program's own" : "the config's kernel",
		         s->nm.mods ? "named by its modules' symbols" : "addresses only");
		pthread_mutex_unlock(&s->lock);
		free(s->symbols);
		s->symbols = NULL;
		return 0;
	}
	if (!t)
		return -1;
	/* the program's load bias (a PIE's) when these are its symbols */
	if (have_main && (!strcmp(s->symbols, main_path) || !strcmp(base_name(s->symbols), base_name(main_path))))
		be_symtab_set_bias(t, bias);
	s->nm.syms = t;
	s->nm.path = s->symbols;
	snprintf(s->nm.dso, sizeof(s->nm.dso), "%s", base_name(s->symbols));
	if (be_ghc_rts_from_symbols(&s->ghc, be_symtab_addr_of, t, err, errlen) != 0)
		return -1;
	s->nm.ghc = &s->ghc;
	return 0;
}

/* On the sampling thread, the opener's work done: the domain (which may
 * still be starting: the sim platform waits for its program's exec);
 * BEGIN emitted. */
static int open_domain(struct be_sampler *s, char *err, size_t errlen)
{
	if (!(s->in = plat_inspect_open(s->plat, s->o.domid, err, errlen)))
		return -1;
	s->cache.in = s->in;
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
	s->st.kernel_symbols = be_ksyms_count(s->nm.ksyms);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int be_sampler_start(struct be_sampler **out, const struct be_sampler_opts *o, be_sampler_emit_fn emit, void *ctx,
                  char *err, size_t errlen)
{
	struct be_sampler *s = calloc(1, sizeof(*s));

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
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->symbols = o->symbols ? strdup(o->symbols) : NULL;
	s->kernel_symbols = o->kernel_symbols ? strdup(o->kernel_symbols) : NULL;
	s->program = strdup(o->program ? o->program : "");
	if (o->hz == 0 || o->hz > SAMPLER_MAX_HZ) {
		snprintf(err, errlen, "sampling rate %u Hz: give 1..%u", o->hz, SAMPLER_MAX_HZ);
		goto fail;
	}
	if (s->done_fd < 0 || !s->program || (o->symbols && !s->symbols) ||
	    (o->kernel_symbols && !s->kernel_symbols) ||
	    (o->kernel_node && !s->o.kernel_node)) {
		snprintf(err, errlen, "out of resources: %s", strerror(errno));
		goto fail;
	}
	pthread_mutex_lock(&pool.lock);
	if (pool.wake_fd < 0)
		pool.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* the process's, for good */
	int woke = pool.wake_fd >= 0;
	pthread_mutex_unlock(&pool.lock);
	if (!woke || pthread_create(&s->opener, NULL, opener, s) != 0) {
		snprintf(err, errlen, "cannot start the sampling thread");
		goto fail;
	}
	pthread_mutex_lock(&pool.lock);
	pool.members++;
	pthread_mutex_unlock(&pool.lock);
	*out = s;
	return 0;
fail:
	free_sampler(s);
	return -1;
}

void be_sampler_stop(struct be_sampler *s, struct be_sampler_stats *last)
{
	if (!s)
		return;
	pthread_mutex_lock(&pool.lock);
	s->stop_asked = 1;
	pthread_mutex_unlock(&pool.lock);
	pool_wake();
	pthread_mutex_lock(&pool.lock);
	while (!s->closed)
		pthread_cond_wait(&pool.cond, &pool.lock);
	/* invariant 8: the last one out waits for the thread's end */
	int last_one = --pool.members == 0;
	while (last_one && pool.running)
		pthread_cond_wait(&pool.cond, &pool.lock);
	pthread_t t = pool.thread;
	int join = last_one && pool.joinable;
	if (join)
		pool.joinable = 0;
	pthread_mutex_unlock(&pool.lock);
	if (join)
		pthread_join(t, NULL);
	pthread_join(s->opener, NULL);
	if (last)
		be_sampler_get_stats(s, last);
	free_sampler(s);
}

int be_sampler_done_fd(const struct be_sampler *s)
{
	return s->done_fd;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

unsigned be_sampler_state(struct be_sampler *s)
{
	pthread_mutex_lock(&s->lock);
	unsigned f = (s->st.ready ? SAMPLER_READY : 0) | (s->st.finished ? SAMPLER_FINISHED : 0) |
	             (s->st.failed ? SAMPLER_FAILED : 0);
	pthread_mutex_unlock(&s->lock);
	return f;
}

void be_sampler_get_stats(struct be_sampler *s, struct be_sampler_stats *out)
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
