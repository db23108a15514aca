/*
 * test_tu_check.c - the test library's own file helper (tu_check.c): what
 * tu_read_file returns ends with a NUL, whatever malloc's chunk held
 * before, so that the tests searching a file's copy as a string (strstr,
 * strchr, %s) never read past its end.  Unterminated, test_faults' check
 * of the backend's log once took a recycled chunk's header for a line of
 * binary bytes the backend had written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A chunk of malloc's, the size tu_read_file asks for a file of len
 * bytes, filled with bytes that are not NUL and given back: the next
 * allocation of that size is likely to be it (glibc's caches; under ASan
 * a fresh one is filled with 0xbe anyway).  Through volatile pointers:
 * the compiler may not drop the pair. */
static void dirty_heap(size_t len)
{
	void *(*volatile alloc)(size_t) = malloc;
	void (*volatile release)(void *) = free;
	unsigned char *p = alloc(len + 1);
	if (p) {
		memset(p, 0xb1, len + 1);
		release(p);
	}
}

/* A text file of len bytes (a multiple of 40): lines of 40 bytes that
 * start as the backend's log lines do. */
static char *text_of(size_t len)
{
	char *t = malloc(len + 1);
	REQUIRE(t, "malloc");
	for (size_t i = 0; i < len; i++) {
		size_t k = i % 40;
		t[i] = k == 39 ? '\n' : k < 16 ? "profile-backend "[k] : 'x';
	}
	t[len] = '\0';
	return t;
}

static void read_case(size_t len)
{
	char *path = tu_path("text");
	char *want = text_of(len);
	REQUIRE(tu_write_file(path, want, len) == 0, "write %s", path);
	dirty_heap(len);
	size_t got = 12345;
	char *buf = (char *)tu_read_file(path, &got);
	REQUIRE(buf, "read %s", path);
	CHECK(got == len && memcmp(buf, want, len) == 0, "%zu bytes: read %zu, or other bytes", len, got);
	CHECK(buf[len] == '\0', "%zu bytes: no NUL after them (0x%02x)", len, (unsigned char)buf[len]);
	/* what the log check does: line by line, as strings */
	int lines = 0, foreign = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL, lines++)
		foreign += strncmp(l, "profile-backend ", 16) != 0;
	CHECK(foreign == 0 && lines == (int)(len / 40),
	      "%zu bytes: %d lines, %d not the file's (read past its end)", len, lines, foreign);
	free(buf);
	free(want);
	free(path);
}

int main(void)
{
	/* the tcache's sizes, the small bins', the large ones' (the CI
	 * failure's log was tens of KiB), one past malloc's mmap threshold */
	static const size_t sizes[] = {40, 80, 120, 1000, 4000, 4080, 20000, 72080, 131080};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		read_case(sizes[i]);
	/* empty: a string too */
	char *path = tu_path("empty");
	REQUIRE(tu_write_file(path, "", 0) == 0, "write %s", path);
	dirty_heap(0);
	size_t got = 1;
	char *buf = (char *)tu_read_file(path, &got);
	CHECK(buf && got == 0 && buf[0] == '\0', "an empty file: %zu bytes, not an empty string", got);
	free(buf);
	free(path);
	return tu_finish("test_tu_check");
}
