/*
 * fuzz_fleet_copy.c - libFuzzer target: the fleet listing's reader of
 * PostgreSQL's binary COPY rows (fleet/fleet_list.c), which a catalogue
 * whose rows anyone with write access may have changed answers with.  The
 * input is a sequence of rows, each led by a 16-bit length (the CopyData
 * message libpq hands over); every field of a row that parses is read as a
 * number, as a string into buffers of several sizes, and as a packed
 * listing record (runs.listing, fleet_listing_parse).  Asserted, beyond
 * "no crash, no out-of-bounds read": a parsed row's fields lie inside the
 * row and number at most FLEET_MAX_FIELDS.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	while (size >= 2) {
		size_t len = (size_t)data[0] << 8 | data[1];
		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		/* the row in a buffer of its own size, so that ASan sees a
		 * read past its end */
		unsigned char *row = malloc(len ? len : 1);
		assert(row);
		memcpy(row, data, len);
		struct fleet_fields f;
		int r = fleet_copy_parse(row, (int)len, &f);
		if (r == 0) {
			assert(f.n >= 0 && f.n <= FLEET_MAX_FIELDS);
			for (int i = 0; i < f.n; i++) {
				assert(f.len[i] >= -1);
				if (f.len[i] > 0)
					assert(f.v[i] >= row && f.v[i] + f.len[i] <= row + len);
				char s1[1], s8[8], s300[300];
				volatile int64_t v = fleet_field_i64(&f, i);
				(void)v;
				fleet_field_str(&f, i, s1, sizeof(s1));
				fleet_field_str(&f, i, s8, sizeof(s8));
				fleet_field_str(&f, i, s300, sizeof(s300));
				assert(!s1[0] && strlen(s8) < 8 && strlen(s300) < 300);
				struct store_run run;
				int64_t host_no;
				if (fleet_listing_parse(f.v[i], f.len[i], &host_no, &run) == 0)
					assert(f.len[i] >= FLEET_LISTING_FIXED &&
					       strlen(run.name) < sizeof(run.name) && run.ended_us >= 0);
				else
					assert(f.len[i] < FLEET_LISTING_FIXED || f.v[i][48] > 2);
			}
		}
		free(row);
		data += len;
		size -= len;
	}
	return 0;
}
