/*
 * heap_compare.h - two heap profiles side by side: their bands matched by
 * name once GHC's generated parts are taken out (the "(302)" stack
 * numbers of -hc and the uniques of generated names: <Main.sat_s2Qi> and
 * <Main.sat_sajl> are the same thing rebuilt), and what each profile is
 * by (-hc, -hd, ...).  The call stacks' half of a comparison is
 * prof_compare.h.
 */
#ifndef PROFSVC_HEAP_COMPARE_H
#define PROFSVC_HEAP_COMPARE_H

#include <stddef.h>

#include "heap_profile.h"

struct cmp_band {
	char *name;               /* normalised */
	double peak[2], area[2];  /* bytes; byte-seconds */
	int present[2];
};

/* Every band of either heap profile, the biggest change of area first. */
struct cmp_band *cmp_bands(const struct hp_profile *a, const struct hp_profile *b, size_t *n);
void cmp_bands_free(struct cmp_band *s, size_t n);

/* The name without GHC's generated parts (malloc'd). */
char *cmp_band_key(const char *name);

/* What a heap profile's bands are, from the +RTS options on its JOB line
 * ("phases +RTS -p -hc" is by cost-centre stack): GHC's letter ('c', 'm',
 * 'd', 'y', 'r', 'b', 'T', 'i', 'e'), or 0 when the line does not say (a
 * program built with its options inside).  A -hX with an argument
 * (-hdFoo) restricts what is shown and is not the kind; -h alone is -hc. */
char cmp_hp_kind(const char *job);
/* "cost-centre stacks (-hc)", "closure descriptions (-hd)", ...; "not
 * known" for 0. */
const char *cmp_hp_kind_name(char kind);
/* The warning of a comparison of run a's heap profile (JOB line job_a)
 * with run b's when the two are of different kinds (-hc and -hd): the
 * sentence in buf and 1, or 0 when they are of one kind or one does not
 * say.  The compare page and profdb diff give the same. */
int cmp_kind_warning(char *buf, size_t len, long long a, const char *job_a, long long b, const char *job_b);

#endif
