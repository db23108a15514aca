/*
 * clock.c - the monotonic clock in microseconds (clock.h).
 *
 * May call: clock_gettime only.
 */
#include "config.h"

#include <time.h>

#include "clock.h"

int64_t clock_mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
