/*
 * testutil.h - helpers shared by the C tests: checks that count failures,
 * a seeded PRNG (seed printed, PROFSVC_SEED overrides), scratch
 * directories, fixture files.
 */
#ifndef PROFSVC_TESTUTIL_H
#define PROFSVC_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

extern int tu_failures;

void tu_fail(const char *file, int line, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond))                                               \
			tu_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);   \
	} while (0)
/* Stops the test at once (a setup step failed). */
#define REQUIRE(cond, ...)                                                 \
	do {                                                               \
		if (!(cond)) {                                             \
			tu_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);   \
			tu_abort();                                        \
		}                                                          \
	} while (0)
void tu_abort(void) __attribute__((noreturn));

/* A daemon the test started: killed if the test aborts, so no stray
 * xensim or backend outlives a failed test. */
void tu_track_child(int pid);
void tu_untrack_child(int pid);

/* Prints the summary; returns the exit status for main. */
int tu_finish(const char *name);

/* splitmix64 */
uint64_t tu_rand(uint64_t *state);
uint64_t tu_rand_below(uint64_t *state, uint64_t n);
/* PROFSVC_SEED, else the given default; printed either way. */
uint64_t tu_seed(uint64_t dflt);

/* A fresh directory, removed by tu_finish unless PROFSVC_KEEP is set. */
const char *tu_tmpdir(void);
/* tu_tmpdir()/name */
char *tu_path(const char *name);

/* A file's bytes (*len of them) and a NUL after them, so that a text file's
 * copy is a C string; NULL if it cannot be read whole. */
uint8_t *tu_read_file(const char *path, size_t *len);
int tu_write_file(const char *path, const void *data, size_t len);
/* $TOP_SRCDIR (set by make check), else "." */
const char *tu_srcdir(void);
const char *tu_builddir(void);

/* Collects store_read_range/store_extract_profile output (holes as zeros). */
struct tu_buf {
	uint8_t *p;
	size_t len, cap;
};
int tu_buf_cb(void *ctx, uint64_t off, const void *data, size_t len);

/* Opens a store or aborts the test. */
struct store *tu_open_store(const char *path, enum store_open_mode mode);

/* The fixture profiles in tests/data/ghc: NULL-terminated list of paths. */
char **tu_fixture_list(void);
void tu_free_list(char **list);

/* ---- xensim for tests ---------------------------------------------------- */

struct tu_xensim {
	char dir[256];
	int pid;
};
/* Starts <builddir>/xensim/xensim in the foreground in a fresh
 * directory and waits until dom0's sockets answer. */
void tu_xensim_start(struct tu_xensim *x);
/* SIGTERM, then checks that it exited cleanly and removed its sockets. */
void tu_xensim_stop(struct tu_xensim *x);
/* Runs `xensim ARGS --dir DIR`; returns the exit status. */
int tu_xensim_run(struct tu_xensim *x, const char *args, char *out, size_t outlen);
/* Creates a domain; returns its domid. */
uint32_t tu_xensim_create(struct tu_xensim *x, const char *name);

#endif
