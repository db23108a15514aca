/*
 * speedscope.h - a time profile in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): one frame per
 * cost centre, and two sampled profiles over the call tree, time (in
 * milliseconds when the tick length is known, else ticks) and allocation
 * (bytes).  From text .prof files too: speedscope itself reads only -pj,
 * and only when GHC wrote it as valid JSON.
 */
#ifndef PROFSVC_SPEEDSCOPE_H
#define PROFSVC_SPEEDSCOPE_H

#include <stdio.h>

#include "profile/prof/time_profile.h"

/* name: what speedscope shows as the profile's name (guest text; written
 * here as the exact text, like every frame name).  0, or -1 when out of
 * memory or writing failed. */
int speedscope_write(FILE *f, const struct time_profile *p, const char *name);

#endif
