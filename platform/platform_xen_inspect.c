/*
 * platform_xen_inspect.c - looking into a domain on real Xen (platform.h,
 * "looking into a domain"): pausing it, reading its vCPUs' registers and
 * reading its memory by guest virtual address.  Owns, per inspected
 * domain, a libxenctrl handle, a libxenforeignmemory handle, the frames
 * it has mapped (a small LRU kept across pauses) and a page-table walker
 * (guest_pagetable.c) whose translations live for one pause.  Calls
 * libxenctrl (xc_domain_getinfo, xc_domain_get_guest_width,
 * xc_domain_pause/unpause, xc_vcpu_getinfo, xc_vcpu_getcontext),
 * libxenforeignmemory (map/unmap, one frame at a time, read-only) and
 * guest_pagetable.h; nothing of the rest of profsvc.
 *
 * What is supported: 64-bit PV guests, what the real-Xen tests boot (PV
 * Linux).  Their page-table entries and cr3 hold machine frame numbers
 * (MFNs), and xenforeignmemory_map takes MFNs for a PV domain, so the
 * walker's frames go to the mapper unchanged.  Refused at open, with the
 * reason: 32-bit guests (3-level PAE tables, a 4-byte word), and HVM/PVH
 * guests, whose cr3 is in the HVM context (xc_domain_hvm_getcontext_partial,
 * HVM_SAVE_CODE(CPU)), whose paging mode depends on cr0/cr4/EFER, and whose
 * tables hold guest frame numbers (GFNs): none of that is done here.
 *
 * Hostile guest memory: the walker bounds and checks every entry; a frame
 * number it yields may still be anything the guest wrote, and Xen refuses
 * to map a frame the domain does not own, so a lying entry reads nothing
 * of another domain's (the map fails and the read stops there).
 *
 * Not thread-safe: one inspector per thread, like the rest of platform/.
 *
 * May call: guest_pagetable.c (the page-table walk), platform.h's types,
 * libxenctrl, libxenforeignmemory.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* xenctrl.h pulls in Xen's public headers, which refuse a strict ISO
 * compiler ("Anonymous structs/unions are a GNU extension": true before
 * C11, not since) and make their 8-byte alignment FIXME.  -std=c11 is
 * what the project builds with, and gcc and clang take both constructs in
 * it, so the guard is lifted here, after every libc header (their
 * feature selection is already made), for Xen's headers only. */
#undef __STRICT_ANSI__
#include <xenctrl.h>
#include <xenforeignmemory.h>
#include <xentoollog.h>

#include "guest_pagetable.h"
#include "platform_xen_inspect.h"

/* Frames kept mapped: the top of a few stacks, the code around their
 * return addresses and the page tables above them.  Mapping is a
 * hypercall and an mmap, so a sampler that hits the same frames every
 * pause would spend its time there without them.  Keeping them across
 * pauses is sound for a PV guest: a mapping shows the frame as it is now,
 * not a copy, and an MFN stays the same frame for as long as we hold it;
 * what changes while the guest runs is which frames its tables name, and
 * the walker reads those afresh after each pause.  (On HVM a GFN can be
 * backed by another machine frame after ballooning: these mappings would
 * have to go at each pause too.) */
#define XI_MAPPED_FRAMES 32

struct xi_frame {
	uint64_t frame;
	void *map;         /* NULL: the slot is free */
	uint64_t last_use; /* the inspector's clock at the last hit */
};

struct xen_inspect {
	struct plat_inspect base;
	xentoollog_logger_stdiostream *log;
	xc_interface *xch;
	xenforeignmemory_handle *fmem;
	unsigned nvcpus;
	int paused;
	struct gpt walker;
	struct xi_frame frames[XI_MAPPED_FRAMES];
	uint64_t clock;
};

/* ---- mapped frames ---------------------------------------------------------- */

/* Unmaps every frame.  Called at close and as soon as the domain is found
 * gone: a foreign mapping holds a reference on the guest's page, and a
 * destroyed domain whose pages are still referenced stays a zombie in Xen
 * (`xl list` shows it as "(null)") until the last one is dropped. */
static void xi_forget_frames(struct xen_inspect *x)
{
	for (size_t i = 0; i < XI_MAPPED_FRAMES; i++) {
		if (x->frames[i].map)
			xenforeignmemory_unmap(x->fmem, x->frames[i].map, 1);
		x->frames[i] = (struct xi_frame){0};
	}
}

