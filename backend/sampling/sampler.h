/*
 * sampler.h - sampling one domain's stacks from dom0 (sampler.c), with
 * its own platform instance, on the process's one sampling thread, which
 * takes the ticks of every domain sampled (a thread per domain woke 64
 * times as often for 64 domains): at each tick, pause the domain, read each vCPU's
 * registers and walk its stacks (walk.h, ghc_rts.h), unpause, and only
 * then name what was found (symbols.h) and encode it as the samples
 * stream (profile/samples/samples.h), which it hands to emit.  The pause window
 * holds only what must see the guest stopped.
 *
 * The guest's loss is bounded: the ticks are jittered (no lock-step with
 * the guest's own timers), and when the pause time of the last second
 * passes the budget the rate is halved (a RATE record says so) and raised
 * again when the guest is cheap to sample.
 */
#ifndef PROFSVC_SAMPLER_H
#define PROFSVC_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"

#define SAMPLER_MAX_HZ 10000u
#define SAMPLER_DEFAULT_HZ 99u
/* Pause time a domain may lose per second: 10%.  Not the cost of a
 * normal rate (99 Hz costs a guest about 0.5%, 999 Hz about 5%: what the
 * user asked for), a bound on what a guest whose stacks are costly to
 * walk, or a host too loaded to pause it quickly, may lose. */
#define SAMPLER_DEFAULT_BUDGET_US 100000u

struct sampler_opts {
	struct plat_opts plat;   /* how to reach the platform (the daemon's) */
	uint32_t domid;
	uint32_t hz;             /* 1..SAMPLER_MAX_HZ */
	uint64_t duration_us;    /* 0: until the domain ends or sampler_stop */
	const char *symbols;     /* the program's ELF, or NULL: kernel_node's, else addresses only */
	const char *kernel_node; /* a xenstore node holding the ELF's path (the toolstack's), or NULL */
	const char *kernel_symbols; /* a PV Linux guest kernel's System.map (kallsyms.h), or NULL */
	uint32_t budget_us;      /* pause time per second (0: the default) */
	const char *program;     /* what BEGIN names (the ELF's path, the domain's name) */
};

/* Called on the sampler's thread with whole records, in order. */
typedef void (*sampler_emit_fn)(void *ctx, const void *bytes, size_t len);

struct sampler;

/* Checks the options and starts a thread that opens the platform, waits
 * for the domain (it may still be starting) and opens the symbols, then
 * hands the sampler to the sampling thread (started when not running),
 * which opens the domain and says ready (stats), or finishes it failed
 * with the reason in why: 0, or -1 with a message. */
int sampler_start(struct sampler **out, const struct sampler_opts *o, sampler_emit_fn emit, void *ctx,
                  char *err, size_t errlen);
/* Asks the sampling thread to stop it (END is written) and waits until
 * it has; its last figures into *last (when not NULL); frees s.  The
 * last sampler stopped waits for the sampling thread's end. */
struct sampler_stats;
void sampler_stop(struct sampler *s, struct sampler_stats *last);
/* A descriptor readable once the thread has finished by itself (the
 * domain ended, the time is up, an error): the owner then calls
 * sampler_stop. */
int sampler_done_fd(const struct sampler *s);

/* The pause histogram's upper bounds in us (an owner's metrics give
 * them as Prometheus buckets): fine up to the 100 us a pause should stay
 * under, coarse above it. */
#define SAMPLER_PAUSE_BUCKETS 16
extern const uint32_t sampler_pause_le_us[SAMPLER_PAUSE_BUCKETS];

struct sampler_stats {
	uint64_t samples, lost, ticks;
	uint32_t hz_now;
	uint64_t pause_us_p50, pause_us_p99, pause_us_max; /* over the last 1024 pauses */
	/* every pause since the start: how many, their sum, and how many
	 * took more than the bound before bucket i and at most its own
	 * (sampler_pause_le_us; over the last bound: pauses minus the sum) */
	uint64_t pauses, pause_sum_us, pause_in[SAMPLER_PAUSE_BUCKETS];
	int ready;               /* the domain and the symbols are open: samples come */
	int finished, failed;    /* failed: it never got ready (why says why) */
	char why[512];           /* how it finished: the domain ended, an error, ... */
	char symbols[512];       /* the ELF it names frames by ("": none) */
	size_t kernel_symbols;   /* the guest kernel's symbols it names kernel frames by (0: none) */
	char note[600];          /* why it names less than it might ("": nothing to say) */
};
void sampler_get_stats(struct sampler *s, struct sampler_stats *out);
/* The flags of sampler_stats alone (SAMPLER_READY, _FINISHED, _FAILED),
 * for an owner that looks every round of its loop: no figures copied or
 * sorted. */
enum { SAMPLER_READY = 1, SAMPLER_FINISHED = 2, SAMPLER_FAILED = 4 };
unsigned sampler_state(struct sampler *s);

#endif
