/*
 * platform.h - the Xen seam: everything profile-backend and the
 * frontend-stub need from Xen, with two implementations chosen at run
 * time, `xen` (libxenevtchn, libxengnttab/xengntshr, libxenstore) and
 * `sim` (xensim, the simulated hypervisor).  Modelled on QEMU's
 * include/hw/xen/xen_backend_ops.h: one ops table per subsystem, thin
 * inline-free wrappers, and a note wherever the simulation differs.
 *
 * xenstore is not wrapped: both implementations hand out a real
 * libxenstore handle (for sim, pointed at xensim's socket through
 * XENSTORED_PATH), so there is exactly one xenstore client in the project.
 *
 * ERRORS.  One convention, the Xen libraries' own: a function that can
 * fail returns -1 (NULL for one that makes something) with errno set, the
 * code; strerror(errno) is the message.  The exceptions, each said at its
 * declaration:
 *   - a function taking (char *err, size_t errlen) (plat_open,
 *     plat_domain_create, plat_domain_exec, plat_inspect_open,
 *     plat_inspect_ready) has more to say than errno can: its -1 or NULL
 *     comes with a one-line message in err, and errno is then not
 *     promised;
 *   - a question returns 1, 0, or -1 and errno when it cannot be told
 *     (plat_domain_suspended, plat_inspect_wait); plat_inspect_idle's -1
 *     only means "pause and look", errno not promised;
 *   - a count or a size returns its value or -1 and errno (the port of
 *     plat_evtchn_bind_interdomain, plat_inspect_vcpus, plat_inspect_read's
 *     bytes; plat_evtchn_pending's -1 with EAGAIN is "none pending").
 *
 * Where sim differs from Xen:
 *  - Domains are processes that connect to <rundir>/dom<N>/; a domain's
 *    memory is a memfd owned by xensim.
 *  - Grant copy is checked by xensim (domain, ref, grantee, read-only,
 *    bounds) and then done by the caller's process on its mapping of the
 *    guest's memory: a revocation racing with a copy in flight is not
 *    caught, where Xen would serialise them.
 *  - Event channel notifications are delivered through xensim (one hop
 *    more than Xen); delivery masks the port until unmask, as the Linux
 *    evtchn driver does, so a storm leaves one pending event.
 */
#ifndef PROFSVC_PLATFORM_H
#define PROFSVC_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

struct xs_handle;

enum plat_kind { PLAT_XEN, PLAT_SIM };

struct plat_opts {
	enum plat_kind kind;
	const char *sim_dir; /* sim: xensim's run directory */
	uint32_t sim_domid;  /* sim: the domain this process is (0: dom0) */
	int sim_guest;       /* sim: this process is that guest; destroying the
	                        domain kills it, as a crash would */
};

struct plat;
struct plat_evtchn;
struct plat_gnttab;
struct plat_gntshr;

/* "xen", "sim", or NULL/"" for the default: xen when /dev/xen/evtchn
 * exists, else sim.  0, or -1 and errno EINVAL for another name. */
int plat_parse_kind(const char *name, enum plat_kind *out);
const char *plat_kind_name(enum plat_kind k);

int plat_open(struct plat **out, const struct plat_opts *opts, char *err, size_t errlen);
void plat_close(struct plat *p);
enum plat_kind plat_kind(const struct plat *p);
/* The domain this process is (0 for a dom0 backend). */
uint32_t plat_domid(const struct plat *p);
/* A libxenstore handle talking to this platform's xenstored as this
 * domain (xs_close() it). */
struct xs_handle *plat_xs_open(struct plat *p);

/* ---- event channels ------------------------------------------------------- */

struct plat_evtchn *plat_evtchn_open(struct plat *p);
void plat_evtchn_close(struct plat_evtchn *e);
/* Readable when a bound port has fired. */
int plat_evtchn_fd(struct plat_evtchn *e);
/* Backend side: binds to a port the frontend allocated; returns our port. */
int plat_evtchn_bind_interdomain(struct plat_evtchn *e, uint32_t domid, uint32_t remote_port);
/* Frontend side: a port that `remote_domid` may bind to. */
int plat_evtchn_alloc_unbound(struct plat_evtchn *e, uint32_t remote_domid);
int plat_evtchn_unbind(struct plat_evtchn *e, uint32_t port);
int plat_evtchn_notify(struct plat_evtchn *e, uint32_t port);
/* The next port that fired (it stays masked until unmasked), or -1 with
 * errno EAGAIN when none. */
int plat_evtchn_pending(struct plat_evtchn *e);
int plat_evtchn_unmask(struct plat_evtchn *e, uint32_t port);

