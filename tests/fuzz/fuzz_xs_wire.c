/*
 * fuzz_xs_wire.c - libFuzzer target: xensim's xenstored
 * (xensim/xensim_xs.c) fed any byte stream on a connection, as a
 * hostile guest (domid 5) or as dom0: message framing, every operation's
 * argument parsing, paths, permissions, transactions, watches, quotas.
 * Each input runs against a fresh store on a socketpair; the store is torn
 * down afterwards, so ASan's leak check covers every path.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xensim/xensim.h"

/* The event loop and log of xensim_loop.c, reduced to what one connection needs. */
int sim_verbose;
static struct ev_item *last_added;

int loop_add(struct ev_item *it, int want_write)
{
	(void)want_write;
	last_added = it;
	return 0;
}
void loop_mod(struct ev_item *it, int want_write)
{
	(void)it;
	(void)want_write;
}
void loop_del(struct ev_item *it)
{
	if (last_added == it)
		last_added = NULL;
}
void sim_log(const char *fmt, ...)
{
	(void)fmt;
}

static void drain(int fd)
{
	char buf[65536];
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 256 * 1024)
		return 0;
	uint32_t domid = data[0] & 1 ? 5 : 0;
	data++;
	size--;

	xs_server_init();
	xs_domain_introduce(5, "guest", "00000000-0000-0000-0000-000000000005");
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	int sz = 1 << 20;
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	last_added = NULL;
	xs_accept(sv[0], domid);
	struct ev_item *it = last_added;
	assert(it);

	size_t off = 0;
	while (off < size && last_added) {
		ssize_t n = send(sv[1], data + off, size - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0)
			off += (size_t)n;
		xs_conn_event(it, 1, 1);
		drain(sv[1]);
		if (n <= 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			break;
	}
	if (last_added) {
		shutdown(sv[1], SHUT_WR);
		xs_conn_event(it, 1, 1); /* sees the end of the stream: dropped */
	}
	xs_reap();
	drain(sv[1]);
	close(sv[1]);
	xs_domain_release(5, "00000000-0000-0000-0000-000000000005");
	xs_server_fini();
	return 0;
}
