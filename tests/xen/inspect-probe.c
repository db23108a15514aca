/*
 * inspect-probe.c - runs in a Xen dom0 (built on demand: `make
 * tests/xen/inspect-probe`, for a tests/xen scenario): looks into a domain
 * through platform.h's plat_inspect_* on the real platform, as a stack
 * sampler will, and prints what it saw in a form to set beside xenctx's.
 *
 *   inspect-probe [--samples N] [--interval-ms MS] [--bad] [--hold-after-gone S]
 *                 [--kernel-symbols MAP] DOMID
 *
 * Each sample pauses the domain, prints one line per vCPU and unpauses it:
 *   vcpu V online O blocked B user U rip X rsp X rbp X cr3 X
 *   code V: 32 bytes from rip-21, the byte at rip in <>, as xenctx's "Code"
 *   stack V: the words from rsp to the end of its page, at most 16, as
 *            the words of xenctx's "Stack:"
 *   frames V: (--kernel-symbols, a vCPU in its kernel) the frames the
 *            sampler takes (sample_stack.c's be_stack_take: frame pointers on
 *            the kernel's stack), each "ADDRESS NAME+0xOFF" named from MAP
 *            as xenctx -s names the words of its "Call Trace:", joined
 *            by " | "
 * (a read that fails prints "code V: error ERRNO" or "stack V: error ERRNO").
 * With the domain already paused (`xl pause`), one sample sees what
 * `xenctx -a -C DOMID` sees.  --bad also reads a non-canonical address and
 * the unmapped page 0 and prints what came back ("bad: ..."): both must
 * fail.  A pause that finds the domain gone prints "gone: ..." and ends
 * the sampling; --hold-after-gone keeps the inspector open S seconds more,
 * so that a scenario can check meanwhile that no zombie domain is left
 * (the inspector must have unmapped every frame the moment it saw the
 * domain go).  Last line: "probe: N samples, E errors, slowest
 * pause-to-unpause U us".  Exit status 0 when no pause, unpause or
 * register read failed, 3 when the domain went.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/sampling/kallsyms.h"
#include "backend/sampling/sample_stack.h"
#include "platform/platform.h"

static struct be_ksyms *ksyms; /* --kernel-symbols */

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void print_code(struct plat_inspect *in, uint32_t v, const struct plat_vcpu_regs *r)
{
	uint8_t code[32];
	long n = plat_inspect_read(in, r->cr3, r->rip - 21, code, sizeof(code));
	if (n < 0) {
		printf("code %u: error %d\n", v, errno);
		return;
	}
	printf("code %u:", v);
	for (long i = 0; i < n; i++)
		printf(i == 21 ? " <%02x>" : " %02x", code[i]);
	printf("\n");
}

static void print_stack(struct plat_inspect *in, uint32_t v, const struct plat_vcpu_regs *r)
{
	uint64_t words[16];
	uint64_t to_page_end = 4096 - (r->rsp & 4095);
	size_t len = to_page_end < sizeof(words) ? (size_t)to_page_end & ~(size_t)7 : sizeof(words);
	long n = plat_inspect_read(in, r->cr3, r->rsp, words, len);
	if (n < 0) {
		printf("stack %u: error %d\n", v, errno);
		return;
	}
	printf("stack %u:", v);
	for (long i = 0; i < n / 8; i++)
		printf(" %016" PRIx64, words[i]);
	printf("\n");
}

static long probe_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	const struct plat_vcpu_regs *r = ((void **)ctx)[1];
	return plat_inspect_read(((void **)ctx)[0], r->cr3, va, buf, len);
}

/* The sampler's walk of a vCPU in its kernel, each pc named as xenctx
 * names a word: "name" at a symbol's address, else "name+0xOFF"; nothing
 * outside the kernel's text. */
static void print_frames(struct plat_inspect *in, uint32_t v, const struct plat_vcpu_regs *r)
{
	struct be_stack_namer nm = {.ksyms = ksyms};
	void *ctx[2] = {in, (void *)r};
	struct be_walk_mem m = {probe_read, ctx, 512};
	struct be_stack_taken t;
	be_stack_take(&m, &nm, r, &t);
	printf("frames %u:", v);
	for (uint32_t i = 0; i < t.w.n; i++) {
		uint64_t start = 0;
		const char *name = be_ksyms_is_text(ksyms, t.w.pc[i]) ? be_ksyms_lookup(ksyms, t.w.pc[i], &start) : NULL;
		printf("%s %016" PRIx64, i ? " |" : "", t.w.pc[i]);
		if (name && start == t.w.pc[i])
			printf(" %s", name);
		else if (name)
			printf(" %s+%#x", name, (unsigned)(t.w.pc[i] - start));
	}
	printf("\n");
}

