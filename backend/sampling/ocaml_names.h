/*
 * ocaml_names.h - OCaml native code's symbols as OCaml names them
 * (ocaml_names.c): camlHot__crunch_81 is Hot.crunch.
 */
#ifndef PROFSVC_OCAML_NAMES_H
#define PROFSVC_OCAML_NAMES_H

#include <stddef.h>

/* 1 and the name in out (cut to cap, NUL-ended) when sym is an OCaml
 * function's symbol ("caml" and a capital: the runtime's caml_* are C and
 * stay as they are), else 0 and out untouched. */
int be_ocaml_demangle(const char *sym, char *out, size_t cap);

#endif
