/*
 * parse_util.c - helpers shared by the profile parsers (parse_util.h).
 */
#include "config.h"

#include "parse_util.h"

#include <stdio.h>
#include <stdlib.h>

int pf_grow(void **arr, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2 / sz)
			return -1;
		n *= 2;
	}
	void *a = realloc(*arr, n * sz);
	if (!a)
		return -1;
	*arr = a;
	*cap = n;
	return 0;
}

void pf_error(char *err, size_t len, uint64_t line, const char *fmt, va_list ap)
{
	int n = snprintf(err, len, "line %llu: ", (unsigned long long)line);
	if (n > 0 && (size_t)n < len)
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
}
