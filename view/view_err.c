/*
 * view_err.c - the view library's error value (view_err.h).
 *
 * May call: libc.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "view_err.h"

void view_err_init(struct view_err *e)
{
	if (e) {
		e->say = NULL;
		e->ctx = NULL;
		e->n = 0;
		e->damaged = 0;
		e->damage[0] = '\0';
	}
}

void view_err_say(struct view_err *e, void (*say)(void *ctx, int warning, const char *fmt, va_list ap),
                  void *ctx)
{
	view_err_init(e);
	e->say = say;
	e->ctx = ctx;
}

static void add(struct view_err *e, int warning, const char *fmt, va_list ap)
{
	if (e && e->say) {
		e->say(e->ctx, warning, fmt, ap);
		return;
	}
	if (!e || e->n >= VIEW_ERR_MAX)
		return;
	/* a warning keeps its "warning: " (serve shows it so) */
	char *t = e->m[e->n].text;
	size_t used = warning ? (size_t)snprintf(t, VIEW_ERR_LEN, "warning: ") : 0;
	e->m[e->n].warning = warning;
	vsnprintf(t + used, VIEW_ERR_LEN - used, fmt, ap);
	e->n++;
}

void view_error(struct view_err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add(e, 0, fmt, ap);
	va_end(ap);
}

void view_damage(struct view_err *e, const char *fmt, ...)
{
	va_list ap;
	if (e && !e->damaged++) {
		va_start(ap, fmt);
		vsnprintf(e->damage, sizeof(e->damage), fmt, ap);
		va_end(ap);
	}
	va_start(ap, fmt);
	add(e, 0, fmt, ap);
	va_end(ap);
}

void view_warn(struct view_err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add(e, 1, fmt, ap);
	va_end(ap);
}

const char *view_err_first(const struct view_err *e)
{
	for (size_t i = 0; e && i < e->n; i++)
		if (!e->m[i].warning)
			return e->m[i].text;
	return e && e->n ? e->m[0].text : "";
}
