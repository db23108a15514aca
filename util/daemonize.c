/*
 * daemonize.c - fork into a daemon and wait until it serves or says why it
 * cannot (see daemonize.h).  The ready pipe carries one NUL byte for
 * "serving", or the text of the failure.
 *
 * May call: libc only (fork, setsid, pipes).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <signal.h>
#include <sys/signalfd.h>

#include "daemonize.h"

pid_t daemonize_why(const char *prog, int *ready_fd, char *why, size_t whylen)
{
	int p[2];

	if (whylen)
		why[0] = '\0';
	if (pipe2(p, O_CLOEXEC) != 0) {
		fprintf(stderr, "%s: pipe: ", prog);
		perror(NULL);
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: ", prog);
		perror(NULL);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		*ready_fd = p[1];
		return 0;
	}
	close(p[1]);
	char buf[1024];
	size_t got = 0;
	ssize_t n;
	while (got < sizeof(buf) - 1 && (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		if (buf[0] == '\0')
			break; /* serving: the daemon keeps the pipe's end until it closes it */
	}
	close(p[0]);
	if (got >= 1 && buf[0] == '\0')
		return pid;
	buf[got] = '\0';
	if (whylen)
		snprintf(why, whylen, "%s", buf);
	return -1;
}

pid_t daemonize(const char *prog, int *ready_fd)
{
	return daemonize_why(prog, ready_fd, NULL, 0);
}

void daemonize_ready(int ready_fd)
{
	if (write(ready_fd, "", 1) != 1) {
		/* the parent is gone; carry on */
	}
	close(ready_fd);
}

void daemonize_failed(int ready_fd, const char *why)
{
	/* Never a leading NUL (that says "serving"); an empty reason is the
	 * same as none. */
	size_t len = why ? strlen(why) : 0;
	if (len && write(ready_fd, why, len) != (ssize_t)len) {
		/* the parent is gone */
	}
	close(ready_fd);
}

int daemonize_signal_fd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}
