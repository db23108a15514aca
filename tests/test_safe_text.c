/*
 * test_safe_text.c - util/safe_text: every class of character a guest can
 * put in a name comes out inert (terminal, log line, JSON), and printable
 * text, UTF-8 and backslashes included, comes out as it went in (a name
 * as the profile spells it: GHC's lambda countBigrams.\ keeps its one
 * backslash everywhere); JSON inside a page's script element and SVG/HTML
 * markup (the escaping of every medium lives here).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/safe_text.h"

static void expect(const char *what, const char *got, const char *want)
{
	CHECK(strcmp(got, want) == 0, "%s: got \"%s\", want \"%s\"", what, got, want);
}

static const char *json(const char *s)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	safe_text_json(f, s);
	fclose(f);
	return buf;
}

/* The forms for files other programs read: JSON with the exact bytes,
 * text as spelled (also: the format's separators). */
static const char *json_bytes(const char *s)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	safe_text_json_bytes(f, s);
	fclose(f);
	return buf;
}

static const char *spelled(const char *s, const char *also)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	safe_text_spelled(f, s, also);
	fclose(f);
	return buf;
}

/* The page's forms: JSON inside a script element, markup. */
static const char *json_inert(const char *s)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	safe_text_json_inert(f, s);
	fclose(f);
	return buf;
}

static const char *markup(const char *s, int max)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	markup_text_cut(f, s, max);
	fclose(f);
	return buf;
}

static const char *padded(const char *s, int width)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	safe_text_print(f, s, width);
	fclose(f);
	return buf;
}

