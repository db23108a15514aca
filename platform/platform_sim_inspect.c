/*
 * platform_sim_inspect.c - looking into a xensim domain that is a program
 * (platform.h's plat_inspect_*).  The caller's thread is the program's
 * tracer, as on Xen the backend itself makes the pause hypercall: xensim
 * publishes the program's pid (and a pidfd), and from then on a pause is
 * ptrace between this thread and the program's threads, with no hop
 * through xensim: PTRACE_INTERRUPT to each thread, waitpid for each stop,
 * PTRACE_GETREGS, reads through /proc/PID/mem, PTRACE_CONT.
 *
 * The ptrace relation belongs to one thread of the tracer: every call on
 * an inspection (open, pause, regs, unpause, wait, close) must come from
 * the thread that opened it (the sampling thread).  Its waits take only
 * that thread's tracees (__WNOTHREAD), and one thread may hold many
 * inspections (the backend's one sampling thread holds every domain's):
 * each status a waitpid returns goes to the inspection whose program the
 * thread belongs to (invariant 5), whichever inspection's call took it.
 *
 * Invariants:
 *  1. Every thread of the program is seized (PTRACE_SEIZE at open, the
 *     threads it makes after through PTRACE_O_TRACECLONE); the first
 *     SIM_MAX_VCPUS are the vCPUs, in the order they were found or made.
 *  2. Outside a pause, every stop a thread reports is resumed at once:
 *     a signal-delivery-stop with its signal (the program gets its
 *     signals as untraced), a group-stop (SIGSTOP & co.) with
 *     PTRACE_LISTEN (it stays stopped, as untraced, until its SIGCONT),
 *     anything else (a new thread's first stop, an interrupt that came
 *     late, a clone or exec event) with nothing.  A thread in a
 *     group-stop is left alone by pauses (its registers are those it
 *     stopped with; it is blocked): interrupted, it would run in the
 *     kernel at every tick.  Stops are taken while
 *     the sampler waits for its next tick (plat_inspect_wait), so the
 *     program is never kept waiting by its tracer between samples.
 *  3. Inside a pause a thread is stopped once waitpid reported a stop of
 *     any kind for it; a signal it stopped for is delivered, and a
 *     group-stop resumed with PTRACE_LISTEN, at the unpause.  A thread that
 *     has not stopped within PAUSE_WAIT_MAX_US (in a system call that does
 *     not return, a loaded host) is offline for that sample; its stop is
 *     resumed when it comes (2).
 *  4. The program's end is taken at once (it is reaped from us, its
 *     tracer, and only then reported to xensim, its parent, which ends the
 *     domain).  The pid seized is the program's: xensim's pidfd says it had
 *     not ended after the seize (its parent reaps it; only then may the pid
 *     be another process's).
 *  5. The inspections a thread holds are on that thread's list (mine);
 *     a status is handled by the one that knows the thread, else by the
 *     one whose program has it in /proc/PID/task (a new thread whose
 *     first stop came before its parent's clone event), else resumed
 *     as a thread nobody samples.  Nothing traced on the thread any more
 *     (ECHILD): every inspection of it has ended.
 *  6. Between ticks a thread that blocks SIGCHLD sleeps in ppoll on a
 *     signalfd of it: a stop or an end of a tracee sends the tracer
 *     SIGCHLD, so the news wakes it as a waitpid would.  Sleeping in
 *     waitpid instead needs a timer's signal to end the sleep at the
 *     tick: at 64 domains and 99 Hz that was 6,336 signals a second,
 *     each with two timer_settime calls and a signal frame (the FPU state
 *     saved and restored), and a HaLVM neighbour's round-trip p99 paid
 *     for it.  During a pause the thread lets SIGCHLD through (ignored,
 *     it is dropped): queued for the signalfd, the stops' own SIGCHLDs
 *     made the pauses longer (p50 at 999 Hz 23-27 -> 37-49 us); what a
 *     pause sees it takes by waitpid anyway.  A thread that does not
 *     block SIGCHLD (it may go to another thread) sleeps in waitpid so.
 *
 * May call: the sim platform's connection (platform_sim_int.h, platform.h,
 * sim_proto.h), the tracer's wake-ups (platform_sim_wake.c), ptrace.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "platform_sim_int.h"
#include "platform_sim_wake.h"
#include "sim_proto.h"

#define PAUSE_WAIT_MAX_US 20000   /* invariant 3 */
#define PAUSE_SPIN_MAX_US 150     /* stops on other CPUs are looked for, not slept for */
#define WAKE_LOOK_US 20000        /* a wait looks at its wake descriptor this often */
#define SEIZE_ROUNDS 100          /* listings of the threads at open */
#define TRACE_OPTS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)

