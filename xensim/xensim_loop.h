/*
 * xensim_loop.h - what every part of xensim stands on: the daemon's event
 * loop and its log (xensim_loop.c), and the one non-blocking send/receive
 * on a client's socket (xensim_io.c).  They call no other part of xensim.
 */
#ifndef PROFSVC_XENSIM_LOOP_H
#define PROFSVC_XENSIM_LOOP_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum ev_kind { EV_XS_LISTEN, EV_XS_CONN, EV_HV_LISTEN, EV_HV_CONN, EV_SIGNAL, EV_CHILD };

/* Everything registered with the loop starts with this. */
struct ev_item {
	enum ev_kind kind;
	int fd;
};

int loop_add(struct ev_item *it, int want_write);
void loop_mod(struct ev_item *it, int want_write);
void loop_del(struct ev_item *it);
/* The loop itself, for the daemon (xensim.c): made (0, or -1 with errno),
 * waited on (epoll_wait's answer, no timeout), closed. */
struct epoll_event;
int loop_open(void);
int loop_wait(struct epoll_event *evs, int max);
void loop_close(void);

/* One non-blocking send (EV_SEND, never raising SIGPIPE) or recv (EV_RECV,
 * with flags such as MSG_TRUNC) on a client's socket, retried on EINTR:
 * what it returned (> 0), 0 if it would block, -1 if the client is gone
 * (an error, or nothing moved: the peer closed). */
enum ev_dir { EV_SEND, EV_RECV };
ssize_t ev_io(int fd, enum ev_dir dir, void *buf, size_t len, int flags);

/* One line of the log, guest-chosen text escaped: to stderr, or to the
 * file sim_log_to() gave. */
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sim_log_to(FILE *f);
extern int sim_verbose;

#endif
