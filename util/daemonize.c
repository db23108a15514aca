/*
 * daemonize.c - fork into a daemon and wait until it serves (see
 * daemonize.h).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "daemonize.h"

pid_t daemonize(const char *prog, int *ready_fd)
{
	int p[2];

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
	char c;
	ssize_t n = read(p[0], &c, 1);
	close(p[0]);
	return n == 1 ? pid : -1;
}
