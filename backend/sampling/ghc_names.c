/*
 * ghc_names.c - GHC's symbol names as Haskell spells them (ghc_rts.h):
 * "base_GHCziBase_zpzp_info" -> "GHC.Base.++".
 *
 * A GHC label is [unit_]Module_name_suffix, each of the three parts
 * z-encoded (GHC.Utils.Encoding: zd = $, zi = ., ZC = :, z2208U = a code
 * point, Z3T = (,,), Z3H = (#,,#)) so that a raw '_' only ever separates
 * them; the main unit's labels have no unit part.  The unit is dropped
 * (a profile names modules, and the unit's version and hash are noise),
 * the suffix (_info, _closure, _entry, _con_info, ...) too.  Names that
 * are not GHC's, local labels (c1ab_info, _c1ab_info, .Lc1ab_info: the
 * caller maps them to the symbol they sit in) and the RTS's stg_* names
 * keep their spelling (stg_* lose only the suffix).  Symbol names come
 * from the guest's ELF file and are hostile: every escape is checked, a
 * name that does not decode is copied as it is, output never passes
 * outlen.
 *
 * May call: libc's string functions, ghc_rts.c.
 */
#include "config.h"

#include <string.h>

#include "ghc_rts.h"

/* The label suffixes GHC's code generator appends (CLabel.hs), longest
 * first where one ends another. */
static const char *const ghc_suffixes[] = {
	"_con_info", "_con_entry", "_static_info", "_info", "_closure", "_entry",
	"_slow", "_fast", "_ret",
};

/* Output into a bounded buffer; what does not fit is cut (at a byte:
 * the caller's buffer is meant to be large enough for real names). */
struct zout {
	char *p;
	size_t len, cap; /* cap excludes the NUL */
};

static void zput(struct zout *o, char c)
{
	if (o->len < o->cap)
		o->p[o->len++] = c;
}

static void zputs(struct zout *o, const char *s)
{
	while (*s)
		zput(o, *s++);
}

/* A code point as UTF-8; 0 for one that is not a character. */
static int zput_utf8(struct zout *o, unsigned long c)
{
	if (c == 0 || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (c < 0x80) {
		zput(o, (char)c);
	} else if (c < 0x800) {
		zput(o, (char)(0xc0 | (c >> 6)));
		zput(o, (char)(0x80 | (c & 0x3f)));
	} else if (c < 0x10000) {
		zput(o, (char)(0xe0 | (c >> 12)));
		zput(o, (char)(0x80 | ((c >> 6) & 0x3f)));
		zput(o, (char)(0x80 | (c & 0x3f)));
	} else {
		zput(o, (char)(0xf0 | (c >> 18)));
		zput(o, (char)(0x80 | ((c >> 12) & 0x3f)));
		zput(o, (char)(0x80 | ((c >> 6) & 0x3f)));
		zput(o, (char)(0x80 | (c & 0x3f)));
	}
	return 1;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_val(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static char z_lower(char c)
{
	static const char from[] = "zabcdeghilmnpqrstuv";
	static const char to[] = "z&|^$=>#.<-!+'\\/*_%";
	const char *f = c ? strchr(from, c) : NULL;
	return f ? to[f - from] : 0;
}

static char z_upper(char c)
{
	static const char from[] = "LRMNCZ";
	static const char to[] = "()[]:Z";
	const char *f = c ? strchr(from, c) : NULL;
	return f ? to[f - from] : 0;
}

/* z<hex>U at s (s[0] == 'z', s[1] a digit): the characters used, or 0. */
static size_t z_decode_num(const char *s, size_t n, struct zout *o)
{
	unsigned long c = 0;
	size_t i = 1;
	for (; i < n && hex_val(s[i]) >= 0; i++) {
		if (i > 8)
			return 0; /* no code point needs that many digits */
		c = c * 16 + (unsigned long)hex_val(s[i]);
	}
	if (i >= n || s[i] != 'U' || !zput_utf8(o, c))
		return 0;
	return i + 1;
}

/* Z<n>T or Z<n>H at s (s[1] a digit): the characters used, or 0. */
static size_t z_decode_tuple(const char *s, size_t n, struct zout *o)
{
	unsigned arity = 0;
	size_t i = 1;
	for (; i < n && is_digit(s[i]); i++) {
		arity = arity * 10 + (unsigned)(s[i] - '0');
		if (arity > 1024)
			return 0; /* GHC's tuples stop at 64 */
	}
	if (i >= n || (s[i] != 'T' && s[i] != 'H'))
		return 0;
	int unboxed = s[i] == 'H';
	if (unboxed && arity == 1) {
		zputs(o, "(# #)");
		return i + 1;
	}
	zputs(o, unboxed ? "(#" : "(");
	for (unsigned k = 1; k < arity; k++)
		zput(o, ',');
	zputs(o, unboxed ? "#)" : ")");
	return i + 1;
}

/* n z-encoded characters at s, decoded; 0, or -1 for a bad escape. */
static int z_decode(const char *s, size_t n, struct zout *o)
{
	size_t i = 0;
	while (i < n) {
		char c = s[i];
		if (c != 'z' && c != 'Z') {
			zput(o, c);
			i++;
			continue;
		}
		if (i + 1 >= n)
			return -1;
		size_t used;
		char d = s[i + 1];
		if (is_digit(d))
			used = c == 'z' ? z_decode_num(s + i, n - i, o) : z_decode_tuple(s + i, n - i, o);
		else if ((d = c == 'z' ? z_lower(d) : z_upper(d)) != 0)
			zput(o, d), used = 2;
		else
			used = 0;
		if (used == 0)
			return -1;
		i += used;
	}
	return 0;
}

/* The length of sym without the k-th GHC suffix; 0 when it does not end
 * with that one. */
static size_t ghc_strip_suffix(const char *sym, size_t k)
{
	size_t n = strlen(sym), sl = strlen(ghc_suffixes[k]);
	return n > sl && memcmp(sym + n - sl, ghc_suffixes[k], sl) == 0 ? n - sl : 0;
}

#define N_SUFFIXES (sizeof ghc_suffixes / sizeof ghc_suffixes[0])

/* Characters a z-encoded part is made of. */
static int z_part_ok(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c)))
			return 0;
	}
	return 1;
}

