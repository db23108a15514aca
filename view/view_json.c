/*
 * view_json.c - the shared JSON objects of profdb and profdb serve (see
 * view_json.h; every field is documented in docs/json.md).
 *
 * May call: store/store.h, util/safe_text.h, view_format.h, jansson.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../util/safe_text.h"
#include "view_format.h"
#include "view_json.h"

json_t *view_json_guest(const char *s)
{
	/* An escape is at most 6 characters for one byte (\u009b): a buffer of
	 * 6 per byte never cuts.  Most names fit the stack one. */
	char small[512];
	size_t need = (s ? strlen(s) : 0) * 6 + 1;
	char *buf = need <= sizeof(small) ? small : malloc(need);
	if (!buf)
		return NULL;
	safe_text(buf, need, s ? s : "");
	json_t *v = json_string_nocheck(buf);
	if (buf != small)
		free(buf);
	return v;
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
	int64_t end = r->ended_us ? r->ended_us : now_us;

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
	json_object_set_new(o, "duration_us", r->backend_gone ? json_null()
	                    : json_integer(end > r->started_us ? end - r->started_us : 0));
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
