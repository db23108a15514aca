/*
 * test_xen_inspect.c - platform/platform_xen_inspect.c against a Xen made
 * of plain functions: this file defines the libxenctrl, libxenforeignmemory
 * and libxentoollog calls it makes (the test links no Xen library), over a
 * 64-bit PV guest whose "machine" memory is an array here.  What real Xen
 * cannot be asked on this machine is checked here: open refuses what is
 * not supported (no such domain, another domain's info, dying, HVM/PVH,
 * 32-bit, dom0 itself) and leaks no handle; one pause at a time; the
 * registers, kernel and user mode (ctrlreg[3] or ctrlreg[1]), offline and
 * blocked vCPUs; reads across pages, into unmapped pages, of frames Xen
 * refuses; at most 32 frames mapped, kept across pauses; translations
 * dropped at each pause; every frame unmapped when the domain is gone and
 * at close, and the guest unpaused by close.  The real thing is exercised
 * in Xen by tests/xen (the report of this change says how).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* as in platform_xen_inspect.c: Xen's public headers under -std=c11 */
#undef __STRICT_ANSI__
#include <xenctrl.h>
#include <xenforeignmemory.h>
#include <xentoollog.h>

#include "platform/platform.h"
#include "platform/platform_xen_inspect.h"
#include "testutil.h"

#define DOMID 5u
#define MEM_FRAMES 64
#define NVCPUS 3

static uint8_t machine[MEM_FRAMES][4096];
static uint8_t refused_page[4096]; /* what a map with a per-page error returns */

static struct {
	int exists, dying, hvm, other_domid;
	unsigned width;
	int pause_count, idle_asked;
	int online[NVCPUS], blocked[NVCPUS];
	vcpu_guest_context_x86_64_t ctx[NVCPUS];
	int xc_open, fmem_open;        /* handles open */
	unsigned map_calls;
	int live[MEM_FRAMES], live_refused;
	int peak; /* the most frames mapped at any moment, inside a read too */
} fx;

static int live_maps(void)
{
	int n = fx.live_refused;
	for (int i = 0; i < MEM_FRAMES; i++)
		n += fx.live[i];
	return n;
}

/* ---- the Xen libraries, as far as platform_xen_inspect.c uses them ------------- */

xentoollog_logger_stdiostream *xtl_createlogger_stdiostream(FILE *f, xentoollog_level min_level,
                                                            unsigned flags)
{
	(void)f, (void)min_level, (void)flags;
	return NULL; /* as on malloc failure: the code goes on without */
}

void xtl_logger_destroy(struct xentoollog_logger *logger)
{
	(void)logger;
}

xc_interface *xc_interface_open(xentoollog_logger *logger, xentoollog_logger *dombuild_logger,
                                unsigned open_flags)
{
	(void)logger, (void)dombuild_logger, (void)open_flags;
	fx.xc_open++;
	return (xc_interface *)(void *)&fx;
}

int xc_interface_close(xc_interface *xch)
{
	(void)xch;
	fx.xc_open--;
	return 0;
}

int xc_domain_getinfo(xc_interface *xch, uint32_t first_domid, unsigned int max_doms,
                      xc_dominfo_t *info)
{
	(void)xch;
	CHECK(first_domid == DOMID && max_doms == 1, "getinfo(%u, %u)", first_domid, max_doms);
	if (!fx.exists && !fx.other_domid)
		return 0;
	memset(info, 0, sizeof(*info));
	info->domid = fx.other_domid ? DOMID + 2 : DOMID; /* the next one up */
	info->dying = fx.dying ? 1 : 0;
	info->hvm = fx.hvm ? 1 : 0;
	info->max_vcpu_id = NVCPUS - 1;
	return 1;
}

int xc_domain_get_guest_width(xc_interface *xch, uint32_t domid, unsigned int *guest_width)
{
	(void)xch, (void)domid;
	*guest_width = fx.width;
	return 0;
}

int xc_domain_pause(xc_interface *xch, uint32_t domid)
{
	(void)xch;
	if (!fx.exists || domid != DOMID) {
		errno = ESRCH;
		return -1;
	}
	fx.pause_count++;
	return 0;
}

int xc_domain_unpause(xc_interface *xch, uint32_t domid)
{
	(void)xch;
	if (!fx.exists || domid != DOMID) {
		errno = ESRCH;
		return -1;
	}
	fx.pause_count--;
	return 0;
}

