/*
 * safe_text.c - escaping guest-chosen text for terminals, logs, JSON,
 * JSON inside a page's script element and SVG/HTML markup (see
 * safe_text.h for what is escaped and how): a name's own characters, a
 * backslash among them, pass as they are; only what a medium would obey
 * or cannot carry is changed.
 *
 * One decision about which characters are dangerous (classify), then each
 * medium's own syntax on top: JSON's quotes and backslash, the three
 * characters that would end a script element, XML's five.
 *
 * May call: libc.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "safe_text.h"

enum kind {
	PLAIN,   /* printed as it is */
	BYTE,    /* one byte shown as \xNN: C0, DEL, invalid UTF-8 */
	CODEPT,  /* one valid code point shown as \uNNNN: C1, bidi controls */
};

/* Length of a valid UTF-8 sequence at p (1-4), or 0: overlongs,
 * surrogates, code points past U+10FFFF and cut sequences are invalid. */
static int utf8_len(const unsigned char *p, unsigned *cp)
{
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 && p[0] < 0xf0 ? 3
	      : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	if (!n)
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

/* Code points that steer how text around them is shown. */
static int is_bidi_control(unsigned cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* What the character at p is, and how many bytes it takes. */
static enum kind classify(const unsigned char *p, int *len, unsigned *cp)
{
	int n = utf8_len(p, cp);

	*len = n ? n : 1;
	if (!n) {
		*cp = p[0];
		return BYTE;
	}
	if (*cp < 0x20 || *cp == 0x7f)
		return BYTE;
	if ((*cp >= 0x80 && *cp <= 0x9f) || is_bidi_control(*cp))
		return CODEPT;
	return PLAIN;
}

/* The escaped form of one character into buf (>= 8 bytes); its columns. */
static int render(enum kind k, const unsigned char *p, int len, unsigned cp, char *buf)
{
	switch (k) {
	case BYTE:
		snprintf(buf, 8, "\\x%02x", p[0]);
		return 4;
	case CODEPT:
		snprintf(buf, 8, "\\u%04x", cp);
		return 6;
	case PLAIN:
	default:
		memcpy(buf, p, (size_t)len);
		buf[len] = '\0';
		return 1;
	}
}

/* Printable ASCII: shown as it is, one column a byte (most names are;
 * the listing of 100,000 runs takes this path). */
static size_t plain_ascii(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e)
			return (size_t)-1;
	return n;
}

int safe_text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[8];
	int col = 0, len;
	unsigned cp;
	size_t plain = plain_ascii(s);

	if (plain != (size_t)-1 && plain < 1u << 30)
		return (int)plain;

	while (*p) {
		enum kind k = classify(p, &len, &cp);
		col += render(k, p, len, cp, buf);
		p += len;
	}
	return col;
}

void safe_text_print(FILE *f, const char *s, int width)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[8];
	int col = 0, len;
	unsigned cp;
	size_t plain = plain_ascii(s);

	if (plain != (size_t)-1 && plain < 1u << 30) {
		size_t n = width > 0 && plain > (size_t)width ? (size_t)width : plain;
		fwrite(s, 1, n, f);
		for (col = (int)n; width > 0 && col < width; col++)
			fputc(' ', f);
		return;
	}

	while (*p) {
		enum kind k = classify(p, &len, &cp);
		int w = render(k, p, len, cp, buf);
		if (width > 0 && col + w > width)
			break;
		fputs(buf, f);
		col += w;
		p += len;
	}
	for (; width > 0 && col < width; col++)
		fputc(' ', f);
}

char *safe_text_cell(char *out, const char *s, int width)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[8];
	int col = 0, len;
	unsigned cp;
	size_t plain = plain_ascii(s);

	if (width <= 0)
		return out;
	if (plain != (size_t)-1 && plain < 1u << 30) {
		size_t n = plain > (size_t)width ? (size_t)width : plain;
		memcpy(out, s, n);
		out += n;
		col = (int)n;
	} else {
		while (*p) {
			enum kind k = classify(p, &len, &cp);
			int w = render(k, p, len, cp, buf);
			if (col + w > width)
				break;
			size_t n = strlen(buf); /* <= 6 bytes for w <= 6 columns */
			memcpy(out, buf, n);
			out += n;
			col += w;
			p += len;
		}
	}
	for (; col < width; col++)
		*out++ = ' ';
	return out;
}

