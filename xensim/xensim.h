/*
 * xensim.h - the simulated host's parts and how they meet, from the top:
 *   xensim.c          the daemon (its event loop, start/stop) and the
 *                     command line that creates, destroys and lists domains
 *   xensim_hv.c       the hypervisor: domains, grant tables, event channels,
 *                     the "hypercalls" of platform/sim_proto.h; its parts
 *                     (xensim_hv_evtchn.c, xensim_hv_grant.c,
 *                     xensim_hv_wire.c, xensim_hv_dom.c) are mapped in
 *                     xensim_hv_internal.h
 *   xensim_xs.c       a xenstored speaking the real wire protocol; its parts
 *                     (xensim_xs_tx.c, xensim_xs_watch.c, xensim_xs_conn.c,
 *                     xensim_xs_tree.c) are mapped in xensim_xs_internal.h
 *   xensim_io.c       the one non-blocking send/receive on a client's socket
 * The hypervisor tells the xenstored of domains coming and going; neither
 * calls the daemon but for the loop and log below.
 */
#ifndef PROFSVC_XENSIM_H
#define PROFSVC_XENSIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../platform/sim_proto.h"

/* ---- the event loop (xensim.c) -------------------------------------------- */

enum ev_kind { EV_XS_LISTEN, EV_XS_CONN, EV_HV_LISTEN, EV_HV_CONN, EV_SIGNAL };

/* Everything registered with the loop starts with this. */
struct ev_item {
	enum ev_kind kind;
	int fd;
};

int loop_add(struct ev_item *it, int want_write);
void loop_mod(struct ev_item *it, int want_write);
void loop_del(struct ev_item *it);
/* One non-blocking send (EV_SEND, never raising SIGPIPE) or recv (EV_RECV,
 * with flags such as MSG_TRUNC) on a client's socket, retried on EINTR:
 * what it returned (> 0), 0 if it would block, -1 if the client is gone
 * (an error, or nothing moved: the peer closed). */
enum ev_dir { EV_SEND, EV_RECV };
ssize_t ev_io(int fd, enum ev_dir dir, void *buf, size_t len, int flags);
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int sim_verbose;

/* ---- xenstored (xensim_xs*.c) ---------------------------------------------- */

/* Per-domain limits for unprivileged domains (dom0 has none). */
#define XS_QUOTA_NODES 1000
#define XS_QUOTA_WATCHES 128
#define XS_QUOTA_TRANSACTIONS 10
#define XS_OUTBUF_MAX (1u << 20) /* a client that stops reading is dropped */

int xs_server_init(void);
void xs_server_fini(void);
/* A new client connected to dom<domid>/xs.sock. */
void xs_accept(int fd, uint32_t domid);
void xs_conn_event(struct ev_item *it, int readable, int writable);
/* What the toolstack does in xenstore for a new domain, then INTRODUCE. */
int xs_domain_introduce(uint32_t domid, const char *name, const char *uuid);
/* What the toolstack does when a domain is destroyed: @releaseDomain,
 * remove its /local/domain and /vm nodes, drop its connections. */
void xs_domain_release(uint32_t domid, const char *uuid);
/* Frees dropped connections: only between event-loop batches, because a
 * handler may drop a connection whose event is later in the batch. */
void xs_reap(void);
/* Connections currently open (for tests of the daemon's hygiene). */
size_t xs_conn_count(void);
/* Watches the domain's live connections hold (`xensim list`: leak checks;
 * the watch quota). */
uint32_t xs_watch_count(uint32_t domid);

/* ---- hypervisor (xensim_hv.c) ------------------------------------------------ */

int hv_init(const char *dir);
void hv_fini(void);
void hv_accept(int fd, uint32_t domid);
void hv_conn_event(struct ev_item *it, int readable, int writable);
/* The listening sockets' item for a domain (xensim.c accepts on them). */
struct hv_listener {
	struct ev_item it;
	uint32_t domid;
	int is_xs;
};
/* Creates dom0 at start-up. */
int hv_create_domain(uint32_t domid, const char *name, const char *uuid, uint32_t *out,
                     char *err, size_t errlen);
int hv_stop_requested(void);
void hv_reap(void);

#endif
