/*
 * test_status_block.c - the HaLVM status block decoder: clean and unclosed
 * blocks in both word sizes, every single corrupted copy, empty blocks,
 * majority salvage, and agreement with the independent reference reader on
 * random damage.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ref_convert_profile.h"
#include "profile/disk/status_block.h"
#include "testutil.h"

static void test_roundtrip(void)
{
	static const uint64_t sizes[] = {0, 1, 511, 512, 4096, 123456789, 0xffffffffULL,
	                                 0x100000000ULL, 0x7fffffffffffffffULL};
	uint8_t blk[STATUS_BLOCK_SIZE];
	struct status_block sb;

	for (int ws = 4; ws <= 8; ws += 4)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int closed = 0; closed <= 1; closed++) {
				uint64_t size = ws == 4 ? sizes[i] & 0xffffffffu : sizes[i];
				status_block_encode(blk, size, (uint64_t)closed, ws);
				int r = status_block_decode(blk, &sb);
				/* size 0 + not closed in 4-byte words is all zero
				 * except the XOR copies: still a valid block. */
				CHECK(r == STATUS_BLOCK_VALID, "ws %d size %llu closed %d: result %d", ws,
				      (unsigned long long)size, closed, r);
				CHECK(sb.size == size && sb.closed == (uint64_t)closed && sb.word_size == ws,
				      "ws %d size %llu closed %d decoded as %llu/%llu/%d", ws,
				      (unsigned long long)size, closed, (unsigned long long)sb.size,
				      (unsigned long long)sb.closed, sb.word_size);
				uint8_t *out;
				size_t outlen;
				uint8_t img[STATUS_BLOCK_SIZE + 16] = {0};
				memcpy(img, blk, STATUS_BLOCK_SIZE);
				enum ref_result rr = ref_convert_profile(img, sizeof(img), ws, &out, &outlen);
				if (size <= 16)
					CHECK(rr == (closed ? REF_OK : REF_NOT_CLOSED), "ref reader says %d", rr);
				else
					CHECK(rr == REF_SHORT, "ref reader says %d", rr);
				free(out);
			}
}

static void test_each_copy_corrupt(void)
{
	uint8_t blk[STATUS_BLOCK_SIZE];
	struct status_block sb;

	for (int ws = 4; ws <= 8; ws += 4)
		for (int byte = 0; byte < STATUS_BLOCK_SIZE; byte++) {
			status_block_encode(blk, 40960 + 77, 0, ws);
			blk[byte] ^= 0x10;
			/* Any changed byte, in word 0/1 or in a copy, is caught. */
			int r = status_block_decode(blk, &sb);
			CHECK(r == STATUS_BLOCK_CORRUPT, "ws %d byte %d: %d", ws, byte, r);
			/* One damaged copy: the majority still knows the truth. */
			int total, votes = status_block_majority(blk, &sb, &total);
			CHECK(votes * 2 > total && sb.size == 40960 + 77 && sb.closed == 0 &&
			              sb.word_size == ws,
			      "ws %d byte %d: majority %d/%d size %llu ws %d", ws, byte, votes, total,
			      (unsigned long long)sb.size, sb.word_size);
		}
}

static void test_empty_and_garbage(void)
{
	uint8_t blk[STATUS_BLOCK_SIZE] = {0};
	struct status_block sb;
	uint64_t rng = tu_seed(0x5b10c);

	CHECK(status_block_decode(blk, &sb) == STATUS_BLOCK_EMPTY, "zero block");
	memset(blk, 'x', sizeof(blk));
	CHECK(status_block_decode(blk, &sb) == STATUS_BLOCK_CORRUPT, "text block");
	/* A torn write: the first half new, the second half old. */
	uint8_t old[STATUS_BLOCK_SIZE];
	status_block_encode(old, 4096, 0, 8);
	status_block_encode(blk, 8192, 0, 8);
	memcpy(blk + 256, old + 256, 256);
	CHECK(status_block_decode(blk, &sb) == STATUS_BLOCK_CORRUPT, "torn block accepted");

	enum { IMG_LEN = STATUS_BLOCK_SIZE + (1 << 20) };
	uint8_t *img = calloc(1, IMG_LEN);
	REQUIRE(img, "out of memory");
	/* Random damage: the store's decoder and the reference must agree on
	 * accept/refuse and on the size. */
	for (int iter = 0; iter < 20000; iter++) {
		int ws = tu_rand(&rng) & 1 ? 8 : 4;
		uint64_t size = tu_rand_below(&rng, 1 << 20);
		status_block_encode(blk, size, tu_rand(&rng) & 1, ws);
		int flips = (int)tu_rand_below(&rng, 3);
		for (int f = 0; f < flips; f++)
			blk[tu_rand_below(&rng, STATUS_BLOCK_SIZE)] ^= (uint8_t)(1 + tu_rand_below(&rng, 255));
		memcpy(img, blk, STATUS_BLOCK_SIZE);
		uint8_t *out;
		size_t outlen;
		enum ref_result rr = ref_convert_profile(img, IMG_LEN, ws, &out, &outlen);
		int r = status_block_decode(blk, &sb);
		int ref_ok = rr == REF_OK || rr == REF_NOT_CLOSED;
		/* Our decoder tries both layouts; the reference only ws. */
		if (r == STATUS_BLOCK_VALID && sb.word_size == ws)
			CHECK(ref_ok && outlen == sb.size, "iter %d: decoder valid, ref %d", iter, rr);
		else if (r != STATUS_BLOCK_VALID)
			CHECK(!ref_ok, "iter %d: decoder refuses, ref accepts", iter);
		free(out);
	}
	free(img);
}

static void test_layouts_distinct(void)
{
	uint8_t blk[STATUS_BLOCK_SIZE];
	struct status_block sb;

	/* A 4-byte block is never read as 8-byte, and vice versa. */
	status_block_encode(blk, 1000, 1, 4);
	CHECK(status_block_decode(blk, &sb) == STATUS_BLOCK_VALID && sb.word_size == 4, "4-byte");
	status_block_encode(blk, 1000, 1, 8);
	CHECK(status_block_decode(blk, &sb) == STATUS_BLOCK_VALID && sb.word_size == 8, "8-byte");
}

int main(void)
{
	test_roundtrip();
	test_each_copy_corrupt();
	test_empty_and_garbage();
	test_layouts_distinct();
	return tu_finish("test_status_block");
}
