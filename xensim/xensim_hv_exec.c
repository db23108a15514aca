/*
 * xensim_hv_exec.c - domains that are programs: `xensim create --exec
 * PROGRAM` runs PROGRAM as the domain's vCPUs (its threads, in the order
 * they were made), under ptrace so that dom0 can sample it as it samples a
 * Xen guest: pause (every thread stopped with PTRACE_INTERRUPT), the
 * registers of each, the memory through /proc/PID/mem (opened here and
 * handed over, so that the sampler reads the program's own virtual
 * addresses), unpause.  The domain ends when the program exits.
 *
 * Why ptrace and not SIGSTOP: a stopped process's registers can only be
 * read by its tracer, and a group stop cannot be told apart from the
 * program stopping itself.  PTRACE_SEIZE (not TRACEME) so that
 * PTRACE_INTERRUPT works and exec brings no extra SIGTRAP; TRACECLONE so
 * that every thread the program makes is traced from its first
 * instruction; TRACEEXEC to know when its memory is the program's (a
 * /proc/PID/mem opened before the exec would read the old one forever);
 * EXITKILL so that a dying xensim takes its programs along.
 * xensim is the parent, so no ptrace permission is needed beyond that.
 *
 * Invariants:
 *  1. Outside a pause, every stop a thread reports is resumed at once,
 *     with the signal it stopped for (signal-delivery-stop), so the
 *     program sees its signals as it would untraced.
 *  2. Inside a pause, a thread is "stopped" once waitpid reported a stop
 *     of any kind for it; its pending signal is delivered at unpause.
 *  3. A pause is complete when every thread has reported a stop; it is
 *     not waited for: the stops come as SIGCHLD news like any other, and
 *     xensim serves every other domain meanwhile (a pause that blocked
 *     xensim held up every guest's event channels, 64 sampled domains
 *     tripled a HaLVM neighbour's p99).  A thread that exits meanwhile
 *     leaves the table (a program that dies mid-pause is a domain that
 *     ends, as on Xen).
 *
 * May call: the event loop and log (xensim_loop.h).  The domain table
 * (xensim_hv_dom.c) holds a struct hv_prog per program; xensim_hv.c calls
 * this to start, pause and reap them.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xensim_hv_parts.h"

#define PAUSE_SPIN_US 10

/* The programs running, to find a thread's domain by its tid. */
static struct hv_prog *progs;

static struct hv_prog *prog_of_tid(pid_t tid, int *idx)
{
	for (struct hv_prog *p = progs; p; p = p->next) {
		for (int i = 0; i < p->nthreads; i++)
			if (p->threads[i].tid == tid) {
				*idx = i;
				return p;
			}
	}
	return NULL;
}

static void thread_add(struct hv_prog *p, pid_t tid)
{
	if (p->nthreads >= (int)SIM_MAX_VCPUS) {
		/* More threads than vCPUs: this one runs unseen (never paused). */
		if (!p->too_many_logged)
			sim_log("domain %u: more than %u threads: the rest are not vCPUs", p->domid,
			        SIM_MAX_VCPUS);
		p->too_many_logged = 1;
		return;
	}
	p->threads[p->nthreads++] = (struct hv_thread){.tid = tid};
}

static void thread_remove(struct hv_prog *p, int i)
{
	memmove(&p->threads[i], &p->threads[i + 1], (size_t)(p->nthreads - i - 1) * sizeof(p->threads[0]));
	p->nthreads--;
}

/* The child: its console, no blocked signals (xensim blocks its own), then
 * the program. */
