/*
 * modules.c - a sampled program's modules, named and unwound through
 * elfutils' libdwfl (modules.h).
 *
 *  1. The maps text is handed to libdwfl's own parser
 *     (dwfl_linux_proc_maps_report, as eu-stack reads a process's maps):
 *     it groups a file's mappings into one module and works out its load
 *     bias from the first, so a PIE and every shared library are named at
 *     the addresses they run at, as perf applies pc - map start + offset.
 *  2. The files are the guest's choice (what it mapped), so find_elf opens
 *     only an absolute path to a regular file, never blocking (no FIFO,
 *     no device): a name in brackets ([vdso], [heap]) is no file.
 *  3. Unwinding is libdwfl's (dwfl_attach_state with our callbacks):
 *     registers from the paused vCPU, memory through be_walk_mem, one
 *     "thread" (tid 1) whose state is the walk in hand.  libdwfl reads a
 *     word at a time: the sampler's reader serves the words from the pages
 *     this pause already read, so a walk costs a read per page, not per
 *     word.  Depth is capped by aborting the frame callback; the reads by
 *     the reader's budget.
 *  4. Call frame information is opened when a module is reported (not
 *     during a pause, where its cost would be the guest's): .eh_frame, or
 *     .debug_frame where there is none.
 *
 *  6. A program's [vDSO] is no file: its image is the kernel's, the same
 *     in every process of a host, so where the maps name one (xensim:
 *     the domain is a process of this host) it is named and unwound from
 *     this process's own vDSO image (getauxval's AT_SYSINFO_EHDR), copied
 *     once, reported at the program's [vdso] addresses.
 *  5. An object's mapping, as an export names it (pprof's Mapping, perf's
 *     map), is its executable one as the maps tell it: start, end and the
 *     file offset mapped at start, so that address - start + offset is
 *     the offset in the file, from which a symbol file found later (by
 *     build-id) names it.
 *
 * May call: walk.h's types, platform/ (platform.h: the registers), libdw
 * (libdwfl), libelf.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elf.h>
#include <elfutils/libdwfl.h>

#include "modules.h"

struct be_mods {
	Dwfl *dwfl;
	int attached;          /* dwfl_attach_state done (needs a module with an ELF) */
	char *main_path;       /* the first file the maps name */
	uint64_t main_lo;      /* where it starts */
	Dwfl_Module *main_mod; /* cached; NULL: not looked up since the last report */
	char line_file[512];
	char sym_name[512];
	char build_id[2 * 64 + 1];
	/* the executable mappings of files, in address order (invariant 5) */
	struct exec_map { uint64_t lo, hi, offset; } *execs;
	size_t nexecs;
	/* the walk in hand (invariant 3) */
	struct be_walk_mem *mem;
	const struct plat_vcpu_regs *regs;
	struct be_walk_out *out;
	int depth_hit, read_failed;
};

/* Invariant 6: this process's vDSO image, copied once (NULL: none). */
static pthread_once_t vdso_once = PTHREAD_ONCE_INIT;
static void *vdso_copy;
static size_t vdso_len;

static void copy_vdso(void)
{
	const unsigned char *at = (const unsigned char *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!at || memcmp(at, ELFMAG, SELFMAG) != 0 || at[EI_CLASS] != ELFCLASS64)
		return;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)at;
	/* the image ends with its section headers */
	size_t len = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (len < sizeof(*eh) || len > (1u << 20) || !(vdso_copy = malloc(len)))
		return;
	memcpy(vdso_copy, at, len);
	vdso_len = len;
}

/* invariant 2 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                    Elf **elfp)
{
	(void)mod, (void)userdata, (void)base;
	if (name && !strcmp(name, "[vdso]")) {
		pthread_once(&vdso_once, copy_vdso);
		*elfp = vdso_copy ? elf_memory(vdso_copy, vdso_len) : NULL;
		return -1;
	}
	if (!name || name[0] != '/')
		return -1;
	int fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(*file_name = strdup(name))) {
		close(fd);
		return -1;
	}
	return fd;
}

static char *debuginfo_path = NULL;
static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct be_mods *be_mods_new(char *err, size_t errlen)
{
	struct be_mods *ms = calloc(1, sizeof(*ms));
	if (ms && !(ms->dwfl = dwfl_begin(&callbacks))) {
		free(ms);
		ms = NULL;
	}
	if (!ms)
		snprintf(err, errlen, "out of memory (libdwfl: %s)", dwfl_errmsg(-1));
	return ms;
}

void be_mods_free(struct be_mods *ms)
{
	if (!ms)
		return;
	dwfl_end(ms->dwfl);
	free(ms->main_path);
	free(ms->execs);
	free(ms);
}

/* ---- the unwinder's callbacks (invariant 3) ------------------------------------------ */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return 1;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	*thread_argp = arg;
	return tid == 1;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct be_mods *ms = arg;
	uint64_t w;
	if (!ms->mem || be_walk_read_word(ms->mem, addr, &w) != 0) {
		ms->read_failed = 1;
		return false;
	}
	*result = w;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct be_mods *ms = arg;
	const struct plat_vcpu_regs *r = ms->regs;
	/* DWARF's x86-64 numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	Dwarf_Word regs[17] = {r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8,
	                       r->r9,  r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip};
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* ---- reporting (invariants 1 and 4) --------------------------------------------------- */

