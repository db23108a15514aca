/*
 * deadline.c - monotonic deadlines for timed waits (deadline.h).
 *
 * May call: libc only (clock_gettime).
 */
#include "config.h"

#include "deadline.h"

int deadline_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return rc;
}

struct timespec deadline_after_ms(int ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}