/* [unit_]Module_name in s[0, n): "Module.name" decoded into o; -1 when
 * it is not of that form. */
static int ghc_decode_label(const char *s, size_t n, struct zout *o)
{
	const char *u1 = memchr(s, '_', n);
	if (!u1)
		return -1;
	const char *u2 = memchr(u1 + 1, '_', n - (size_t)(u1 + 1 - s));
	const char *mod = s, *name = u1 + 1;
	if (u2) { /* a unit first: skip it */
		if (!z_part_ok(s, (size_t)(u1 - s)))
			return -1;
		mod = u1 + 1;
		name = u2 + 1;
		if (memchr(name, '_', n - (size_t)(name - s)))
			return -1; /* a fourth part: not GHC's */
	}
	size_t mod_n = (size_t)(name - 1 - mod), name_n = n - (size_t)(name - s);
	if (!z_part_ok(mod, mod_n) || !z_part_ok(name, name_n))
		return -1;
	/* a module's name starts with a capital, ZZ for Z, or ZC for the
	 * ':' of ":Main", the program's entry */
	if (!(mod[0] >= 'A' && mod[0] <= 'Y') &&
	    !(mod_n >= 2 && mod[0] == 'Z' && (mod[1] == 'Z' || mod[1] == 'C')))
		return -1;
	if (z_decode(mod, mod_n, o) != 0)
		return -1;
	zput(o, '.');
	return z_decode(name, name_n, o);
}

/* sym as a GHC label with one of the suffixes (a function named con has
 * Main_con_info, not a constructor's _con_info): 0 and o filled, or -1. */
static int ghc_decode_symbol(const char *sym, struct zout *o)
{
	for (size_t k = 0; k < N_SUFFIXES; k++) {
		size_t n = ghc_strip_suffix(sym, k);
		o->len = 0;
		if (n && ghc_decode_label(sym, n, o) == 0)
			return 0;
	}
	return -1;
}

char *be_ghc_demangle(const char *sym, char *out, size_t outlen)
{
	if (!out || outlen == 0)
		return out;
	struct zout o = {out, 0, outlen - 1};
	if (!sym)
		sym = "";
	size_t n = 0;
	for (size_t k = 0; k < N_SUFFIXES && !n; k++)
		n = ghc_strip_suffix(sym, k);
	if (n && strncmp(sym, "stg_", 4) == 0) {
		/* the RTS's own: C names, not z-encoded */
		for (size_t i = 0; i < n; i++)
			zput(&o, sym[i]);
	} else if (ghc_decode_symbol(sym, &o) != 0) {
		o.len = 0;
		zputs(&o, sym);
	}
	out[o.len] = '\0';
	return out;
}

/* c1ab_info, _c1ab_info, .Lc1ab_info (and r/s/u...: GHC's local uniques):
 * a letter, then the unique's base-62 digits, a few of them and one at
 * least a decimal digit (so that a C name like rts_info is not taken). */
static int ghc_local_label(const char *sym, size_t n)
{
	size_t i = 0;
	if (n > 2 && sym[0] == '.' && sym[1] == 'L')
		i = 2;
	else if (n > 1 && sym[0] == '_')
		i = 1;
	if (n - i < 2 || n - i > 12 || !(sym[i] >= 'a' && sym[i] <= 'z') ||
	    !z_part_ok(sym + i + 1, n - i - 1))
		return 0;
	for (size_t k = i + 1; k < n; k++)
		if (is_digit(sym[k]))
			return 1;
	return 0;
}

int be_ghc_symbol_is_haskell(const char *sym)
{
	if (!sym)
		return 0;
	if (strncmp(sym, "stg_", 4) == 0)
		return 1;
	for (size_t k = 0; k < N_SUFFIXES; k++) {
		size_t n = ghc_strip_suffix(sym, k);
		if (n && ghc_local_label(sym, n))
			return 1;
	}
	char buf[8];
	struct zout o = {buf, 0, 0}; /* decoded only to be checked */
	return ghc_decode_symbol(sym, &o) == 0;
}
