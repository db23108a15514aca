/*
 * ocaml_names.c - OCaml symbols decoded (ocaml_names.h), by the rule
 * ocamlopt encodes them with (OCaml 4: asmcomp's symbol names; perf's
 * OCaml demangler reads them the same way):
 *   caml<Module>__<name>_<stamp>   a function (Hot.crunch)
 *   caml<A>__<B>__<name>_<stamp>   a module in a library (dune's A.B)
 *   $XX                            a byte by its hex code (an operator's)
 *   caml<Module>.<name>_<stamp>    OCaml 5.1 on: '.' as it is
 * The stamp (digits after the last '_') is the compiler's and is dropped.
 *
 * May call: libc.
 */
#include "config.h"

#include <string.h>

#include "ocaml_names.h"

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int be_ocaml_demangle(const char *sym, char *out, size_t cap)
{
	if (!sym || strncmp(sym, "caml", 4) != 0 || !(sym[4] >= 'A' && sym[4] <= 'Z') || cap == 0)
		return 0;
	const char *s = sym + 4, *end = s + strlen(s);
	/* the stamp: "_" and digits at the end */
	const char *u = strrchr(s, '_');
	if (u && u[1] && u + 1 + strspn(u + 1, "0123456789") == end && u > s && u[-1] != '_')
		end = u;
	size_t n = 0;
	while (s < end && n + 1 < cap) {
		if (s[0] == '_' && s + 1 < end && s[1] == '_') {
			out[n++] = '.';
			s += 2;
		} else if (s[0] == '$' && s + 2 < end && hex(s[1]) > 0 && hex(s[2]) >= 0) {
			out[n++] = (char)(hex(s[1]) * 16 + hex(s[2]));
			s += 3;
		} else
			out[n++] = *s++;
	}
	out[n] = '\0';
	return 1;
}