int xc_vcpu_getinfo(xc_interface *xch, uint32_t domid, uint32_t vcpu, xc_vcpuinfo_t *info)
{
	(void)xch, (void)domid;
	/* read while the domain runs only to tell whether it idles */
	CHECK(fx.pause_count > 0 || fx.idle_asked, "vcpu info read while the domain runs");
	if (vcpu >= NVCPUS) {
		errno = EINVAL;
		return -1;
	}
	memset(info, 0, sizeof(*info));
	info->vcpu = vcpu;
	info->online = (uint8_t)fx.online[vcpu];
	info->blocked = (uint8_t)fx.blocked[vcpu];
	return 0;
}

int xc_vcpu_getcontext(xc_interface *xch, uint32_t domid, uint32_t vcpu, vcpu_guest_context_any_t *ctxt)
{
	(void)xch, (void)domid;
	CHECK(vcpu < NVCPUS && fx.online[vcpu], "context of vCPU %u, offline or absent", vcpu);
	memset(ctxt, 0, sizeof(*ctxt));
	ctxt->x64 = fx.ctx[vcpu];
	return 0;
}

xenforeignmemory_handle *xenforeignmemory_open(struct xentoollog_logger *logger, unsigned open_flags)
{
	(void)logger, (void)open_flags;
	fx.fmem_open++;
	return (xenforeignmemory_handle *)(void *)&fx.fmem_open;
}

int xenforeignmemory_close(xenforeignmemory_handle *fmem)
{
	(void)fmem;
	fx.fmem_open--;
	return 0;
}

/* Xen refuses frames the domain does not own: here, those past its
 * memory, with a negative per-page status as Linux's privcmd gives. */
void *xenforeignmemory_map(xenforeignmemory_handle *fmem, uint32_t dom, int prot, size_t pages,
                           const xen_pfn_t arr[], int err[])
{
	(void)fmem;
	CHECK(dom == DOMID && prot == PROT_READ && pages == 1 && err, "map(dom %u, prot %d, %zu pages)",
	      dom, prot, pages);
	fx.map_calls++;
	if (arr[0] >= MEM_FRAMES) {
		err[0] = -EPERM;
		fx.live_refused++;
		return refused_page;
	}
	err[0] = 0;
	fx.live[arr[0]]++;
	if (live_maps() > fx.peak)
		fx.peak = live_maps();
	return machine[arr[0]];
}

int xenforeignmemory_unmap(xenforeignmemory_handle *fmem, void *addr, size_t pages)
{
	(void)fmem;
	CHECK(pages == 1, "unmap of %zu pages", pages);
	if (addr == refused_page) {
		fx.live_refused--;
		return 0;
	}
	size_t f = (size_t)((uint8_t *)addr - &machine[0][0]) / 4096;
	REQUIRE(f < MEM_FRAMES && addr == machine[f], "unmap of %p, not a mapped frame", addr);
	fx.live[f]--;
	CHECK(fx.live[f] >= 0, "frame %zu unmapped twice", f);
	return 0;
}

/* ---- the guest ------------------------------------------------------------------- */

#define P UINT64_C(0x1)
#define L4_KERNEL 1  /* ctrlreg[3] */
#define L4_USER 10   /* ctrlreg[1] */

static void set_pte(uint64_t table, unsigned index, uint64_t v)
{
	memcpy(&machine[table][index * 8], &v, 8); /* x86-64 host: little-endian as the guest */
}

static unsigned idx(uint64_t va, int level)
{
	return (unsigned)(va >> (12 + 9 * (level - 1))) & 511u;
}

/* va -> data through the tables in frames l4..l1 */
static void map_4k(uint64_t l4, uint64_t l3, uint64_t l2, uint64_t l1, uint64_t va, uint64_t data)
{
	set_pte(l4, idx(va, 4), l3 << 12 | P);
	set_pte(l3, idx(va, 3), l2 << 12 | P);
	set_pte(l2, idx(va, 2), l1 << 12 | P);
	set_pte(l1, idx(va, 1), data << 12 | P);
}

#define KVA UINT64_C(0xffff888000100000) /* two pages: frames 20, 21 */
#define UVA UINT64_C(0x00007ffff7a00000) /* the user page table's: frame 30 */

