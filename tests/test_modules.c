/*
 * test_modules.c - what a sampled program has mapped (backend/sampling/
 * modules.c) and OCaml's names (ocaml_names.c), on this test's own
 * process, which automake builds as Debian builds a program (a PIE,
 * linked against libc.so):
 *
 *  1. OCaml symbols decoded as OCaml names them (4.x and 5.1 forms, an
 *     operator's $XX, a stamp, dune's library prefix); the runtime's C
 *     functions (caml_*) and other names left alone;
 *  2. this process's /proc/self/maps reported: the program itself found
 *     first, at its load bias (its symbols' addresses are where its
 *     functions run); a function of its own and one of libc's named with
 *     their modules, a return address by the call before it, the line of
 *     one of its own (DWARF, -g); an address in no module named nothing;
 *     the vDSO (no file) named from this process's own image;
 *  3. a stack walked by call frame information from registers taken with
 *     getcontext() in a chain of three functions of its own: each found
 *     with its caller, up to main and libc's __libc_start_call_main; the
 *     walk's reads bounded by its budget (a budget of 3 stops it, said);
 *  4. hostile maps: lines that are not maps, a FIFO, a directory, a
 *     device, a missing file and a name in brackets among them: the
 *     report neither blocks nor fails on them, and the real lines still
 *     name their addresses.
 */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "backend/sampling/modules.h"
#include "backend/sampling/ocaml_names.h"
#include "testutil.h"

/* ---- 1 ---- */

static void ocaml_names(void)
{
	static const char *const cases[][2] = {
		{"camlHot__crunch_81", "Hot.crunch"},
		{"camlHot_ml__rounds_270", "Hot_ml.rounds"},
		{"camlStdlib__List__map_213", "Stdlib.List.map"},
		{"camlDune__exe__Main__loop_12", "Dune.exe.Main.loop"},
		{"camlStdlib__$40_136", "Stdlib.@"},
		{"camlMirage__Net__$3e$3e$3d_99", "Mirage.Net.>>="},
		{"camlHot.crunch_81", "Hot.crunch"},
		{"camlHot__entry", "Hot.entry"},
		{"camlHot__code_begin", "Hot.code_begin"},
		{"camlHot__fun_1094", "Hot.fun"},
		{"camlHot__odd$", "Hot.odd$"},
		{"camlHot__nul$00_1", "Hot.nul$00"},
	};
	char out[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(out, 'x', sizeof(out));
		CHECK(be_ocaml_demangle(cases[i][0], out, sizeof(out)) == 1 && strcmp(out, cases[i][1]) == 0,
		      "ocaml_demangle(%s) = %s, want %s", cases[i][0], out, cases[i][1]);
	}
	static const char *const not_ocaml[] = {"caml_start_program", "caml_call_gc", "camlo", "main",
	                                        "qsort", "", "caml"};
	for (size_t i = 0; i < sizeof(not_ocaml) / sizeof(not_ocaml[0]); i++)
		CHECK(be_ocaml_demangle(not_ocaml[i], out, sizeof(out)) == 0, "%s taken for OCaml", not_ocaml[i]);
	CHECK(be_ocaml_demangle("camlHot__crunch_81", out, 4) == 1 && strcmp(out, "Hot") == 0, "cut to 4: %s", out);
}

/* ---- 2 and 3 ---- */

static char *self_maps(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char *text = NULL;
	size_t cap = 0;
	CHECK(f != NULL, "/proc/self/maps");
	if (!f)
		return NULL;
	*len = 0;
	for (;;) {
		if (cap - *len < 4096) {
			text = realloc(text, cap = cap ? cap * 2 : 65536);
			if (!text)
				tu_abort();
		}
		size_t n = fread(text + *len, 1, cap - *len - 1, f);
		if (n == 0)
			break;
		*len += n;
	}
	text[*len] = '\0';
	fclose(f);
	return text;
}

/* Reads this process's memory, checked (a wild address fails). */
static long self_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	(void)ctx;
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)va, len};
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	return n > 0 ? (long)n : -1;
}

static struct be_walk_out walked;
static uint32_t walk_budget = 4096, walk_left;

