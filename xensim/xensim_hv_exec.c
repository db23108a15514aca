/*
 * xensim_hv_exec.c - domains that are programs: `xensim create --exec
 * PROGRAM` runs PROGRAM as the domain's vCPUs (its threads, in the order
 * they were made); the domain ends when the program exits.
 *
 * xensim only starts the program and reaps it: it is no tracer.  dom0's
 * sampler is (platform/platform_sim_inspect.c), as on Xen the backend
 * itself makes the pause hypercall: it seizes every thread with ptrace,
 * stops, reads and resumes them on its own thread, and nothing of a pause
 * goes through xensim.  So that it may attach:
 *  - the child says, before its exec, that any process may trace it
 *    (PR_SET_PTRACER_ANY: under Yama's ptrace_scope 1 only ancestors may
 *    otherwise, and the backend is none; a host without Yama ignores it);
 *  - xensim publishes the program's pid once the exec is done (a close-on-
 *    exec pipe says when: before it, the memory is still xensim's child's),
 *    with a pidfd that tells the sampler the pid it seized is still that
 *    program (xensim, its parent, has not reaped it).
 * The child dies with xensim (PR_SET_PDEATHSIG), as the domains of a
 * hypervisor that goes.  A traced program's exit reaches xensim, its
 * parent, once its tracer has taken it (the sampler waits for its
 * tracees all the time it samples) or has gone.
 *
 * May call: the event loop and log (xensim_loop.h).  The domain table
 * (xensim_hv_dom.c) holds a struct hv_prog per program; xensim_hv.c calls
 * this to start and reap them.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xensim_hv_parts.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY ((unsigned long)-1)
#endif

/* The programs running, to find a child's domain by its pid. */
static struct hv_prog *progs;

/* The child: its console, no blocked signals (xensim blocks its own), dies
 * with xensim, may be traced by dom0's sampler, then the program. */
static void child_exec(const char *cwd, int console, int exec_pipe, pid_t parent, char *const argv[],
                       uint32_t domid, const char *dir)
{
	sigset_t none;
	char v[32];

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127); /* xensim went before we could know */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* EINVAL without Yama: nothing to allow */
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(console, 1) < 0 || dup2(console, 2) < 0)
		_exit(127);
	if (cwd[0] && chdir(cwd) != 0)
		_exit(127);
	snprintf(v, sizeof(v), "%u", domid);
	setenv("XENSIM_DOMID", v, 1);
	setenv("XENSIM_DIR", dir, 1);
	execv(argv[0], argv);
	int e = errno;
	if (write(exec_pipe, &e, sizeof(e)) != (ssize_t)sizeof(e)) {
		/* xensim reads EOF instead: the same (no exec) */
	}
	dprintf(2, "xensim: cannot run %s: %s\n", argv[0], strerror(e));
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
	int pp[2];
	if (!p || pipe2(pp, O_CLOEXEC) != 0) {
		close(console);
		free(p);
		snprintf(err, errlen, "out of resources: %s", strerror(errno));
		return -1;
	}
	pid_t self = getpid(), pid = fork();
	if (pid == 0) {
		close(pp[0]);
		child_exec(cwd, console, pp[1], self, argv, d->domid, dir);
	}
	close(console);
	close(pp[1]);
	if (pid < 0) {
		close(pp[0]);
		snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(errno));
		free(p);
		return -1;
	}
	/* The exec is done when the pipe closes with nothing in it (a
	 * millisecond or so; a failed exec writes its errno, and the child's
	 * exit ends the domain as the program's would). */
	int e = 0;
	ssize_t n;
	while ((n = read(pp[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(pp[0]);
	p->domid = d->domid;
	p->pid = pid;
	p->execed = n == 0;
	p->next = progs;
	progs = p;
	d->prog = p;
	sim_log("domain %u (%s) runs %s (pid %d)", d->domid, d->name, argv[0], (int)pid);
	return 0;
}

int hv_exec_children(uint32_t *ended)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (struct hv_prog *p = progs; p; p = p->next) {
			if (p->pid != pid || p->exited)
				continue;
			p->exited = 1; /* its pid may be reused from now on: never signalled again */
			sim_log("domain %u: program (pid %d) %s %d", p->domid, (int)pid,
			        WIFEXITED(st) ? "exited with status" : "killed by signal",
			        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			*ended = p->domid;
			return 1;
		}
		/* a program whose domain was destroyed: nobody knows it now */
	}
	return 0;
}

int hv_exec_pidfd(struct hv_prog *p)
{
	if (p->exited) {
		errno = ESRCH;
		return -1;
	}
	if (!p->execed) {
		/* Its exec failed: it is xensim's child still, and exits. */
		errno = EAGAIN;
		return -1;
	}
	/* Not reaped yet (xensim, its parent, reaps it), so the pid is the
	 * program's. */
	return (int)syscall(SYS_pidfd_open, p->pid, 0);
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
