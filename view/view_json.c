/*
 * view_json.c - the shared JSON objects of profdb and profdb serve (see
 * view_json.h; every field is documented in docs/json.md).
 *
 * May call: store/store.h, util/safe_text.h, view_format.h, jansson.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/safe_text.h"
#include "view_format.h"
#include "view_json.h"

/* Jansson writes a string's characters as they are, '"', '\\' and C0
 * controls as JSON escapes, and cannot carry a byte that is not UTF-8.  A
 * guest string goes to it with every character the document must spell
 * as \uXXXX instead (DEL, C1 and bidi controls: the code point; a byte
 * that is not UTF-8: U+DC00 + the byte) replaced by a NUL and the four hex
 * digits.  Jansson writes the NUL as \u0000, which no guest string holds
 * (they are C strings), and view_json_unmark turns \u0000XXXX into
 * \uXXXX.  The marked form is made from safe_text_json_bytes's, so the
 * two agree on every character. */
json_t *view_json_guest(const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = 0;

	while (u[n] >= 0x20 && u[n] < 0x7f)
		n++;
	if (!u[n]) /* printable ASCII (most names): as it is */
		return json_stringn_nocheck((const char *)u, n);

	char *doc = NULL, *buf = NULL;
	size_t len = 0, o = 0;
	FILE *m = open_memstream(&doc, &len);
	if (!m)
		return NULL;
	safe_text_json_bytes(m, (const char *)u);
	if (fclose(m) != 0 || !doc || len < 2 || !(buf = malloc(len))) {
		free(doc);
		return NULL;
	}
	/* doc is "...": raw characters, \", \\ and \uXXXX only */
	for (size_t i = 1; i + 1 < len; i++) {
		if (doc[i] != '\\') {
			buf[o++] = doc[i];
		} else if (doc[i + 1] != 'u') {
			buf[o++] = doc[++i]; /* '"' or '\\' */
		} else {
			char hex[5] = {doc[i + 2], doc[i + 3], doc[i + 4], doc[i + 5], '\0'};
			unsigned long cp = strtoul(hex, NULL, 16);
			if (cp < 0x20) {
				buf[o++] = (char)cp; /* jansson escapes a C0 control itself */
			} else {
				buf[o++] = '\0';
				memcpy(buf + o, doc + i + 2, 4);
				o += 4;
			}
			i += 5;
		}
	}
	json_t *v = json_stringn_nocheck(buf, o);
	free(buf);
	free(doc);
	return v;
}

size_t view_json_unmark(char *s, size_t len)
{
	char *b = memchr(s, '\\', len);
	size_t o;

	if (!b)
		return len;
	o = (size_t)(b - s);
	for (size_t i = o; i < len;) {
		if (s[i] == '\\' && i + 10 <= len && s[i + 1] == 'u' && memcmp(s + i + 2, "0000", 4) == 0) {
			s[o++] = '\\'; /* \u0000XXXX: a marked character, \uXXXX */
			s[o++] = 'u';
			memmove(s + o, s + i + 6, 4);
			o += 4;
			i += 10;
		} else if (s[i] == '\\' && i + 1 < len) {
			s[o++] = s[i++]; /* any other escape: both characters */
			s[o++] = s[i++];
		} else {
			s[o++] = s[i++];
		}
	}
	if (o < len)
		s[o] = '\0';
	return o;
}

char *view_json_dumps(const json_t *v, size_t flags)
{
	char *s = v ? json_dumps(v, flags) : NULL;
	if (s)
		view_json_unmark(s, strlen(s));
	return s;
}

json_t *view_json_bytes_or_null(int64_t b)
{
	return b < 0 ? json_null() : json_integer(b);
}

static json_t *time_or_null(int64_t us)
{
	char t[32];
	if (us <= 0)
		return json_null();
	view_format_time(us, t, sizeof(t));
	return json_string(t);
}

