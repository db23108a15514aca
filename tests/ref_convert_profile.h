/*
 * ref_convert_profile.h - an independent re-implementation, for tests only,
 * of what HaLVM's convert-profile does with a raw profile disk image.  It
 * shares no code with the store so the two can check each other.
 */
#ifndef PROFSVC_REF_CONVERT_PROFILE_H
#define PROFSVC_REF_CONVERT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

enum ref_result {
	REF_OK,
	REF_NOT_CLOSED,   /* extracted, with "Profile not cleanly closed" */
	REF_CORRUPT,      /* "Header block corrupted" */
	REF_SHORT,        /* the image is smaller than the size claims */
};

/* Extracts from a raw image with word_size-byte words (8 on x86_64). On
 * REF_OK/REF_NOT_CLOSED, *out (malloc'd) and *outlen hold the file. */
enum ref_result ref_convert_profile(const uint8_t *img, size_t imglen, int word_size,
                                    uint8_t **out, size_t *outlen);

#endif
