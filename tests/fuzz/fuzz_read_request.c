/*
 * fuzz_read_request.c - libFuzzer target: the read service's request
 * parser (store/store_wire.c, wire_request_parse), which reads what any
 * member of the store's group sends to <run-dir>/read.sock.  The input is
 * a request's payload.  Asserted, beyond "no crash, no out-of-bounds
 * read": a request that parses is one of the ops, its strings fit their
 * fields whole, its range does not overflow, and it encodes again to the
 * same bytes (nothing was read that the frame did not say), which parse to
 * the same request.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the payload in a buffer of its own size, so that ASan sees a read
	 * past its end */
	uint8_t *p = malloc(size ? size : 1);
	assert(p);
	memcpy(p, data, size);
	struct wire_request rq, again;
	char why[200];
	if (wire_request_parse(p, size, &rq, why, sizeof(why)) != 0) {
		assert(why[0]);
		free(p);
		return 0;
	}
	assert(rq.op > 0 && rq.op < WIRE__OPS);
	assert(strlen(rq.glob) <= WIRE_GLOB_MAX && strlen(rq.name) < sizeof(rq.name));
	assert(rq.off + rq.len >= rq.off || rq.op != WIRE_READ_RANGE);
	assert(rq.state >= -1 && rq.state <= STORE_RUN_CRASHED);
	uint8_t frame[4 + WIRE_REQUEST_MAX];
	size_t n = wire_request_encode(&rq, frame, sizeof(frame));
	assert(n == size + 4 && memcmp(frame + 4, p, size) == 0);
	assert(wire_request_parse(frame + 4, n - 4, &again, why, sizeof(why)) == 0);
	assert(memcmp(&rq, &again, sizeof(rq)) == 0);
	free(p);
	return 0;
}