struct sim_thread {
	pid_t tid;
	uint8_t stopped;    /* in a stop of ours to resume (invariants 2, 3) */
	uint8_t group_stop; /* that stop is a group-stop: resumed with PTRACE_LISTEN */
	uint8_t listening;  /* so resumed: it stays stopped until its SIGCONT, and a
	                       pause leaves it be (its registers as it stopped) */
	uint8_t offline;    /* this pause: cannot stop (exiting, a zombie) or too late */
	uint8_t zombie;     /* a leader that exited before its other threads */
	int sig;            /* delivered at the resume */
	int stat_fd;        /* its /proc/PID/task/TID/stat, or -1 */
	int sched_fd;       /* its /proc/PID/task/TID/schedstat, or -1 */
	struct user_regs_struct held; /* listening: its registers */
};

struct sim_inspect {
	struct plat_inspect base;
	pid_t pid;
	int pidfd, memfd;
	int paused, gone, timer_ok;
	timer_t timer;      /* wakes this thread's waitpid (a signal to it alone) */
	uint32_t n;         /* vCPUs: t[0..n) */
	struct sim_thread t[SIM_MAX_VCPUS];
	struct sim_inspect *next; /* mine (invariant 5) */
};

/* The inspections this thread holds (invariant 5). */
static __thread struct sim_inspect *mine;

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the threads -------------------------------------------------------------------- */

static int thread_find(const struct sim_inspect *in, pid_t tid)
{
	for (uint32_t i = 0; i < in->n; i++)
		if (in->t[i].tid == tid)
			return (int)i;
	return -1;
}

static int thread_add(struct sim_inspect *in, pid_t tid)
{
	if (in->n >= SIM_MAX_VCPUS)
		return -1; /* more threads than vCPUs: this one runs unseen (never paused) */
	in->t[in->n] = (struct sim_thread){.tid = tid, .stat_fd = -1, .sched_fd = -1};
	return (int)in->n++;
}

static void thread_remove(struct sim_inspect *in, uint32_t i)
{
	if (in->t[i].stat_fd >= 0)
		close(in->t[i].stat_fd);
	if (in->t[i].sched_fd >= 0)
		close(in->t[i].sched_fd);
	memmove(&in->t[i], &in->t[i + 1], (size_t)(in->n - i - 1) * sizeof(in->t[0]));
	in->n--;
}

/* Resumed as invariants 2 and 3 say. */
static void resume(struct sim_inspect *in, uint32_t i)
{
	struct sim_thread *t = &in->t[i];
	if (!t->stopped)
		return;
	if (t->group_stop) {
		t->listening = ptrace(PTRACE_GETREGS, t->tid, 0, &t->held) == 0 &&
		               ptrace(PTRACE_LISTEN, t->tid, 0, 0) == 0;
	} else
		ptrace(PTRACE_CONT, t->tid, 0, t->sig);
	t->stopped = 0;
	t->sig = 0;
}

static void reopen_mem(struct sim_inspect *in)
{
	char path[64];
	if (in->memfd >= 0)
		close(in->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)in->pid);
	in->memfd = open(path, O_RDONLY | O_CLOEXEC);
}

