/*
 * xensim_xenstored.h - what xensim's xenstored offers the rest of xensim:
 * the daemon (clients to serve, start/stop) and the hypervisor (domains
 * coming and going, `xensim list`'s watch count).  Its parts are mapped
 * in xensim_xs_parts.h.
 *
 * May call: the event loop (xensim_loop.h).
 */
#ifndef PROFSVC_XENSIM_XENSTORED_H
#define PROFSVC_XENSIM_XENSTORED_H

#include <stddef.h>
#include <stdint.h>

#include "xensim_loop.h"

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

#endif
