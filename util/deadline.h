/*
 * deadline.h - waiting on a condition variable for at most a given time,
 * on the monotonic clock (a wall clock set back would stretch the wait).
 */
#ifndef PROFSVC_DEADLINE_H
#define PROFSVC_DEADLINE_H

#include <pthread.h>
#include <time.h>

/* A condition variable whose timed waits use CLOCK_MONOTONIC. */
int deadline_cond_init(pthread_cond_t *c);
/* CLOCK_MONOTONIC now plus ms, for pthread_cond_timedwait on such a cond. */
struct timespec deadline_after_ms(int ms);

#endif
