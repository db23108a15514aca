/*
 * markup.h - guest-chosen text inside SVG and HTML: one escaper for text
 * and attribute values.  A band or cost-centre name can be anything the
 * guest's program was called: markup, quotes, ESC sequences, bidi
 * overrides, bytes that are not UTF-8.  It comes out as inert, valid XML:
 * util/safe_text's visible escapes (\xNN, \uNNNN) for what XML cannot
 * hold or a reader would be fooled by, then & < > " ' as entities.
 */
#ifndef PROFSVC_MARKUP_H
#define PROFSVC_MARKUP_H

#include <stdio.h>

void markup_text(FILE *f, const char *s);

/* The same, cut to at most max characters of the escaped-for-display text
 * with "..." when cut (max 0: whole). */
void markup_text_cut(FILE *f, const char *s, int max);

#endif
