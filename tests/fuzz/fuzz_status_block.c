/*
 * fuzz_status_block.c - libFuzzer target: the HaLVM status-block decoder
 * and majority salvage (profile/disk/status_block.c) on any 512 bytes.
 * Asserted: a block decoded VALID re-encodes to exactly the same bytes
 * (the decoder accepts nothing the writer would not produce), EMPTY means
 * all zeros, and a majority never claims more votes than copies.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "profile/disk/status_block.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t blk[STATUS_BLOCK_SIZE] = {0}, again[STATUS_BLOCK_SIZE];
	memcpy(blk, data, size < sizeof(blk) ? size : sizeof(blk));

	struct status_block sb;
	enum status_block_result r = status_block_decode(blk, &sb);
	switch (r) {
	case STATUS_BLOCK_VALID:
		assert(sb.word_size == 8 || sb.word_size == 4);
		status_block_encode(again, sb.size, sb.closed, sb.word_size);
		assert(memcmp(again, blk, sizeof(blk)) == 0);
		break;
	case STATUS_BLOCK_EMPTY:
		for (size_t i = 0; i < sizeof(blk); i++)
			assert(blk[i] == 0);
		break;
	case STATUS_BLOCK_CORRUPT: {
		struct status_block m;
		int total = 0;
		int votes = status_block_majority(blk, &m, &total);
		assert(votes >= 0 && votes <= total);
		break;
	}
	default:
		assert(0);
	}
	/* And the writer's own blocks always decode to what was written. */
	if (size >= 9) {
		uint64_t v = 0;
		for (int i = 7; i >= 0; i--)
			v = v << 8 | data[i];
		int ws = data[8] & 1 ? 4 : 8;
		if (ws == 4)
			v &= 0xffffffffu;
		status_block_encode(again, v, data[8] >> 1, ws);
		struct status_block d;
		if (v || data[8] >> 1) {
			assert(status_block_decode(again, &d) == STATUS_BLOCK_VALID);
			assert(d.size == v && d.closed == (uint64_t)(data[8] >> 1));
		}
	}
	return 0;
}
