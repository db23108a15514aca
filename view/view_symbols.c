/*
 * view_symbols.c - sampled addresses named when read (view_symbols.h).
 *
 *  1. Only frames the sampler left unnamed are named here, and only from
 *     a file whose build-id is the object's: a file of another build of
 *     the program would name addresses wrongly, which is worse than not
 *     naming them.
 *  2. An address is the object's as it was mapped: its offset in the file
 *     is address - mapping start + mapping offset (the MAPPING record),
 *     and the symbol file's program headers turn that offset into the
 *     address its symbols are at (a PIE's, a library's, a program's).
 *  3. Files are opened by libdwfl as offline modules (dwfl_report_offline:
 *     symbols, DWARF lines, a separate debug file's too), one per object
 *     per read; the frames name the function, the line if the file has
 *     DWARF.
 *  4. debuginfod is asked only when DEBUGINFOD_URLS is set, through
 *     libdebuginfod opened when first needed (dlopen, as libdw opens it:
 *     a host without the library, a Xen dom0's minimal root, runs profdb
 *     all the same), a download
 *     ends after DEBUGINFOD_SECONDS (a page waits for it), and a build-id
 *     it did not have is not asked again by this process (a set under a
 *     lock: serve's threads share it).
 *
 * May call: profile/samples/samples.h, view_err.h, libdw (libdwfl,
 * dwelf), libelf, libdebuginfod (dlopen'd).
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "view_symbols.h"

#define BUILD_ID_MAX 64            /* bytes */
#define DEBUGINFOD_SECONDS 10      /* invariant 4 */
#define NOT_FOUND_MAX 256          /* build-ids debuginfod did not have, remembered */

void view_symbols_dir(const char *db, char *out, size_t cap)
{
	const char *env = getenv("PROFSVC_SYMBOLS");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return;
	}
	if (!db || !strncmp(db, "postgresql://", 13) || !strncmp(db, "postgres://", 11)) {
		snprintf(out, cap, "%s", "");
		return;
	}
	const char *slash = strrchr(db, '/');
	if (slash)
		snprintf(out, cap, "%.*s/symbols", (int)(slash - db), db);
	else
		snprintf(out, cap, "symbols");
}

/* The build-id of an ELF in hex into id; its length in bytes, or 0. */
static size_t elf_build_id(Elf *elf, char *id, size_t cap)
{
	const void *bits;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	if (n <= 0 || n > BUILD_ID_MAX || cap < 2 * (size_t)n + 1)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		snprintf(id + 2 * i, 3, "%02x", ((const unsigned char *)bits)[i]);
	return (size_t)n;
}

/* The path a build-id's file has under dir (gdb's layout). */
static void id_path(const char *dir, const char *id, char *out, size_t cap)
{
	snprintf(out, cap, "%s/.build-id/%.2s/%s.debug", dir, id, id + 2);
}

static int has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size)
			return 1;
	return 0;
}

/* fd's bytes to a new file at path, made whole before it is there. */
static int copy_into(int fd, const char *path, struct view_err *e)
{
	char tmp[4200], dir[4200];
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(dir, 0755) != 0 && errno != EEXIST)
				return view_error(e, "%s: %s", dir, strerror(errno)), -1;
			*p = '/';
		}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return view_error(e, "%s: %s", dir, strerror(errno)), -1;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	int out = mkstemp(tmp);
	if (out < 0)
		return view_error(e, "%s: %s", dir, strerror(errno)), -1;
	char buf[65536];
	ssize_t n = 0;
	off_t at = 0;
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		if (write(out, buf, (size_t)n) != n)
			break;
		at += n;
	}
	int ok = n == 0 && fchmod(out, 0644) == 0 && fsync(out) == 0;
	int err = errno;
	if (close(out) != 0 || !ok || rename(tmp, path) != 0) {
		err = ok ? errno : err;
		unlink(tmp);
		return view_error(e, "%s: %s", path, strerror(err)), -1;
	}
	return 0;
}

