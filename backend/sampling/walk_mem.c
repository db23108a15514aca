/*
 * walk_mem.c - the one way a stack walker reads a guest's memory
 * (walk.h): a word at a time through the walk_mem reader, each read
 * counted against the walk's budget, so that no guest memory, however it
 * is laid out, makes a walk cost more than its budget.
 *
 * Calls only the reader it is handed (walk_mem.read).
 *
 * May call: the guest's memory through the walk's reader (walk.h), libc.
 */
#include "config.h"

#include "walk.h"

int be_walk_read_word(struct be_walk_mem *m, uint64_t va, uint64_t *out)
{
	if (!m || !m->read || m->budget == 0)
		return -1;
	m->budget--;
	unsigned char b[8];
	if (m->read(m->ctx, va, b, sizeof b) != (long)sizeof b)
		return -1;
	/* little-endian whatever the host: the guests are x86-64 */
	uint64_t w = 0;
	for (int i = 7; i >= 0; i--)
		w = (w << 8) | b[i];
	*out = w;
	return 0;
}
