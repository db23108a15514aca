/*
 * symbols.c - a program's symbols and lines (symbols.h).  libelf reads
 * .symtab (or .dynsym when stripped); every symbol in an executable
 * section but section and file symbols is kept, local ones too: GHC's
 * functions a module does not export are local, and its return points
 * often have no size, so "the nearest symbol at or below pc" is the rule,
 * as perf would need and does not apply.  libdw gives the line of an
 * address when the program carries DWARF (-g).
 *
 * May call: util/grow, libelf, libdw.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "symbols.h"
#include "util/grow.h"

/* Farther than this past the nearest symbol, an address is unknown. */
#define SYM_MAX_REACH (1u << 20)

struct sym {
	uint64_t addr, size;
	uint32_t name;     /* offset into names */
	uint8_t global;
	uint8_t block;     /* a GHC block label: mapped to what holds it */
};

struct be_symtab {
	int fd;
	Elf *elf;
	Dwarf *dw;         /* NULL: no DWARF */
	struct sym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	char line_file[512];
	uint64_t text_lo, text_hi;  /* the executable sections' span */
	uint64_t bias;              /* where it was loaded less where it was linked */
	char build_id[2 * 64 + 1];  /* hex, "" when none */
};

void be_symtab_span(const struct be_symtab *t, uint64_t *lo, uint64_t *hi)
{
	*lo = t->text_lo + t->bias;
	*hi = t->text_hi + t->bias;
}

const char *be_symtab_build_id(const struct be_symtab *t)
{
	return t->build_id;
}

/* The GNU build-id note's bytes, in hex. */
static void read_build_id(struct be_symtab *t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(t->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off, next;
		while (data && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)data->d_buf + name_off, "GNU", 4)) {
				const unsigned char *d = (const unsigned char *)data->d_buf + desc_off;
				for (size_t i = 0; i < nh.n_descsz && i < 64; i++)
					snprintf(t->build_id + 2 * i, 3, "%02x", d[i]);
				return;
			}
			off = next;
		}
	}
}

void be_symtab_set_bias(struct be_symtab *t, uint64_t bias)
{
	t->bias = bias;
}

size_t be_symtab_count(const struct be_symtab *t)
{
	return t->n;
}

/* GHC's block labels: c1Rz_info, _c1Rz_info (unique-named, 1-6 chars). */
static int is_block_label(const char *s)
{
	if (*s == '_')
		s++;
	if (!strchr("cnsu", *s))
		return 0;
	size_t n = strspn(s + 1, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
	return n >= 1 && n <= 6 && (!strcmp(s + 1 + n, "_info") || !strcmp(s + 1 + n, "_entry"));
}

static int keep_name(struct be_symtab *t, const char *s, uint32_t *at)
{
	size_t l = strlen(s) + 1;
	if (t->names_len + l > t->names_cap) {
		size_t cap = t->names_cap ? t->names_cap * 2 : 65536;
		while (cap < t->names_len + l)
			cap *= 2;
		char *p = cap > UINT32_MAX ? NULL : realloc(t->names, cap);
		if (!p)
			return -1;
		t->names = p;
		t->names_cap = cap;
	}
	memcpy(t->names + t->names_len, s, l);
	*at = (uint32_t)t->names_len;
	t->names_len += l;
	return 0;
}

static int add_sym(struct be_symtab *t, const GElf_Sym *s, const char *name)
{
	if (GROW_FROM(t->syms, t->cap, t->n + 1, 4096) != 0)
		return -1;
	struct sym *y = &t->syms[t->n];
	y->addr = s->st_value;
	y->size = s->st_size;
	y->global = GELF_ST_BIND(s->st_info) != STB_LOCAL;
	y->block = (uint8_t)is_block_label(name);
	if (keep_name(t, name, &y->name) != 0)
		return -1;
	t->n++;
	return 0;
}

/* The symbols of one table that lie in executable sections. */
static int read_table(struct be_symtab *t, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < count; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s))
			break;
		int type = GELF_ST_TYPE(s.st_info);
		if (type == STT_SECTION || type == STT_FILE || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= SHN_LORESERVE || s.st_value == 0)
			continue;
		Elf_Scn *in = elf_getscn(t->elf, s.st_shndx);
		GElf_Shdr ish;
		if (!in || !gelf_getshdr(in, &ish) || !(ish.sh_flags & SHF_EXECINSTR))
			continue;
		if (!t->text_hi || ish.sh_addr < t->text_lo)
			t->text_lo = ish.sh_addr;
		if (ish.sh_addr + ish.sh_size > t->text_hi)
			t->text_hi = ish.sh_addr + ish.sh_size;
		const char *name = elf_strptr(t->elf, sh->sh_link, s.st_name);
		if (name && *name && add_sym(t, &s, name) != 0)
			return -1;
	}
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->global != y->global)
		return (int)y->global - (int)x->global; /* a global name first */
	/* then a sized one: a function before a label at its address
	 * (OCaml's camlM__code_begin at its first function) */
	return (int)(y->size != 0) - (int)(x->size != 0);
}