int view_symbols_add(const char *dir, const char *path, char *id, size_t idcap, struct view_err *e)
{
	char dest[4200];
	if (!dir || !*dir)
		return view_error(e, "no symbols directory (set PROFSVC_SYMBOLS)"), -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return view_error(e, "%s: %s", path, strerror(errno)), -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc = -1;
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		view_error(e, "%s: not an ELF file", path);
	else if (!elf_build_id(elf, id, idcap))
		view_error(e, "%s: no build-id (link it with --build-id, as Debian's gcc does)", path);
	else if (!has_symtab(elf))
		view_error(e, "%s: no symbols (stripped: add the unstripped file or its .debug file)", path);
	else {
		id_path(dir, id, dest, sizeof(dest));
		rc = copy_into(fd, dest, e);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

/* ---- debuginfod (invariant 4) ----------------------------------------------------- */

static pthread_mutex_t not_found_lock = PTHREAD_MUTEX_INITIALIZER;
static char not_found[NOT_FOUND_MAX][2 * BUILD_ID_MAX + 1];
static unsigned nnot_found;

static int was_not_found(const char *id)
{
	int hit = 0;
	pthread_mutex_lock(&not_found_lock);
	for (unsigned i = 0; i < nnot_found && i < NOT_FOUND_MAX && !hit; i++)
		hit = !strcmp(not_found[i], id);
	pthread_mutex_unlock(&not_found_lock);
	return hit;
}

static void note_not_found(const char *id)
{
	pthread_mutex_lock(&not_found_lock);
	snprintf(not_found[nnot_found++ % NOT_FOUND_MAX], sizeof(not_found[0]), "%s", id);
	pthread_mutex_unlock(&not_found_lock);
}

/* libdebuginfod, opened when first needed (as libdw itself opens it):
 * a host without it reads runs all the same, only not from debuginfod. */
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*end)(debuginfod_client *);
} dbg;
static pthread_once_t dbg_once = PTHREAD_ONCE_INIT;

static void open_debuginfod(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	*(void **)&dbg.begin = dlsym(h, "debuginfod_begin");
	*(void **)&dbg.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&dbg.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&dbg.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&dbg.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&dbg.end = dlsym(h, "debuginfod_end");
	if (!dbg.find_debuginfo || !dbg.set_progressfn || !dbg.set_user_data || !dbg.get_user_data || !dbg.end)
		dbg.begin = NULL;
}

static int progress(debuginfod_client *c, long a, long b)
{
	(void)a, (void)b;
	const time_t *deadline = dbg.get_user_data(c);
	return deadline && time(NULL) > *deadline; /* nonzero: the download ends */
}

/* A descriptor of the build-id's debug file from debuginfod, its path in
 * *path (malloc'd); -1 when it is not asked or has none. */
static int ask_debuginfod(const char *id, char **path)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls || was_not_found(id))
		return -1;
	pthread_once(&dbg_once, open_debuginfod);
	debuginfod_client *c = dbg.begin ? dbg.begin() : NULL;
	if (!c)
		return -1;
	time_t deadline = time(NULL) + DEBUGINFOD_SECONDS;
	dbg.set_user_data(c, &deadline);
	dbg.set_progressfn(c, progress);
	int fd = dbg.find_debuginfo(c, (const unsigned char *)id, 0, path);
	dbg.end(c);
	if (fd < 0)
		note_not_found(id);
	return fd;
}

/* ---- naming (invariants 1 to 3) ----------------------------------------------------- */

struct sym_file {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;
	GElf_Addr bias;
};

