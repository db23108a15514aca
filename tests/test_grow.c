/*
 * test_grow.c - util/grow: an array grown to what is asked, doubling from
 * its first size (16 when none is given), never shrunk; and the requests
 * whose byte count overflows refused with the array left as it was.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "testutil.h"

int main(void)
{
	/* from nothing: the default first size, then doubling */
	int *a = NULL;
	size_t cap = 0;
	CHECK(GROW(a, cap, 1) == 0 && a && cap == 16, "first grow: cap %zu", cap);
	for (int i = 0; i < 16; i++)
		a[i] = i;
	CHECK(GROW(a, cap, 16) == 0 && cap == 16, "no grow needed: cap %zu", cap);
	CHECK(GROW(a, cap, 17) == 0 && cap == 32, "one past: cap %zu", cap);
	CHECK(GROW(a, cap, 100) == 0 && cap == 128, "100: cap %zu", cap);
	int kept = 1;
	for (int i = 0; i < 16; i++)
		kept &= a[i] == i;
	CHECK(kept, "the items survive growing");
	CHECK(GROW(a, cap, 3) == 0 && cap == 128, "nothing shrinks: cap %zu", cap);
	free(a);

	/* a site's own first size, and one bigger than asked */
	char *b = NULL;
	size_t bcap = 0;
	CHECK(GROW_FROM(b, bcap, 10, 4096) == 0 && bcap == 4096, "first 4096: cap %zu", bcap);
	CHECK(GROW_FROM(b, bcap, 4097, 4096) == 0 && bcap == 8192, "doubled: cap %zu", bcap);
	CHECK(GROW_FROM(b, bcap, 100000, 4096) == 0 && bcap == 131072, "doubled to 100000: cap %zu",
	      bcap);
	free(b);

	/* the function itself, with sizes the macros would not give */
	void *v = NULL;
	size_t vcap = 0;
	CHECK(grow_array(&v, &vcap, 5, 3, 4) == 0 && vcap == 8, "3-byte items from 4: cap %zu", vcap);

	/* overflow: need * size past SIZE_MAX refused, nothing touched */
	void *before = v;
	errno = 0;
	CHECK(grow_array(&v, &vcap, SIZE_MAX / 3 + 1, 3, 4) == -1 && errno == ENOMEM && v == before &&
	          vcap == 8,
	      "need * size overflows: refused, cap %zu", vcap);
	uint64_t *w = NULL;
	size_t wcap = 0;
	errno = 0;
	CHECK(GROW(w, wcap, SIZE_MAX / 4) == -1 && errno == ENOMEM && !w && wcap == 0,
	      "SIZE_MAX / 4 items of 8 bytes: refused, cap %zu", wcap);
	errno = 0;
	CHECK(GROW(w, wcap, SIZE_MAX) == -1 && errno == ENOMEM && !w && wcap == 0,
	      "SIZE_MAX items: refused, cap %zu", wcap);
	/* a first size that itself overflows is no excuse: need alone is tried */
	CHECK(GROW_FROM(w, wcap, 2, SIZE_MAX / 2) == 0 && w && wcap == 2,
	      "first size past SIZE_MAX bytes: cap %zu", wcap);
	free(w);
	free(v);

	/* size 0 is a mistake, not an empty success */
	void *z = NULL;
	size_t zcap = 0;
	errno = 0;
	CHECK(grow_array(&z, &zcap, 1, 0, 0) == -1 && errno == EINVAL && !z && zcap == 0,
	      "size 0: refused");

	return tu_finish("test_grow");
}
