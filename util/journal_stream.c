/*
 * journal_stream.c - is stderr the journal's stream (journal_stream.h).
 *
 * May call: libc only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "journal_stream.h"

int journal_stream_is_stderr(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* The documented test: a stderr redirected since (a shell's 2>file
	 * inside the unit) is no longer the journal's. */
	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}
