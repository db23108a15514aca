/*
 * control_socket.h - the control socket's clients, never blocking the
 * loop.  Their epoll events carry SRC_CONTROL_CLIENT + their index.
 * struct be_control is its state.  control_socket.c reads the state of
 * every part (status) and may call runs.c, domains.c, trace.c,
 * sampling.c, sync_push.c, xenbus_state.c, the data path (io.c,
 * io_worker.c, sink.c), quota.c, metrics.c, peer_room.c, read_service.c
 * and log.c.  Room is shared by peer user: another user's flood never drops
 * root's client, and a client dropped or refused is told why in one line.
 */
#ifndef PROFSVC_BE_CONTROL_SOCKET_H
#define PROFSVC_BE_CONTROL_SOCKET_H

struct be_backend;

/* Its state: the clients, and the loop's epoll fd they join. */
struct be_control;

#define SRC_CONTROL_CLIENT 100u
#define CONTROL_CLIENTS_MAX 32
/* Clients of one user other than root and the backend's own, at once
 * (control_socket.c, (1)). */
#define CONTROL_PER_USER_MAX 4
/* A command line, at most: "sample HZ US DOMAIN SYMBOLS\tKERNEL_SYMBOLS" holds two paths. */
#define CONTROL_CMD_MAX 8600
void be_control_init(struct be_backend *b, int ep);
void be_control_shutdown(struct be_backend *b);
void be_control_accept(struct be_backend *b, int listen_fd);
void be_control_event(struct be_backend *b, unsigned idx);
/* Drops clients past their time; ms until the next deadline, or -1. */
int be_control_expire(struct be_backend *b);

#endif
