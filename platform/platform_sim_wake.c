/*
 * platform_sim_wake.c - how the xensim tracer's waits end on time
 * (platform_sim_wake.h): a thread that blocks SIGCHLD sleeps in ppoll on
 * a signalfd of it, its tracees' stops and ends waking it (invariant 6 of
 * platform_sim_inspect.c says why); one that does not sleeps in waitpid,
 * ended at its tick by a timer's signal sent to that thread alone.  Both
 * belong to the calling thread, as the ptrace relation does.
 *
 * May call: libc (timers, signals, signalfd).
 */
#define _GNU_SOURCE
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "platform_sim_wake.h"

/* ---- waking a waitpid: a timer's signal to this thread ------------------------------ */

static void wake_handler(int sig)
{
	(void)sig; /* its only work: waitpid returns EINTR */
}

static int wake_sig(void)
{
	return SIGRTMIN + 5;
}

static void wake_install(void)
{
	struct sigaction sa, old;
	if (sigaction(wake_sig(), NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
	    !(old.sa_flags & SA_SIGINFO)) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = wake_handler; /* no SA_RESTART: waitpid must return */
		sigemptyset(&sa.sa_mask);
		sigaction(wake_sig(), &sa, NULL);
	}
}

int sim_wake_timer_open(timer_t *timer)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, wake_install);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, wake_sig());
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = wake_sig();
	ev._sigev_un._tid = gettid();
	return timer_create(CLOCK_MONOTONIC, &ev, timer);
}

/* Armed for at (then every millisecond, so that a signal that came just
 * before the waitpid began is not the only one); 0 disarms. */
void sim_wake_timer_at(timer_t timer, int64_t at_us)
{
	struct itimerspec its = {{0, 0}, {0, 0}};
	if (at_us) {
		its.it_value.tv_sec = at_us / 1000000;
		its.it_value.tv_nsec = (long)(at_us % 1000000) * 1000;
		its.it_interval.tv_nsec = 1000000;
	}
	timer_settime(timer, at_us ? TIMER_ABSTIME : 0, &its, NULL);
}

/* ---- waking a wait: SIGCHLD on a signalfd ----------------------------------------- */

/* A thread that blocks SIGCHLD (the daemon blocks it in every thread from
 * its start) takes its tracees' stops and ends as news on a signalfd,
 * which a wait polls beside its wake descriptor until its time: no timer
 * armed and disarmed, no signal handled per wait (invariant 6).  One per
 * thread, closed when the thread's last inspection is. */
static __thread int chld_fd = -2; /* -2: not looked at yet; -1: SIGCHLD is not blocked */

static sigset_t chld_only(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	return s;
}

int sim_wake_chld_open(void)
{
	if (chld_fd == -2) {
		sigset_t cur, s = chld_only();
		chld_fd = -1;
		if (pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, SIGCHLD) == 1)
			chld_fd = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
		if (chld_fd < 0)
			chld_fd = -1;
	}
	return chld_fd;
}

/* SIGCHLD let through (and so dropped, as ignored) while this thread
 * pauses, blocked again for its waits (invariant 6). */
void sim_wake_chld_pass(int pass)
{
	if (chld_fd < 0)
		return;
	sigset_t s = chld_only();
	pthread_sigmask(pass ? SIG_UNBLOCK : SIG_BLOCK, &s, NULL);
}

void sim_wake_chld_drain(int fd)
{
	struct signalfd_siginfo si[8];
	while (read(fd, si, sizeof(si)) > 0) {
		/* only a wake-up: the statuses are waitpid's */
	}
}

void sim_wake_chld_close(void)
{
	if (chld_fd >= 0) {
		close(chld_fd);
		chld_fd = -2;
	}
}
