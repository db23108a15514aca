/*
 * private_dir.h - is a directory safe for a root daemon to create files
 * in?  Not if another user can write it: that user could put a link where
 * the daemon is about to create a file, and root would write through it.
 */
#ifndef PROFSVC_PRIVATE_DIR_H
#define PROFSVC_PRIVATE_DIR_H

#include <stddef.h>

/* 0 if dir is a directory owned by root or by us and writable by nobody
 * else; otherwise -1 with a sentence in why saying what is wrong and how
 * to fix it (what: "the database's directory", "--run-dir", ...). */
int private_dir_check(const char *dir, const char *what, char *why, size_t len);

#endif
