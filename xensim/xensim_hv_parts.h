/*
 * xensim_hv_parts.h - the parts of xensim's hypervisor and how they
 * meet (what the daemon sees is in xensim_hypervisor.h).  Each part calls
 * only those below it, the event loop and log (xensim_loop.h), and the
 * xenstored's domain calls (xensim_xenstored.h: xs_domain_introduce,
 * xs_domain_release, xs_watch_count):
 *
 *   xensim_hv.c         the connections and their dispatch: one handler per
 *                       call of platform/sim_proto.h; hello, the control
 *                       calls (create, destroy, list, stop), a destroy
 *   xensim_hv_evtchn.c  event channels: ports, the handles that receive
 *                       them, their calls
 *   xensim_hv_grant.c   grants: sharing pages, maps and copies, their calls
 *   xensim_hv_wire.c    a reply on a client's socket
 *   xensim_hv_exec.c    domains that are programs: started (traceable by
 *                       dom0's sampler), their pid published, their end
 *   xensim_hv_dom.c     the domain table: creating one, its pages and grant
 *                       entries freed, its sockets, a dying one reaped
 *
 * May call: platform/sim_proto.h (the wire), the xenstored
 * (xensim_xenstored.h), the event loop (xensim_hypervisor.h,
 * xensim_loop.h).
 */
#ifndef PROFSVC_XENSIM_HV_PARTS_H
#define PROFSVC_XENSIM_HV_PARTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "platform/sim_proto.h"
#include "xensim_hypervisor.h"
#include "xensim_xenstored.h"

#define FIRST_REF 8 /* refs below are the toolstack's on Xen */
#define MAX_PIDS 16

/* ---- domains (xensim_hv_dom.c) ---------------------------------------------- */

enum dom_state { DOM_RUNNING, DOM_DYING };
enum port_state { PORT_FREE, PORT_UNBOUND, PORT_INTERDOMAIN };

struct grant {
	uint8_t in_use;
	uint8_t readonly;
	uint8_t ended;      /* no new maps or copies; freed at map_count 0 */
	uint32_t grantee;
	uint32_t pfn;
	uint32_t map_count;
};

struct evt_handle;
struct hv_prog;

struct port {
	uint8_t state;
	uint8_t masked;
	uint8_t pending;
	uint32_t remote_dom;
	uint32_t remote_port;
	struct evt_handle *h;
};

struct domain {
	uint32_t domid;
	uint32_t incarnation;
	enum dom_state state;
	char name[128];
	char uuid[40];
	int memfd;
	uint8_t page_used[SIM_DOMAIN_PAGES / 8];
	uint32_t next_pfn;
	struct grant gt[SIM_GRANT_ENTRIES];
	uint32_t next_ref;
	struct port ports[SIM_MAX_PORTS];
	uint32_t maps_held; /* of its grants, by others */
	pid_t pids[MAX_PIDS];
	struct hv_prog *prog; /* a domain that is a program (--exec) */
	struct hv_listener xs_listen, hv_listen;
	char dir[512];
};

/* The domain with that id (any number), or NULL. */
struct domain *hv_domain(uint32_t domid);
/* The same, if it is running. */
struct domain *hv_running_domain(uint32_t domid);
/* Frees a grant entry and its page. */
void hv_free_grant(struct domain *d, uint32_t ref);
/* Closes the domain's sockets and removes its directory. */
void hv_domain_unlisten(struct domain *d);
/* A dying domain nobody maps pages of any more is gone. */
void hv_reap_domain(struct domain *d);
/* xensim's run directory. */
const char *hv_rundir(void);
/* Frees every domain (at the end). */
void hv_domains_free(void);

/* ---- domains that are programs (xensim_hv_exec.c) ------------------------------ */

struct hv_prog {
	uint32_t domid;
	pid_t pid;
	int exited, execed;
	struct hv_prog *next;
};

/* Runs argv as domain d (cwd: where it starts; its output appended to
 * console_path), once its exec is done; 0, or -1 with a message. */
int hv_exec_start(struct domain *d, const char *cwd, const char *console_path, char *const argv[],
                  const char *dir, char *err, size_t errlen);
/* Reaps the children (SIGCHLD): 1 and *ended when a domain's program
 * exited (call again for more), 0 when there is no more. */
int hv_exec_children(uint32_t *ended);
/* A pidfd of the program (its tracer, dom0's sampler, checks that the pid
 * it seized is still the program's); -1 and errno (ESRCH: it ended,
 * EAGAIN: its exec failed). */
int hv_exec_pidfd(struct hv_prog *p);
/* Kills the program (its domain is being destroyed) and forgets it. */
void hv_exec_kill(struct domain *d);

/* ---- a client and its replies (xensim_hv_wire.c) ---------------------------- */

struct map_handle;

struct hv_conn {
	struct ev_item it;
	uint32_t domid;
	uint32_t incarnation;
	pid_t pid;
	struct evt_handle *evts;
	struct map_handle *maps;
	uint32_t next_handle;
	int dead;
	int reply_failed; /* the client is dropped once its request is handled */
	struct hv_conn *next;
};

/* A request being handled: the connection, the message (rewritten into
 * the reply), the caller's domain, and the items that came with it. */
struct hv_req {
	struct hv_conn *c;
	struct sim_msg *m;
	struct domain *me;
	const uint8_t *items;
	const uint32_t *words;
	size_t ilen;
};

/* The reply: the message, len bytes of items, a descriptor if fd >= 0.
 * 0, or -1 with reply_failed set: a client that does not read its
 * replies is not served. */
int hv_reply(struct hv_conn *c, struct sim_msg *m, const void *items, size_t len, int fd);
/* The message alone: err set, or done (no items). */
void hv_reply_err(struct hv_conn *c, struct sim_msg *m, int err);
void hv_reply_ok(struct hv_conn *c, struct sim_msg *m);

/* ---- grants (xensim_hv_grant.c) ----------------------------------------------- */

/* A destroyed domain's grants end; unmapped ones are freed. */
void hv_grants_end(struct domain *d);
/* Releases every mapping the connection holds. */
void hv_maps_release(struct hv_conn *c);
void hv_op_share(struct hv_req *req);
void hv_op_unshare(struct hv_req *req);
void hv_op_map(struct hv_req *req);
void hv_op_unmap(struct hv_req *req);
void hv_op_copy(struct hv_req *req);

/* ---- event channels (xensim_hv_evtchn.c) --------------------------------------- */

/* Closes every port of a domain (a destroy). */
void hv_ports_close(struct domain *d);
/* Closes every event-channel handle of the connection, and their ports. */
void hv_evts_close(struct hv_conn *c);
void hv_op_evt_open(struct hv_req *req);
void hv_op_evt_close(struct hv_req *req);
void hv_op_evt_alloc(struct hv_req *req);
void hv_op_evt_bind(struct hv_req *req);
void hv_op_evt_unbind(struct hv_req *req);
void hv_op_evt_notify(struct hv_req *req);
void hv_op_evt_unmask(struct hv_req *req);

#endif
