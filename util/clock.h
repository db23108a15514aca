/*
 * clock.h - the monotonic clock in microseconds, for timers and rate
 * limits (never the wall clock, which may be set back).  Calls nothing
 * but the C library.
 */
#ifndef PROFSVC_CLOCK_H
#define PROFSVC_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in microseconds. */
int64_t clock_mono_us(void);

#endif