static const Dwfl_Callbacks offline = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The symbol file of build-id id, opened: 0, or -1 when none is found or
 * it cannot be read (why in e's warnings, once per object). */
static int open_file(const char *dir, const char *id, struct sym_file *sf, struct view_err *e)
{
	char path[4200];
	char *dl = NULL;
	int fd = -1;
	const char *dirs[2] = {dir, "/usr/lib/debug"};
	for (int i = 0; i < 2 && fd < 0; i++)
		if (dirs[i] && *dirs[i]) {
			id_path(dirs[i], id, path, sizeof(path));
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	if (fd < 0 && (fd = ask_debuginfod(id, &dl)) >= 0)
		snprintf(path, sizeof(path), "%s", dl);
	free(dl);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(sf->dwfl = dwfl_begin(&offline))) {
		close(fd);
		return -1;
	}
	dwfl_report_begin(sf->dwfl);
	sf->mod = dwfl_report_offline(sf->dwfl, id, path, fd); /* takes fd */
	dwfl_report_end(sf->dwfl, NULL, NULL);
	char got[2 * BUILD_ID_MAX + 1] = "";
	if (!sf->mod || !(sf->elf = dwfl_module_getelf(sf->mod, &sf->bias)) ||
	    !elf_build_id(sf->elf, got, sizeof(got)) || strcmp(got, id) != 0) {
		view_warn(e, "symbol file %s: %s", path,
		          !sf->mod || !sf->elf ? dwfl_errmsg(-1) : "not the build-id it is filed under: passed over");
		dwfl_end(sf->dwfl);
		memset(sf, 0, sizeof(*sf));
		return -1;
	}
	return 0;
}

/* Invariant 2: the address in the file's terms of file offset off. */
static int offset_to_addr(Elf *elf, uint64_t off, uint64_t *addr)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    off >= ph.p_offset && off - ph.p_offset < ph.p_memsz) {
			*addr = ph.p_vaddr + (off - ph.p_offset);
			return 0;
		}
	}
	return -1;
}

static int unnamed(const struct samples_frame *f)
{
	return f->kind == SAMPLES_KIND_C && f->mapping && (!f->name[0] || !strcmp(f->name, "[unknown]"));
}

/* Names f from sf, if a symbol holds its address: 1 named, 0 not, -1
 * out of memory. */
static int name_frame(struct sym_file *sf, const struct samples_mapping *m, struct samples_frame *f)
{
	uint64_t addr;
	if (f->addr < m->start || f->addr >= m->limit || offset_to_addr(sf->elf, f->addr - m->start + m->offset, &addr) != 0)
		return 0;
	GElf_Off o;
	GElf_Sym sym;
	const char *s = dwfl_module_addrinfo(sf->mod, addr + sf->bias, &o, &sym, NULL, NULL, NULL);
	if (!s || !*s)
		return 0;
	size_t len = strcspn(s, "@"); /* a versioned .dynsym name as its own */
	char *name = strndup(s, len ? len : strlen(s));
	if (!name)
		return -1;
	free(f->name);
	f->name = name;
	Dwfl_Line *l = dwfl_module_getsrc(sf->mod, addr + sf->bias);
	int line = 0;
	const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	char *fcopy = file && line > 0 ? strdup(file) : NULL;
	if (fcopy) {
		free(f->file);
		f->file = fcopy;
		f->line = (uint32_t)line;
	}
	return 1;
}

size_t view_symbolize(const char *dir, struct samples_profile *p, struct view_err *e)
{
	size_t named = 0;
	for (size_t mi = 0; mi < p->nmappings; mi++) {
		const struct samples_mapping *m = &p->mappings[mi];
		int want = 0;
		for (size_t i = 0; i < p->nframes && !want; i++)
			want = p->frames[i].mapping == mi + 1 && unnamed(&p->frames[i]);
		size_t idlen = strlen(m->build_id);
		/* (a catalogue's row is hostile: an id is hex, or no path is made of it) */
		if (!want || idlen < 4 || idlen % 2 || idlen > 2 * BUILD_ID_MAX ||
		    strspn(m->build_id, "0123456789abcdef") != idlen)
			continue;
		struct sym_file sf = {0};
		if (open_file(dir, m->build_id, &sf, e) != 0)
			continue;
		for (size_t i = 0; i < p->nframes; i++)
			if (p->frames[i].mapping == mi + 1 && unnamed(&p->frames[i])) {
				int r = name_frame(&sf, m, &p->frames[i]);
				if (r < 0)
					break;
				named += (size_t)r;
			}
		dwfl_end(sf.dwfl);
	}
	return named;
}