static void guest_boot(void)
{
	memset(machine, 0, sizeof(machine));
	memset(&fx, 0, sizeof(fx));
	fx.exists = 1;
	fx.width = 8;
	map_4k(L4_KERNEL, 2, 3, 4, KVA, 20);
	map_4k(L4_KERNEL, 2, 3, 4, KVA + 4096, 21);
	map_4k(L4_USER, 11, 12, 13, UVA, 30);
	memcpy(&machine[20][4090], "kernel", 6);
	memcpy(&machine[21][0], "-stack", 6);
	memcpy(&machine[30][0], "user", 4);
	for (int v = 0; v < NVCPUS; v++) {
		fx.online[v] = 1;
		fx.ctx[v].ctrlreg[3] = (uint64_t)L4_KERNEL << 12;
		fx.ctx[v].ctrlreg[1] = (uint64_t)L4_USER << 12;
		fx.ctx[v].flags = VGCF_in_kernel;
		fx.ctx[v].user_regs.rip = 0xffffffff81000000u + (uint64_t)v;
		fx.ctx[v].user_regs.rsp = KVA + 4000;
		fx.ctx[v].user_regs.rbp = KVA + 4090;
		fx.ctx[v].user_regs.r15 = 15;
		fx.ctx[v].user_regs.rflags = 0x246;
	}
}

static struct plat plat0 = {.kind = PLAT_XEN, .domid = 0};

/* ---- the checks ------------------------------------------------------------------ */

