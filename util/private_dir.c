/*
 * private_dir.c - the ownership and mode check for the directories a root
 * daemon creates files in (see private_dir.h).
 *
 * May call: libc only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "private_dir.h"

int private_dir_check(const char *dir, const char *what, char *why, size_t len)
{
	struct stat st;

	if (stat(dir, &st) != 0) {
		snprintf(why, len, "cannot examine %s %s: %s", what, dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "%s %s is not a directory", what, dir);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, len,
		         "%s %s belongs to uid %u, not to this user or root: whoever owns it could swap "
		         "the files made there for links; use a directory of your own (chown it, or "
		         "choose another)",
		         what, dir, (unsigned)st.st_uid);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len,
		         "%s %s can be written by other users (mode %04o): they could swap the files "
		         "made there for links to files this program would then overwrite; make it "
		         "owner-only (chmod go-w %s) or choose another",
		         what, dir, (unsigned)(st.st_mode & 07777), dir);
		return -1;
	}
	return 0;
}
