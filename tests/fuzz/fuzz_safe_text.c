/*
 * fuzz_safe_text.c - libFuzzer target for util/safe_text.c, the escaping of
 * guest-chosen text.  For any bytes:
 *   - the terminal form is valid UTF-8 holding no C0 control, DEL, C1
 *     control or bidi control, and is exactly the input with only those
 *     and bytes that are not UTF-8 replaced by their escapes (\xNN,
 *     \uNNNN): every other character, a backslash too, as it is, and it
 *     is the spelled form (safe_text_spelled with no separators);
 *   - the padded form takes exactly the width asked for (in characters),
 *     and a table's cell (safe_text_cell) is the same bytes within its
 *     bound;
 *   - the JSON form is a quoted string of valid UTF-8 with no raw control,
 *     C1 or bidi character;
 *   - the exact JSON form (safe_text_json_bytes) decodes back to exactly
 *     the input (a lone surrogate U+DC00 + byte for a byte not UTF-8), and
 *     the spelled form (safe_text_spelled) is valid UTF-8 and inert;
 *   - the inert JSON form (safe_text_json_inert) is the exact JSON form
 *     with only < > & written as \u escapes, and so is that JSON made
 *     inert as a document (safe_text_json_inert_doc);
 *   - the markup form (markup_text) is the terminal form with only XML's
 *     five characters as entities, and holds none of them raw.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/safe_text.h"

/* Decodes one UTF-8 character; its length, or 0 if invalid. */
static int decode(const unsigned char *p, const unsigned char *end, unsigned *cp)
{
	if (p >= end)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 && p[0] < 0xf0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	if (!n || end - p < n)
		return 0;
	unsigned v = p[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	*cp = v;
	return n;
}

static int inert(unsigned cp)
{
	return cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f) && cp != 0x061c && cp != 0x200e &&
	       cp != 0x200f && !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
}

static void put_utf8(unsigned cp, unsigned char *o, size_t *n)
{
	if (cp < 0x80) {
		o[(*n)++] = (unsigned char)cp;
	} else if (cp < 0x800) {
		o[(*n)++] = (unsigned char)(0xc0 | cp >> 6);
		o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		o[(*n)++] = (unsigned char)(0xe0 | cp >> 12);
		o[(*n)++] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3f));
	}
}

/* safe_text_json_bytes(in) decoded as JSON, lone surrogates as bytes:
 * exactly in. */
static void json_bytes_round_trip(const char *in, size_t len)
{
	char *js = NULL;
	size_t jl = 0, nb = 0;
	FILE *f = open_memstream(&js, &jl);
	safe_text_json_bytes(f, in);
	fclose(f);
	unsigned char *back = malloc(len * 3 + 1);
	assert(jl >= 2 && js[0] == '"' && js[jl - 1] == '"');
	for (const unsigned char *q = (const unsigned char *)js + 1, *e = (const unsigned char *)js + jl - 1; q < e;) {
		unsigned cp;
		int n = decode(q, e, &cp);
		assert(n > 0 && inert(cp) && cp != '"');
		if (cp != '\\') {
			memcpy(back + nb, q, (size_t)n);
			nb += (size_t)n;
			q += n;
			continue;
		}
		assert(q + 1 < e && (q[1] == '\\' || q[1] == '"' || (q[1] == 'u' && e - q >= 6)));
		if (q[1] != 'u') {
			back[nb++] = q[1];
			q += 2;
			continue;
		}
		char hex[5] = {(char)q[2], (char)q[3], (char)q[4], (char)q[5], 0};
		unsigned u = (unsigned)strtoul(hex, NULL, 16);
		if (u >= 0xdc80 && u <= 0xdcff)
			back[nb++] = (unsigned char)(u - 0xdc00);
		else
			put_utf8(u, back, &nb);
		q += 6;
		assert(nb <= len);
	}
	assert(nb == len && memcmp(back, in, len) == 0);
	free(back);
	free(js);
}

/* The exact JSON with < > & as \u escapes, as safe_text_json_inert and
 * safe_text_json_inert_doc write it. */
static void json_inert(const char *in)
{
	char *js = NULL, *ji = NULL;
	size_t jl = 0, il = 0, at = 0;
	FILE *f = open_memstream(&js, &jl);
	safe_text_json_bytes(f, in);
	fclose(f);
	f = open_memstream(&ji, &il);
	safe_text_json_inert(f, in);
	fclose(f);
	for (size_t i = 0; i < jl; i++) {
		const char *want = js[i] == '<' ? "\\u003c" : js[i] == '>' ? "\\u003e" : js[i] == '&' ? "\\u0026" : NULL;
		size_t wl = want ? 6 : 1;
		assert(at + wl <= il && memcmp(ji + at, want ? want : js + i, wl) == 0);
		at += wl;
	}
	assert(at == il && !memchr(ji, '<', il) && !memchr(ji, '>', il) && !memchr(ji, '&', il));
	char *doc = safe_text_json_inert_doc(js); /* takes js */
	assert(doc && strlen(doc) == il && memcmp(doc, ji, il) == 0);
	free(doc);
	free(ji);
}