/* ---- grant tables: the backend side ---------------------------------------- */

#define PLAT_PAGE_SIZE 4096u

struct plat_gnttab *plat_gnttab_open(struct plat *p);
void plat_gnttab_close(struct plat_gnttab *g);
/* Maps count grant refs of domid into one contiguous range; all or none. */
void *plat_gnttab_map(struct plat_gnttab *g, uint32_t domid, const uint32_t *refs,
                      uint32_t count, int writable);
int plat_gnttab_unmap(struct plat_gnttab *g, void *addr, uint32_t count);

struct plat_copy_seg {
	uint32_t ref;      /* the guest's grant ref */
	uint16_t offset;   /* within the granted page */
	uint16_t len;      /* offset + len <= PLAT_PAGE_SIZE */
	void *local;       /* our buffer */
	int16_t status;    /* out: 0, or a negative GNTST_* */
};
/* Batched grant copy with one domain: to_guest copies local -> guest.
 * Returns 0 when the batch was processed (check each status), -1 when it
 * could not be issued at all. */
int plat_gnttab_copy(struct plat_gnttab *g, uint32_t domid, int to_guest,
                     struct plat_copy_seg *segs, uint32_t count);

/* ---- grant sharing: the frontend side ------------------------------------------- */

struct plat_gntshr *plat_gntshr_open(struct plat *p);
void plat_gntshr_close(struct plat_gntshr *s);
/* Allocates count pages granted to domid; refs[] receives their refs. */
void *plat_gntshr_share(struct plat_gntshr *s, uint32_t domid, uint32_t count, uint32_t *refs,
                        int writable);
int plat_gntshr_unshare(struct plat_gntshr *s, void *addr, uint32_t count);
/* Lets go of s without ending its grants: they last as long as the
 * domain (a MirageOS guest's program that ends, its domain not yet
 * destroyed).  On xensim the grants are the domain's, ended at its
 * destruction; where the platform cannot keep them (Xen's gntalloc
 * device), the same as plat_gntshr_close. */
void plat_gntshr_leave(struct plat_gntshr *s);

/* ---- domains ------------------------------------------------------------------ */
/* Creates a domain named name (xensim only: on Xen, xl creates domains);
 * 0 and *domid, or -1 with a message in err. */
int plat_domain_create(struct plat *p, const char *name, uint32_t *domid, char *err, size_t errlen);
/* Destroys a domain made by plat_domain_create (xensim only); 0, or -1
 * and errno. */
int plat_domain_destroy(struct plat *p, uint32_t domid);

/* Runs argv (argv[0] an absolute path) as domain domid, its threads the
 * vCPUs (xensim only: `xensim create --exec`); its output goes to
 * xensim's console file for it.  0, or -1 with a message in err. */
int plat_domain_exec(struct plat *p, uint32_t domid, char *const argv[], char *err, size_t errlen);

/* 1 when the domain is shut down to be saved (xl save, xl migrate: its
 * guest suspended itself and may be restored as a new domain that goes on
 * where it was), 0 when it is not (running, or shut down for any other
 * reason, or gone), -1 and errno when that cannot be told.  xensim's
 * domains are never saved: 0. */
int plat_domain_suspended(struct plat *p, uint32_t domid);


/* ---- looking into a domain: what stack sampling needs ------------------------
 * A dom0 sampler pauses a domain, reads each vCPU's registers and walks its
 * stacks in the guest's memory by virtual address, then unpauses it.
 *  - Xen: xc_domain_pause/unpause, xc_vcpu_getcontext (and
 *    xc_vcpu_getinfo for a blocked vCPU), and reads through
 *    libxenforeignmemory after our own walk of the guest's page tables
 *    from the vCPU's cr3 (4-level, present bit, 2 MiB and 1 GiB pages);
 *    a 64-bit PV guest in user mode runs on ctrlreg[1].  Translations are
 *    cached per cr3 within one pause only (page tables change while the
 *    guest runs); mapped frames are kept across pauses in a small LRU.
 *  - sim: a domain made with --exec is a program; its threads are its
 *    vCPUs.  xensim tells its pid; the thread that opens the inspection
 *    is its tracer (ptrace), as the backend makes the pause hypercall on
 *    Xen: it stops and resumes the threads and reads their registers
 *    itself, and its memory through /proc/PID/mem, so that virtual
 *    addresses are the program's own (cr3 is 0).  Every plat_inspect_*
 *    call on one inspection must come from the thread that opened it
 *    (plat_inspect_ready excepted); one thread may hold many.
 * Every value read is the guest's: hostile. */

