/*
 * xensim_loop.c - the daemon's event loop (epoll: clients and listeners
 * registered by the xenstored and the hypervisor, waited on by xensim.c)
 * and its log, one line an event, every guest-chosen byte escaped.
 *
 * May call: util/safe_text.  No other part of xensim: they all call it.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "util/safe_text.h"
#include "xensim_loop.h"

int sim_verbose;
static int epfd = -1;
static FILE *log_file;

void sim_log(const char *fmt, ...)
{
	va_list ap;
	FILE *f = log_file ? log_file : stderr;
	struct timespec ts;
	struct tm tm;
	char when[32], raw[1024], line[1024];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(f, "xensim %s.%03ld ", when, ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* Domain names and xenstore paths are a guest's choice: escaped, so
	 * that no line of the log can be forged or steer a terminal. */
	fprintf(f, "%s\n", safe_text(line, sizeof(line), raw));
	fflush(f);
}

void sim_log_to(FILE *f)
{
	log_file = f;
}

int loop_open(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -1 : 0;
}

int loop_wait(struct epoll_event *evs, int max)
{
	return epoll_wait(epfd, evs, max, -1);
}

void loop_close(void)
{
	close(epfd);
}

int loop_add(struct ev_item *it, int want_write)
{
	struct epoll_event ev = {.events = EPOLLIN | (want_write ? EPOLLOUT : 0), .data.ptr = it};
	return epoll_ctl(epfd, EPOLL_CTL_ADD, it->fd, &ev);
}

void loop_mod(struct ev_item *it, int want_write)
{
	struct epoll_event ev = {.events = EPOLLIN | (want_write ? EPOLLOUT : 0), .data.ptr = it};
	epoll_ctl(epfd, EPOLL_CTL_MOD, it->fd, &ev);
}

void loop_del(struct ev_item *it)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, it->fd, NULL);
}
