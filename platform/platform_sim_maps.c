/*
 * platform_sim_maps.c - what is mapped where in a xensim domain that is a
 * program (platform.h's plat_domain_maps): its /proc/PID/maps, read whole
 * (bounded by PLAT_MAPS_MAX), the pid asked of xensim and held by its
 * pidfd, so that the text read is the program's and not a later process's
 * that reused the pid.  Any thread may ask, on its own platform instance.
 *
 * May call: the seam's types (platform.h), xensim's program query
 * (platform_sim_inspect.c, through platform_sim_int.h), libc.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"
#include "platform_sim_int.h"

/* The whole of fd, at most PLAT_MAPS_MAX bytes and NUL-ended; NULL and
 * errno (EFBIG past the bound). */
static char *read_all(int fd, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap + 1);
	for (ssize_t got = 1; buf && got > 0;) {
		if (n == cap) {
			if (cap >= PLAT_MAPS_MAX) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			char *p = realloc(buf, cap * 2 + 1);
			if (!p)
				break;
			buf = p;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			got = 1;
		else if (got < 0) {
			free(buf);
			return NULL;
		} else
			n += (size_t)got;
		if (got == 0) {
			buf[n] = '\0';
			*len = n;
			return buf;
		}
	}
	free(buf);
	errno = ENOMEM;
	return NULL;
}

char *sim_domain_maps(struct plat *p, uint32_t domid, size_t *len, char *err, size_t errlen)
{
	pid_t pid;
	int pidfd;
	char path[64];

	if (sim_program_of(p, domid, 0, &pid, &pidfd, err, errlen) != 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *text = fd >= 0 ? read_all(fd, len) : NULL;
	int e = errno;
	if (fd >= 0)
		close(fd);
	/* the pid still the program's after the read: the text is its */
	struct pollfd pf = {pidfd, POLLIN, 0};
	if (text && poll(&pf, 1, 0) != 0) {
		free(text);
		text = NULL;
		e = ESRCH;
	}
	close(pidfd);
	if (!text) {
		snprintf(err, errlen, "domain %u: its mappings (%s): %s", domid, path,
		         e == ESRCH ? "its program ended" : e == EFBIG ? "more than 4 MiB" : strerror(e));
		errno = e;
		*len = 0;
	}
	return text;
}