__attribute__((noinline)) static int walk_here(struct be_mods *ms)
{
	ucontext_t uc;
	getcontext(&uc);
	const greg_t *g = uc.uc_mcontext.gregs;
	struct plat_vcpu_regs r = {
		.rip = (uint64_t)g[REG_RIP], .rsp = (uint64_t)g[REG_RSP], .rbp = (uint64_t)g[REG_RBP],
		.rax = (uint64_t)g[REG_RAX], .rbx = (uint64_t)g[REG_RBX], .rcx = (uint64_t)g[REG_RCX],
		.rdx = (uint64_t)g[REG_RDX], .rsi = (uint64_t)g[REG_RSI], .rdi = (uint64_t)g[REG_RDI],
		.r8 = (uint64_t)g[REG_R8], .r9 = (uint64_t)g[REG_R9], .r10 = (uint64_t)g[REG_R10],
		.r11 = (uint64_t)g[REG_R11], .r12 = (uint64_t)g[REG_R12], .r13 = (uint64_t)g[REG_R13],
		.r14 = (uint64_t)g[REG_R14], .r15 = (uint64_t)g[REG_R15], .online = 1, .width = 8,
	};
	struct be_walk_mem m = {self_read, NULL, walk_budget};
	memset(&walked, 0, sizeof(walked));
	int n = (int)be_mods_unwind(ms, &m, &r, &walked);
	walk_left = m.budget;
	return n;
}

__attribute__((noinline)) static int walk_middle(struct be_mods *ms)
{
	int n = walk_here(ms);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return n + 0 * getpid();
}

__attribute__((noinline)) static int walk_outer(struct be_mods *ms)
{
	int n = walk_middle(ms);
	__asm__ volatile("" ::: "memory");
	return n + 0 * getpid();
}

static const char *name_of(struct be_mods *ms, uint64_t pc, int is_return, char *buf, size_t cap)
{
	struct be_mod_hit h;
	be_mods_lookup(ms, pc, is_return, &h);
	snprintf(buf, cap, "%s", h.name ? h.name : "?");
	return buf;
}

static void self(void)
{
	char err[256], buf[256];
	size_t len;
	char *maps = self_maps(&len);
	struct be_mods *ms = be_mods_new(err, sizeof(err));
	CHECK(ms != NULL, "be_mods_new: %s", err);
	if (!maps || !ms)
		return;
	CHECK(be_mods_report_maps(ms, maps, len, err, sizeof(err)) == 0, "report: %s", err);
	CHECK(be_mods_count(ms) >= 3, "%zu modules (the program, ld.so, libc at least)", be_mods_count(ms));

	/* 2: the program first, at its bias */
	const char *path;
	uint64_t bias;
	char exe[4096] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = '\0';
	CHECK(be_mods_main(ms, &path, &bias) == 0 && strcmp(path, exe) == 0, "main: %s, want %s",
	      be_mods_main(ms, &path, &bias) == 0 ? path : "none", exe);
	/* (a libc function no sanitizer intercepts: under ASan, &qsort is libasan's) */
	uint64_t own = (uint64_t)(uintptr_t)&walk_middle, libc = (uint64_t)(uintptr_t)&gnu_get_libc_version;
	CHECK(be_mods_in_main(ms, own) && be_mods_has(ms, own), "walk_middle not in the program");
	CHECK(!be_mods_in_main(ms, libc) && be_mods_has(ms, libc), "gnu_get_libc_version not in a library");
	struct be_mod_hit h;
	be_mods_lookup(ms, own, 0, &h);
	CHECK(h.name && strcmp(h.name, "walk_middle") == 0 && h.start == own, "own: %s at %#lx", h.name ? h.name : "?",
	      (unsigned long)h.start);
	CHECK(h.module && strcmp(h.module, strrchr(exe, '/') + 1) == 0, "own module: %s", h.module ? h.module : "?");
	CHECK(h.file && strstr(h.file, "test_modules.c") && h.line > 0, "own line: %s:%u", h.file ? h.file : "?",
	      h.line);
	be_mods_lookup(ms, libc, 0, &h);
	CHECK(h.name && strcmp(h.name, "gnu_get_libc_version") == 0 && h.module && strncmp(h.module, "libc.so", 7) == 0,
	      "libc: %s in %s", h.name ? h.name : "?", h.module ? h.module : "?");
	/* a return address just past a function's end is the function's */
	be_mods_lookup(ms, own, 1, &h);
	CHECK(!h.name || strcmp(h.name, "walk_middle") != 0, "a return address at walk_middle's start is its own");
	be_mods_lookup(ms, 16, 0, &h);
	CHECK(!h.name && !h.module, "address 16 named %s in %s", h.name ? h.name : "", h.module ? h.module : "");
	/* the vDSO, no file, named from this process's own image */
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR), named_at = 0;
	const char *vname = NULL;
	for (uint64_t a = vdso; vdso && a < vdso + 8192 && !vname; a += 4) {
		be_mods_lookup(ms, a, 0, &h);
		if (h.name && h.module && !strcmp(h.module, "[vdso]"))
			vname = h.name, named_at = a;
	}
	CHECK(vname && (strstr(vname, "time") || strstr(vname, "getcpu")), "the vDSO: %s at %#llx", vname ? vname : "nothing named",
	      (unsigned long long)named_at);
	CHECK(!be_mods_has(ms, 16), "address 16 in a module");

	/* 3: a walk by call frame information */
	int got = walk_outer(ms);
	CHECK(got >= 5 && (uint32_t)got == walked.n, "walked %d frames (n %u)", got, walked.n);
	const char *want[] = {"walk_here", "walk_middle", "walk_outer", "self", "main"};
	for (int i = 0; i < 5 && i < got; i++)
		CHECK(strcmp(name_of(ms, walked.pc[i], i > 0, buf, sizeof(buf)), want[i]) == 0, "frame %d: %s, want %s",
		      i, buf, want[i]);
	int libc_caller = 0;
	for (int i = 5; i < got; i++)
		libc_caller |= strcmp(name_of(ms, walked.pc[i], 1, buf, sizeof(buf)), "__libc_start_call_main") == 0;
	CHECK(libc_caller, "main's caller in libc not found (%d frames)", got);
	CHECK(walked.stop == WALK_STOP_END, "stop %d", (int)walked.stop);
	CHECK(walk_left < 4096, "no read counted");
	walk_budget = 3;
	got = walk_outer(ms);
	CHECK(walked.stop == WALK_STOP_BUDGET && walk_left == 0 && got >= 1 && got < 5,
	      "budget 3: stop %d, %d frames, %u left", (int)walked.stop, got, walk_left);
	walk_budget = 4096;
	be_mods_free(ms);
	free(maps);
}

