/*
 * args.c - what profdb serve parses of a request or its command line: run
 * ids in paths, the catalogue's filter (?name=&state=&since=&limit=), a
 * trace timeline's window, columns and thread (?from=&to=&cols=, ?thread=),
 * --listen, and whether a request's Host header names this server.  Kept
 * apart from the server so that a fuzz target
 * (tests/fuzz/fuzz_web_args.c) can call them without one.
 *
 * May call: view/view_format.h, libc (web_internal.h for its types).
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <strings.h>
#include <string.h>

#include "view/view_format.h"
#include "web_internal.h"

int64_t web_run_id(const char *s, size_t len)
{
	int64_t v = 0;
	if (len == 0 || len > 18 || s[0] == '0')
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int web_filter(arg_fn arg, void *req, struct store_run_filter *f, char *err, size_t len)
{
	const char *v;
	uint64_t n;
	memset(f, 0, sizeof(*f));
	f->state = -1;
	f->limit = 500;
	if ((v = arg(req, "state")) && *v) {
		if (view_parse_state(v, &f->state) != 0) {
			snprintf(err, len, "state must be running, complete or crashed");
			return -1;
		}
	}
	if ((v = arg(req, "name")) && *v)
		f->name_glob = v;
	if ((v = arg(req, "since")) && *v && view_parse_time(v, store_now_us(), &f->since_us) != 0) {
		snprintf(err, len, "since must be a UTC time (2026-11-21T08:00) or an age (30m, 2h, 7d)");
		return -1;
	}
	if ((v = arg(req, "limit")) && *v) {
		/* a reply is built whole: a page of 5,000 runs is about 5 MB of
		 * JSON, where 100,000 took 1.16 GB; older runs come page by page
		 * (before=) */
		if (view_parse_u64(v, &n) != 0 || n == 0 || n > WEB_MAX_LIMIT) {
			snprintf(err, len, "limit must be a number from 1 to %d (older runs: before=RUN)", WEB_MAX_LIMIT);
			return -1;
		}
		f->limit = (int64_t)n;
	}
	if ((v = arg(req, "before")) && *v && (f->before_id = web_run_id(v, strlen(v))) < 0) {
		snprintf(err, len, "before must be a run id (the runs older than it)");
		return -1;
	}
	return 0;
}

/* A number the trace names is a u64; UINT64_MAX is mirage-profile's
 * "no thread" (-1 in its int64 fields: a switch to it is the guest
 * blocking), never a thread: the model's "none" too (a thread asked for by
 * it matched every event with no thread or no other thread). */
int web_trace_args(arg_fn arg, void *req, struct web_trace_args *out, char *err, size_t len)
{
	const char *a = arg(req, "from"), *b = arg(req, "to"), *th = arg(req, "thread"), *c = arg(req, "cols");
	uint64_t n;
	memset(out, 0, sizeof(*out));
	out->whole = !a && !b;
	if ((a || b) && (!a || !b || view_parse_u64(a, &out->from) != 0 || view_parse_u64(b, &out->to) != 0 ||
	                 out->from > out->to)) {
		snprintf(err, len, "from= and to= are both ns of the guest's clock, from <= to");
		return -1;
	}
	if (th) {
		if (view_parse_u64(th, &out->thread) != 0 || out->thread == UINT64_MAX) {
			snprintf(err, len, "thread= is a thread id (0 to 18446744073709551614; "
			                   "18446744073709551615 is mirage-profile's \"no thread\")");
			return -1;
		}
		out->has_thread = 1;
	}
	if (c) { /* the page's width in px: a counter's column each */
		if (view_parse_u64(c, &n) != 0 || n < 1 || n > WEB_TRACE_MAX_COLS) {
			snprintf(err, len, "cols= is the columns a counter is drawn in, 1 to %d", WEB_TRACE_MAX_COLS);
			return -1;
		}
		out->cols = (unsigned)n;
	}
	return 0;
}

/* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80", ":8080" (loopback). */
int web_parse_listen(const char *s, struct sockaddr_storage *ss, int *v6, int *loopback)
{
	const char *colon = strrchr(s, ':');
	char host[64];
	uint64_t port;
	if (!colon || view_parse_u64(colon + 1, &port) != 0 || port > 65535)
		return -1;
	size_t hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -1;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*v6 = 1;
		*loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
		return 0;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	if (!*host)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
		return -1;
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	*v6 = 0;
	*loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	return 0;
}


/* Why only these names (a guard against DNS rebinding): a page from
 * another site that makes its own name resolve to this server's address
 * still sends its own name as Host; a browser that reached us by an IP
 * address, localhost (RFC 6761: never resolved elsewhere), this machine's
 * name, or a name the admin allowed sends one of those.  A request with no
 * Host (HTTP/1.0, not a browser's) is let through. */
int web_host_allowed(const char *host, const char *const *allowed, int nallowed, const char *own)
{
	char name[256];
	if (!host)
		return 1;
	size_t len = strlen(host);
	if (len == 0 || len >= sizeof(name))
		return 0;
	const char *end = host + len;
	if (host[0] == '[') {
		/* [v6]:port */
		const char *close = strchr(host, ']');
		if (!close || (close[1] && close[1] != ':'))
			return 0;
		end = close + 1;
	} else {
		const char *colon = strchr(host, ':');
		if (colon && strchr(colon + 1, ':'))
			return 0; /* a bare v6 address or worse */
		if (colon)
			end = colon;
	}
	if (*end == ':') {
		for (const char *p = end + 1; *p; p++)
			if (*p < '0' || *p > '9')
				return 0;
		if (!end[1] || strlen(end + 1) > 5)
			return 0;
	}
	size_t n = (size_t)(end - host);
	memcpy(name, host, n);
	name[n] = '\0';
	if (n && name[n - 1] == '.')
		name[--n] = '\0'; /* "localhost." is localhost */
	if (n == 0)
		return 0;
	unsigned char addr[16];
	if (name[0] == '[') {
		if (n < 3)
			return 0;
		name[n - 1] = '\0';
		return inet_pton(AF_INET6, name + 1, addr) == 1;
	}
	if (inet_pton(AF_INET, name, addr) == 1 || strcasecmp(name, "localhost") == 0)
		return 1;
	if (own && *own && strcasecmp(name, own) == 0)
		return 1;
	for (int i = 0; i < nallowed; i++)
		if (allowed[i] && strcasecmp(name, allowed[i]) == 0)
			return 1;
	return 0;
}
