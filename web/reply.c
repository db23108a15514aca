/*
 * reply.c - a reply being built (web_internal.h): status, type and body in
 * memory, an error page or JSON error, and JSON made inert for HTML.  The
 * bottom of web/: pages.c, api.c, events.c and server.c call it, it calls
 * none of them.
 *
 * May call: view/view_json.h, profile/markup.h, web_assets.h, jansson.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/markup.h"
#include "../view/view_json.h"
#include "web_assets.h"
#include "web_internal.h"

int reply_open(struct reply *r, int status, const char *type)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
	r->status = status;
	r->type = type;
	r->f = open_memstream(&r->body, &r->len);
	if (!r->f) {
		r->status = 500;
		return -1;
	}
	return 0;
}

int reply_close(struct reply *r)
{
	if (!r->f)
		return -1;
	int bad = ferror(r->f);
	bad |= fclose(r->f) != 0;
	r->f = NULL;
	if (bad) {
		free(r->body);
		r->body = NULL;
		r->len = 0;
		r->status = 500;
		r->type = "text/plain; charset=utf-8";
		return -1;
	}
	return 0;
}

void reply_error(struct reply *r, int status, int json, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->f)
		reply_close(r);
	r->disposition[0] = '\0';
	r->note = NULL;
	if (json) {
		reply_json(r, json_pack("{s:o, s:i}", "error", view_json_guest(msg), "status", status));
		r->status = status;
		return;
	}
	if (reply_open(r, status, "text/html; charset=utf-8") != 0)
		return;
	fprintf(r->f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%d "
	              "\xe2\x80\x94 profsvc</title>\n<style>\n%s</style></head>\n<body>\n<header><h1>"
	              "<a href=\"/\">profsvc</a> \xc2\xb7 error %d</h1></header>\n<main>\n"
	              "<p class=\"error\" id=\"error\">",
	        status, web_css, status);
	markup_text(r->f, msg);
	fputs("</p>\n<p><a href=\"/\">the run catalogue</a></p>\n</main></body></html>\n", r->f);
	reply_close(r);
}

void reply_json(struct reply *r, json_t *v)
{
	if (r->f)
		reply_close(r);
	free(r->body);
	r->body = json_dump_inert(v);
	json_decref(v);
	r->len = r->body ? strlen(r->body) : 0;
	r->type = "application/json";
	if (!r->body) {
		r->status = 500;
		r->type = "text/plain; charset=utf-8";
	} else if (!r->status) {
		r->status = 200;
	}
}

char *json_dump_inert(const json_t *v)
{
	char *s = view_json_dumps(v, JSON_COMPACT); /* guest text as view_json_guest says */
	size_t n = 0, len = s ? strlen(s) : 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '<' || s[i] == '>' || s[i] == '&';
	if (!n)
		return s;
	char *o = malloc(len + 5 * n + 1), *p = o;
	if (!o) {
		free(s);
		return NULL;
	}
	/* these three only ever occur inside strings in JSON */
	for (size_t i = 0; i < len; i++)
		p += s[i] == '<' ? sprintf(p, "\\u003c") : s[i] == '>' ? sprintf(p, "\\u003e")
		   : s[i] == '&' ? sprintf(p, "\\u0026") : (*p = s[i], 1);
	*p = '\0';
	free(s);
	return o;
}