/* One frame of the domain, read-only; NULL and errno. */
static void *xi_map_frame(struct xen_inspect *x, uint64_t frame)
{
	xen_pfn_t pfn = (xen_pfn_t)frame;
	int map_err = 0;
	errno = 0;
	void *m = xenforeignmemory_map(x->fmem, x->base.domid, PROT_READ, 1, &pfn, &map_err);

	if (!m) {
		if (!errno)
			errno = EFAULT;
		return NULL;
	}
	if (map_err) {
		/* the per-page status: an errno value, negative from some kernels */
		xenforeignmemory_unmap(x->fmem, m, 1);
		errno = map_err < 0 ? -map_err : map_err;
		return NULL;
	}
	return m;
}

/* The slot to fill: a free one, else the least recently used. */
static struct xi_frame *xi_victim(struct xen_inspect *x)
{
	struct xi_frame *v = &x->frames[0];
	for (size_t i = 0; i < XI_MAPPED_FRAMES; i++) {
		struct xi_frame *f = &x->frames[i];
		if (!f->map)
			return f;
		if (f->last_use < v->last_use)
			v = f;
	}
	return v;
}

/* gpt_read_frame_fn, and the data reads: frame mapped, from the LRU or
 * newly.  *page stays valid until the next call (the walker's contract):
 * only a later call evicts. */
static int xi_read_frame(void *ctx, uint64_t frame, const uint8_t **page)
{
	struct xen_inspect *x = ctx;
	x->clock++;
	for (size_t i = 0; i < XI_MAPPED_FRAMES; i++) {
		if (x->frames[i].map && x->frames[i].frame == frame) {
			x->frames[i].last_use = x->clock;
			*page = x->frames[i].map;
			return 0;
		}
	}
	/* The victim goes before the new frame is mapped, not after: mapped
	 * first, a dom0 held XI_MAPPED_FRAMES + 1 mappings for a moment at
	 * every miss (check-xen's scenario 11 saw 33 in the probe's
	 * /proc/PID/maps), and the bound is what a sampler of many domains
	 * counts on.  A map that then fails costs only the evicted frame. */
	struct xi_frame *v = xi_victim(x);
	if (v->map)
		xenforeignmemory_unmap(x->fmem, v->map, 1);
	*v = (struct xi_frame){0};
	void *m = xi_map_frame(x, frame);
	if (!m)
		return -1;
	*v = (struct xi_frame){.frame = frame, .map = m, .last_use = x->clock};
	*page = m;
	return 0;
}

/* ---- the domain ---------------------------------------------------------------- */

/* 0 when domid exists and is not being destroyed, -1 and ESRCH when it is
 * gone (its frames are then unmapped), -1 and errno when Xen cannot say.
 * xc_domain_getinfo lists domains from domid up: the first one returned
 * may be another (Xen 4.17 has no xc_domain_getinfo_single). */
static int xi_domain_info(struct xen_inspect *x, xc_dominfo_t *info)
{
	int n = xc_domain_getinfo(x->xch, x->base.domid, 1, info);
	if (n < 0)
		return -1;
	if (n != 1 || info->domid != x->base.domid || info->dying) {
		xi_forget_frames(x);
		errno = ESRCH;
		return -1;
	}
	return 0;
}

/* After a failed call: the domain may be gone (ESRCH), and then its frames
 * must go too.  Keeps errno. */
static void xi_check_gone(struct xen_inspect *x)
{
	int saved = errno;
	if (saved == ESRCH)
		xi_forget_frames(x);
	errno = saved;
}

/* What open refuses, with the reason and what to do instead. */
static int xi_check_guest(struct xen_inspect *x, char *err, size_t errlen)
{
	uint32_t domid = x->base.domid;
	xc_dominfo_t info;
	unsigned width = 0;

	if (xi_domain_info(x, &info) != 0) {
		snprintf(err, errlen, "domain %u: %s (`xl list` shows the domains there are)", domid,
		         errno == ESRCH ? "no such domain, or being destroyed" : strerror(errno));
		return -1;
	}
	if (info.hvm) {
		snprintf(err, errlen, "domain %u is an HVM or PVH guest: looking into one is not supported "
		         "on Xen (only 64-bit PV guests; boot it with type = \"pv\")", domid);
		errno = EOPNOTSUPP;
		return -1;
	}
	if (xc_domain_get_guest_width(x->xch, domid, &width) != 0) {
		snprintf(err, errlen, "domain %u: xc_domain_get_guest_width: %s", domid, strerror(errno));
		return -1;
	}
	if (width != 8) {
		snprintf(err, errlen, "domain %u is a %u-bit guest: only 64-bit guests' page tables "
		         "(4-level) are walked; boot a 64-bit kernel", domid, width * 8);
		errno = EOPNOTSUPP;
		return -1;
	}
	if (info.max_vcpu_id >= INT_MAX) {
		snprintf(err, errlen, "domain %u: max_vcpu_id %u is out of range", domid, info.max_vcpu_id);
		errno = ERANGE;
		return -1;
	}
	x->nvcpus = info.max_vcpu_id + 1;
	return 0;
}