static void refused(const char *what, const char *needle, int want_errno)
{
	char err[256] = "";
	errno = 0;
	struct plat_inspect *in = xen_inspect_open(&plat0, DOMID, err, sizeof(err));
	int e = errno;
	CHECK(!in, "%s: opened", what);
	CHECK(strstr(err, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err, needle);
	CHECK(e == want_errno, "%s: errno %d, not %d", what, e, want_errno);
	CHECK(fx.xc_open == 0 && fx.fmem_open == 0 && live_maps() == 0,
	      "%s: handles left open (%d, %d) or frames mapped (%d)", what, fx.xc_open, fx.fmem_open,
	      live_maps());
	if (in)
		xen_inspect_close(in);
}

static void test_open_refusals(void)
{
	char err[256] = "";
	guest_boot();
	fx.exists = 0;
	refused("no such domain", "no such domain", ESRCH);
	fx.other_domid = 1; /* getinfo answers with the next domain up */
	refused("another domain's info", "no such domain", ESRCH);
	guest_boot();
	fx.dying = 1;
	refused("dying", "being destroyed", ESRCH);
	guest_boot();
	fx.hvm = 1;
	refused("HVM", "HVM or PVH", EOPNOTSUPP);
	guest_boot();
	fx.width = 4;
	refused("32-bit", "32-bit guest", EOPNOTSUPP);
	guest_boot();
	CHECK(!xen_inspect_open(&plat0, 0, err, sizeof(err)) && strstr(err, "itself"),
	      "dom0 looking into itself: \"%s\"", err);
}

static void test_regs(struct plat_inspect *in)
{
	struct plat_vcpu_regs r;

	CHECK(xen_inspect_regs(in, 0, &r) == 0 && r.online && !r.blocked && !r.user_mode && r.width == 8,
	      "vCPU 0: online %d blocked %d user %d width %d", r.online, r.blocked, r.user_mode, r.width);
	CHECK(r.cr3 == (uint64_t)L4_KERNEL << 12 && r.rip == 0xffffffff81000000u && r.rsp == KVA + 4000 &&
	      r.rbp == KVA + 4090 && r.r15 == 15 && r.rflags == 0x246,
	      "vCPU 0 registers: cr3 %llx rip %llx", (unsigned long long)r.cr3, (unsigned long long)r.rip);
	fx.ctx[1].flags = 0; /* VGCF_in_kernel clear: a process runs */
	CHECK(xen_inspect_regs(in, 1, &r) == 0 && r.user_mode && r.cr3 == (uint64_t)L4_USER << 12,
	      "vCPU 1 in user mode: user %d cr3 %llx", r.user_mode, (unsigned long long)r.cr3);
	fx.ctx[1].ctrlreg[1] = 0;
	CHECK(xen_inspect_regs(in, 1, &r) == 0 && r.user_mode && r.cr3 == (uint64_t)L4_KERNEL << 12,
	      "user mode without a user page table: cr3 %llx", (unsigned long long)r.cr3);
	fx.online[2] = 0;
	CHECK(xen_inspect_regs(in, 2, &r) == 0 && !r.online && r.rip == 0, "offline vCPU: online %d",
	      r.online);
	fx.online[2] = 1;
	fx.blocked[2] = 1;
	CHECK(xen_inspect_regs(in, 2, &r) == 0 && r.online && r.blocked && r.rip == 0xffffffff81000002u,
	      "blocked vCPU: online %d blocked %d", r.online, r.blocked);
	errno = 0;
	CHECK(xen_inspect_regs(in, NVCPUS, &r) == -1 && errno == EINVAL, "vCPU %d: errno %d", NVCPUS, errno);
}

static void test_reads(struct plat_inspect *in)
{
	char buf[64];
	const uint64_t kcr3 = (uint64_t)L4_KERNEL << 12, ucr3 = (uint64_t)L4_USER << 12;

	memset(buf, 0, sizeof(buf));
	CHECK(xen_inspect_read(in, kcr3, KVA + 4090, buf, 12) == 12 && !memcmp(buf, "kernel-stack", 12),
	      "across two pages: \"%.12s\"", buf);
	CHECK(xen_inspect_read(in, ucr3, UVA, buf, 4) == 4 && !memcmp(buf, "user", 4), "user page table");
	errno = 0;
	CHECK(xen_inspect_read(in, kcr3, UVA, buf, 4) == -1 && errno == EFAULT,
	      "user address not in the kernel's tables: errno %d", errno);
	CHECK(xen_inspect_read(in, kcr3, KVA + 4096 + 4090, buf, 20) == 6,
	      "into an unmapped page: only the bytes before it");
	errno = 0;
	CHECK(xen_inspect_read(in, kcr3, UINT64_C(0x0000900000000000), buf, 8) == -1 && errno == EINVAL,
	      "non-canonical: errno %d", errno);
	/* a lying entry: a frame the domain does not own */
	map_4k(L4_KERNEL, 2, 3, 4, KVA + 8192, MEM_FRAMES + 100);
	errno = 0;
	CHECK(xen_inspect_read(in, kcr3, KVA + 8192, buf, 8) == -1 && errno == EPERM,
	      "frame Xen refuses: errno %d", errno);
	CHECK(fx.live_refused == 0, "a refused map left mapped");
	CHECK(xen_inspect_read(in, kcr3, KVA, buf, 0) == 0, "empty read");
}

/* 100 pages read: all right, never more than 32 frames mapped, not even
 * for a moment inside a read (check-xen's scenario 11 saw 33 in a dom0's
 * /proc/PID/maps when a new frame was mapped before the old one went). */
static void test_lru(struct plat_inspect *in)
{
	const uint64_t kcr3 = (uint64_t)L4_KERNEL << 12;
	const uint64_t base = UINT64_C(0xffff888000400000);
	int worst = 0;

	fx.peak = live_maps();

	for (unsigned i = 0; i < 100; i++) {
		map_4k(L4_KERNEL, 2, 3, 5, base + i * 4096u, 24 + i % 40);
		machine[24 + i % 40][i] = (uint8_t)(i + 1);
	}
	for (unsigned i = 0; i < 100; i++) {
		uint8_t b = 0;
		CHECK(xen_inspect_read(in, kcr3, base + i * 4096u + i, &b, 1) == 1 && b == (uint8_t)(i + 1),
		      "page %u: %u", i, b);
		if (live_maps() > worst)
			worst = live_maps();
	}
	CHECK(worst <= 32, "%d frames mapped at once", worst);
	CHECK(fx.peak <= 32, "%d frames mapped at once inside a read", fx.peak);
}

static void test_pauses(struct plat_inspect *in)
{
	const uint64_t kcr3 = (uint64_t)L4_KERNEL << 12;
	char buf[8];

	CHECK(xen_inspect_read(in, kcr3, KVA + 4090, buf, 6) == 6, "read before the next pause");
	CHECK(xen_inspect_unpause(in) == 0 && fx.pause_count == 0, "unpause: count %d", fx.pause_count);
	errno = 0;
	CHECK(xen_inspect_unpause(in) == -1 && errno == EINVAL, "unpause twice: errno %d", errno);
	CHECK(xen_inspect_read(in, kcr3, KVA, buf, 1) == -1 && errno == EINVAL, "read while running");
	/* the frames stay mapped across pauses: no map call for the same read */
	unsigned before = fx.map_calls;
	CHECK(xen_inspect_pause(in) == 0, "pause again");
	CHECK(xen_inspect_read(in, kcr3, KVA + 4090, buf, 6) == 6 && fx.map_calls == before,
	      "same read, next pause: %u map calls", fx.map_calls - before);
	/* the guest remaps KVA while it runs: the next pause sees it */
	CHECK(xen_inspect_unpause(in) == 0, "unpause");
	map_4k(L4_KERNEL, 2, 3, 4, KVA, 22);
	memcpy(&machine[22][4090], "REMAP!", 6);
	CHECK(xen_inspect_pause(in) == 0, "pause after the remap");
	CHECK(xen_inspect_read(in, kcr3, KVA + 4090, buf, 6) == 6 && !memcmp(buf, "REMAP!", 6),
	      "after the remap: \"%.6s\"", buf);
}

/* Idle told without a pause: every online vCPU blocked. */
static void test_idle(struct plat_inspect *in)
{
	CHECK(xen_inspect_idle(in) == -1, "idle asked while paused");
	CHECK(xen_inspect_unpause(in) == 0, "unpause");
	fx.idle_asked = 1;
	for (int v = 0; v < NVCPUS; v++)
		fx.online[v] = 1, fx.blocked[v] = 1;
	CHECK(xen_inspect_idle(in) == 1 && fx.pause_count == 0, "all blocked: idle, and not paused");
	fx.blocked[NVCPUS - 1] = 0;
	CHECK(xen_inspect_idle(in) == 0, "one running: not idle");
	fx.online[NVCPUS - 1] = 0;
	CHECK(xen_inspect_idle(in) == 1, "the running one offline: idle");
	fx.idle_asked = 0;
	CHECK(xen_inspect_pause(in) == 0, "pause again");
}

static void test_gone(void)
{
	char err[256];
	guest_boot();
	struct plat_inspect *in = xen_inspect_open(&plat0, DOMID, err, sizeof(err));
	REQUIRE(in, "open: %s", err);
	char buf[6];
	CHECK(xen_inspect_pause(in) == 0 && xen_inspect_read(in, (uint64_t)L4_KERNEL << 12, KVA + 4090,
	                                                     buf, 6) == 6, "pause and read");
	CHECK(live_maps() > 0, "frames mapped");
	CHECK(xen_inspect_unpause(in) == 0, "unpause");
	fx.dying = 1; /* xl destroy: our mappings are what keeps it */
	errno = 0;
	CHECK(xen_inspect_pause(in) == -1 && errno == ESRCH, "pause of a dying domain: errno %d", errno);
	CHECK(live_maps() == 0, "%d frames still mapped after the domain went", live_maps());
	fx.exists = 0;
	CHECK(xen_inspect_pause(in) == -1 && errno == ESRCH, "pause of a gone domain: errno %d", errno);
	xen_inspect_close(in);
	CHECK(fx.xc_open == 0 && fx.fmem_open == 0, "handles left open");
}

int main(void)
{
	char err[256] = "";

	test_open_refusals();
	guest_boot();
	struct plat_inspect *in = xen_inspect_open(&plat0, DOMID, err, sizeof(err));
	REQUIRE(in, "open: %s", err);
	CHECK(xen_inspect_vcpus(in) == NVCPUS, "vcpus: %d", xen_inspect_vcpus(in));
	struct plat_vcpu_regs r;
	errno = 0;
	CHECK(xen_inspect_regs(in, 0, &r) == -1 && errno == EINVAL, "regs while running: errno %d", errno);
	CHECK(xen_inspect_pause(in) == 0 && fx.pause_count == 1, "pause: count %d", fx.pause_count);
	errno = 0;
	CHECK(xen_inspect_pause(in) == -1 && errno == EBUSY && fx.pause_count == 1,
	      "pause twice: errno %d, count %d", errno, fx.pause_count);
	test_regs(in);
	test_reads(in);
	test_lru(in);
	test_pauses(in);
	test_idle(in);
	xen_inspect_close(in); /* while paused */
	CHECK(fx.pause_count == 0, "close left the guest paused (%d)", fx.pause_count);
	CHECK(live_maps() == 0 && fx.xc_open == 0 && fx.fmem_open == 0,
	      "close left %d frames mapped, handles %d %d", live_maps(), fx.xc_open, fx.fmem_open);
	test_gone();
	return tu_finish("test_xen_inspect");
}
