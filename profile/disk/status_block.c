/*
 * status_block.c - encode/decode/salvage of the HaLVM status block.
 *
 * The decoder is deliberately as strict as convert-profile: one mismatching
 * copy makes the block corrupt.  The XOR copies exist precisely so that a
 * torn 512-byte write (or stale bytes) is detected, and profdb must refuse
 * what the old tool refused unless the user asks for --salvage.
 *
 * May call: libc.
 */
#include "config.h"

#include <string.h>

#include "status_block.h"

static uint64_t load_word(const uint8_t *p, int ws)
{
	uint64_t v = 0;
	for (int i = ws - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void store_word(uint8_t *p, uint64_t v, int ws)
{
	for (int i = 0; i < ws; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static int layout_valid(const uint8_t *blk, int ws, struct status_block *out)
{
	int nwords = STATUS_BLOCK_SIZE / ws;
	uint64_t mask = ws == 8 ? UINT64_MAX : UINT32_MAX;
	uint64_t size = load_word(blk, ws), closed = load_word(blk + ws, ws);

	for (int i = 2; i + 1 < nwords; i += 2) {
		if (load_word(blk + (size_t)i * ws, ws) != ((size ^ (uint64_t)i) & mask) ||
		    load_word(blk + (size_t)(i + 1) * ws, ws) != ((closed ^ (uint64_t)i) & mask))
			return 0;
	}
	out->size = size;
	out->closed = closed;
	out->word_size = ws;
	return 1;
}

enum status_block_result status_block_decode(const uint8_t blk[STATUS_BLOCK_SIZE],
                                             struct status_block *out)
{
	memset(out, 0, sizeof(*out));
	/* 8-byte words first: a 64-bit block never passes the 4-byte check
	 * (its word 2 would have to equal closed ^ 2 and size ^ 2 at once). */
	if (layout_valid(blk, 8, out) || layout_valid(blk, 4, out))
		return STATUS_BLOCK_VALID;
	for (int i = 0; i < STATUS_BLOCK_SIZE; i++)
		if (blk[i])
			return STATUS_BLOCK_CORRUPT;
	return STATUS_BLOCK_EMPTY;
}

void status_block_encode(uint8_t blk[STATUS_BLOCK_SIZE], uint64_t size, uint64_t closed,
                         int word_size)
{
	int nwords = STATUS_BLOCK_SIZE / word_size;

	store_word(blk, size, word_size);
	store_word(blk + word_size, closed, word_size);
	for (int i = 2; i + 1 < nwords; i += 2) {
		store_word(blk + (size_t)i * word_size, size ^ (uint64_t)i, word_size);
		store_word(blk + (size_t)(i + 1) * word_size, closed ^ (uint64_t)i, word_size);
	}
}

/* Majority vote within one layout: every copy yields a candidate pair. */
static int layout_majority(const uint8_t *blk, int ws, struct status_block *best, int *total)
{
	enum { MAXC = STATUS_BLOCK_SIZE / 4 / 2 };
	uint64_t cs[MAXC], cc[MAXC];
	int n = 0, nwords = STATUS_BLOCK_SIZE / ws, best_votes = 0;
	uint64_t mask = ws == 8 ? UINT64_MAX : UINT32_MAX;

	for (int i = 0; i + 1 < nwords; i += 2) {
		cs[n] = (load_word(blk + (size_t)i * ws, ws) ^ (uint64_t)i) & mask;
		cc[n] = (load_word(blk + (size_t)(i + 1) * ws, ws) ^ (uint64_t)i) & mask;
		n++;
	}
	for (int a = 0; a < n; a++) {
		int votes = 0;
		for (int b = 0; b < n; b++)
			votes += cs[a] == cs[b] && cc[a] == cc[b];
		if (votes > best_votes) {
			best_votes = votes;
			best->size = cs[a];
			best->closed = cc[a];
			best->word_size = ws;
		}
	}
	*total = n;
	return best_votes;
}

int status_block_majority(const uint8_t blk[STATUS_BLOCK_SIZE], struct status_block *out,
                          int *total)
{
	struct status_block b8 = {0}, b4 = {0};
	int t8, t4;
	int v8 = layout_majority(blk, 8, &b8, &t8);
	int v4 = layout_majority(blk, 4, &b4, &t4);

	/* Compare as fractions of each layout's copies. */
	if ((int64_t)v8 * t4 >= (int64_t)v4 * t8) {
		*out = b8;
		*total = t8;
		return v8;
	}
	*out = b4;
	*total = t4;
	return v4;
}
