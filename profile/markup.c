/*
 * markup.c - escaping guest-chosen text for SVG and HTML (markup.h).
 *
 * Two steps, so that there is one decision about which characters are
 * dangerous (util/safe_text.c) and one about XML's own syntax (here):
 * safe_text turns every control, bidi override and invalid byte into
 * printable ASCII escapes, which XML 1.0 can always hold (a backslash is
 * a name's own character and stays one); then the five markup characters
 * become entities.
 */
#include "config.h"

#include "markup.h"

#include <stdlib.h>
#include <string.h>

#include "util/safe_text.h"

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