/* One waitpid status of a tracee of ours. */
static void on_status(struct sim_inspect *in, pid_t tid, int st)
{
	int i = thread_find(in, tid);

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (i >= 0)
			thread_remove(in, (uint32_t)i);
		if (tid == in->pid)
			in->gone = 1; /* a leader is reported last: the program ended */
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	int event = (st >> 16) & 0xff, sig = WSTOPSIG(st), group = 0;
	unsigned long msg = 0;
	if (event == PTRACE_EVENT_CLONE) {
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && thread_find(in, (pid_t)msg) < 0)
			thread_add(in, (pid_t)msg); /* its first stop comes (or came: then it is known) */
		sig = 0;
	} else if (event == PTRACE_EVENT_EXEC) {
		/* One thread exec'd: it is the leader now, the others are gone
		 * (their exits, if they come, find nothing), and the memory is
		 * the new program's. */
		for (uint32_t k = in->n; k-- > 0;)
			if (in->t[k].tid != tid)
				thread_remove(in, k);
		i = thread_find(in, tid);
		reopen_mem(in);
		sig = 0;
	} else if (event == PTRACE_EVENT_STOP) {
		/* A group-stop says its stop signal; our interrupt, a new
		 * thread's first stop and a group-stop's end (SIGCONT) SIGTRAP. */
		group = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
		sig = 0;
	} else if (event) {
		sig = 0;
	}
	if (i < 0)
		i = thread_add(in, tid); /* a new thread before its parent's clone event */
	if (i < 0) {
		/* not a vCPU: never kept stopped */
		if (group)
			ptrace(PTRACE_LISTEN, tid, 0, 0);
		else
			ptrace(PTRACE_CONT, tid, 0, sig);
		return;
	}
	struct sim_thread *t = &in->t[i];
	t->stopped = 1;
	t->listening = 0;
	t->group_stop = (uint8_t)group;
	if (sig)
		t->sig = sig;
	if (!in->paused)
		resume(in, (uint32_t)i);
}

/* The inspection of this thread that tid belongs to, or NULL (invariant 5). */
static struct sim_inspect *owner_of(pid_t tid)
{
	for (struct sim_inspect *in = mine; in; in = in->next)
		if (in->pid == tid || thread_find(in, tid) >= 0)
			return in;
	for (struct sim_inspect *in = mine; in; in = in->next) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)in->pid, (int)tid);
		if (access(path, F_OK) == 0)
			return in;
	}
	return NULL;
}

/* One status a waitpid of this thread returned, to its inspection. */
static void dispatch(pid_t tid, int st)
{
	struct sim_inspect *in = owner_of(tid);
	if (in) {
		on_status(in, tid, st);
		return;
	}
	if (!WIFSTOPPED(st))
		return; /* the end of a thread nobody samples */
	/* A thread of a program no longer inspected (it had not stopped for
	 * the close's detach): let go now, with the signal it stopped for,
	 * for this thread may trace others for long, and a tracer kept
	 * would refuse the next sampler of that program (EPERM). */
	int event = (st >> 16) & 0xff, sig = WSTOPSIG(st);
	ptrace(PTRACE_DETACH, tid, 0, event ? 0 : sig);
}

/* Nothing traced by this thread any more: every inspection has ended. */
static void all_gone(void)
{
	for (struct sim_inspect *in = mine; in; in = in->next)
		in->gone = 1;
}

/* Every status waiting (none blocks), for whichever inspection; -1 and
 * errno ECHILD when nothing is traced any more. */
static int take_news(void)
{
	int st;
	pid_t tid;
	while ((tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG)) > 0)
		dispatch(tid, st);
	if (tid < 0 && errno == ECHILD)
		all_gone(); /* the programs and every thread of them gone */
	return tid < 0 ? -1 : 0;
}

/* A thread's state from its stat file: its letter, or 0; *cpu (when not
 * NULL) the CPU it last ran on, or -1. */
