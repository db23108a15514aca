/*
 * platform_sim_inspect.c - looking into a xensim domain that is a program
 * (platform.h's plat_inspect_*): xensim pauses it and replies with every
 * vCPU's registers in one round trip; its memory is read through the
 * /proc/PID/mem descriptor xensim hands over once the program has
 * started, so virtual addresses are the program's own.
 *
 * May call: the sim platform's connection (platform_sim_int.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "platform_sim_int.h"
#include "sim_proto.h"


struct sim_inspect {
	struct plat_inspect base;
	int memfd;                 /* its /proc/PID/mem, from xensim */
	int paused;
	uint32_t nvcpus;
	struct sim_vcpu_regs regs[SIM_MAX_VCPUS]; /* as the last pause found them */
	int stat_fd[SIM_MAX_VCPUS];  /* each vCPU's /proc/TID/task/TID/stat, or -1 */
	uint32_t stat_tid[SIM_MAX_VCPUS];
};

struct plat_inspect *sim_inspect_open(struct plat *p, uint32_t domid, char *err, size_t errlen)
{
	struct sim_msg m = {.op = SIM_DOM_MEM, .a = {domid}};
	struct sim_inspect *in = calloc(1, sizeof(*in));
	int fd;

	if (!in) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int rc;
	/* EAGAIN: the program is being started (its exec comes within
	 * milliseconds of the domain); EOPNOTSUPP: not a program yet (a
	 * toolstack makes the domain, then runs its kernel in it).  Asked
	 * again, for up to 2 s. */
	const void *reply;
	size_t rlen;
	for (int i = 0; (rc = sim_call(p, &m, NULL, 0, &fd, &reply, &rlen)) != 0 &&
	                (errno == EAGAIN || errno == EOPNOTSUPP) && i < 200;
	     i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		m = (struct sim_msg){.op = SIM_DOM_MEM, .a = {domid}};
		nanosleep(&ts, NULL);
	}
	if (rc != 0 || fd < 0) {
		int e = errno;
		snprintf(err, errlen, "domain %u: %s", domid,
		         e == ESRCH        ? "no such domain"
		         : e == EOPNOTSUPP ? "not a program (only a domain made with 'xensim create --exec' can be sampled on xensim)"
		                           : strerror(e));
		free(in);
		errno = e;
		return NULL;
	}
	in->base.p = p;
	in->base.domid = domid;
	in->memfd = fd;
	for (uint32_t i = 0; i < SIM_MAX_VCPUS; i++)
		in->stat_fd[i] = -1;
	return &in->base;
}

void sim_inspect_close(struct plat_inspect *b)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	if (in->paused) {
		struct sim_msg m = {.op = SIM_DOM_UNPAUSE, .a = {b->domid}};
		sim_send(b->p, &m);
	}
	close(in->memfd);
	for (uint32_t i = 0; i < SIM_MAX_VCPUS; i++)
		if (in->stat_fd[i] >= 0)
			close(in->stat_fd[i]);
	free(in);
}

/* The threads the pause found, their state files kept open (a pread
 * each when asked whether the domain idles). */
static void note_threads(struct sim_inspect *in)
{
	for (uint32_t i = 0; i < SIM_MAX_VCPUS; i++) {
		uint32_t tid = i < in->nvcpus && in->regs[i].online ? in->regs[i].tid : 0;
		if (tid == in->stat_tid[i])
			continue;
		if (in->stat_fd[i] >= 0)
			close(in->stat_fd[i]);
		in->stat_fd[i] = -1;
		in->stat_tid[i] = tid;
		if (tid) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", tid, tid);
			in->stat_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
}

/* One round trip: xensim stops every thread and replies with their
 * registers, so a pause window costs one call each way. */
int sim_inspect_pause(struct plat_inspect *b)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	struct sim_msg m = {.op = SIM_DOM_PAUSE, .a = {b->domid}};
	const void *reply;
	size_t rlen;

	if (sim_call(b->p, &m, NULL, 0, NULL, &reply, &rlen) != 0)
		return -1;
	in->paused = 1;
	uint32_t n = m.a[0] <= SIM_MAX_VCPUS ? m.a[0] : SIM_MAX_VCPUS;
	if (rlen < (size_t)n * sizeof(struct sim_vcpu_regs))
		n = (uint32_t)(rlen / sizeof(struct sim_vcpu_regs));
	memcpy(in->regs, reply, (size_t)n * sizeof(struct sim_vcpu_regs));
	in->nvcpus = n;
	note_threads(in);
	return 0;
}

/* Each vCPU's thread state, read without stopping it: 1 running, 0
 * asleep or waiting (S, D, I), -1 anything else: a thread still stopped
 * ('t': xensim has not yet taken our one-way unpause, on a loaded host)
 * is no idle vCPU. */
static int thread_running(int fd)
{
	char buf[512];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *end = strrchr(buf, ')'); /* the name may hold anything but this is the last */
	if (!end || end[1] != ' ' || !end[2])
		return -1;
	return end[2] == 'R' ? 1 : strchr("SDI", end[2]) ? 0 : -1;
}

int sim_inspect_idle(struct plat_inspect *b)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	if (in->paused || in->nvcpus == 0)
		return -1;
	for (uint32_t i = 0; i < in->nvcpus; i++) {
		if (!in->regs[i].online)
			continue;
		int r = thread_running(in->stat_fd[i]);
		if (r != 0)
			return r > 0 ? 0 : -1;
	}
	return 1;
}

int sim_inspect_unpause(struct plat_inspect *b)
{
	struct sim_inspect *in = (struct sim_inspect *)b;
	struct sim_msg m = {.op = SIM_DOM_UNPAUSE, .a = {b->domid}};
	in->paused = 0;
	return sim_send(b->p, &m);
}

int sim_inspect_vcpus(struct plat_inspect *b)
{
	return (int)((struct sim_inspect *)b)->nvcpus;
}

int sim_inspect_regs(struct plat_inspect *b, uint32_t vcpu, struct plat_vcpu_regs *out)
{
	struct sim_inspect *in = (struct sim_inspect *)b;

	if (!in->paused || vcpu >= in->nvcpus) {
		errno = !in->paused ? EINVAL : ENOENT;
		return -1;
	}
	const struct sim_vcpu_regs *r = &in->regs[vcpu];
	const uint64_t *v = r->r;
	*out = (struct plat_vcpu_regs){
		.rip = v[0], .rsp = v[1], .rbp = v[2], .rax = v[3], .rbx = v[4], .rcx = v[5],
		.rdx = v[6], .rsi = v[7], .rdi = v[8], .r8 = v[9], .r9 = v[10], .r10 = v[11],
		.r11 = v[12], .r12 = v[13], .r13 = v[14], .r14 = v[15], .r15 = v[16], .rflags = v[17],
		.online = r->online, .blocked = r->blocked, .width = 8,
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
	while (got < len) {
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

