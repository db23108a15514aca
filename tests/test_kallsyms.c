/*
 * test_kallsyms.c - a PV guest kernel's symbols (backend/sampling/
 * kallsyms.c) and the kernel frames of a sample (sample_stack.c):
 *
 *  1. parsing: System.map and /proc/kallsyms lines, what is kept and what
 *     skipped (absolute and undefined symbols, a module's tail, stray and
 *     overlong lines, a 17-digit address), what is refused (Debian's
 *     System.map stub, a kallsyms read without privilege, no symbol);
 *  2. lookups name what xenctx's -s names: at an address the first
 *     symbol the file lists there, between two the last listed at the
 *     lower; the text's bounds included, the hypercall page's 4096 bytes;
 *  3. a sample of a vCPU in its kernel, from a built memory image: the
 *     frame-pointer chain on the kernel's stack named from the map, kind
 *     kernel, module [kernel.kallsyms], a return address named by its
 *     call; a chain that leaves the kernel's half cut there; a user rbp
 *     left in a kernel without frame pointers gives the leaf alone;
 *     without a map, [kernel].
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sampling/kallsyms.h"
#include "backend/sampling/sample_stack.h"
#include "testutil.h"

static const char map[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81001000 T hypercall_page\n"
	"ffffffff81001000 t xen_hypercall_set_trap_table\n"
	"ffffffff81001020 t xen_hypercall_sched_op\n"
	"ffffffff81002000 T alias_first\n"
	"ffffffff81002000 T alias_second\n"
	"ffffffff81002000 t alias_third\n"
	"ffffffff81003000 W weak_defined\n"
	"                 U undefined_thing\n"
	"ffffffff81003800 w weak_undefined\n"
	"ffffffff81004000 T do_syscall_64\n"
	"ffffffff81005000 T _etext\n"
	"ffffffff82000000 D some_data\n"
	"ffffffff83000000 T _sinittext\n"
	"ffffffff83000100 t init_fn\n"
	"ffffffff83001000 T _einittext\n"
	"not a symbol line at all\n"
	"ffffffff81004800 T\n"
	"1ffffffff81004800 T seventeen_digits\n"
	"ffffffffc0001000 t mod_fn\t[xen_blkfront]\n"
	"ffffffff81004f00 ! bad_type\n";

static void lookup_is(const struct be_ksyms *k, uint64_t addr, const char *want, uint64_t want_start)
{
	uint64_t start = 0;
	const char *got = be_ksyms_lookup(k, addr, &start);
	CHECK(got && want && strcmp(got, want) == 0 && start == want_start,
	      "lookup %#llx = %s at %#llx, want %s at %#llx", (unsigned long long)addr, got ? got : "(none)",
	      (unsigned long long)start, want ? want : "(none)", (unsigned long long)want_start);
}

static void test_parse(void)
{
	char err[256] = "";
	struct be_ksyms *k = be_ksyms_parse(map, sizeof(map) - 1, err, sizeof err);
	CHECK(k != NULL, "the map parses (%s)", err);
	if (!k)
		return;
	/* kept: all but the absolute, undefined, stray, overlong-address and bad-type lines */
	CHECK(be_ksyms_count(k) == 16, "%zu symbols kept, want 16", be_ksyms_count(k));
	lookup_is(k, 0xffffffff81000000, "_stext", 0xffffffff81000000);
	lookup_is(k, 0xffffffff81000010, "startup_64", 0xffffffff81000000);
	lookup_is(k, 0xffffffff81001025, "xen_hypercall_sched_op", 0xffffffff81001020);
	lookup_is(k, 0xffffffff81002000, "alias_first", 0xffffffff81002000);
	lookup_is(k, 0xffffffff81002004, "alias_third", 0xffffffff81002000);
	lookup_is(k, 0xffffffff81003900, "weak_defined", 0xffffffff81003000);
	lookup_is(k, 0xffffffffc0001004, "mod_fn", 0xffffffffc0001000);
	uint64_t s;
	CHECK(be_ksyms_lookup(k, 0xffffffff80000000, &s) == NULL, "nothing below the first symbol");
	CHECK(be_ksyms_is_text(k, 0xffffffff81000000) && be_ksyms_is_text(k, 0xffffffff81005000), "text bounds included");
	CHECK(!be_ksyms_is_text(k, 0xffffffff81005001) && !be_ksyms_is_text(k, 0xffffffff80ffffff), "past the text: not text");
	CHECK(be_ksyms_is_text(k, 0xffffffff83000100), "init text is text");
	CHECK(!be_ksyms_is_text(k, 0xffffffff82000000), "data is not text");
	CHECK(!be_ksyms_is_text(k, 0xffffffffc0001004), "a module's address is not the kernel's text (as xenctx)");
	be_ksyms_free(k);

	/* refused, with the reason */
	static const char stub[] = "ffffffffffffffff B The real System.map is in the linux-image-6.1.0-56-amd64-dbg package\n";
	k = be_ksyms_parse(stub, sizeof(stub) - 1, err, sizeof err);
	CHECK(!k && strstr(err, "stub"), "Debian's stub refused: %s", err);
	be_ksyms_free(k);
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 T startup_64\n0000000000000000 T _etext\n";
	k = be_ksyms_parse(hidden, sizeof(hidden) - 1, err, sizeof err);
	CHECK(!k && strstr(err, "as root"), "a kallsyms read without privilege refused: %s", err);
	be_ksyms_free(k);
	k = be_ksyms_parse("", 0, err, sizeof err);
	CHECK(!k && strstr(err, "no symbols"), "an empty file refused: %s", err);
	be_ksyms_free(k);
	/* a line over the limit is skipped, not an error of its own */
	size_t big = KSYMS_MAX_LINE + 64;
	char *text = malloc(big + 200);
	int n = snprintf(text, 200, "ffffffff81000000 T _stext\nffffffff81001000 T _etext\nffffffff81000100 T ");
	memset(text + n, 'x', big);
	memcpy(text + n + big, "\n", 2);
	k = be_ksyms_parse(text, strlen(text), err, sizeof err);
	CHECK(k && be_ksyms_count(k) == 2, "an overlong line skipped (%zu symbols)", k ? be_ksyms_count(k) : 0);
	be_ksyms_free(k);
	free(text);
	k = be_ksyms_open("/nonexistent/System.map", err, sizeof err);
	CHECK(!k && strstr(err, "/nonexistent/System.map"), "a missing file named: %s", err);
}