int main(void)
{
	char out[256];
	static const struct {
		const char *what, *in, *text, *json;
	} cases[] = {
		{"plain ASCII", "guest-1 (prod)", "guest-1 (prod)", "\"guest-1 (prod)\""},
		{"UTF-8 letters", "gr\xc3\xbc\xc3\x9f \xe6\x97\xa5\xf0\x9f\x98\x80", "gr\xc3\xbc\xc3\x9f \xe6\x97\xa5\xf0\x9f\x98\x80",
		 "\"gr\xc3\xbc\xc3\x9f \xe6\x97\xa5\xf0\x9f\x98\x80\""},
		{"ESC sequence", "a\x1b[2Jb", "a\\x1b[2Jb", "\"a\\u001b[2Jb\""},
		{"OSC title + BEL", "\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07", "\"\\u001b]0;pwned\\u0007\""},
		{"newline forging a log line", "x\nprofile-backend: fake", "x\\x0aprofile-backend: fake",
		 "\"x\\u000aprofile-backend: fake\""},
		{"carriage return", "a\rb", "a\\x0db", "\"a\\u000db\""},
		{"DEL", "a\x7f", "a\\x7f", "\"a\\u007f\""},
		{"C1 CSI U+009B", "a\xc2\x9b" "31mred", "a\\u009b31mred", "\"a\\u009b31mred\""},
		{"C1 NEL U+0085", "a\xc2\x85" "b", "a\\u0085b", "\"a\\u0085b\""},
		{"bidi override U+202E", "\xe2\x80\xae" "gpj.exe", "\\u202egpj.exe", "\"\\u202egpj.exe\""},
		{"bidi isolate U+2066", "\xe2\x81\xa6x", "\\u2066x", "\"\\u2066x\""},
		{"RLM U+200F", "\xe2\x80\x8fx", "\\u200fx", "\"\\u200fx\""},
		{"ALM U+061C", "\xd8\x9cx", "\\u061cx", "\"\\u061cx\""},
		{"invalid byte", "a\xff" "b", "a\\xffb", "\"a\\ufffdb\""},
		{"cut sequence", "a\xe2\x80", "a\\xe2\\x80", "\"a\\ufffd\\ufffd\""},
		{"overlong slash", "\xc0\xaf", "\\xc0\\xaf", "\"\\ufffd\\ufffd\""},
		{"surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80", "\"\\ufffd\\ufffd\\ufffd\""},
		{"past U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
		{"backslash and quote", "a\\\"b", "a\\\"b", "\"a\\\\\\\"b\""},
		{"GHC's lambda", "countBigrams.\\", "countBigrams.\\", "\"countBigrams.\\\\\""},
		{"a spelled escape", "a\\x1b\\\\", "a\\x1b\\\\", "\"a\\\\x1b\\\\\\\\\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[128];
		snprintf(what, sizeof(what), "%s (text)", cases[i].what);
		expect(what, safe_text(out, sizeof(out), cases[i].in), cases[i].text);
		snprintf(what, sizeof(what), "%s (print)", cases[i].what);
		expect(what, padded(cases[i].in, 0), cases[i].text);
		snprintf(what, sizeof(what), "%s (json)", cases[i].what);
		expect(what, json(cases[i].in), cases[i].json);
	}
	/* Names as spelled: a backslash is itself, controls still inert; JSON
	 * keeps a byte that is not UTF-8 as U+DC00 + byte. */
	expect("spelled is the terminal form", spelled("countBigrams.\\ \x1b", NULL), padded("countBigrams.\\ \x1b", 0));
	expect("spelled backslash", spelled("a\\b\\x1b", NULL), "a\\b\\x1b");
	expect("spelled controls", spelled("a\x1b\xff\xe2\x80\xae;\n", NULL), "a\\x1b\\xff\\u202e;\\x0a");
	expect("spelled, ';' a separator", spelled("a;b c", "; "), "a\\x3bb\\x20c");
	expect("spelled UTF-8", spelled("gr\xc3\xbc\xc3\x9f", ";"), "gr\xc3\xbc\xc3\x9f");
	expect("json bytes: one backslash", json_bytes("countBigrams.\\"), "\"countBigrams.\\\\\"");
	expect("json bytes: C1, bidi", json_bytes("\xc2\x9b\xe2\x80\xae\x7f"), "\"\\u009b\\u202e\\u007f\"");
	expect("json bytes", json_bytes("a\\\"\x1b\xff\xc0\xaf\xc3\xbc"), "\"a\\\\\\\"\\u001b\\udcff\\udcc0\\udcaf\xc3\xbc\"");
	/* Inert JSON: the exact text, and < > & as \u escapes (a name cannot
	 * end a script element); a whole document the same way. */
	expect("json inert", json_inert("</script><b>&amp;\\\x1b\xff"),
	       "\"\\u003c/script\\u003e\\u003cb\\u003e\\u0026amp;\\\\\\u001b\\udcff\"");
	expect("json inert: plain", json_inert("Main.go"), "\"Main.go\"");
	char *doc = safe_text_json_inert_doc(strdup("{\"a\":\"<&>\",\"b\":1}"));
	expect("json inert document", doc ? doc : "(null)", "{\"a\":\"\\u003c\\u0026\\u003e\",\"b\":1}");
	free(doc);
	doc = safe_text_json_inert_doc(strdup("[1,\"x\"]"));
	expect("json inert document, nothing to escape", doc ? doc : "(null)", "[1,\"x\"]");
	free(doc);
	CHECK(safe_text_json_inert_doc(NULL) == NULL, "json inert document: NULL passes through");
	/* Markup: the terminal form, then XML's five as entities; cut with
	 * "..." at a character of the escaped text. */
	expect("markup", markup("<a href='x'>&\"\x1b\\", 0), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;\\x1b\\");
	expect("markup: bidi, bad byte", markup("\xe2\x80\xae\xff", 0), "\\u202e\\xff");
	expect("markup cut", markup("abcdefghij", 6), "abc...");
	expect("markup cut before an escape", markup("abc\x1b" "defgh", 7), "abc...");
	expect("markup short enough", markup("abcdef", 6), "abcdef");
	/* Widths count columns, escapes are never cut in half. */
	char w[16];
	snprintf(w, sizeof(w), "%d", safe_text_width("a\x1b\xe2\x80\xae\xc3\xbc"));
	expect("width: a, \\x1b, \\u202e, u-umlaut", w, "12");
	snprintf(w, sizeof(w), "%d", safe_text_width("countBigrams.\\"));
	expect("width: a backslash is one column", w, "14");
	snprintf(w, sizeof(w), "%d", safe_text_width("\\\xe2\x80\xae"));
	expect("width: a backslash beside an escape", w, "7");
	expect("padded backslash", padded("a\\b", 5), "a\\b  ");
	expect("cut after a backslash", padded("ab\\\\cd", 3), "ab\\");
	char cell[SAFE_TEXT_CELL_MAX(16)];
	*safe_text_cell(cell, "countBigrams.\\", 15) = '\0';
	expect("cell", cell, "countBigrams.\\ ");
	*safe_text_cell(cell, "x\\\x1b", 7) = '\0';
	expect("cell: backslash and an escape", cell, "x\\\\x1b ");
	expect("padded to 6", padded("ab", 6), "ab    ");
	expect("cut before an escape that does not fit", padded("abc\x1b", 5), "abc  ");
	expect("cut at a character", padded("\xc3\xbc\xc3\xbc\xc3\xbc", 2), "\xc3\xbc\xc3\xbc");
	/* A buffer too small is cut at a character and stays terminated. */
	expect("small buffer", safe_text(out, 6, "ab\x1b" "cd"), "ab");
	expect("empty buffer untouched", safe_text(out, 1, "abc"), "");
	return tu_finish("test_safe_text");
}