char *safe_text(char *out, size_t outlen, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[8];
	size_t o = 0;
	int len;
	unsigned cp;

	if (!outlen)
		return out;
	while (*p) {
		enum kind k = classify(p, &len, &cp);
		render(k, p, len, cp, buf);
		size_t bl = strlen(buf);
		if (o + bl >= outlen)
			break;
		memcpy(out + o, buf, bl);
		o += bl;
		p += len;
	}
	out[o] = '\0';
	return out;
}

/* What stands for c in inert JSON (safe_text.h), or NULL: c as it is. */
static const char *inert_escape(char c)
{
	return c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : c == '&' ? "\\u0026" : NULL;
}

/* A JSON string of s: keep_bytes says how a byte that is not UTF-8 is
 * carried (U+FFFD, or U+DC00 + the byte); inert, whether < > & are
 * written as \u escapes. */
static void json_string(FILE *f, const char *s, int keep_bytes, int inert)
{
	const unsigned char *p = (const unsigned char *)s;
	int len;
	unsigned cp;

	fputc('"', f);
	while (*p) {
		enum kind k = classify(p, &len, &cp);
		if (k == BYTE && len == 1 && p[0] >= 0x80 && keep_bytes)
			fprintf(f, "\\udc%02x", p[0]); /* a lone surrogate: no UTF-8 gives one */
		else if (k == BYTE && len == 1 && p[0] >= 0x80)
			fputs("\\ufffd", f); /* not UTF-8: JSON cannot carry the byte */
		else if (k == BYTE || k == CODEPT)
			fprintf(f, "\\u%04x", cp);
		else if (*p == '\\' || *p == '"') /* JSON's syntax: parsed, one character */
			fprintf(f, "\\%c", *p);
		else if (inert && inert_escape((char)*p))
			fputs(inert_escape((char)*p), f);
		else
			fwrite(p, 1, (size_t)len, f);
		p += len;
	}
	fputc('"', f);
}

void safe_text_json(FILE *f, const char *s)
{
	json_string(f, s, 0, 0);
}

void safe_text_json_bytes(FILE *f, const char *s)
{
	json_string(f, s, 1, 0);
}

void safe_text_json_inert(FILE *f, const char *s)
{
	json_string(f, s, 1, 1);
}

char *safe_text_json_inert_doc(char *json)
{
	size_t n = 0, len = json ? strlen(json) : 0;
	if (!json)
		return NULL;
	for (size_t i = 0; i < len; i++)
		n += inert_escape(json[i]) != NULL;
	if (!n)
		return json;
	/* each of the three becomes 6 characters */
	char *o = malloc(len + 5 * n + 1), *p = o;
	if (!o) {
		free(json);
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		const char *e = inert_escape(json[i]);
		if (e) {
			memcpy(p, e, 6);
			p += 6;
		} else {
			*p++ = json[i];
		}
	}
	*p = '\0';
	free(json);
	return o;
}

void safe_text_spelled(FILE *f, const char *s, const char *also)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[8];
	int len;
	unsigned cp;

	while (*p) {
		enum kind k = classify(p, &len, &cp);
		if (k == PLAIN && len == 1 && also && strchr(also, *p))
			fprintf(f, "\\x%02x", *p);
		else if (k == PLAIN)
			fwrite(p, 1, (size_t)len, f);
		else {
			render(k, p, len, cp, buf);
			fputs(buf, f);
		}
		p += len;
	}
}

/* ---- SVG and HTML ---------------------------------------------------------
 * Two steps, so that there is one decision about which characters are
 * dangerous (safe_text above) and one about XML's own syntax (here):
 * safe_text turns every control, bidi override and invalid byte into
 * printable ASCII escapes, which XML 1.0 can always hold (a backslash is
 * a name's own character and stays one); then the five markup characters
 * become entities. */

static void entities(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

void markup_text_cut(FILE *f, const char *s, int max)
{
	/* An escape is at most 6 characters for at least 1 byte (\xNN is 4,
	 * \uNNNN 6 for 2 or 3 bytes). */
	size_t n = strlen(s), cap = n * 4 + 8;
	char *buf = malloc(cap);
	if (!buf)
		return;
	safe_text(buf, cap, s);
	if (max > 3 && safe_text_width(s) > max) {
		/* cut at a character of the escaped text: safe_text never ends
		 * inside an escape when the buffer is short */
		char *cut = malloc((size_t)max * 4 + 8);
		if (cut) {
			safe_text(cut, (size_t)max - 2, s);
			entities(f, cut);
			fputs("...", f);
			free(cut);
		}
	} else {
		entities(f, buf);
	}
	free(buf);
}

void markup_text(FILE *f, const char *s)
{
	markup_text_cut(f, s, 0);
}
