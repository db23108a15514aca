/*
 * ref_convert_profile.c - test-only model of convert-profile: word 0 is the
 * size, word 1 the done flag, every later pair must equal them XOR its
 * index, the file is `size` bytes from offset 512.  Written from the
 * protocol notes, independently of profile/disk/status_block.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ref_convert_profile.h"

static uint64_t word_at(const uint8_t *img, int ws, int idx)
{
	if (ws == 8) {
		uint64_t v;
		memcpy(&v, img + idx * 8, 8); /* x86_64 is little-endian */
		return v;
	}
	uint32_t v;
	memcpy(&v, img + idx * 4, 4);
	return v;
}

enum ref_result ref_convert_profile(const uint8_t *img, size_t imglen, int ws, uint8_t **out,
                                    size_t *outlen)
{
	uint64_t size, done, mask = ws == 8 ? ~0ULL : 0xffffffffULL;

	*out = NULL;
	*outlen = 0;
	if (imglen < 512)
		return REF_SHORT;
	size = word_at(img, ws, 0);
	done = word_at(img, ws, 1);
	for (int i = 2; i < 512 / ws; i += 2)
		if (word_at(img, ws, i) != ((size ^ (uint64_t)i) & mask) ||
		    word_at(img, ws, i + 1) != ((done ^ (uint64_t)i) & mask))
			return REF_CORRUPT;
	if (size > imglen - 512)
		return REF_SHORT;
	*out = malloc(size ? size : 1);
	memcpy(*out, img + 512, size);
	*outlen = size;
	return done ? REF_OK : REF_NOT_CLOSED;
}