/* One pause: every vCPU's line.  The number of failures, -1 when the
 * domain is gone. */
static int sample(struct plat_inspect *in, int nvcpus, uint64_t *slowest)
{
	int errors = 0;
	uint64_t t0 = now_us();

	if (plat_inspect_pause(in) != 0) {
		printf("%s: error %d (%s)\n", errno == ESRCH ? "gone" : "pause", errno, strerror(errno));
		return errno == ESRCH ? -1 : 1;
	}
	for (int v = 0; v < nvcpus; v++) {
		struct plat_vcpu_regs r;
		if (plat_inspect_regs(in, (uint32_t)v, &r) != 0) {
			printf("vcpu %d: error %d (%s)\n", v, errno, strerror(errno));
			errors++;
			continue;
		}
		printf("vcpu %d online %u blocked %u user %u rip %016" PRIx64 " rsp %016" PRIx64
		       " rbp %016" PRIx64 " cr3 %016" PRIx64 "\n",
		       v, r.online, r.blocked, r.user_mode, r.rip, r.rsp, r.rbp, r.cr3);
		if (r.online) {
			print_code(in, (uint32_t)v, &r);
			print_stack(in, (uint32_t)v, &r);
			if (ksyms && !r.user_mode)
				print_frames(in, (uint32_t)v, &r);
		}
	}
	if (plat_inspect_unpause(in) != 0) {
		printf("unpause: error %d (%s)\n", errno, strerror(errno));
		errors++;
	}
	uint64_t took = now_us() - t0;
	if (took > *slowest)
		*slowest = took;
	return errors;
}

/* Reads that must fail: a non-canonical address and page 0. */
static void bad_reads(struct plat_inspect *in)
{
	struct plat_vcpu_regs r;
	uint8_t b[8];
	if (plat_inspect_pause(in) != 0)
		return;
	if (plat_inspect_regs(in, 0, &r) == 0) {
		long n1 = plat_inspect_read(in, r.cr3, UINT64_C(0x0000800000000000), b, 8);
		int e1 = errno;
		long n2 = plat_inspect_read(in, r.cr3, 0, b, 8);
		int e2 = errno;
		printf("bad: non-canonical %ld errno %d, page 0 %ld errno %d\n", n1, e1, n2, e2);
	}
	plat_inspect_unpause(in);
}

int main(int argc, char **argv)
{
	long samples = 1, interval_ms = 10, hold_s = 0;
	int bad = 0, gone = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			samples = atol(argv[++i]);
		else if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc)
			interval_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--hold-after-gone") && i + 1 < argc)
			hold_s = atol(argv[++i]);
		else if (!strcmp(argv[i], "--bad"))
			bad = 1;
		else if (!strcmp(argv[i], "--kernel-symbols") && i + 1 < argc) {
			char err[512];
			if (!(ksyms = be_ksyms_open(argv[++i], err, sizeof(err)))) {
				fprintf(stderr, "inspect-probe: %s\n", err);
				return 1;
			}
		}
		else
			break;
	}
	if (i + 1 != argc) {
		fprintf(stderr, "usage: inspect-probe [--samples N] [--interval-ms MS] [--bad] [--hold-after-gone S] "
		                "[--kernel-symbols MAP] DOMID\n");
		return 2;
	}
	uint32_t domid = (uint32_t)strtoul(argv[i], NULL, 10);
	struct plat_opts o = {.kind = PLAT_XEN};
	struct plat *p;
	char err[512];
	if (plat_open(&p, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "inspect-probe: %s\n", err);
		return 1;
	}
	struct plat_inspect *in = plat_inspect_open(p, domid, err, sizeof(err));
	if (!in) {
		fprintf(stderr, "inspect-probe: %s\n", err);
		plat_close(p);
		return 1;
	}
	int nvcpus = plat_inspect_vcpus(in), errors = 0;
	uint64_t slowest = 0;
	long s = 0;
	while (s < samples) {
		int e = sample(in, nvcpus, &slowest);
		s++;
		if (e < 0) {
			gone = 1;
			if (hold_s > 0)
				nanosleep(&(struct timespec){hold_s, 0}, NULL);
			break;
		}
		errors += e;
		if (s < samples) {
			struct timespec ts = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	if (bad && !gone)
		bad_reads(in);
	printf("probe: %ld samples, %d errors, slowest pause-to-unpause %" PRIu64 " us\n", s, errors,
	       slowest);
	plat_inspect_close(in);
	plat_close(p);
	be_ksyms_free(ksyms);
	return gone ? 3 : errors ? 1 : 0;
}