/* markup_text: the terminal form (out), XML's five as entities. */
static void markup_inert(const char *in, const char *out)
{
	char *mk = NULL;
	size_t ml = 0, at = 0;
	FILE *f = open_memstream(&mk, &ml);
	markup_text(f, in);
	fclose(f);
	for (const char *o = out; *o; o++) {
		const char *want = *o == '&' ? "&amp;" : *o == '<' ? "&lt;" : *o == '>' ? "&gt;"
		                 : *o == '"' ? "&quot;" : *o == '\'' ? "&#39;" : NULL;
		size_t wl = want ? strlen(want) : 1;
		assert(at + wl <= ml && memcmp(mk + at, want ? want : o, wl) == 0);
		at += wl;
	}
	assert(at == ml && !memchr(mk, '<', ml) && !memchr(mk, '>', ml) && !memchr(mk, '"', ml) && !memchr(mk, '\'', ml));
	free(mk);
}

static void spelled_inert(const char *in)
{
	char *sp = NULL;
	size_t sl = 0;
	FILE *f = open_memstream(&sp, &sl);
	safe_text_spelled(f, in, ";");
	fclose(f);
	for (const unsigned char *q = (const unsigned char *)sp, *e = q + sl; q < e;) {
		unsigned cp;
		int n = decode(q, e, &cp);
		assert(n > 0 && inert(cp) && cp != ';');
		q += n;
	}
	free(sp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *in = malloc(size + 1);
	memcpy(in, data, size);
	in[size] = '\0';
	size_t len = strlen(in); /* C strings: up to the first NUL */

	/* Terminal form: big enough for every character escaped (6 bytes). */
	size_t cap = len * 6 + 1;
	char *out = malloc(cap);
	safe_text(out, cap, in);
	const unsigned char *p = (const unsigned char *)out, *end = p + strlen(out);
	for (const unsigned char *q = p; q < end;) {
		unsigned cp;
		int n = decode(q, end, &cp);
		assert(n > 0);       /* valid UTF-8 */
		assert(inert(cp));   /* nothing that steers a terminal */
		q += n;
	}
	/* The input walked character by character: the output is each one as
	 * it is, or its escape when it is unsafe or not UTF-8. */
	size_t at = 0;
	for (const unsigned char *q = (const unsigned char *)in, *e = q + len; q < e;) {
		unsigned cp;
		int n = decode(q, e, &cp);
		char want[8];
		if (!n)
			snprintf(want, sizeof(want), "\\x%02x", q[0]);
		else if (cp < 0x20 || cp == 0x7f)
			snprintf(want, sizeof(want), "\\x%02x", cp);
		else if (!inert(cp))
			snprintf(want, sizeof(want), "\\u%04x", cp);
		else {
			memcpy(want, q, (size_t)n);
			want[n] = '\0';
		}
		size_t wl = strlen(want);
		assert(at + wl <= (size_t)(end - p) && memcmp(out + at, want, wl) == 0);
		at += wl;
		q += n ? n : 1;
	}
	assert(at == (size_t)(end - p)); /* nothing more */
	{
		char *sp = NULL;
		size_t sl = 0;
		FILE *sf = open_memstream(&sp, &sl);
		safe_text_spelled(sf, in, NULL);
		fclose(sf);
		assert(sl == (size_t)(end - p) && memcmp(sp, out, sl) == 0);
		free(sp);
	}
	/* The width is the characters of the escaped form. */
	int outchars = 0;
	for (const unsigned char *q = (const unsigned char *)out; q < end;) {
		unsigned cp;
		q += decode(q, end, &cp);
		outchars++;
	}
	assert(outchars == safe_text_width(in));

	/* Padded: exactly width characters. */
	int width = size ? data[0] % 40 + 1 : 10;
	char *pad = NULL;
	size_t padlen = 0;
	FILE *f = open_memstream(&pad, &padlen);
	safe_text_print(f, in, width);
	fclose(f);
	/* A table's cell (safe_text_cell): the same bytes, inside its bound. */
	char *cell = malloc(SAFE_TEXT_CELL_MAX(width));
	char *cend = safe_text_cell(cell, in, width);
	assert(cend >= cell && (size_t)(cend - cell) <= SAFE_TEXT_CELL_MAX(width));
	assert((size_t)(cend - cell) == padlen && memcmp(cell, pad, padlen) == 0);
	free(cell);
	int chars = 0;
	for (const unsigned char *q = (const unsigned char *)pad, *e = q + padlen; q < e;) {
		unsigned cp;
		int n = decode(q, e, &cp);
		assert(n > 0 && inert(cp));
		q += n;
		chars++;
	}
	assert(chars == width);

	/* JSON. */
	char *js = NULL;
	size_t jl = 0;
	f = open_memstream(&js, &jl);
	safe_text_json(f, in);
	fclose(f);
	assert(jl >= 2 && js[0] == '"' && js[jl - 1] == '"');
	for (const unsigned char *q = (const unsigned char *)js + 1, *e = (const unsigned char *)js + jl - 1; q < e;) {
		unsigned cp;
		int n = decode(q, e, &cp);
		assert(n > 0 && inert(cp));
		if (cp == '\\') {
			assert(q + 1 < e);
			q += q[1] == 'u' ? 6 : 2;
			continue;
		}
		assert(cp != '"');
		q += n;
	}
	free(js);
	json_bytes_round_trip(in, len);
	json_inert(in);
	markup_inert(in, out);
	spelled_inert(in);
	free(pad);
	free(out);
	free(in);
	return 0;
}
