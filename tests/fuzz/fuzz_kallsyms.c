/*
 * fuzz_kallsyms.c - libFuzzer target for backend/sampling's reader of a
 * guest kernel's System.map or /proc/kallsyms copy (kallsyms.c).
 * Asserted, beyond "no crash":
 *   - a map it takes holds at most one symbol a line;
 *   - a lookup names a symbol at or below the address, whose own address
 *     names a symbol there; lookups rise with the address;
 *   - whatever it refuses, it says why.
 * Input: the text; the lookups are at addresses taken from it.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "backend/sampling/kallsyms.h"

static uint64_t word_at(const uint8_t *d, size_t n, size_t i)
{
	uint64_t w = 0;
	for (size_t k = 0; k < 8; k++)
		w = w << 8 | (i + k < n ? d[i + k] : 0);
	return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	struct be_ksyms *k = be_ksyms_parse((const char *)data, size, err, sizeof err);
	if (!k) {
		assert(err[0]);
		return 0;
	}
	size_t lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	assert(be_ksyms_count(k) >= 1 && be_ksyms_count(k) <= lines);
	uint64_t prev_addr = 0, prev_start = 0;
	int have_prev = 0;
	for (size_t i = 0; i < size && i < 64 * 8; i += 8) {
		uint64_t a = word_at(data, size, i) | UINT64_C(0xffff800000000000), start = 0, again = 0;
		const char *name = be_ksyms_lookup(k, a, &start);
		(void)be_ksyms_is_text(k, a);
		if (!name)
			continue;
		assert(start <= a && strlen(name) > 0 && strlen(name) <= KSYMS_MAX_LINE);
		assert(be_ksyms_lookup(k, start, &again) && again == start);
		if (have_prev && prev_addr <= a)
			assert(prev_start <= start);
		if (!have_prev || a > prev_addr) {
			prev_addr = a;
			prev_start = start;
			have_prev = 1;
		}
	}
	be_ksyms_free(k);
	return 0;
}
