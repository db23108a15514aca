/*
 * fuzz_web_args.c - libFuzzer target for what profdb serve parses itself
 * (web/args.c; HTTP is libmicrohttpd's): the input is a query string,
 * "key=value&key=value...", as a request would carry it.  For any bytes:
 *   - web_run_id accepts exactly the decimal numbers 1..10^18-1 without a
 *     leading zero, and gives back the number written;
 *   - web_filter either says why it refuses, or gives a state of -1..2 and
 *     a limit of 1..WEB_MAX_LIMIT, with the name pointing at the request's value;
 *   - web_trace_args either says why it refuses, or gives a window with
 *     from <= to (or the whole trace when neither is given), a thread
 *     that is never UINT64_MAX, mirage-profile's "no thread", and columns
 *     of 1..WEB_TRACE_MAX_COLS when asked;
 *   - web_parse_listen accepts only an address it can give back, with a
 *     port of 0..65535, and calls loopback only 127/8 and ::1;
 *   - web_host_allowed answers any Host; a name allowed by --allow-host
 *     is answered, with a port or not, and a name it was not given (that
 *     is no address and not localhost) is refused.
 */
#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "store/store.h"
#include "web/web_internal.h"

struct query {
	char *keys[16], *values[16];
	int n;
};

static const char *lookup(void *req, const char *key)
{
	struct query *q = req;
	for (int i = 0; i < q->n; i++)
		if (strcmp(q->keys[i], key) == 0)
			return q->values[i];
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0'; /* a NUL inside ends it, as in a C string from the library */
	struct query q = {.n = 0};
	for (char *save = NULL, *kv = strtok_r(text, "&", &save); kv && q.n < 16; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		q.keys[q.n] = kv;
		q.values[q.n] = eq ? (*eq = '\0', eq + 1) : kv + strlen(kv);
		q.n++;
	}
	for (int i = 0; i < q.n; i++) {
		const char *v = q.values[i];
		int64_t id = web_run_id(v, strlen(v));
		if (id >= 0) {
			char back[32];
			snprintf(back, sizeof(back), "%" PRId64, id);
			assert(id > 0 && strcmp(back, v) == 0);
		}
	}
	struct store_run_filter f;
	char err[300];
	if (web_filter(lookup, &q, &f, err, sizeof(err)) == 0) {
		assert(f.state >= -1 && f.state <= 2);
		assert(f.limit >= 1 && f.limit <= WEB_MAX_LIMIT && f.before_id >= 0);
		assert(!f.name_glob || f.name_glob == lookup(&q, "name"));
	} else {
		assert(err[0] != '\0');
	}
	struct web_trace_args ta;
	if (web_trace_args(lookup, &q, &ta, err, sizeof(err)) == 0) {
		assert(ta.whole ? !lookup(&q, "from") && !lookup(&q, "to") : ta.from <= ta.to);
		assert(ta.has_thread == (lookup(&q, "thread") != NULL) && (!ta.has_thread || ta.thread != UINT64_MAX));
		assert(ta.cols <= WEB_TRACE_MAX_COLS && (ta.cols >= 1) == (lookup(&q, "cols") != NULL));
	} else {
		assert(err[0] != '\0');
	}
	struct sockaddr_storage ss;
	int v6 = -1, loopback = -1;
	if (q.n && web_parse_listen(q.values[0], &ss, &v6, &loopback) == 0) {
		char host[64];
		if (v6) {
			const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
			assert(a->sin6_family == AF_INET6 && inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host)));
			assert(loopback == IN6_IS_ADDR_LOOPBACK(&a->sin6_addr));
		} else {
			const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
			assert(a->sin_family == AF_INET && inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host)));
			assert(loopback == ((ntohl(a->sin_addr.s_addr) >> 24) == 127));
		}
	}
	for (int i = 0; i < q.n; i++) {
		const char *h = q.values[i], *allowed[1] = {h};
		(void)web_host_allowed(h, NULL, 0, "own-name");
		int plain = *h && strlen(h) < 200 && h[strlen(h) - 1] != '.';
		for (const char *p = h; *p && plain; p++)
			plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.';
		if (plain) {
			char with_port[260];
			snprintf(with_port, sizeof(with_port), "%s:8080", h);
			assert(web_host_allowed(h, allowed, 1, NULL) && web_host_allowed(with_port, allowed, 1, NULL));
			/* only letters: no address; not localhost: refused when not allowed */
			int letters = 1;
			for (const char *p = h; *p; p++)
				letters &= *p >= 'a' && *p <= 'z';
			if (letters && strcmp(h, "localhost") != 0)
				assert(!web_host_allowed(h, NULL, 0, NULL));
		}
	}
	free(text);
	return 0;
}