static char thread_state(struct sim_thread *t, pid_t pid, int *cpu)
{
	char buf[512];
	if (cpu)
		*cpu = -1;
	if (t->stat_fd < 0) {
		snprintf(buf, sizeof(buf), "/proc/%d/task/%d/stat", (int)pid, (int)t->tid);
		t->stat_fd = open(buf, O_RDONLY | O_CLOEXEC);
	}
	ssize_t n = t->stat_fd >= 0 ? pread(t->stat_fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *end = strrchr(buf, ')'); /* the name may hold anything but this is the last */
	if (!end || end[1] != ' ')
		return 0;
	if (cpu) { /* field 39, "processor"; the state is field 3 */
		const char *f = end + 2;
		for (int field = 3; field < 39 && f; field++)
			if ((f = strchr(f, ' ')) != NULL)
				f++;
		if (f && *f >= '0' && *f <= '9')
			*cpu = atoi(f);
	}
	return end[2];
}

/* ---- open and close ------------------------------------------------------------------- */

static int pause_threads(struct sim_inspect *in, int full);

/* Seizes every thread of the program, listing them again until a listing
 * finds none new (threads made meanwhile by a seized one are seized by
 * the kernel); 0, or -1 and errno (of the leader's seize). */
static int seize_all(struct sim_inspect *in)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)in->pid);
	for (int round = 0; round < SEIZE_ROUNDS; round++) {
		DIR *d = opendir(path);
		if (!d)
			return -1;
		int added = 0;
		struct dirent *e;
		while ((e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0 || thread_find(in, tid) >= 0)
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, TRACE_OPTS) != 0) {
				/* EPERM after the leader: already ours (made by a
				 * seized thread); ESRCH: gone */
				if (in->n == 0 && tid == in->pid) {
					int err = errno;
					closedir(d);
					errno = err;
					return -1;
				}
				continue;
			}
			if (thread_add(in, tid) >= 0)
				added++;
		}
		closedir(d);
		if (in->n == 0) {
			errno = ESRCH;
			return -1;
		}
		if (!added)
			break;
	}
	return 0;
}

/* sim_program_of: the program's pid (and a pidfd in *fd) from xensim, asked again while
 * it is being started for up to rounds x 10 ms: EAGAIN, the program is
 * being started (its exec comes within milliseconds of the domain);
 * EOPNOTSUPP, not a program yet (a toolstack makes the domain, then runs
 * its kernel in it).  0, or -1 with the reason in err and errno. */
int sim_program_of(struct plat *p, uint32_t domid, int rounds, pid_t *pid, int *fd, char *err, size_t errlen)
{
	struct sim_msg m = {.op = SIM_DOM_PROG, .a = {domid}};
	const void *reply;
	size_t rlen;
	int rc;
	*fd = -1;
	for (int i = 0; (rc = sim_call(p, &m, NULL, 0, fd, &reply, &rlen)) != 0 &&
	                (errno == EAGAIN || errno == EOPNOTSUPP) && i < rounds;
	     i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		m = (struct sim_msg){.op = SIM_DOM_PROG, .a = {domid}};
		nanosleep(&ts, NULL);
	}
	if (rc != 0 || *fd < 0 || m.a[0] == 0) {
		int e = rc != 0 ? errno : EPROTO;
		snprintf(err, errlen, "domain %u: %s", domid,
		         e == ESRCH        ? "no such domain"
		         : e == EOPNOTSUPP ? "not a program (only a domain made with 'xensim create --exec' can be sampled on xensim)"
		                           : strerror(e));
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		errno = e;
		return -1;
	}
	*pid = (pid_t)m.a[0];
	return 0;
}

int sim_inspect_ready(struct plat *p, uint32_t domid, char *err, size_t errlen)
{
	pid_t pid;
	int fd;
	if (sim_program_of(p, domid, 200, &pid, &fd, err, errlen) != 0)
		return -1;
	close(fd);
	return 0;
}

struct plat_inspect *sim_inspect_open(struct plat *p, uint32_t domid, char *err, size_t errlen)
{
	struct sim_inspect *in = calloc(1, sizeof(*in));
	int fd = -1;
	pid_t pid;

	if (!in) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	in->pidfd = in->memfd = -1;
	/* Asked once: waiting for a program that is being started is
	 * sim_inspect_ready's, on a thread of the caller's that may wait
	 * (this one may trace other programs, which must not wait). */
	if (sim_program_of(p, domid, 0, &pid, &fd, err, errlen) != 0) {
		int e = errno;
		free(in);
		errno = e;
		return NULL;
	}
	in->base.p = p;
	in->base.domid = domid;
	in->pid = pid;
	in->pidfd = fd;
	in->next = mine; /* from the first seize: its statuses are its own */
	mine = in;
	if (sim_wake_timer_open(&in->timer) != 0) {
		snprintf(err, errlen, "domain %u: a timer: %s", domid, strerror(errno));
		goto fail;
	}
	in->timer_ok = 1;
	if (seize_all(in) != 0) {
		int e = errno;
		snprintf(err, errlen, "domain %u: cannot trace its program (pid %d): %s%s", domid, (int)in->pid,
		         strerror(e),
		         e == EPERM ? " (another tracer holds it, or ptrace is not permitted here: Yama's "
		                      "ptrace_scope above 1, a sandbox)"
		                    : "");
		goto fail;
	}
	/* invariant 4: the pid seized is still the program's */
	struct pollfd pf = {in->pidfd, POLLIN, 0};
	if (poll(&pf, 1, 0) != 0) {
		snprintf(err, errlen, "domain %u: no such domain (its program ended)", domid);
		errno = ESRCH;
		goto fail;
	}
	reopen_mem(in);
	if (in->memfd < 0) {
		snprintf(err, errlen, "domain %u: its memory: %s", domid, strerror(errno));
		goto fail;
	}
	return &in->base;
fail:
	sim_inspect_close(&in->base);
	return NULL;
}