/* The first absolute path in the maps, and where it starts. */
static int first_file(const char *maps, size_t len, char **path, uint64_t *lo)
{
	const char *p = maps, *end = maps + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *slash = memchr(p, '/', (size_t)(le - p));
		unsigned long long a;
		if (slash && sscanf(p, "%llx-", &a) == 1) {
			*path = strndup(slash, (size_t)(le - slash));
			*lo = a;
			return *path ? 0 : -1;
		}
		p = le + 1;
	}
	return -1;
}

/* Invariant 5: the maps' executable mappings of files. */
static void read_execs(struct be_mods *ms, const char *maps, size_t len)
{
	ms->nexecs = 0;
	size_t cap = 0;
	for (const char *p = maps, *end = maps + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		unsigned long long lo, hi, off;
		char perms[8];
		if (memchr(p, '/', (size_t)(le - p)) && sscanf(p, "%llx-%llx %7s %llx", &lo, &hi, perms, &off) == 4 &&
		    strchr(perms, 'x') && hi > lo) {
			if (ms->nexecs == cap) {
				struct exec_map *n = realloc(ms->execs, (cap = cap ? cap * 2 : 32) * sizeof(*n));
				if (!n)
					return;
				ms->execs = n;
			}
			ms->execs[ms->nexecs++] = (struct exec_map){lo, hi, off};
		}
		p = le + 1;
	}
}

static const struct exec_map *exec_of(const struct be_mods *ms, uint64_t at)
{
	for (size_t lo = 0, hi = ms->nexecs; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (at < ms->execs[mid].lo)
			hi = mid;
		else if (at >= ms->execs[mid].hi)
			lo = mid + 1;
		else
			return &ms->execs[mid];
	}
	return NULL;
}

/* Where the maps put the [vdso] (invariant 6): 0, or -1 when nowhere. */
static int find_vdso(const char *maps, size_t len, uint64_t *lo, uint64_t *hi)
{
	for (const char *p = maps, *end = maps + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		unsigned long long a, b;
		if (le - p > 7 && !memcmp(le - 6, "[vdso]", 6) && sscanf(p, "%llx-%llx", &a, &b) == 2 && b > a) {
			*lo = a;
			*hi = b;
			return 0;
		}
		p = le + 1;
	}
	return -1;
}

static int warm_cfi(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)userdata, (void)name, (void)start, (void)arg;
	Dwarf_Addr bias;
	if (!dwfl_module_eh_cfi(mod, &bias))
		dwfl_module_dwarf_cfi(mod, &bias);
	return DWARF_CB_OK;
}

int be_mods_report_maps(struct be_mods *ms, const char *maps, size_t len, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)maps, len, "r");
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	dwfl_report_begin(ms->dwfl);
	int rc = dwfl_linux_proc_maps_report(ms->dwfl, f);
	fclose(f);
	uint64_t vlo, vhi;
	if (rc == 0 && find_vdso(maps, len, &vlo, &vhi) == 0)
		dwfl_report_module(ms->dwfl, "[vdso]", vlo, vhi);
	if (dwfl_report_end(ms->dwfl, NULL, NULL) != 0 || rc != 0) {
		snprintf(err, errlen, "the mappings: %s", rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
		return -1;
	}
	ms->main_mod = NULL;
	read_execs(ms, maps, len);
	char *path = NULL;
	uint64_t lo = 0;
	if (first_file(maps, len, &path, &lo) == 0) {
		free(ms->main_path);
		ms->main_path = path;
		ms->main_lo = lo;
	}
	dwfl_getmodules(ms->dwfl, warm_cfi, NULL, 0);
	/* attached once there is an ELF to tell the architecture by */
	if (!ms->attached && dwfl_attach_state(ms->dwfl, NULL, 1, &thread_callbacks, ms))
		ms->attached = 1;
	return 0;
}