/* ---- 3. a kernel's frames in a sample ---------------------------------- */

#define STACK_BASE UINT64_C(0xffffc90000010000)
static uint64_t image[512]; /* the kernel stack, from STACK_BASE */
static uint64_t user_word_at = UINT64_C(0x00007ffc00001000);

static long image_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	(void)ctx;
	if (va >= STACK_BASE && va + len <= STACK_BASE + sizeof(image)) {
		memcpy(buf, (const char *)image + (va - STACK_BASE), len);
		return (long)len;
	}
	if (va == user_word_at || va == user_word_at + 8) {
		memset(buf, 0x11, len); /* a user "frame": never followed */
		return (long)len;
	}
	return -1;
}

static void put(uint64_t va, uint64_t v)
{
	image[(va - STACK_BASE) / 8] = v;
}

static const struct samples_frame *frame_of(const struct be_stack_namer *nm, uint32_t id)
{
	return id >= 1 && id <= nm->nframes ? &nm->frames[id - 1] : NULL;
}

static void test_kernel_frames(void)
{
	char err[256];
	struct be_stack_namer nm = {0};
	nm.ksyms = be_ksyms_parse(map, sizeof(map) - 1, err, sizeof err);
	if (!nm.ksyms)
		return;
	/* rip in xen_hypercall_sched_op; rbp -> frame 1 (returns into
	 * alias_* + 5), -> frame 2 (returns just past do_syscall_64's call,
	 * at the next symbol's start: named by the call) -> a user frame */
	uint64_t f1 = STACK_BASE + 0x100, f2 = STACK_BASE + 0x200;
	put(f1, f2);
	put(f1 + 8, 0xffffffff81002005);
	put(f2, user_word_at);
	put(f2 + 8, 0xffffffff81005000);
	struct plat_vcpu_regs r = {.rip = 0xffffffff81001025, .rbp = f1, .rsp = STACK_BASE + 0x80, .online = 1};
	struct be_walk_mem m = {image_read, NULL, 64};
	struct be_stack_taken t;
	be_stack_take(&m, &nm, &r, &t);
	CHECK(t.w.n == 3, "3 kernel frames taken (%u)", t.w.n);
	for (uint32_t i = 0; i < t.w.n; i++)
		CHECK(t.w.kind[i] == WALK_FRAME_KERNEL, "frame %u is a kernel frame", i);
	struct samples_buf b = {0};
	uint32_t ids[8];
	int depth = be_stack_name(&nm, &t, &b, ids, 8);
	static const char *const want[] = {"xen_hypercall_sched_op", "alias_third", "do_syscall_64"};
	CHECK(depth == 3, "depth %d, want 3", depth);
	for (int i = 0; i < depth && i < 3; i++) {
		const struct samples_frame *f = frame_of(&nm, ids[i]);
		CHECK(f && strcmp(f->name, want[i]) == 0 && f->kind == SAMPLES_KIND_KERNEL &&
		          strcmp(f->module, "[kernel.kallsyms]") == 0,
		      "frame %d: %s (kind %d, module %s), want %s", i, f ? f->name : "?", f ? (int)f->kind : -1,
		      f ? f->module : "?", want[i]);
	}

	/* a user rbp (a kernel without frame pointers): the leaf alone */
	r.rbp = user_word_at;
	m.budget = 64;
	be_stack_take(&m, &nm, &r, &t);
	CHECK(t.w.n == 1 && t.w.pc[0] == r.rip, "a user rbp in the kernel: the leaf alone (%u frames)", t.w.n);

	/* a chain into user addresses: cut where it leaves */
	put(f2 + 8, 0x0000000000401000);
	r.rbp = f1;
	m.budget = 64;
	be_stack_take(&m, &nm, &r, &t);
	CHECK(t.w.n == 2, "a chain leaving the kernel's half cut there (%u frames)", t.w.n);

	/* no map: [kernel] */
	struct be_stack_namer bare = {0};
	m.budget = 64;
	be_stack_take(&m, &bare, &r, &t);
	depth = be_stack_name(&bare, &t, &b, ids, 8);
	const struct samples_frame *f = depth > 0 ? frame_of(&bare, ids[0]) : NULL;
	CHECK(f && strcmp(f->name, "[kernel]") == 0 && f->kind == SAMPLES_KIND_KERNEL, "without a map: %s",
	      f ? f->name : "?");
	be_stack_namer_free(&bare);
	samples_buf_free(&b);
	be_ksyms_free(nm.ksyms);
	nm.ksyms = NULL;
	be_stack_namer_free(&nm);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_parse();
	test_kernel_frames();
	return tu_finish("test_kallsyms");
}
