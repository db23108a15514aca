/*
 * xensim_hv_wire.c - a reply to a hypervisor client: the message, its
 * items and a descriptor passed along (a domain's memory, an event
 * channel's pipe), one sendmsg that never waits.  A client whose reply
 * does not go is marked, and dropped by xensim_hv.c once its request is
 * handled.
 *
 * May call: nothing of xensim but xensim_hv_parts.h's types.
 */
#include "config.h"

#include <string.h>
#include <sys/socket.h>

#include "xensim_hv_parts.h"

int hv_reply(struct hv_conn *c, struct sim_msg *m, const void *items, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov[2] = {{m, sizeof(*m)}, {(void *)items, len}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};

	if (fd >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	if (sendmsg(c->it.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* A client that does not read its replies is not served. */
		c->reply_failed = 1;
		return -1;
	}
	return 0;
}

void hv_reply_err(struct hv_conn *c, struct sim_msg *m, int err)
{
	m->err = err;
	hv_reply_ok(c, m);
}

void hv_reply_ok(struct hv_conn *c, struct sim_msg *m)
{
	m->n = 0;
	hv_reply(c, m, NULL, 0, -1);
}
