/*
 * xensim.h - the simulated host's parts and how they meet, from the top:
 *   xensim.c            the daemon (its event loop, start/stop) and the
 *                       command line that creates, destroys and lists domains
 *   xensim_hv.c         the hypervisor: its clients, the dispatch of the
 *                       "hypercalls" of platform/sim_proto.h and the control
 *                       calls (xensim_hypervisor.h; its parts are mapped in
 *                       xensim_hv_parts.h)
 *   xensim_hv_evtchn.c  its event channels
 *   xensim_hv_grant.c   its grant tables: maps, copies, ends
 *   xensim_hv_wire.c    its replies on the wire
 *   xensim_hv_dom.c     its table of domains
 *   xensim_hv_exec.c    its domains that are programs (--exec): run so
 *                       that dom0's sampler may trace them, reaped
 *   xensim_xs.c         a xenstored speaking the real wire protocol: the
 *                       requests and their handlers (xensim_xenstored.h; its
 *                       parts are mapped in xensim_xs_parts.h)
 *   xensim_xs_tx.c      its transactions
 *   xensim_xs_watch.c   its watches
 *   xensim_xs_conn.c    its connections and what waits to be sent
 *   xensim_xs_tree.c    its node tree, permissions and quotas
 *   xensim_loop.c       the event loop and the log (xensim_loop.h)
 *   xensim_io.c         the one non-blocking send/receive on a client's socket
 * Calls go down only: the hypervisor tells the xenstored of domains coming
 * and going, and neither calls the daemon.  This header is for what stands
 * outside (tests, fuzzing): the parts include only what they use.
 */
#ifndef PROFSVC_XENSIM_H
#define PROFSVC_XENSIM_H

#include "platform/sim_proto.h"
#include "xensim_hypervisor.h"
#include "xensim_loop.h"
#include "xensim_xenstored.h"

#endif
