/*
 * kallsyms.c - a guest kernel's symbols from nm-style text (kallsyms.h).
 *
 * Invariants:
 *  1. A line is "HEX SPACE TYPE SPACE NAME", TYPE a letter or '?'; any
 *     other line, and one longer than KSYMS_MAX_LINE, is skipped (a
 *     System.map stub, a truncated copy, stray text): never an error of
 *     its own.  A module's "\t[name]" tail is not part of the name.
 *  2. Absolute symbols (A, a) and undefined ones (U, v, w) are not kept,
 *     as xenctx keeps them not; _stext, _etext, _sinittext, _einittext
 *     and hypercall_page bound the kernel's text whatever their type, and
 *     a file without _stext below _etext is refused (a stub, or a
 *     kallsyms read without privilege: every address 0).
 *  3. Symbols are kept sorted by address, those at one address in the
 *     order the file lists them, so a lookup names what xenctx names (its
 *     list is built that way): at an address, the first listed there;
 *     between two, the last listed at the lower.
 *  4. Names live in one arena, so the cost is two allocations however
 *     many symbols; both are bounded (KSYMS_MAX_FILE, KSYMS_MAX_SYMS).
 *
 * May call: util/grow, libc.  Called by the sampler's naming (sample_stack.c)
 * and the dom0 probe of tests/xen.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "util/grow.h"

struct ksym {
	uint64_t addr;
	uint32_t name;  /* offset in the arena */
	uint32_t order; /* its line's rank in the file */
};

struct be_ksyms {
	struct ksym *syms;
	size_t n;
	char *names;
	uint64_t stext, etext, sinit, einit, hyper;
	int has_text, has_init, has_hyper;
};

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* One line (no newline): 1 and the parts, or 0 (invariant 1). */
static int parse_line(const char *p, size_t len, uint64_t *addr, char *type, const char **name, size_t *nlen)
{
	size_t i = 0, digits = 0;
	uint64_t a = 0;
	for (; i < len && hexval(p[i]) >= 0; i++, digits++) {
		if (digits == 16)
			return 0; /* wider than 64 bits */
		a = a << 4 | (uint64_t)hexval(p[i]);
	}
	if (digits == 0 || i + 3 > len || !is_space(p[i]))
		return 0;
	while (i < len && is_space(p[i]))
		i++;
	if (i + 2 > len || !(is_alpha(p[i]) || p[i] == '?') || !is_space(p[i + 1]))
		return 0;
	*type = p[i];
	i += 2;
	while (i < len && is_space(p[i]))
		i++;
	size_t s = i;
	while (i < len && !is_space(p[i]) && p[i] != '\0')
		i++;
	if (i == s)
		return 0;
	*addr = a;
	*name = p + s;
	*nlen = i - s;
	return 1;
}

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void note_bound(struct be_ksyms *k, const char *name, size_t n, uint64_t addr)
{
#define IS(s) (n == sizeof(s) - 1 && memcmp(name, s, n) == 0)
	if (IS("_stext"))
		k->stext = addr, k->has_text |= 1;
	else if (IS("_etext"))
		k->etext = addr, k->has_text |= 2;
	else if (IS("_sinittext"))
		k->sinit = addr, k->has_init |= 1;
	else if (IS("_einittext"))
		k->einit = addr, k->has_init |= 2;
	else if (IS("hypercall_page"))
		k->hyper = addr, k->has_hyper = 1;
#undef IS
}