void sim_inspect_close(struct plat_inspect *b)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	/* Detached stopped (the kernel wants it so), each with what it
	 * stopped for; a thread that does not stop in time is detached at
	 * its next stop (dispatch: no inspection owns it any more), or when
	 * this thread ends. */
	if (in->paused)
		sim_inspect_unpause(b);
	sim_wake_chld_pass(1); /* as a pause's (invariant 6) */
	if (!in->gone && in->n && pause_threads(in, 1) == 0)
		for (uint32_t i = 0; i < in->n; i++)
			if (in->t[i].stopped)
				ptrace(PTRACE_DETACH, in->t[i].tid, 0, in->t[i].group_stop ? 0 : in->t[i].sig);
	sim_wake_chld_pass(0);
	for (uint32_t i = 0; i < in->n; i++) {
		if (in->t[i].stat_fd >= 0)
			close(in->t[i].stat_fd);
		if (in->t[i].sched_fd >= 0)
			close(in->t[i].sched_fd);
	}
	if (in->timer_ok)
		timer_delete(in->timer);
	if (in->memfd >= 0)
		close(in->memfd);
	if (in->pidfd >= 0)
		close(in->pidfd);
	for (struct sim_inspect **pp = &mine; *pp; pp = &(*pp)->next)
		if (*pp == in) {
			*pp = in->next;
			break;
		}
	if (!mine)
		sim_wake_chld_close(); /* (the thread may end now: invariant 6) */
	free(in);
}

/* ---- pause, unpause, wait ---------------------------------------------------------------- */

/* Every thread stopped, or not to be waited for (offline; listening,
 * unless full). */
static int all_stopped(const struct sim_inspect *in, int full)
{
	for (uint32_t i = 0; i < in->n; i++)
		if (!in->t[i].stopped && !in->t[i].offline && (full || !in->t[i].listening))
			return 0;
	return 1;
}

/* A pause's interrupt to every thread it waits for (offline: a zombie,
 * or one that cannot be interrupted, exiting). */
static void interrupt_threads(struct sim_inspect *in, int full)
{
	for (uint32_t i = 0; i < in->n; i++) {
		struct sim_thread *t = &in->t[i];
		t->offline = t->zombie;
		if (t->listening && !full)
			continue;
		if (!t->stopped && !t->offline && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) != 0)
			t->offline = 1; /* exiting: its exit comes */
	}
}

/* The states of the threads not stopped yet: 1 when every one runs on
 * another CPU than this thread's.  A leader that exited before its
 * threads stays a zombie, which no interrupt stops: offline. */
static int all_away(struct sim_inspect *in)
{
	int here = sched_getcpu(), away = here >= 0;
	for (uint32_t i = 0; i < in->n; i++) {
		int cpu;
		if (in->t[i].stopped || in->t[i].offline)
			continue;
		char state = thread_state(&in->t[i], in->pid, &cpu);
		if (state == 'Z')
			in->t[i].zombie = in->t[i].offline = 1;
		else if (state != 'R' || cpu < 0 || cpu == here)
			away = 0;
	}
	return away;
}

/* full: a thread in a group-stop (listening) is stopped too, as
 * PTRACE_DETACH wants it; a sample leaves it be, so that a program
 * stopped by SIGSTOP stays so, not woken at every tick. */
