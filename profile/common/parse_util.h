/*
 * parse_util.h - what the profile parsers share (hp_parse.c, prof_*.c):
 * lines fed in pieces, and "line N: ..." messages (their arrays grow
 * with util/grow.h).
 */
#ifndef PROFSVC_PARSE_UTIL_H
#define PROFSVC_PARSE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Lines from bytes that arrive in pieces: a line is held until its '\n'
 * comes, then handed to `line` NUL-terminated without the '\n'.  *fed
 * counts the bytes taken (up to and including each newline, before
 * `line` is called).  Returns 0, the first non-zero `line` returned,
 * PF_TOO_LONG (a line over max bytes) or PF_NO_MEMORY. */
struct pf_lines {
	char *buf;
	size_t len, cap;
};
#define PF_TOO_LONG (-2)
#define PF_NO_MEMORY (-3)
int pf_lines_feed(struct pf_lines *l, uint64_t *fed, size_t max, const char *data, size_t len,
                  int (*line)(void *ctx, char *text, size_t len), void *ctx);

/* err = "line N: " + the message. */
void pf_error(char *err, size_t len, uint64_t line, const char *fmt, va_list ap);

#endif