/* The handles, each failure named with its likely cause. */
static int xi_open_handles(struct xen_inspect *x, char *err, size_t errlen)
{
	/* libxenctrl's own lines would repeat ours, once per failed call of
	 * a sampler that makes hundreds a second: failures come back as
	 * errno and the messages here. */
	x->log = xtl_createlogger_stdiostream(stderr, XTL_CRITICAL, 0);
	x->xch = xc_interface_open(x->log ? (xentoollog_logger *)x->log : NULL, NULL, 0);
	if (!x->xch) {
		snprintf(err, errlen, "xc_interface_open: %s (looking into a domain needs dom0's "
		         "/dev/xen/privcmd: run as root in dom0)", strerror(errno));
		return -1;
	}
	x->fmem = xenforeignmemory_open(x->log ? (xentoollog_logger *)x->log : NULL, 0);
	if (!x->fmem) {
		snprintf(err, errlen, "xenforeignmemory_open: %s (needs dom0's /dev/xen/privcmd: run "
		         "as root in dom0)", strerror(errno));
		return -1;
	}
	return 0;
}

static void xi_free(struct xen_inspect *x)
{
	int saved = errno;
	if (x->fmem) {
		xi_forget_frames(x);
		xenforeignmemory_close(x->fmem);
	}
	if (x->xch)
		xc_interface_close(x->xch);
	if (x->log)
		xtl_logger_destroy((xentoollog_logger *)x->log);
	free(x);
	errno = saved;
}

struct plat_inspect *xen_inspect_open(struct plat *p, uint32_t domid, char *err, size_t errlen)
{
	if (domid == p->domid) {
		/* pausing the domain we run in would stop us with it */
		snprintf(err, errlen, "domain %u is the one profsvc runs in: it cannot look into itself",
		         domid);
		errno = EINVAL;
		return NULL;
	}
	struct xen_inspect *x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(err, errlen, "domain %u: out of memory", domid);
		return NULL;
	}
	x->base.p = p;
	x->base.domid = domid;
	if (xi_open_handles(x, err, errlen) != 0 || xi_check_guest(x, err, errlen) != 0) {
		xi_free(x);
		return NULL;
	}
	gpt_init(&x->walker, xi_read_frame, x);
	return &x->base;
}

void xen_inspect_close(struct plat_inspect *in)
{
	struct xen_inspect *x = (struct xen_inspect *)in;
	/* a caller that stops half-way must not leave the guest stopped */
	if (x->paused)
		xc_domain_unpause(x->xch, in->domid);
	xi_free(x);
}

/* ---- pause, registers, memory ------------------------------------------------- */

/* One pause at a time: Xen counts pauses (each needs its unpause), and a
 * sampler that paused twice by mistake would leave the guest stopped. */
int xen_inspect_pause(struct plat_inspect *in)
{
	struct xen_inspect *x = (struct xen_inspect *)in;
	xc_dominfo_t info;

	if (x->paused) {
		errno = EBUSY;
		return -1;
	}
	/* A dying domain can still be paused, and our mappings are what keeps
	 * it from going: ask first. */
	if (xi_domain_info(x, &info) != 0)
		return -1;
	if (xc_domain_pause(x->xch, in->domid) != 0) {
		xi_check_gone(x);
		return -1;
	}
	/* the guest ran since the last pause: its page tables may have changed */
	gpt_invalidate(&x->walker);
	x->paused = 1;
	return 0;
}

int xen_inspect_unpause(struct plat_inspect *in)
{
	struct xen_inspect *x = (struct xen_inspect *)in;

	if (!x->paused) {
		errno = EINVAL;
		return -1;
	}
	if (xc_domain_unpause(x->xch, in->domid) != 0) {
		xi_check_gone(x);
		if (errno == ESRCH)
			x->paused = 0; /* nothing left to unpause */
		return -1;
	}
	x->paused = 0;
	return 0;
}

int xen_inspect_vcpus(struct plat_inspect *in)
{
	return (int)((struct xen_inspect *)in)->nvcpus;
}

