/*
 * tests/fuzz/fuzz_xlcfg.c - libFuzzer target for backend/toolstack/xlcfg.c: the input
 * is a guest's xl config, read by be_xlcfg_load_buffer (libxlutil's parser,
 * the disk specs, profsvc's checks and the text for xl create).  On success
 * it checks the result's invariants.  What xlcfg says on stderr is noise.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/toolstack/xlcfg.h"

/* libxlutil 4.17's parser loses a string it made when a syntax error
 * follows it (its bison rules have no %destructor); that leak is theirs,
 * not xlcfg's, and xl exits right after.  Suppressed by libxlutil's own
 * functions only, so a config xlcfg forgets to destroy still shows. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:xlu__cfg\n"; /* xlu__cfg_string_mk, xlu__cfg_list_mk, xlu__cfgl_dequote... */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct be_xlcfg c;
	if (be_xlcfg_load_buffer("fuzz.cfg", (const char *)data, size, &c) != 0) {
		/* a failure leaves nothing to free */
		if (c.name || c.nprof || c.xl_text)
			abort();
		return 0;
	}
	if (!c.name || !*c.name)
		abort();
	if (c.nprof < 0 || c.nprof > XLCFG_MAX_PROF)
		abort();
	for (int i = 0; i < c.nprof; i++) {
		if (!c.prof_vdevs[i] || !*c.prof_vdevs[i])
			abort();
		for (int k = 0; k < i; k++)
			if (!strcmp(c.prof_vdevs[k], c.prof_vdevs[i]))
				abort();
	}
	/* handed to xl as a C string: a NUL inside would cut it */
	if (!c.xl_text || c.xl_len < size || strlen(c.xl_text) != c.xl_len)
		abort();
	be_xlcfg_free(&c);
	return 0;
}
