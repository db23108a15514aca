/*
 * grow.c - growing an array (grow.h): doubling, overflow refused.
 *
 * May call: libc.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

int grow_array(void **items, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap)
		return 0;
	if (!size) {
		errno = EINVAL;
		return -1;
	}
	if (need > SIZE_MAX / size) {
		errno = ENOMEM;
		return -1;
	}
	size_t n = *cap ? *cap : first ? first : 16;
	if (n > SIZE_MAX / size)
		n = need;
	while (n < need)
		n = n > SIZE_MAX / 2 / size ? need : n * 2;
	void *p = realloc(*items, n * size);
	if (!p)
		return -1; /* realloc set ENOMEM */
	*items = p;
	*cap = n;
	return 0;
}
