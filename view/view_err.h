/*
 * view_err.h - the view library's error value: what went wrong (and what
 * it warned of on the way), kept in order for the front end to show as it
 * shows errors.  profdb prints every message on stderr; profdb serve puts
 * the first error (else the first warning) on its error page.  Kept
 * messages are cut at VIEW_ERR_LEN; said ones are whole.
 *
 * May call: nothing but libc.
 */
#ifndef PROFSVC_VIEW_ERR_H
#define PROFSVC_VIEW_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define VIEW_ERR_MAX 8      /* messages kept; later ones are dropped */
#define VIEW_ERR_LEN 512

struct view_err {
	/* When set (view_err_say), each message goes to say whole as it comes
	 * and nothing is kept: profdb prints them at once, as before there
	 * was a view library; serve keeps them (view_err_init). */
	void (*say)(void *ctx, int warning, const char *fmt, va_list ap);
	void *ctx;
	size_t n;               /* messages kept, in the order they came */
	/* Errors that were the store's data found damaged (view_damage: a chunk
	 * failing its checksum): counted, and the first one's words kept here
	 * whether said or kept, for a page or an exit status to say so rather
	 * than call the data missing. */
	size_t damaged;
	char damage[VIEW_ERR_LEN];
	struct {
		int warning;        /* 0: an error */
		char text[VIEW_ERR_LEN]; /* a warning's starts "warning: " */
	} m[VIEW_ERR_MAX];
};

void view_err_init(struct view_err *e);
void view_err_say(struct view_err *e, void (*say)(void *ctx, int warning, const char *fmt, va_list ap),
                  void *ctx);
/* Adds an error (or a warning) to e; e may be NULL (nobody listens). */
void view_error(struct view_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void view_warn(struct view_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error that is the stored data's damage (the store's STORE_ECORRUPT:
 * its words name the run, the device and the bytes, and say to run
 * profdb check): an error as view_error's, counted in damaged and kept in
 * damage. */
void view_damage(struct view_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The cause: the first error, else the first warning, else "" (of those
 * kept). */
const char *view_err_first(const struct view_err *e);

#endif