json_t *view_json_run(const struct store_run *r, int64_t now_us)
{
	json_t *o = json_object();

	/* json_object_set_new steals even on failure: no leak on ENOMEM */
	json_object_set_new(o, "run_id", json_integer(r->run_id));
	json_object_set_new(o, "name", view_json_guest(r->name));
	json_object_set_new(o, "domid", r->domid >= 0 ? json_integer(r->domid) : json_null());
	json_object_set_new(o, "uuid", r->uuid[0] ? view_json_guest(r->uuid) : json_null());
	json_object_set_new(o, "state", json_string(store_run_state_name(r->state)));
	json_object_set_new(o, "source", json_string(strcmp(r->source, "import") == 0 ? "import" : "capture"));
	json_object_set_new(o, "started", time_or_null(r->started_us));
	json_object_set_new(o, "started_us", json_integer(r->started_us));
	json_object_set_new(o, "ended", time_or_null(r->ended_us));
	json_object_set_new(o, "ended_us", r->ended_us ? json_integer(r->ended_us) : json_null());
	/* a running run whose backend is gone has no known end: no duration */
	int64_t d = view_run_duration_us(r, now_us);
	json_object_set_new(o, "duration_us", d < 0 ? json_null() : json_integer(d));
	/* null once the run ended: no backend is needed any more */
	json_object_set_new(o, "backend_alive", r->state != STORE_RUN_RUNNING ? json_null()
	                    : json_boolean(!r->backend_gone));
	json_object_set_new(o, "end_reason", r->end_reason[0] ? view_json_guest(r->end_reason) : json_null());
	json_object_set_new(o, "host", r->host[0] ? view_json_guest(r->host) : json_null());
	json_object_set_new(o, "backend_version",
	                    r->backend_version[0] ? view_json_guest(r->backend_version) : json_null());
	json_object_set_new(o, "prof_bytes", view_json_bytes_or_null(r->prof_bytes));
	json_object_set_new(o, "hp_bytes", view_json_bytes_or_null(r->hp_bytes));
	json_object_set_new(o, "eventlog_bytes", view_json_bytes_or_null(r->eventlog_bytes));
	json_object_set_new(o, "trace_bytes", view_json_bytes_or_null(r->trace_bytes));
	json_object_set_new(o, "trace_packets", view_json_bytes_or_null(r->trace_bytes >= 0 ? r->trace_packets : -1));
	json_object_set_new(o, "trace_events", view_json_bytes_or_null(r->trace_bytes >= 0 ? r->trace_events : -1));
	json_object_set_new(o, "samples_bytes", view_json_bytes_or_null(r->samples_bytes));
	json_object_set_new(o, "samples", view_json_bytes_or_null(r->samples_bytes >= 0 ? r->samples : -1));
	/* what it holds, by kind (the catalogue's HOLDS) */
	json_t *holds = json_array();
	static const char *const kinds[] = {"prof", "hp", "eventlog", "trace", "samples"};
	const int64_t has[] = {r->prof_bytes, r->hp_bytes, r->eventlog_bytes, r->trace_bytes, r->samples_bytes};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (has[i] >= 0)
			json_array_append_new(holds, json_string(kinds[i]));
	json_object_set_new(o, "holds", holds);
	json_object_set_new(o, "ndevices", json_integer(r->ndevices));
	return o;
}

json_t *view_json_status(const struct store_device_info *d)
{
	static const char *const st[] = {"none", "ok", "corrupt"};
	int ok = d->status == STORE_STATUS_OK;

	if (!store_role_is_profile(d->role))
		return json_null();
	return json_pack("{s:s, s:o, s:o, s:o, s:o}", "block",
	                 (unsigned)d->status < 3 ? st[d->status] : "corrupt", "file_size",
	                 ok ? json_integer(d->file_size) : json_null(), "closed",
	                 ok ? json_boolean(d->closed) : json_null(), "word_size",
	                 ok ? json_integer(d->word_size) : json_null(), "updated_us",
	                 d->status != STORE_STATUS_NONE && d->status_updated_us > 0
	                         ? json_integer(d->status_updated_us)
	                         : json_null());
}

json_t *view_json_device(const struct store_device_info *d)
{
	json_t *o = json_object();

	json_object_set_new(o, "device_id", json_integer(d->device_id));
	json_object_set_new(o, "run_id", json_integer(d->run_id));
	json_object_set_new(o, "vdev", view_json_guest(d->vdev));
	json_object_set_new(o, "devid", json_integer(d->devid));
	json_object_set_new(o, "role", json_string(store_role_name(d->role)));
	json_object_set_new(o, "capacity_sectors", json_integer((json_int_t)d->capacity_sectors));
	json_object_set_new(o, "written_bytes", json_integer((json_int_t)store_device_written_bytes(d)));
	json_object_set_new(o, "written_end_sector", json_integer((json_int_t)d->written_end_sector));
	json_object_set_new(o, "write_requests", json_integer(d->write_requests));
	json_object_set_new(o, "write_bytes", json_integer(d->write_bytes));
	json_object_set_new(o, "read_requests", json_integer(d->read_requests));
	json_object_set_new(o, "read_bytes", json_integer(d->read_bytes));
	json_object_set_new(o, "flush_requests", json_integer(d->flush_requests));
	json_object_set_new(o, "discard_requests", json_integer(d->discard_requests));
	json_object_set_new(o, "errors", json_integer(d->errors));
	json_object_set_new(o, "status", view_json_status(d));
	return o;
}