struct plat_vcpu_regs {
	uint64_t rip, rsp, rbp, rax, rbx, rcx, rdx, rsi, rdi;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rflags;
	uint64_t cr3;       /* the page table it runs on (0 on sim: no translation) */
	uint64_t cpu_ns;    /* the time it has run so far, in ns (Xen: the vCPU's
	                       cpu_time; sim: its thread's schedstat); 0: unknown */
	uint8_t online;     /* 0: the vCPU is down (no other field holds) */
	uint8_t blocked;    /* 1: idle, waiting for an event (Xen: blocked;
	                       sim: a thread inside a blocking system call) */
	uint8_t user_mode;  /* 1: in a PV guest's user mode (a Linux process) */
	uint8_t width;      /* guest width in bytes: 8 (only 64-bit guests are walked) */
};

struct plat_inspect;

/* Opens a domain for inspection: NULL with a message in err (no such
 * domain; a sim domain that is not a program; not permitted). */
struct plat_inspect *plat_inspect_open(struct plat *p, uint32_t domid, char *err, size_t errlen);
/* Waits (2 s at most) until the domain can be opened, from any thread:
 * 0, or -1 with the reason plat_inspect_open would give (sim: a domain
 * whose program is not started yet is waited for; Xen: 0 at once).  So
 * that the open itself, on the inspecting thread, does not wait: on sim
 * it asks once (a program still starting: EAGAIN). */
int plat_inspect_ready(struct plat *p, uint32_t domid, char *err, size_t errlen);
void plat_inspect_close(struct plat_inspect *in);
/* Stops every vCPU (nests as xc_domain_pause does not: one pause at a
 * time); 0, or -1 and errno (ESRCH: the domain is gone). */
int plat_inspect_pause(struct plat_inspect *in);
int plat_inspect_unpause(struct plat_inspect *in);
/* The vCPU ids are 0..n-1; n, or -1 and errno. */
int plat_inspect_vcpus(struct plat_inspect *in);
/* Without pausing: 1 when every vCPU is blocked (waiting for an event)
 * now, 0 when one runs, -1 when that cannot be told cheaply (then pause
 * and look).  Xen: xc_vcpu_getinfo; sim: the state of the threads the
 * last pause found.  A sampler records an idle domain without stopping it. */
int plat_inspect_idle(struct plat_inspect *in);
/* Outside a pause: sleeps until until_us (CLOCK_MONOTONIC, in
 * microseconds) or until wake_fd (when >= 0) is readable, doing meanwhile
 * what the domains need of whoever inspects them, for every inspection
 * the calling thread holds, whichever instance p opened it (sim: their
 * programs' stops resumed as they come, new threads taken, ends reaped;
 * Xen: nothing, a poll).  1: wake_fd is readable or an inspection of
 * the thread has ended (plat_inspect_ended), 0: the time came, -1 and
 * errno. */
int plat_inspect_wait(struct plat *p, int64_t until_us, int wake_fd);
/* Outside a pause: 1 when the domain is known to have ended (sim: its
 * program's end was reaped), else 0 (Xen: the next pause says ESRCH). */
int plat_inspect_ended(struct plat_inspect *in);
/* While paused: vCPU vcpu's registers; 0, or -1 and errno. */
int plat_inspect_regs(struct plat_inspect *in, uint32_t vcpu, struct plat_vcpu_regs *out);
/* While paused: up to len bytes at guest virtual address va in the address
 * space of cr3 (a vCPU's regs.cr3).  Returns the bytes read: fewer than
 * len when the range runs into an unmapped page; -1 and errno when none
 * could be read. */
long plat_inspect_read(struct plat_inspect *in, uint64_t cr3, uint64_t va, void *buf, size_t len);
/* From any thread, paused or not: what is mapped where in the domain, as
 * the text of Linux's /proc/PID/maps (start-end perms offset dev inode
 * path), each file mapped at the address its ELF is loaded at: the
 * program, its shared libraries (a PIE's and a library's load bias is
 * told by its first line, offset 0).  The text is malloc'd, NUL-ended,
 * its length in *len, at most PLAT_MAPS_MAX bytes; the paths are the
 * guest's (hostile: a reader opens only regular files).  NULL with a
 * message and errno: ENOTSUP where the platform cannot tell (Xen: a PV
 * guest's kernel is found through the toolstack), ESRCH the domain is
 * gone.  sim: the program's /proc/PID/maps. */
#define PLAT_MAPS_MAX (4u << 20)
char *plat_domain_maps(struct plat *p, uint32_t domid, size_t *len, char *err, size_t errlen);