struct be_ksyms *be_ksyms_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct be_ksyms *k = calloc(1, sizeof(*k));
	size_t cap = 0, arena = 0;

	if (!k || len > KSYMS_MAX_FILE || !(k->names = malloc(len + 1))) {
		snprintf(err, errlen, len > KSYMS_MAX_FILE ? "more than %u MiB: not a symbol table" : "out of memory",
		         KSYMS_MAX_FILE >> 20);
		be_ksyms_free(k);
		return NULL;
	}
	for (size_t at = 0, line = 0; at < len; line++) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
		const char *p = text + at;
		at += l + (nl != NULL);
		uint64_t addr;
		char type;
		const char *name;
		size_t n;
		if (l > KSYMS_MAX_LINE || !parse_line(p, l, &addr, &type, &name, &n))
			continue;
		note_bound(k, name, n, addr);
		if (strchr("AaUvw", type))
			continue; /* invariant 2 */
		if (k->n == KSYMS_MAX_SYMS) {
			snprintf(err, errlen, "more than %u symbols: not a kernel's symbol table", KSYMS_MAX_SYMS);
			be_ksyms_free(k);
			return NULL;
		}
		if (GROW_FROM(k->syms, cap, k->n + 1, 4096) != 0) {
			snprintf(err, errlen, "out of memory");
			be_ksyms_free(k);
			return NULL;
		}
		/* the arena holds at most the text's bytes: a name and its NUL
		 * take no more than the line and its newline */
		memcpy(k->names + arena, name, n);
		k->names[arena + n] = '\0';
		k->syms[k->n++] = (struct ksym){addr, (uint32_t)arena, (uint32_t)line};
		arena += n + 1;
	}
	if (k->n == 0) {
		snprintf(err, errlen, "no symbols (expected lines like \"ffffffff81000000 T _stext\", as in System.map or /proc/kallsyms)");
		be_ksyms_free(k);
		return NULL;
	}
	/* The text's bounds say it is a kernel's map: Debian's
	 * /boot/System.map-* is a one-line stub, and /proc/kallsyms read
	 * without privilege shows every address as 0. */
	if (k->has_text != 3 || k->etext <= k->stext) {
		snprintf(err, errlen, "%s", k->has_text != 3
		         ? "no _stext and _etext: not a kernel's System.map (Debian's /boot/System.map-* is a stub; "
		           "copy /proc/kallsyms from a dom0 running the same kernel)"
		         : "_etext is not above _stext: addresses hidden (read /proc/kallsyms as root)");
		be_ksyms_free(k);
		return NULL;
	}
	qsort(k->syms, k->n, sizeof(k->syms[0]), by_addr);
	return k;
}

struct be_ksyms *be_ksyms_open(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	/* read as a stream: /proc/kallsyms has no size */
	for (;;) {
		if (len == cap) {
			size_t c = cap ? cap * 2 : 1u << 20;
			char *b = c <= (size_t)KSYMS_MAX_FILE + 1 ? realloc(buf, c) : NULL;
			if (!b) {
				snprintf(err, errlen, "%s: %s", path,
				         c > (size_t)KSYMS_MAX_FILE + 1 ? "too big for a symbol table" : "out of memory");
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
			cap = c;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		snprintf(err, errlen, "%s: read error", path);
		free(buf);
		return NULL;
	}
	char why[256];
	struct be_ksyms *k = be_ksyms_parse(buf, len, why, sizeof(why));
	free(buf);
	if (!k)
		snprintf(err, errlen, "%s: %s", path, why);
	return k;
}

void be_ksyms_free(struct be_ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

size_t be_ksyms_count(const struct be_ksyms *k)
{
	return k ? k->n : 0;
}

int be_ksyms_is_text(const struct be_ksyms *k, uint64_t addr)
{
	if (!k)
		return 0;
	if (addr >= k->stext && addr <= k->etext)
		return 1;
	if (k->has_init == 3 && addr >= k->sinit && addr <= k->einit)
		return 1;
	return k->has_hyper && addr >= k->hyper && addr - k->hyper <= 4096;
}

const char *be_ksyms_lookup(const struct be_ksyms *k, uint64_t addr, uint64_t *start)
{
	if (!k || k->n == 0)
		return NULL;
	/* the first symbol at or above addr (invariant 3) */
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i;
	if (lo < k->n && k->syms[lo].addr == addr)
		i = lo;
	else if (lo > 0)
		i = lo - 1;
	else
		return NULL;
	*start = k->syms[i].addr;
	return k->names + k->syms[i].name;
}
