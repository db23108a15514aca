/*
 * samples_int.h - what the stack samples' exports (samples.h) share, from
 * samples_group.c: frames grouped into functions, one per (kind, name,
 * module), a nameless frame its own (shown as its address); their names as
 * the text formats show them; every sample's stack counted, identical
 * sequences added up.
 *
 * May call: samples.h's types, util/id_index.
 */
#ifndef PROFSVC_SAMPLES_INT_H
#define PROFSVC_SAMPLES_INT_H

#include <stdint.h>
#include <stdio.h>

#include "samples.h"
#include "util/id_index.h"

#define SAMPLES_NO_FRAME UINT32_MAX

/* Nanoseconds a sample of weight w stands for at hz (< 2^62: no overflow). */
static inline uint64_t samples_ns(uint32_t w, uint32_t hz)
{
	return hz ? (uint64_t)w * 1000000000ull / hz : 0;
}

/* The functions of p's frames. */
struct samples_funcs {
	const struct samples_profile *p;
	uint32_t *of_frame; /* frame index -> function index */
	uint32_t *first;    /* function -> its first frame */
	uint32_t *lined;    /* function -> its first frame with a line, or SAMPLES_NO_FRAME */
	size_t n;
	struct id_index idx;
};
/* 0, or -1 when out of memory (nothing to free then). */
int samples_funcs_build(struct samples_funcs *fs, const struct samples_profile *p);
void samples_funcs_free(struct samples_funcs *fs);

/* A frame's name as the text formats show it ("Module.name", the name, or
 * its address when it has none); each byte of also as \xNN. */
void samples_put_label(FILE *f, const struct samples_frame *fr, const char *also);
/* The same name unescaped (the guest's bytes), malloc'd; NULL when out of memory. */
char *samples_raw_label(const struct samples_frame *fr);

/* Every sample's stack, leaf first, counted: its functions' ids (or its
 * frames'), back to back in ids. */
struct samples_stacks {
	uint32_t *ids; /* every stack's ids, back to back */
	size_t nids, ids_cap;
	struct samples_stack { size_t at; uint32_t depth; uint64_t count, ns; } *s;
	size_t n, cap;
	struct id_index idx;
};
/* Every sample's stack (leaf first) counted: as functions (fs given) or
 * frames.  0, or -1 when out of memory (nothing to free then). */
int samples_stacks_count(struct samples_stacks *st, const struct samples_profile *p, const struct samples_funcs *fs);
void samples_stacks_free(struct samples_stacks *st);

#endif