/* ---- the implementations' ops tables (platform_*.c) ---------------------------------- */

struct plat_ops {
	const char *name;
	int (*open)(struct plat *p, const struct plat_opts *o, char *err, size_t errlen);
	void (*close)(struct plat *p);
	struct xs_handle *(*xs_open)(struct plat *p);

	struct plat_evtchn *(*evtchn_open)(struct plat *p);
	void (*evtchn_close)(struct plat_evtchn *e);
	int (*evtchn_fd)(struct plat_evtchn *e);
	int (*evtchn_bind_interdomain)(struct plat_evtchn *e, uint32_t domid, uint32_t port);
	int (*evtchn_alloc_unbound)(struct plat_evtchn *e, uint32_t domid);
	int (*evtchn_unbind)(struct plat_evtchn *e, uint32_t port);
	int (*evtchn_notify)(struct plat_evtchn *e, uint32_t port);
	int (*evtchn_pending)(struct plat_evtchn *e);
	int (*evtchn_unmask)(struct plat_evtchn *e, uint32_t port);

	struct plat_gnttab *(*gnttab_open)(struct plat *p);
	void (*gnttab_close)(struct plat_gnttab *g);
	void *(*gnttab_map)(struct plat_gnttab *g, uint32_t domid, const uint32_t *refs,
	                    uint32_t count, int writable);
	int (*gnttab_unmap)(struct plat_gnttab *g, void *addr, uint32_t count);
	int (*gnttab_copy)(struct plat_gnttab *g, uint32_t domid, int to_guest,
	                   struct plat_copy_seg *segs, uint32_t count);

	struct plat_gntshr *(*gntshr_open)(struct plat *p);
	void (*gntshr_close)(struct plat_gntshr *s);
	void *(*gntshr_share)(struct plat_gntshr *s, uint32_t domid, uint32_t count, uint32_t *refs,
	                      int writable);
	int (*gntshr_unshare)(struct plat_gntshr *s, void *addr, uint32_t count);
	void (*gntshr_leave)(struct plat_gntshr *s); /* NULL: gntshr_close */

	/* NULL where the toolstack creates domains (Xen) */
	int (*domain_create)(struct plat *p, const char *name, uint32_t *domid, char *err, size_t errlen);
	int (*domain_destroy)(struct plat *p, uint32_t domid);
	/* NULL where domains are not programs (Xen) */
	int (*domain_exec)(struct plat *p, uint32_t domid, char *const argv[], char *err, size_t errlen);
	/* NULL where domains are never saved (xensim) */
	int (*domain_suspended)(struct plat *p, uint32_t domid);

	struct plat_inspect *(*inspect_open)(struct plat *p, uint32_t domid, char *err, size_t errlen);
	void (*inspect_close)(struct plat_inspect *in);
	int (*inspect_pause)(struct plat_inspect *in);
	int (*inspect_unpause)(struct plat_inspect *in);
	int (*inspect_vcpus)(struct plat_inspect *in);
	int (*inspect_idle)(struct plat_inspect *in); /* NULL: -1, always */
	/* NULL: a poll (nothing to do for the domain between pauses) */
	int (*inspect_ready)(struct plat *p, uint32_t domid, char *err, size_t errlen); /* NULL: 0 */
	int (*inspect_wait)(struct plat *p, int64_t until_us, int wake_fd); /* NULL: a poll */
	int (*inspect_ended)(struct plat_inspect *in);                      /* NULL: 0, always */
	int (*inspect_regs)(struct plat_inspect *in, uint32_t vcpu, struct plat_vcpu_regs *out);
	long (*inspect_read)(struct plat_inspect *in, uint64_t cr3, uint64_t va, void *buf, size_t len);
	/* NULL: ENOTSUP (the mappings are not the platform's to tell) */
	char *(*domain_maps)(struct plat *p, uint32_t domid, size_t *len, char *err, size_t errlen);
};

struct plat {
	const struct plat_ops *ops;
	enum plat_kind kind;
	uint32_t domid;
	void *impl; /* the implementation's state */
};

/* Implementations embed these first in their handles. */
struct plat_evtchn {
	struct plat *p;
};
struct plat_gnttab {
	struct plat *p;
};
struct plat_gntshr {
	struct plat *p;
};
struct plat_inspect {
	struct plat *p;
	uint32_t domid;
};

extern const struct plat_ops plat_sim_ops;
#ifdef HAVE_XEN
extern const struct plat_ops plat_xen_ops;
#endif

#endif
