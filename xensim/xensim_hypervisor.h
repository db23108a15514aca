/*
 * xensim_hypervisor.h - what xensim's hypervisor offers the daemon:
 * clients to serve, dom0 created at start-up, stop.  Its parts are mapped
 * in xensim_hv_parts.h.
 *
 * May call: the event loop (xensim_loop.h).
 */
#ifndef PROFSVC_XENSIM_HYPERVISOR_H
#define PROFSVC_XENSIM_HYPERVISOR_H

#include <stddef.h>
#include <stdint.h>

#include "xensim_loop.h"

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
/* SIGCHLD: the news of the domains that are programs; a domain whose
 * program exited is destroyed. */
void hv_children(void);
void hv_reap(void);

#endif
