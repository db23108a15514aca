/*
 * xensim_io.c - the one non-blocking send/receive on a client's socket
 * (ev_io, xensim_loop.h), shared by the xenstored and the hypervisor and linked
 * on its own by the xs_wire fuzz target.
 *
 * May call: the event loop's types (xensim_loop.h), libc.
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>

#include "xensim_loop.h"

ssize_t ev_io(int fd, enum ev_dir dir, void *buf, size_t len, int flags)
{
	for (;;) {
		ssize_t n = dir == EV_SEND ? send(fd, buf, len, flags | MSG_NOSIGNAL | MSG_DONTWAIT)
		                           : recv(fd, buf, len, flags | MSG_DONTWAIT);
		if (n > 0)
			return n;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
}
