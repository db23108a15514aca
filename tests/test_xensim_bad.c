/*
 * test_xensim_bad.c - bad clients of xensim.  Raw sockets, no library:
 *   xenstore: oversized and truncated messages, unknown types, missing
 *   NULs, unknown transaction ids, a client that disconnects in the middle
 *   of transactions (its quota comes back), one that registers watches and
 *   never reads (it is dropped, the writer is not), random garbage;
 *   hypercalls: short, oversized and inconsistent messages, ops a guest
 *   may not use.
 * After each, a well-behaved client must still be served, and xensim must
 * stop cleanly at the end.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <xen/io/xs_wire.h>
#include <xenstore.h>

#include "xensim/xensim.h"
#include "testutil.h"

static struct tu_xensim sim;

static int connect_to(uint32_t domid, const char *which, int type)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%.80s/dom%u/%s", sim.dir, domid, which);
	REQUIRE(n > 0 && (size_t)n < sizeof(sa.sun_path), "socket path too long");
	REQUIRE(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect %s: %s",
	        sa.sun_path, strerror(errno));
	return fd;
}

static int xs_raw(uint32_t domid)
{
	return connect_to(domid, "xs.sock", SOCK_STREAM);
}

static void send_raw(int fd, uint32_t type, uint32_t tx, const void *body, uint32_t len)
{
	struct xsd_sockmsg h = {type, 77, tx, len};
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) < 0 || (len && send(fd, body, len, MSG_NOSIGNAL) < 0)) {
		/* the server may have dropped us already */
	}
}

/* Reads one reply: returns its type, body in buf; -1 on EOF/timeout. */
static int recv_reply(int fd, char *buf, size_t len, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	struct xsd_sockmsg h;
	size_t got = 0;

	while (got < sizeof(h)) {
		if (poll(&p, 1, ms) != 1)
			return -1;
		ssize_t n = recv(fd, (char *)&h + got, sizeof(h) - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	if (h.len >= len)
		return -1;
	for (got = 0; got < h.len;) {
		if (poll(&p, 1, ms) != 1)
			return -1;
		ssize_t n = recv(fd, buf + got, h.len - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	buf[h.len] = '\0';
	return (int)h.type;
}

static int still_served(void)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/dom0/xs.sock", sim.dir);
	setenv("XENSTORED_PATH", path, 1);
	struct xs_handle *h = xs_open(0);
	if (!h)
		return 0;
	int ok = xs_write(h, XBT_NULL, "/tool/alive", "yes", 3);
	unsigned len;
	char *v = xs_read(h, XBT_NULL, "/tool/alive", &len);
	ok = ok && v && strcmp(v, "yes") == 0;
	free(v);
	xs_close(h);
	return ok;
}

static void test_xs_malformed(void)
{
	char buf[8192];
	int fd;

	/* Longer than XENSTORE_PAYLOAD_MAX: dropped. */
	fd = xs_raw(0);
	send_raw(fd, XS_READ, 0, NULL, XENSTORE_PAYLOAD_MAX + 1);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == -1, "an oversized message was answered");
	close(fd);
	CHECK(still_served(), "not served after an oversized message");

	/* Unknown type, missing NUL, unknown transaction: errors, connection kept. */
	fd = xs_raw(0);
	send_raw(fd, 999, 0, "x", 2);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_ERROR, "unknown type: no error reply");
	send_raw(fd, XS_READ, 0, "/tool", 5); /* no NUL */
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_ERROR && !strcmp(buf, "EINVAL"),
	      "missing NUL: %s", buf);
	send_raw(fd, XS_READ, 12345, "/tool", 6);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_ERROR && !strcmp(buf, "ENOENT"),
	      "unknown transaction: %s", buf);
	send_raw(fd, XS_SET_PERMS, 0, "/tool\0zz9\0", 10);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_ERROR && !strcmp(buf, "EINVAL"),
	      "bad permission string: %s", buf);
	send_raw(fd, XS_TRANSACTION_END, 0, "T", 2);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_ERROR, "end without a transaction");
	send_raw(fd, XS_GET_DOMAIN_PATH, 0, "99999999999", 12);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_ERROR, "absurd domid accepted");
	send_raw(fd, XS_READ, 0, "/tool", 6);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_READ, "the connection did not survive");
	/* Half a message, then gone. */
	struct xsd_sockmsg h = {XS_WRITE, 1, 0, 100};
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) < 0 || send(fd, "/tool/half", 10, MSG_NOSIGNAL) < 0) {
	}
	close(fd);
	CHECK(still_served(), "not served after a half message");
}

/* RESET_WATCHES (no libxenstore call for it): watches and transactions of
 * the connection are gone, the connection itself stays. */