static int pause_threads(struct sim_inspect *in, int full)
{
	int st;
	pid_t tid;

	take_news();
	if (in->gone) {
		errno = ESRCH;
		return -1;
	}
	if (in->paused) {
		errno = EBUSY;
		return -1;
	}
	in->paused = 1;
	interrupt_threads(in, full);
	/* The stops are looked for once, then each thread not stopped has its
	 * state read (a zombie leader never stops).  When every one of them
	 * runs on another CPU, their stops are looked for again and again for
	 * up to PAUSE_SPIN_MAX_US: asleep, this thread's CPU may idle (a VM's
	 * vCPU halts), and the stop's wake-up of it was most of a pause's
	 * tail (a stop at 99 Hz: p50 25, p90 31-66, p99 82-89 us asleep; p90
	 * 30-33, p99 49-53 looked for).  One on this CPU is slept for at
	 * once: it needs this CPU to stop (a spin of 10 us took the p50 at
	 * 999 Hz from 20 to 28 us when every thread was spun for).  The state
	 * reads come before any sleep: they are likely what a stop takes on
	 * the other core (p50 31-35 us when they came only after 1 ms asleep,
	 * 16-27 us so). */
	int64_t t0 = mono_us(), deadline = t0 + PAUSE_WAIT_MAX_US, spin_until = 0;
	int zombies_looked = 0;
	while (!all_stopped(in, full) && !in->gone) {
		tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG);
		if (tid > 0) {
			dispatch(tid, st);
			continue;
		}
		if (tid < 0 && errno != EINTR) {
			if (errno == ECHILD)
				all_gone();
			break;
		}
		int64_t now = mono_us();
		if (!zombies_looked) {
			zombies_looked = 1;
			if (all_away(in))
				spin_until = now + PAUSE_SPIN_MAX_US;
			continue;
		}
		if (now < spin_until)
			continue;
		if (now >= deadline) {
			for (uint32_t i = 0; i < in->n; i++)
				if (!in->t[i].stopped && (full || !in->t[i].listening))
					in->t[i].offline = 1; /* its stop is resumed when it comes */
			break;
		}
		sim_wake_timer_at(in->timer, deadline);
		tid = waitpid(-1, &st, __WALL | __WNOTHREAD);
		sim_wake_timer_at(in->timer, 0);
		if (tid > 0)
			dispatch(tid, st);
		else if (errno == ECHILD)
			all_gone();
	}
	if (in->gone) {
		in->paused = 0;
		errno = ESRCH;
		return -1;
	}
	return 0;
}

int sim_inspect_pause(struct plat_inspect *b)
{
	sim_wake_chld_pass(1);
	int rc = pause_threads((struct sim_inspect *)b, 0);
	if (rc != 0)
		sim_wake_chld_pass(0);
	return rc;
}

int sim_inspect_unpause(struct plat_inspect *b)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	if (!in->paused) {
		errno = EINVAL;
		return -1;
	}
	in->paused = 0;
	for (uint32_t i = 0; i < in->n; i++)
		resume(in, i);
	sim_wake_chld_pass(0);
	return 0;
}