/* ---- 4 ---- */

static void hostile(void)
{
	static char text[1 << 17];
	char err[256], dir[] = "/tmp/test_modules.XXXXXX", fifo[512];
	size_t len;
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
	char *maps = self_maps(&len);
	if (!maps)
		return;
	int at = snprintf(text, sizeof(text),
	                  "this is not a maps line\n"
	                  "10000-20000 r-xp 00000000 08:01 11 %s\n"
	                  "20000-30000 r-xp 00000000 08:01 12 %s\n"
	                  "30000-40000 r-xp 00000000 00:05 13 /dev/zero\n"
	                  "40000-50000 r-xp 00000000 08:01 14 /no/such/file\n"
	                  "50000-60000 r-xp 00000000 00:00 0 [vdso]\n"
	                  "60000-50000 r-xp 00000000 08:01 15 /backwards\n"
	                  "ffffffffffffffff-0 r-xp zz 08:01 16 /bad\n",
	                  fifo, dir);
	struct be_mods *ms = be_mods_new(err, sizeof(err));
	if (!ms)
		return;
	/* the garbage alone, then the garbage with the real lines after it */
	be_mods_report_maps(ms, text, (size_t)at, err, sizeof(err));
	CHECK(!be_mods_has(ms, 0x10000) && !be_mods_has(ms, 0x20000) && !be_mods_has(ms, 0x30000) &&
	      !be_mods_has(ms, 0x40000) && !be_mods_has(ms, 0x50000), "a module with an ELF in the garbage");
	struct be_mod_hit h;
	be_mods_lookup(ms, 0x10010, 0, &h);
	CHECK(!h.name, "the FIFO named %s", h.name);
	snprintf(text + at, sizeof(text) - (size_t)at, "%.*s", (int)(sizeof(text) - (size_t)at - 1), maps);
	be_mods_free(ms);
	ms = be_mods_new(err, sizeof(err));
	if (ms && be_mods_report_maps(ms, text, strlen(text), err, sizeof(err)) == 0) {
		uint64_t own = (uint64_t)(uintptr_t)&hostile;
		be_mods_lookup(ms, own, 0, &h);
		CHECK(h.name && strcmp(h.name, "hostile") == 0, "after garbage: %s", h.name ? h.name : "?");
	}
	be_mods_free(ms);
	free(maps);
	unlink(fifo);
	rmdir(dir);
}

int main(void)
{
	ocaml_names();
	self();
	hostile();
	return tu_finish("test_modules");
}