static void test_reset_watches(void)
{
	char buf[4096];
	int fd = xs_raw(0);

	send_raw(fd, XS_WATCH, 0, "/tool/rw\0t", 11);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_WATCH, "watch");
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_WATCH_EVENT, "registration event");
	send_raw(fd, XS_TRANSACTION_START, 0, "", 1);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_TRANSACTION_START, "tx start");
	uint32_t tx = (uint32_t)strtoul(buf, NULL, 10);
	send_raw(fd, XS_RESET_WATCHES, 0, "", 1);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_RESET_WATCHES, "reset_watches");
	send_raw(fd, XS_WRITE, 0, "/tool/rw\0x", 11);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_WRITE, "write after reset");
	CHECK(recv_reply(fd, buf, sizeof(buf), 200) == -1, "a watch survived RESET_WATCHES");
	send_raw(fd, XS_READ, tx, "/tool/rw", 9);
	CHECK(recv_reply(fd, buf, sizeof(buf), 1000) == XS_ERROR && !strcmp(buf, "ENOENT"),
	      "a transaction survived RESET_WATCHES: %s", buf);
	close(fd);
}

static void test_xs_disconnect_mid_transaction(void)
{
	uint32_t g = tu_xensim_create(&sim, "quitter");
	char buf[256];

	for (int round = 0; round < 3; round++) {
		int fd = xs_raw(g);
		int started = 0;
		for (int i = 0; i < XS_QUOTA_TRANSACTIONS; i++) {
			send_raw(fd, XS_TRANSACTION_START, 0, "", 1);
			started += recv_reply(fd, buf, sizeof(buf), 1000) == XS_TRANSACTION_START;
		}
		/* Write inside the last transaction, then vanish. */
		uint32_t tx = (uint32_t)strtoul(buf, NULL, 10);
		send_raw(fd, XS_WRITE, tx, "data/never\0x", 12);
		recv_reply(fd, buf, sizeof(buf), 1000);
		close(fd);
		CHECK(started == XS_QUOTA_TRANSACTIONS,
		      "round %d: only %d transactions (quota not returned?)", round, started);
	}
	char path[600];
	snprintf(path, sizeof(path), "%s/dom0/xs.sock", sim.dir);
	setenv("XENSTORED_PATH", path, 1);
	struct xs_handle *h = xs_open(0);
	snprintf(path, sizeof(path), "/local/domain/%u/data/never", g);
	unsigned len;
	char *v = xs_read(h, XBT_NULL, path, &len);
	CHECK(!v, "an abandoned transaction was committed");
	free(v);
	xs_close(h);
}

static void test_watch_flood(void)
{
	char buf[256];
	int flooder = xs_raw(0);

	/* Registers a watch on everything and never reads again. */
	send_raw(flooder, XS_WATCH, 0, "/\0tok", 6);
	struct xs_handle *h;
	char path[600];
	snprintf(path, sizeof(path), "%s/dom0/xs.sock", sim.dir);
	setenv("XENSTORED_PATH", path, 1);
	h = xs_open(0);
	REQUIRE(h, "xs_open");
	int failed = 0;
	/* Every event carries the path: a long one makes each about 2.9 KiB. */
	static char longpath[2900];
	memset(longpath, 'f', sizeof(longpath) - 1);
	memcpy(longpath, "/tool/", 6);
	for (int i = 0; i < 1500 && !failed; i++)
		failed = !xs_write(h, XBT_NULL, longpath, "v", 1);
	CHECK(!failed, "the writer was hurt by a client that does not read: %s", strerror(errno));
	xs_close(h);
	/* The flooder was dropped: reading its socket reaches EOF after the
	 * queued bytes. */
	size_t total = 0;
	for (;;) {
		ssize_t n = recv(flooder, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			total += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = {flooder, POLLIN, 0};
			if (poll(&p, 1, 1000) == 1)
				continue;
		}
		CHECK(n == 0, "the flooder was not dropped (%zu bytes queued for it)", total);
		break;
	}
	close(flooder);
	CHECK(still_served(), "not served after the flood");
}

static void test_xs_garbage(void)
{
	uint64_t rng = tu_seed(0x6a5b);
	char buf[8192];

	for (int i = 0; i < 500; i++) {
		int fd = xs_raw(tu_rand_below(&rng, 2) ? 0 : 1);
		int msgs = 1 + (int)tu_rand_below(&rng, 5);
		for (int m = 0; m < msgs; m++) {
			uint32_t len = (uint32_t)tu_rand_below(&rng, 300);
			char body[300];
			for (uint32_t k = 0; k < len; k++)
				body[k] = (char)(tu_rand_below(&rng, 4) ? "/@abcT0\0"[tu_rand_below(&rng, 8)]
				                                       : (char)tu_rand(&rng));
			uint32_t type = (uint32_t)(tu_rand_below(&rng, 3) ? tu_rand_below(&rng, XS_TYPE_COUNT + 2)
			                                                  : tu_rand(&rng));
			uint32_t tx = tu_rand_below(&rng, 4) ? 0 : (uint32_t)tu_rand(&rng) % 4;
			send_raw(fd, type, tx, body, len);
		}
		/* Read whatever comes, briefly. */
		while (recv_reply(fd, buf, sizeof(buf), 5) >= 0)
			;
		close(fd);
	}
	CHECK(still_served(), "not served after garbage");
}