static void child_exec(const char *cwd, int console, char *const argv[], uint32_t domid,
                       const char *dir)
{
	sigset_t none;
	char v[32];

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(console, 1) < 0 || dup2(console, 2) < 0)
		_exit(127);
	if (cwd[0] && chdir(cwd) != 0)
		_exit(127);
	snprintf(v, sizeof(v), "%u", domid);
	setenv("XENSIM_DOMID", v, 1);
	setenv("XENSIM_DIR", dir, 1);
	/* Wait here until xensim has seized us: nothing of the program runs
	 * untraced. */
	raise(SIGSTOP);
	execv(argv[0], argv);
	dprintf(2, "xensim: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int hv_exec_start(struct domain *d, const char *cwd, const char *console_path, char *const argv[],
                  const char *dir, char *err, size_t errlen)
{
	int console = open(console_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (console < 0) {
		snprintf(err, errlen, "console %s: %s", console_path, strerror(errno));
		return -1;
	}
	struct hv_prog *p = calloc(1, sizeof(*p));
	if (!p) {
		close(console);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		child_exec(cwd, console, argv, d->domid, dir);
	close(console);
	int st;
	if (pid < 0 || waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL) != 0) {
		snprintf(err, errlen, "cannot start %s under ptrace: %s", argv[0], strerror(errno));
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		free(p);
		return -1;
	}
	p->domid = d->domid;
	p->pid = pid;
	thread_add(p, pid);
	p->next = progs;
	progs = p;
	d->prog = p;
	kill(pid, SIGCONT); /* its SIGCONT stop is resumed by hv_exec_children */
	sim_log("domain %u (%s) runs %s (pid %d)", d->domid, d->name, argv[0], (int)pid);
	return 0;
}

/* A stop while paused (invariant 2), or one resumed at once (1). */
static void on_stop(struct hv_prog *p, int i, int st)
{
	pid_t tid = p->threads[i].tid;
	int event = st >> 16, sig = WSTOPSIG(st);

	if (event == PTRACE_EVENT_CLONE) {
		unsigned long child = 0;
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) == 0)
			thread_add(p, (pid_t)child);
		sig = 0;
	} else if (event == PTRACE_EVENT_EXEC) {
		p->execed = 1; /* its memory is the program's from here on */
		sig = 0;
	} else if (event != 0) {
		sig = 0; /* PTRACE_EVENT_STOP: an interrupt or group stop */
	}
	if (p->paused) {
		p->threads[i].stopped = 1;
		if (sig)
			p->threads[i].pending_sig = sig;
		return;
	}
	ptrace(PTRACE_CONT, tid, 0, sig);
}

