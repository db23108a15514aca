/*
 * safe_text.h - printing text that a guest chose (domain names, profile
 * contents) where a person or a program reads it: a terminal, a log line,
 * a JSON document, JSON inside a page's <script> element, SVG and HTML
 * markup.  The one place that decides what is escaped, for every medium,
 * below everything that prints guest text (profile/'s renderers, web/,
 * cli/, the backend's logs): escape for the medium, never more.
 *
 * A guest's name can hold anything: ESC sequences that retitle or clear a
 * terminal, BEL, newlines that forge a log line, C1 controls (U+0080 to
 * U+009F; U+009B is a CSI on its own), bidirectional overrides that make
 * text read backwards (U+202E), and bytes that are not UTF-8 at all.
 * Everything printable passes as it is, a backslash too (a name shows as
 * it is spelled: GHC's lambda `countBigrams.\` keeps its one backslash);
 * the rest is shown, not obeyed:
 *   C0 controls, DEL, invalid UTF-8 bytes   \xNN (the byte)
 *   C1 controls, bidi controls             \uNNNN (the code point)
 * The escapes are for a person to see, not for reading back: a name that
 * spells "\x1b" and one holding ESC look alike.  Where the exact text is
 * wanted, JSON carries it (safe_text_json_bytes).
 */
#ifndef PROFSVC_SAFE_TEXT_H
#define PROFSVC_SAFE_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s escaped to f.  width > 0: exactly width columns, cut at a
 * character (never inside an escape) and padded with spaces. */
void safe_text_print(FILE *f, const char *s, int width);

/* safe_text_print's cell of width columns (width > 0) written at out,
 * which has room for SAFE_TEXT_CELL_MAX(width) bytes; returns the end
 * (nothing is terminated).  A table's row is then one write. */
#define SAFE_TEXT_CELL_MAX(width) (6 * (size_t)(width) + 8)
char *safe_text_cell(char *out, const char *s, int width);

/* Columns safe_text_print needs for all of s. */
int safe_text_width(const char *s);

/* s escaped into out (always terminated, cut at a character when out is
 * too small); returns out. */
char *safe_text(char *out, size_t outlen, const char *s);

/* s as a JSON string, quotes included: the exact text, with the same
 * characters written as JSON escapes (\u001b, \u009b, \u202e; '"' and a
 * backslash as JSON's \" and \\, one character once parsed), so the
 * document itself stays inert; invalid bytes become U+FFFD (for viewers
 * that reject a lone surrogate: the trace's Chrome JSON). */
void safe_text_json(FILE *f, const char *s);

/* For what other programs read, where a name must come out as spelled
 * (profdb's and serve's JSON, folded stacks, perf script text, pprof,
 * speedscope): */
/* s as a JSON string as safe_text_json writes it, but a byte that is not
 * UTF-8 becomes the lone surrogate U+DC00 + byte (\udcNN, as Python's
 * "surrogateescape"): no character of valid UTF-8 decodes to one, so the
 * exact bytes come back from the string (lossless); JSON parsers accept
 * it, and it shows as one replacement character. */
void safe_text_json_bytes(FILE *f, const char *s);
/* s as safe_text_print shows it (controls, bidi controls and bad bytes as
 * \xNN and \uNNNN, a backslash as itself), and each byte of `also`
 * (ASCII, may be NULL) shown \xNN too: a format's separators (';' in
 * folded stacks). */
void safe_text_spelled(FILE *f, const char *s, const char *also);

/* Inert JSON, for JSON inside an HTML <script> element (which ends at the
 * first "</script"): '<', '>' and '&', which JSON holds only inside
 * strings, written as \u003c, \u003e and \u0026.  The JSON is the same
 * once parsed, and no name can end the element or open markup. */
/* s as safe_text_json_bytes writes it (the exact text), inert. */
void safe_text_json_inert(FILE *f, const char *s);
/* A whole JSON document (malloc'd; taken, NULL passes through) made
 * inert: the same text when it holds none of the three, else a new
 * malloc'd copy; NULL when out of memory. */
char *safe_text_json_inert_doc(char *json);

/* Guest text inside SVG and HTML, text and attribute values alike: a
 * band or cost-centre name can be anything the guest's program was
 * called (markup, quotes, ESC sequences, bidi overrides, bytes that are
 * not UTF-8).  It comes out as inert, valid XML: the visible escapes of
 * safe_text (\xNN, \uNNNN) for what XML cannot hold or a reader would be
 * fooled by, then & < > " ' as entities. */
void markup_text(FILE *f, const char *s);
/* The same, cut to at most max characters of the escaped-for-display text
 * with "..." when cut (max 0: whole). */
void markup_text_cut(FILE *f, const char *s, int max);

#endif
