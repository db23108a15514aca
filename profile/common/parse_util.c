/*
 * parse_util.c - helpers shared by the profile parsers (parse_util.h).
 *
 * May call: util/grow.h, libc.
 */
#include "config.h"

#include "parse_util.h"
#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pf_lines_feed(struct pf_lines *l, uint64_t *fed, size_t max, const char *d, size_t len,
                  int (*line)(void *ctx, char *text, size_t len), void *ctx)
{
	while (len) {
		const char *nl = memchr(d, '\n', len);
		size_t take = nl ? (size_t)(nl - d) : len;
		if (l->len + take > max)
			return PF_TOO_LONG;
		if (GROW(l->buf, l->cap, l->len + take + 1) != 0)
			return PF_NO_MEMORY;
		memcpy(l->buf + l->len, d, take);
		l->len += take;
		*fed += take;
		d += take;
		len -= take;
		if (!nl)
			break;
		d++;
		len--;
		(*fed)++;
		l->buf[l->len] = '\0';
		size_t n = l->len;
		l->len = 0;
		int rc = line(ctx, l->buf, n);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void pf_error(char *err, size_t len, uint64_t line, const char *fmt, va_list ap)
{
	int n = snprintf(err, len, "line %llu: ", (unsigned long long)line);
	if (n > 0 && (size_t)n < len)
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
}
