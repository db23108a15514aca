/*
 * walk_mem.c - the one way a walker reads guest memory: a word at a
 * time, each read counted against the walk's budget (walk.h).
 *
 * May call: nothing but the reader it is given.
 */
#include "config.h"

#include <string.h>

#include "walk.h"

int walk_read_word(struct walk_mem *m, uint64_t va, uint64_t *out)
{
	uint8_t b[8];

	if (m->budget == 0)
		return -1;
	m->budget--;
	if (va > UINT64_MAX - 8 || m->read(m->ctx, va, b, sizeof(b)) != (long)sizeof(b))
		return -1;
	memcpy(out, b, sizeof(b)); /* x86-64: little-endian, as the guest */
	return 0;
}