/* The 64-bit context's registers.  A 64-bit PV kernel runs in ring 3 like
 * its processes, so the mode is Xen's VGCF_in_kernel flag, not cs; in user
 * mode the vCPU runs on the user page table, which Xen reports in
 * ctrlreg[1] (arch-x86/xen.h: "User pagetable on x86/64 is placed in
 * ctrlreg[1]"), the kernel's in ctrlreg[3].  Both hold an MFN << 12
 * (xen-x86_64.h: xen_pfn_to_cr3). */
static void xi_fill_regs(const vcpu_guest_context_x86_64_t *c, struct plat_vcpu_regs *out)
{
	const struct cpu_user_regs_x86_64 *r = &c->user_regs;

	out->rip = r->rip, out->rsp = r->rsp, out->rbp = r->rbp, out->rax = r->rax;
	out->rbx = r->rbx, out->rcx = r->rcx, out->rdx = r->rdx, out->rsi = r->rsi;
	out->rdi = r->rdi, out->r8 = r->r8, out->r9 = r->r9, out->r10 = r->r10;
	out->r11 = r->r11, out->r12 = r->r12, out->r13 = r->r13, out->r14 = r->r14;
	out->r15 = r->r15, out->rflags = r->rflags;
	out->user_mode = !(c->flags & VGCF_in_kernel);
	/* a guest that never set a user page table has ctrlreg[1] 0: its
	 * user mode runs on the kernel's */
	out->cr3 = out->user_mode && c->ctrlreg[1] ? c->ctrlreg[1] : c->ctrlreg[3];
}

int xen_inspect_regs(struct plat_inspect *in, uint32_t vcpu, struct plat_vcpu_regs *out)
{
	struct xen_inspect *x = (struct xen_inspect *)in;
	xc_vcpuinfo_t info;
	vcpu_guest_context_any_t ctx;

	if (!x->paused || vcpu >= x->nvcpus) {
		errno = EINVAL; /* a running vCPU's registers are stale as they are read */
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->width = 8;
	if (xc_vcpu_getinfo(x->xch, in->domid, vcpu, &info) != 0) {
		xi_check_gone(x);
		return -1;
	}
	if (!info.online)
		return 0;
	out->online = 1;
	out->blocked = info.blocked ? 1 : 0;
	if (xc_vcpu_getcontext(x->xch, in->domid, vcpu, &ctx) != 0) {
		xi_check_gone(x);
		return -1;
	}
	xi_fill_regs(&ctx.x64, out);
	out->cpu_ns = info.cpu_time;
	return 0;
}

/* Without a pause: every online vCPU blocked (xc_vcpu_getinfo reads the
 * scheduler's state; a vCPU that wakes just after is the next sample's). */
int xen_inspect_idle(struct plat_inspect *in)
{
	struct xen_inspect *x = (struct xen_inspect *)in;
	if (x->paused || x->nvcpus == 0)
		return -1;
	for (unsigned v = 0; v < x->nvcpus; v++) {
		xc_vcpuinfo_t info;
		if (xc_vcpu_getinfo(x->xch, in->domid, v, &info) != 0)
			return -1;
		if (info.online && !info.blocked)
			return 0;
	}
	return 1;
}

/* Up to one page's worth at va (to the end of its page); the bytes read,
 * or -1 and errno. */
static long xi_read_in_page(struct xen_inspect *x, uint64_t cr3, uint64_t va, uint8_t *buf,
                            size_t len)
{
	uint64_t frame;
	const uint8_t *page;

	if (gpt_translate(&x->walker, cr3, va, &frame) != 0 || xi_read_frame(x, frame, &page) != 0) {
		xi_check_gone(x);
		return -1;
	}
	size_t off = (size_t)(va & (GPT_PAGE_SIZE - 1));
	size_t n = GPT_PAGE_SIZE - off < len ? GPT_PAGE_SIZE - off : len;
	memcpy(buf, page + off, n);
	return (long)n;
}

long xen_inspect_read(struct plat_inspect *in, uint64_t cr3, uint64_t va, void *buf, size_t len)
{
	struct xen_inspect *x = (struct xen_inspect *)in;
	size_t done = 0;

	if (!x->paused || len > LONG_MAX) {
		errno = EINVAL;
		return -1;
	}
	while (done < len) {
		uint64_t at = va + done;
		if (at < va) {
			errno = EFAULT; /* wrapped past the top of the address space */
			break;
		}
		long n = xi_read_in_page(x, cr3, at, (uint8_t *)buf + done, len - done);
		if (n < 0)
			break;
		done += (size_t)n;
	}
	if (done == 0 && len > 0)
		return -1;
	return (long)done;
}
