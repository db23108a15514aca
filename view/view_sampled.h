/*
 * view_sampled.h - a run's stack samples shown as samples (view_sampled.c),
 * not as a GHC time profile: how they were taken (the rate asked and
 * kept, samples, lost, vCPUs, how long, by CPU time or not), a selection
 * of them (a time range, a vCPU, focus and ignore: view_focus.h), the
 * functions of the selection (self and total: a sample counts once for
 * each function anywhere on its stack, however often recursion put it
 * there) and one function's sandwich (its callers and its callees, as
 * speedscope's Sandwich and pprof's -peek).  A sample weighs the time it
 * stands for (samples_sample's ns: its vCPU's CPU time since its last
 * sample, when the sampler told it); the shares are of the time of the
 * samples the time range and the vCPU select, before focus and ignore
 * (pprof's: what a focus keeps shows as its share of the whole).
 * `profdb top --samples` prints it.
 *
 * May call: profile/samples/samples.h, profile/samples/samples_int.h (the
 * functions, as the exports group them), view_focus.h, view_json.h,
 * jansson.
 */
#ifndef PROFSVC_VIEW_SAMPLED_H
#define PROFSVC_VIEW_SAMPLED_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/samples/samples.h"
#include "view_focus.h"

#define VIEW_FN_NONE UINT32_MAX

/* How the samples were taken. */
struct view_sampling {
	uint32_t hz_asked;   /* the first BEGIN's rate */
	uint32_t hz_kept;    /* the lowest rate a sample was taken at (RATE records lower it) */
	uint64_t samples, lost, total_ns;
	uint32_t vcpus, segments;
	uint64_t span_ns;    /* the last sample's time since the first BEGIN */
	int cpu_time;        /* every sample's time is its vCPU's CPU time (TIME records) */
	int some_cpu_time;   /* some are */
};
void view_sampling_of(const struct samples_profile *p, struct view_sampling *out);

/* Which samples: t in [from_ns, to_ns) (to_ns 0: to the end), of one vCPU
 * (vcpu < 0: all), then focus and ignore (NULL: none). */
struct view_sample_sel {
	uint64_t from_ns, to_ns;
	int64_t vcpu;
	const struct view_focus *focus;
};

/* A function's figures over the samples kept. */
struct view_fn_row {
	uint32_t fn;                    /* index into the table's functions; VIEW_FN_NONE:
	                                 * a sandwich's "(root)" or "(self)" row */
	uint64_t self_n, total_n;       /* samples: its own (it was the leaf), with it on the stack */
	uint64_t self_ns, total_ns;     /* the time they stand for */
};

struct view_fn {
	char *name;    /* "Module.name" (Haskell), the name, or its address: the guest's bytes */
	char *bare;    /* the name alone */
	const char *module; /* a C function's file (the dso), a Haskell one's module, "" */
	char *src;     /* "file:line" of its first frame with a line, or "" */
};

struct view_sampled {
	const struct samples_profile *p;
	struct view_sampling how;
	struct view_fn *fns;            /* every function of the samples */
	size_t nfns;
	uint32_t *fn_of_frame;          /* frame index -> function */
	uint64_t scope_n, scope_ns;     /* the samples the range and vCPU select */
	uint64_t kept_n, kept_ns;       /* of those, what focus and ignore keep */
	struct view_fn_row *rows;       /* the functions of the kept samples, most time first */
	size_t nrows;
	uint8_t *kept;                  /* per sample: 1 when kept */
};

/* The table of p's samples that sel keeps.  0, or -1 when out of memory.
 * view_sampled_free() either way. */
int view_sampled_make(struct view_sampled *s, const struct samples_profile *p, const struct view_sample_sel *sel);
void view_sampled_free(struct view_sampled *s);

/* The functions named name ("Module.name" as shown, or the bare name):
 * a mask over s->fns, and how many; 0 when none. */
size_t view_sampled_find(const struct view_sampled *s, const char *name, uint8_t *mask);

/* One function's sandwich over the kept samples: its own row (all the
 * functions of mask as one), its callers (the function right above it,
 * a sample counted once per caller; "(root)" when it is the outermost
 * frame) and its callees (right below it; "(self)" when it is the leaf),
 * each the most time first. */
struct view_sandwich {
	struct view_fn_row me;
	struct view_fn_row *callers, *callees;
	size_t ncallers, ncallees;
};
int view_sandwich_make(const struct view_sampled *s, const uint8_t *mask, struct view_sandwich *out);
void view_sandwich_free(struct view_sandwich *w);

/* The JSON of top --samples (docs/json.md):
 * {"sampling": {...}, "selection": {...}, "functions": [rows, at most
 * limit (0: all)], "sandwich": {...} when w}.  NULL when out of memory. */
json_t *view_sampled_json(const struct view_sampled *s, const struct view_sample_sel *sel, size_t limit,
                          const struct view_sandwich *w);

#endif
