/*
 * platform_sim_wake.h - the xensim tracer's wake-ups
 * (platform_sim_wake.c), for platform_sim_inspect.c alone.
 */
#ifndef PROFSVC_PLATFORM_SIM_WAKE_H
#define PROFSVC_PLATFORM_SIM_WAKE_H

#include <stdint.h>
#include <time.h>

/* A timer whose signal interrupts this thread's waitpid (0, or -1). */
int sim_wake_timer_open(timer_t *timer);
/* Armed for at_us on the monotonic clock (then every millisecond, so that
 * a signal that came just before the waitpid began is not the only one);
 * 0 disarms. */
void sim_wake_timer_at(timer_t timer, int64_t at_us);
/* This thread's signalfd of SIGCHLD, or -1 when the thread does not block
 * SIGCHLD (it sleeps in waitpid then); opened at the first call. */
int sim_wake_chld_open(void);
/* SIGCHLD let through (pass 1: a pause drops it) or blocked again (0). */
void sim_wake_chld_pass(int pass);
/* Reads what the signalfd holds: only a wake-up, the statuses are waitpid's. */
void sim_wake_chld_drain(int fd);
/* Closes this thread's signalfd (its last inspection closed). */
void sim_wake_chld_close(void);

#endif