static void test_hv_malformed(void)
{
	uint32_t g = tu_xensim_create(&sim, "hv-bad");
	uint8_t buf[128 * 1024];
	struct sim_msg m;
	int fd;

	/* Too short: dropped. */
	fd = connect_to(g, "hv.sock", SOCK_SEQPACKET);
	CHECK(send(fd, "abc", 3, MSG_NOSIGNAL) == 3, "send");
	CHECK(recv(fd, buf, sizeof(buf), 0) <= 0, "a 3-byte message was answered");
	close(fd);
	/* Item count that does not match the bytes: EINVAL. */
	fd = connect_to(g, "hv.sock", SOCK_SEQPACKET);
	m = (struct sim_msg){.op = SIM_MAP, .id = 1, .n = 500, .a = {0, 1}};
	send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	CHECK(recv(fd, buf, sizeof(buf), 0) >= (ssize_t)sizeof(m) &&
	              ((struct sim_msg *)buf)->err == EINVAL,
	      "inconsistent item count not refused");
	/* A guest may not control domains. */
	m = (struct sim_msg){.op = SIM_DOM_DESTROY, .id = 2, .a = {0}};
	send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	CHECK(recv(fd, buf, sizeof(buf), 0) >= (ssize_t)sizeof(m) &&
	              ((struct sim_msg *)buf)->err == EPERM,
	      "a guest destroyed a domain");
	m = (struct sim_msg){.op = SIM_STOP, .id = 3};
	send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	CHECK(recv(fd, buf, sizeof(buf), 0) >= (ssize_t)sizeof(m) &&
	              ((struct sim_msg *)buf)->err == EPERM,
	      "a guest stopped xensim");
	/* Unknown op, absurd values. */
	m = (struct sim_msg){.op = 4242, .id = 4};
	send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	CHECK(recv(fd, buf, sizeof(buf), 0) >= (ssize_t)sizeof(m) && ((struct sim_msg *)buf)->err,
	      "unknown op accepted");
	m = (struct sim_msg){.op = SIM_SHARE, .id = 5, .n = 1u << 30, .a = {0, 1}};
	send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	CHECK(recv(fd, buf, sizeof(buf), 0) >= (ssize_t)sizeof(m) && ((struct sim_msg *)buf)->err,
	      "a billion pages shared");
	m = (struct sim_msg){.op = SIM_EVT_NOTIFY, .a = {123456}};
	send(fd, &m, sizeof(m), MSG_NOSIGNAL); /* one-way, harmless */
	close(fd);
	/* Bigger than any valid message: dropped. */
	fd = connect_to(g, "hv.sock", SOCK_SEQPACKET);
	memset(buf, 0, sizeof(buf));
	ssize_t sent = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
	if (sent > 0)
		CHECK(recv(fd, buf, sizeof(buf), 0) <= 0, "an oversized hypercall was answered");
	close(fd);
	char out[4096];
	CHECK(tu_xensim_run(&sim, "list", out, sizeof(out)) == 0 && strstr(out, "hv-bad"),
	      "xensim stopped serving hypercalls: %s", out);
}

static void test_double_start(void)
{
	char out[512];
	CHECK(tu_xensim_run(&sim, "start", out, sizeof(out)) == 1 && strstr(out, "already running"),
	      "a second xensim on the same directory: %s", out);
	CHECK(tu_xensim_run(&sim, "destroy 0", out, sizeof(out)) == 1, "destroyed dom0");
	CHECK(tu_xensim_run(&sim, "destroy nosuchguest", out, sizeof(out)) == 1 &&
	              strstr(out, "no running domain"),
	      "destroy of a missing domain: %s", out);
	CHECK(tu_xensim_run(&sim, "create", out, sizeof(out)) == 2, "create without a name");
}

int main(void)
{
	tu_xensim_start(&sim);
	test_xs_malformed();
	test_reset_watches();
	test_xs_disconnect_mid_transaction();
	test_watch_flood();
	test_xs_garbage();
	test_hv_malformed();
	test_double_start();
	tu_xensim_stop(&sim);
	return tu_finish("test_xensim_bad");
}