/* One waitpid status of a traced thread; 1 when its program ended. */
static int on_status(pid_t tid, int st, uint32_t *ended)
{
	int i;
	struct hv_prog *p = prog_of_tid(tid, &i);

	if (!p) {
		/* A new thread reporting before its parent's clone event. */
		if (WIFSTOPPED(st))
			ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	}
	if (WIFSTOPPED(st)) {
		on_stop(p, i, st);
		return 0;
	}
	thread_remove(p, i);
	if (tid != p->pid)
		return 0;
	p->exited = 1; /* its pid may be reused from now on: never signalled again */
	sim_log("domain %u: program (pid %d) %s %d", p->domid, (int)tid,
	        WIFEXITED(st) ? "exited with status" : "killed by signal",
	        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	*ended = p->domid;
	return 1;
}

/* Every thread of a program being paused has stopped (or gone). */
static int all_stopped(const struct hv_prog *p)
{
	for (int i = 0; i < p->nthreads; i++)
		if (!p->threads[i].stopped)
			return 0;
	return 1;
}

int hv_exec_children(uint32_t *ended, struct hv_prog **paused)
{
	int st;
	pid_t tid;

	/* a program's end a pause took from waitpid */
	for (struct hv_prog *p = progs; p; p = p->next)
		if (p->exit_seen && p->exited) {
			p->exit_seen = 0;
			*ended = p->domid;
			return 1;
		}
	while ((tid = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
		if (on_status(tid, st, ended))
			return 1;
	/* Pauses asked for that are now complete (invariant 3). */
	for (struct hv_prog *p = progs; p; p = p->next)
		if (p->pause_waiting && all_stopped(p)) {
			p->pause_waiting = 0;
			*paused = p;
			return 2;
		}
	return 0;
}

int hv_exec_pause(struct hv_prog *p)
{
	if (p->paused)
		return EBUSY;
	p->paused = 1;
	for (int i = 0; i < p->nthreads; i++)
		if (!p->threads[i].stopped && ptrace(PTRACE_INTERRUPT, p->threads[i].tid, 0, 0) != 0 &&
		    errno == ESRCH)
			p->threads[i].stopped = 1; /* exiting: its exit is reaped later */
	/* A running thread stops within microseconds of its interrupt: looked
	 * for at once, for up to PAUSE_SPIN_US, which spares the pause the
	 * round through SIGCHLD and the loop.  Past that (a thread in a long
	 * system call, a loaded host) the stops arrive as SIGCHLD news
	 * (hv_exec_children) while xensim serves the other domains. */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < p->nthreads; i++) {
			int st;
			uint32_t ended = 0;
			pid_t tid = p->threads[i].stopped ? 0 : waitpid(p->threads[i].tid, &st, WNOHANG | __WALL);
			if (tid > 0 && on_status(tid, st, &ended)) {
				p->exit_seen = 1; /* hv_exec_children reports it */
				break;
			}
		}
		if (all_stopped(p) && !p->exit_seen)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (p->exit_seen || (t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 > PAUSE_SPIN_US)
			break;
	}
	p->pause_waiting = 1;
	return EINPROGRESS;
}

void hv_exec_conn_gone(const struct hv_conn *c)
{
	for (struct hv_prog *p = progs; p; p = p->next)
		if (p->pause_conn == c)
			hv_exec_unpause(p);
}

int hv_exec_unpause(struct hv_prog *p)
{
	p->pause_conn = NULL;
	p->pause_waiting = 0;
	if (!p->paused)
		return EINVAL;
	p->paused = 0;
	for (int i = 0; i < p->nthreads; i++) {
		struct hv_thread *t = &p->threads[i];
		if (t->stopped)
			ptrace(PTRACE_CONT, t->tid, 0, t->pending_sig);
		t->stopped = 0;
		t->pending_sig = 0;
	}
	return 0;
}

/* Blocked: interrupted inside a system call the kernel will restart
 * (-ERESTARTSYS .. -ERESTART_RESTARTBLOCK), or one that returned EINTR. */
static int in_blocking_call(const struct user_regs_struct *r)
{
	long rax = (long)r->rax;
	return (long)r->orig_rax >= 0 && ((rax <= -512 && rax >= -516) || rax == -EINTR);
}

int hv_exec_regs(struct hv_prog *p, struct sim_vcpu_regs *out, uint32_t max)
{
	uint32_t n = 0;

	for (int i = 0; i < p->nthreads && n < max; i++) {
		struct user_regs_struct r;
		struct sim_vcpu_regs *o = &out[n++];
		memset(o, 0, sizeof(*o));
		if (!p->threads[i].stopped || ptrace(PTRACE_GETREGS, p->threads[i].tid, 0, &r) != 0)
			continue; /* offline: a thread that went away */
		uint64_t v[SIM_REGS] = {r.rip, r.rsp, r.rbp, r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi,
		                        r.r8,  r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.eflags};
		memcpy(o->r, v, sizeof(v));
		o->online = 1;
		o->tid = (uint32_t)p->threads[i].tid;
		o->blocked = (uint8_t)in_blocking_call(&r);
	}
	return (int)n;
}

int hv_exec_memfd(struct hv_prog *p)
{
	char path[64];
	if (!p->execed) {
		/* Opened now it would be the memory of xensim's child before
		 * the exec, kept by the descriptor after it. */
		errno = EAGAIN;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

void hv_exec_kill(struct domain *d)
{
	struct hv_prog *p = d->prog;
	if (!p)
		return;
	if (!p->exited)
		kill(p->pid, SIGKILL);
	for (struct hv_prog **pp = &progs; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	/* Its exit is reaped by hv_exec_children, which no longer knows it. */
	free(p);
	d->prog = NULL;
}
