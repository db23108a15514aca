/*
 * sim_proto.h - the "hypercall" protocol between the sim platform
 * (platform_sim.c, linked into the backend and the frontend-stub) and
 * xensim, the simulated hypervisor.
 *
 * Transport: one SOCK_SEQPACKET Unix socket per domain,
 * <rundir>/dom<N>/hv.sock.  The socket a process connects to is the domain
 * it is, exactly as a guest cannot choose its domid on Xen; file
 * permissions keep guests off dom0's socket.  xenstore traffic does not go
 * here: it uses the real xenstored wire protocol on <rundir>/dom<N>/xs.sock.
 *
 * Every message starts with struct sim_msg; items follow.  Requests get one
 * reply with the same id, except NOTIFY and UNMASK, which are one-way (as
 * cheap as the evtchn device's write on Linux).  File descriptors travel
 * with SCM_RIGHTS: a domain's memory (a memfd; page N of the domain is at
 * offset N * 4096), event pipes and a program's pidfd.
 */
#ifndef PROFSVC_SIM_PROTO_H
#define PROFSVC_SIM_PROTO_H

#include <stdint.h>

#define SIM_PAGE_SIZE 4096u
#define SIM_MAX_ITEMS 4096u       /* refs or segments per message */
#define SIM_DOMAIN_PAGES 16384u   /* each domain's memory: 64 MiB, sparse */
#define SIM_GRANT_ENTRIES 16384u  /* grant table size per domain */
#define SIM_MAX_PORTS 1024u       /* event channel ports per domain */
#define SIM_MAX_DOMID 32752u      /* DOMID_FIRST_RESERVED */

enum sim_op {
	SIM_HELLO = 1,      /* a[0] = pid, a[1] = 1: this process is the guest and dies
	                       with its domain -> a[0] = domid, a[1] = incarnation;
	                       fd: memory */
	SIM_SHARE,          /* a[0] = grantee, a[1] = writable, n = pages -> items: ref, pfn */
	SIM_UNSHARE,        /* n refs -> ok */
	SIM_MAP,            /* a[0] = domid, a[1] = writable, n refs -> a[0] = handle,
	                       a[1] = incarnation, items: pfn; fd: that domain's memory */
	SIM_UNMAP,          /* a[0] = handle */
	SIM_COPY,           /* n segments (struct sim_copy_seg) -> items: status, pfn;
	                       a[1] = incarnation of a[0] = domid; fd: memory */
	SIM_EVT_OPEN,       /* -> a[0] = handle; fd: read end of the event pipe */
	SIM_EVT_CLOSE,      /* a[0] = handle */
	SIM_EVT_ALLOC,      /* a[0] = handle, a[1] = remote domid -> a[0] = port */
	SIM_EVT_BIND,       /* a[0] = handle, a[1] = remote domid, a[2] = remote port -> a[0] = port */
	SIM_EVT_UNBIND,     /* a[0] = handle, a[1] = port */
	SIM_EVT_NOTIFY,     /* a[0] = port (one-way) */
	SIM_EVT_UNMASK,     /* a[0] = port (one-way) */
	/* control: dom0 only */
	SIM_DOM_CREATE,     /* a[0] = domid or 0 for any; items: name\0uuid\0 -> a[0] = domid */
	SIM_DOM_DESTROY,    /* a[0] = domid */
	SIM_DOM_LIST,       /* -> items: "domid state uuid maps procs watches name\n" text */
	SIM_STOP,
	SIM_DOM_EXEC,       /* a[0] = domid; items: cwd\0 console\0 argv0\0 argv1\0 ...:
	                       runs the program as that (new) domain's vCPUs */
	SIM_DOM_PROG,       /* a[0] = domid (a program) -> a[0] = its pid; fd: a pidfd
	                       of it.  EAGAIN before its exec.  Pausing it is its
	                       tracer's business (ptrace), not xensim's. */
};

#define SIM_MAX_VCPUS 64u /* a program's threads that are vCPUs; more run unseen */

struct sim_msg {
	uint32_t op;
	uint32_t id;
	int32_t err;  /* reply: 0 or a positive errno */
	uint32_t n;   /* items that follow */
	uint32_t a[4];
};

/* Grant copy segment, as GNTTABOP_copy: one side a grant ref of `domid`,
 * the other the caller's local buffer (not sent; the caller copies). */
struct sim_copy_seg {
	uint32_t domid;
	uint32_t ref;
	uint16_t offset;
	uint16_t len;
	uint32_t to_guest; /* 1: local -> guest page (needs a writable grant) */
};

/* Per-segment copy status, as GNTST_* */
#define SIM_GNTST_OKAY 0
#define SIM_GNTST_BAD_DOMAIN -2
#define SIM_GNTST_BAD_GNTREF -4
#define SIM_GNTST_PERMISSION_DENIED -8
#define SIM_GNTST_BAD_COPY_ARG -10

#endif
