/*
 * prof_compare.h - two time profiles side by side: their call stacks
 * matched by their path of module.name frames (not by GHC's "no.", which a
 * rebuild renumbers), the biggest movers first.  The heap's half of a
 * comparison is heap_compare.h.
 */
#ifndef PROFSVC_PROF_COMPARE_H
#define PROFSVC_PROF_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "time_profile.h"

struct cmp_stack {
	uint64_t key;             /* a hash of the path of frames */
	uint32_t node[2];         /* the node in each profile, or TP_NONE */
	double time[2], alloc[2]; /* individual, percent; [0] before, [1] after */
	uint64_t entries[2];
};

/* Every call stack of either profile, the biggest movers (time and
 * allocation together) first.  NULL when out of memory. */
struct cmp_stack *cmp_stacks(const struct time_profile *a, const struct time_profile *b, size_t *n);
/* keys[i]: node i's path key (the hash cmp_stacks matches on); keys has
 * p->nnodes entries. */
void cmp_path_keys(const struct time_profile *p, uint64_t *keys);

/* "MAIN.MAIN;Main.main;Main.go", raw guest text (malloc'd). */
char *cmp_stack_path(const struct cmp_stack *s, const struct time_profile *a,
                     const struct time_profile *b);

#endif
