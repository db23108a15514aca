/*
 * kallsyms.h - a guest kernel's symbols from a System.map or a copy of
 * /proc/kallsyms (kallsyms.c): the nm-style text "ADDRESS TYPE NAME
 * [\t[MODULE]]", one symbol a line.  A PV Linux guest's kernel image
 * (a bzImage) carries no symbol table, so its frames are named from this
 * file, the way Xen's xenctx names them with its -s option: the symbol at
 * or below an address, inside the kernel's text.  The file is dom0's,
 * but it is still read with care: every line bounded, the whole bounded,
 * a damaged file an error, never a crash.
 */
#ifndef PROFSVC_KALLSYMS_H
#define PROFSVC_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#define KSYMS_MAX_FILE (256u << 20) /* bytes read, at most */
#define KSYMS_MAX_SYMS (8u << 20)   /* symbols kept, at most */
#define KSYMS_MAX_LINE 1024u        /* a longer line is skipped */

/* Addresses from here up are a 64-bit guest kernel's (the upper half). */
#define KSYMS_KERNEL_BASE UINT64_C(0xffff800000000000)

struct be_ksyms;

/* From text (len bytes): NULL with a message when it holds no symbol, no
 * _stext below _etext (not a kernel's map), or memory runs out. */
struct be_ksyms *be_ksyms_parse(const char *text, size_t len, char *err, size_t errlen);
/* From a file: NULL with a message (no such file, too big, no symbol). */
struct be_ksyms *be_ksyms_open(const char *path, char *err, size_t errlen);
void be_ksyms_free(struct be_ksyms *k);
size_t be_ksyms_count(const struct be_ksyms *k);

/* 1 when addr lies in the kernel's text: _stext.._etext,
 * _sinittext.._einittext or the hypercall page (bounds included, as
 * xenctx's). */
int be_ksyms_is_text(const struct be_ksyms *k, uint64_t addr);
/* The symbol that holds addr: one that starts there (the first the file
 * lists), else the last one the file lists at the highest address below
 * it; NULL when none lies at or below it.  *start gets its address. */
const char *be_ksyms_lookup(const struct be_ksyms *k, uint64_t addr, uint64_t *start);

#endif