static int read_symbols(struct be_symtab *t)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh, dynsh;
	int have = 0;

	while ((scn = elf_nextscn(t->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			if (read_table(t, scn, &sh) != 0)
				return -1;
			have = 1;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dyn = scn;
			dynsh = sh;
		}
	}
	if (!have && dyn && read_table(t, dyn, &dynsh) != 0)
		return -1;
	if (t->n) /* (a stripped program's: none, and qsort takes no NULL) */
		qsort(t->syms, t->n, sizeof(*t->syms), by_addr);
	return 0;
}

struct be_symtab *be_symtab_open(const char *path, char *err, size_t errlen)
{
	struct be_symtab *t = calloc(1, sizeof(*t));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	elf_version(EV_CURRENT);
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0) {
		snprintf(err, errlen, "symbols %s: %s", path, strerror(errno));
		free(t);
		return NULL;
	}
	t->elf = elf_begin(t->fd, ELF_C_READ_MMAP, NULL);
	if (!t->elf || elf_kind(t->elf) != ELF_K_ELF) {
		snprintf(err, errlen, "symbols %s: not an ELF file", path);
		goto fail;
	}
	if (read_symbols(t) != 0) {
		snprintf(err, errlen, "symbols %s: out of memory reading its symbols", path);
		goto fail;
	}
	if (t->n == 0) {
		snprintf(err, errlen, "symbols %s: no symbols (stripped? give the unstripped ELF)", path);
		goto fail;
	}
	t->dw = dwarf_begin_elf(t->elf, DWARF_C_READ, NULL);
	read_build_id(t);
	return t;
fail:
	be_symtab_close(t);
	return NULL;
}

void be_symtab_close(struct be_symtab *t)
{
	if (!t)
		return;
	if (t->dw)
		dwarf_end(t->dw);
	if (t->elf)
		elf_end(t->elf);
	if (t->fd >= 0)
		close(t->fd);
	free(t->syms);
	free(t->names);
	free(t);
}

/* The last symbol at or below pc, or -1. */
static long nearest(const struct be_symtab *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	long i = (long)lo - 1;
	/* Of several at one address, the first (a global name, a sized one: by_addr). */
	while (i > 0 && t->syms[i - 1].addr == t->syms[i].addr)
		i--;
	return i;
}

static void find_line(struct be_symtab *t, uint64_t pc, struct be_sym_hit *out)
{
	Dwarf_Die cu;
	int line = 0;

	if (!t->dw || !dwarf_addrdie(t->dw, pc, &cu))
		return;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, pc);
	const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(l, &line) != 0 || line <= 0)
		return;
	snprintf(t->line_file, sizeof(t->line_file), "%s", file);
	out->file = t->line_file;
	out->line = (uint32_t)line;
}

/* The symbol that holds at, or -1. */
static long holder(const struct be_symtab *t, uint64_t at)
{
	long i = nearest(t, at);
	while (i > 0 && t->syms[i].block)
		i--; /* a block label: the closure whose code holds it */
	/* A symbol's size is not trusted: GHC's unexported code lies past
	 * the end of its neighbour's sized symbol. */
	return i >= 0 && at - t->syms[i].addr < SYM_MAX_REACH ? i : -1;
}

int be_symtab_in_c_function(const struct be_symtab *t, uint64_t pc, int (*is_generated)(const char *))
{
	pc -= t->bias; /* below the bias: wraps past text_hi, not the program's */
	long i = nearest(t, pc);
	if (pc < t->text_lo || pc >= t->text_hi)
		return 1; /* not the program's code: a shared library, the vDSO */
	if (i < 0)
		return 0;
	const struct sym *y = &t->syms[i];
	return y->size && pc - y->addr < y->size && !y->block && !is_generated(t->names + y->name);
}

const char *be_symtab_name_at(const struct be_symtab *t, uint64_t pc)
{
	long i = holder(t, pc - t->bias);
	return i >= 0 ? t->names + t->syms[i].name : NULL;
}

void be_symtab_lookup(struct be_symtab *t, uint64_t pc, int is_return, struct be_sym_hit *out)
{
	*out = (struct be_sym_hit){0};
	uint64_t at = (is_return && pc > 0 ? pc - 1 : pc) - t->bias;
	long i = holder(t, at);
	if (i >= 0) {
		out->name = t->names + t->syms[i].name;
		out->start = t->syms[i].addr + t->bias;
	}
	find_line(t, at, out);
}

int be_symtab_addr_of(void *ctx, const char *name, uint64_t *addr)
{
	struct be_symtab *t = ctx;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->names + t->syms[i].name, name) == 0) {
			*addr = t->syms[i].addr + t->bias;
			return 0;
		}
	/* Not in an executable section: data symbols such as MainCapability. */
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(t->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t k = 0; data && k < count; k++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(data, (int)k, &s) && s.st_shndx != SHN_UNDEF &&
			    (n = elf_strptr(t->elf, sh.sh_link, s.st_name)) && strcmp(n, name) == 0) {
				*addr = s.st_value + t->bias;
				return 0;
			}
		}
	}
	return -1;
}
