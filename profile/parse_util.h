/*
 * parse_util.h - what the profile parsers share (hp_parse.c, prof_*.c):
 * growing arrays without overflow, and "line N: ..." messages.
 */
#ifndef PROFSVC_PARSE_UTIL_H
#define PROFSVC_PARSE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Grows *arr (elements of sz bytes) to hold at least need, doubling;
 * 0, or -1 (nothing changed) on overflow or when out of memory. */
int pf_grow(void **arr, size_t *cap, size_t need, size_t sz);

/* err = "line N: " + the message. */
void pf_error(char *err, size_t len, uint64_t line, const char *fmt, va_list ap);

#endif