int sim_inspect_wait(struct plat *p, int64_t until_us, int wake_fd)
{
	(void)p; /* every inspection of this thread, whichever instance opened it */
	for (;;) {
		int none = !mine || take_news() != 0;
		struct sim_inspect *in = mine;
		for (struct sim_inspect *i = mine; i; i = i->next)
			if (i->gone)
				return 1; /* an end to take */
		struct pollfd pf = {wake_fd, POLLIN, 0};
		if (wake_fd >= 0 && poll(&pf, 1, 0) > 0)
			return 1;
		int64_t now = mono_us();
		if (now >= until_us)
			return 0;
		int64_t at = until_us < now + WAKE_LOOK_US ? until_us : now + WAKE_LOOK_US;
		if (none) { /* nothing traced to wait for */
			poll(&pf, wake_fd >= 0, (int)((at - now + 999) / 1000));
			continue;
		}
		int cfd = sim_wake_chld_open();
		if (cfd >= 0) { /* invariant 6 */
			struct pollfd pfs[2] = {{cfd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
			struct timespec ts = {(time_t)((at - now) / 1000000), (long)((at - now) % 1000000) * 1000};
			if (ppoll(pfs, wake_fd >= 0 ? 2 : 1, &ts, NULL) > 0 && pfs[0].revents)
				sim_wake_chld_drain(cfd);
			continue; /* the statuses are taken at the top */
		}
		/* Sleeps in waitpid, so that a stop of the program wakes it
		 * (invariant 2); the timer's signal ends the sleep. */
		int st;
		sim_wake_timer_at(in->timer, at);
		pid_t tid = waitpid(-1, &st, __WALL | __WNOTHREAD);
		sim_wake_timer_at(in->timer, 0);
		if (tid > 0)
			dispatch(tid, st);
	}
}

int sim_inspect_ended(struct plat_inspect *b)
{
	return ((struct sim_inspect *)b)->gone; /* as the last wait or pause took the news */
}

int sim_inspect_vcpus(struct plat_inspect *b)
{
	return (int)((struct sim_inspect *)b)->n;
}

/* Without stopping it: 1 when every thread sleeps (S, D, I), 0 when one
 * runs, -1 otherwise (one stopped: look by pausing). */
int sim_inspect_idle(struct plat_inspect *b)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	if (in->paused || in->n == 0)
		return -1;
	for (uint32_t i = 0; i < in->n; i++) {
		if (in->t[i].zombie || in->t[i].listening)
			continue; /* a group-stop runs no more than a sleep */
		char s = thread_state(&in->t[i], in->pid, NULL);
		if (s == 'R')
			return 0;
		if (!s || !strchr("SDI", s))
			return -1;
	}
	return 1;
}

/* Blocked: interrupted inside a system call the kernel will restart
 * (-ERESTARTSYS .. -ERESTART_RESTARTBLOCK), or one that returned EINTR. */
static int in_blocking_call(const struct user_regs_struct *r)
{
	long rax = (long)r->rax;
	return (long)r->orig_rax >= 0 && ((rax <= -512 && rax >= -516) || rax == -EINTR);
}

/* The CPU time a thread has run, in ns (its schedstat's first field, as
 * Xen's vCPU cpu_time); 0 when it cannot be read. */
static uint64_t thread_cpu_ns(struct sim_thread *t, pid_t pid)
{
	char buf[96];
	if (t->sched_fd < 0) {
		snprintf(buf, sizeof(buf), "/proc/%d/task/%d/schedstat", (int)pid, (int)t->tid);
		t->sched_fd = open(buf, O_RDONLY | O_CLOEXEC);
	}
	ssize_t n = t->sched_fd >= 0 ? pread(t->sched_fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

int sim_inspect_regs(struct plat_inspect *b, uint32_t vcpu, struct plat_vcpu_regs *out)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	struct user_regs_struct r;

	if (!in->paused || vcpu >= in->n) {
		errno = !in->paused ? EINVAL : ENOENT;
		return -1;
	}
	memset(out, 0, sizeof(*out));
	struct sim_thread *t = &in->t[vcpu];
	if (t->listening)
		r = t->held; /* stopped by SIGSTOP & co.: as it stopped */
	else if (!t->stopped || ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0)
		return 0; /* offline: a thread that did not stop, or went */
	*out = (struct plat_vcpu_regs){
		.rip = r.rip, .rsp = r.rsp, .rbp = r.rbp, .rax = r.rax, .rbx = r.rbx, .rcx = r.rcx,
		.rdx = r.rdx, .rsi = r.rsi, .rdi = r.rdi, .r8 = r.r8, .r9 = r.r9, .r10 = r.r10,
		.r11 = r.r11, .r12 = r.r12, .r13 = r.r13, .r14 = r.r14, .r15 = r.r15, .rflags = r.eflags,
		.online = 1, .blocked = (uint8_t)(t->listening || in_blocking_call(&r)), .width = 8,
		.cpu_ns = thread_cpu_ns(t, in->pid),
	};
	return 0;
}

long sim_inspect_read(struct plat_inspect *b, uint64_t cr3, uint64_t va, void *buf, size_t len)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	size_t got = 0;

	(void)cr3; /* a program's addresses are virtual already */
	if (va > INT64_MAX || len > INT64_MAX - va) {
		errno = EFAULT;
		return -1;
	}
	while (in->memfd >= 0 && got < len) {
		ssize_t n = pread(in->memfd, (uint8_t *)buf + got, len - got, (off_t)(va + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got == 0) {
		errno = EFAULT;
		return -1;
	}
	return (long)got;
}