static int count_one(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)mod, (void)userdata, (void)name, (void)start;
	++*(size_t *)arg;
	return DWARF_CB_OK;
}

size_t be_mods_count(const struct be_mods *ms)
{
	size_t n = 0;
	dwfl_getmodules(ms->dwfl, count_one, &n, 0);
	return n;
}

static Dwfl_Module *main_module(struct be_mods *ms)
{
	if (!ms->main_mod && ms->main_path)
		ms->main_mod = dwfl_addrmodule(ms->dwfl, ms->main_lo);
	return ms->main_mod;
}

int be_mods_main(struct be_mods *ms, const char **path, uint64_t *bias)
{
	Dwfl_Module *mod = main_module(ms);
	Dwarf_Addr b = 0;
	if (!mod || !dwfl_module_getelf(mod, &b))
		return -1;
	*path = ms->main_path;
	*bias = b;
	return 0;
}

int be_mods_has(struct be_mods *ms, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(ms->dwfl, pc);
	Dwarf_Addr b;
	return mod && dwfl_module_getelf(mod, &b);
}

int be_mods_in_main(struct be_mods *ms, uint64_t pc)
{
	Dwfl_Module *mod = main_module(ms);
	return mod && dwfl_addrmodule(ms->dwfl, pc) == mod;
}

void be_mods_lookup(struct be_mods *ms, uint64_t pc, int is_return, struct be_mod_hit *out)
{
	uint64_t at = is_return ? pc - 1 : pc;
	*out = (struct be_mod_hit){NULL, pc, NULL, NULL, 0, NULL, 0, 0, 0, ""};
	Dwfl_Module *mod = dwfl_addrmodule(ms->dwfl, at);
	if (!mod)
		return;
	Dwarf_Addr lo = 0, hi = 0;
	const char *name = dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	const struct exec_map *x = exec_of(ms, at);
	if (name) {
		const char *slash = strrchr(name, '/');
		out->module = slash ? slash + 1 : name;
		out->path = name;
		out->lo = x ? x->lo : lo;
		out->hi = x ? x->hi : hi;
		out->offset = x ? x->offset : 0;
	}
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	ms->build_id[0] = '\0';
	for (int i = 0; i < n && i < 64; i++)
		snprintf(ms->build_id + 2 * i, 3, "%02x", bits[i]);
	out->build_id = ms->build_id;
	GElf_Off off;
	GElf_Sym sym;
	const char *s = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	if (s && *s) {
		/* a versioned name (.dynsym's memcpy@@GLIBC_2.14) as the
		 * function's own */
		const char *ver = strchr(s, '@');
		if (ver && ver > s) {
			snprintf(ms->sym_name, sizeof(ms->sym_name), "%.*s", (int)(ver - s), s);
			s = ms->sym_name;
		}
		out->name = s;
		out->start = at - off;
	}
	Dwfl_Line *line = dwfl_module_getsrc(mod, at);
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (file && lineno > 0) {
		snprintf(ms->line_file, sizeof(ms->line_file), "%s", file);
		out->file = ms->line_file;
		out->line = (uint32_t)lineno;
	}
}

/* ---- the walk ---------------------------------------------------------------------- */

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct be_mods *ms = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	struct be_walk_out *w = ms->out;
	if (w->n >= WALK_MAX_FRAMES) {
		ms->depth_hit = 1;
		return DWARF_CB_ABORT;
	}
	w->pc[w->n] = pc;
	w->kind[w->n] = WALK_FRAME_C;
	w->n++;
	return DWARF_CB_OK;
}

uint32_t be_mods_unwind(struct be_mods *ms, struct be_walk_mem *m, const struct plat_vcpu_regs *r,
                        struct be_walk_out *out)
{
	if (!ms->attached || !be_mods_has(ms, r->rip))
		return 0;
	uint32_t from = out->n;
	ms->mem = m;
	ms->regs = r;
	ms->out = out;
	ms->depth_hit = ms->read_failed = 0;
	int rc = dwfl_getthread_frames(ms->dwfl, 1, on_frame, ms);
	ms->mem = NULL;
	if (ms->depth_hit)
		out->stop = WALK_STOP_DEPTH;
	else if (m->budget == 0)
		out->stop = WALK_STOP_BUDGET;
	else if (rc == 0)
		out->stop = WALK_STOP_END;
	else
		/* libdwfl ends a walk it cannot go on with as an error: a
		 * frame with no rule for its return address (the outermost,
		 * or code without call frame information) is an end, a word
		 * it could not read is not */
		out->stop = ms->read_failed ? WALK_STOP_UNREADABLE : WALK_STOP_END;
	return out->n - from;
}
