/*
 * cmd_show.c - `profdb show RUN`: everything known about one run and its
 * devices; and `profdb check`: the database's integrity.
 *
 * May call: store/store.h, view/ (view_format.h, view_json.h), cli_util.h,
 *           cli_json.h, cli_trace.h.
 */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "cli_json.h"
#include "cli_trace.h"
#include "cli_samples.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] = "usage: profdb show RUN [--json]\n";

static void print_status(const struct store_device_info *d)
{
	char t[32];

	if (!store_role_is_profile(d->role)) {
		printf("  status block    - (%s device)\n", store_role_name(d->role));
		return;
	}
	switch (d->status) {
	case STORE_STATUS_NONE:
		printf("  status block    never written\n");
		return;
	case STORE_STATUS_CORRUPT:
		printf("  status block    corrupted (export needs --salvage)\n");
		break;
	case STORE_STATUS_OK:
		printf("  status block    %lld bytes, %s (%d-byte words)\n", (long long)d->file_size,
		       d->closed ? "closed" : "not closed", d->word_size);
		break;
	}
	view_format_time(d->status_updated_us, t, sizeof(t));
	printf("  updated         %s\n", t);
}

static int print_device_text(void *ctx, const struct store_device_info *d)
{
	(void)ctx;
	printf("device %s (devid %d, role %s)\n", d->vdev, d->devid, store_role_name(d->role));
	printf("  capacity        %llu sectors (%llu bytes)\n",
	       (unsigned long long)d->capacity_sectors,
	       (unsigned long long)d->capacity_sectors * STORE_SECTOR_SIZE);
	print_status(d);
	printf("  writes          %lld (%lld bytes)\n", (long long)d->write_requests,
	       (long long)d->write_bytes);
	printf("  reads           %lld (%lld bytes)\n", (long long)d->read_requests,
	       (long long)d->read_bytes);
	printf("  flushes         %lld\n", (long long)d->flush_requests);
	printf("  discards        %lld\n", (long long)d->discard_requests);
	printf("  errors          %lld\n", (long long)d->errors);
	printf("  written up to   sector %llu\n", (unsigned long long)d->written_end_sector);
	return 0;
}

static int add_device_json(void *ctx, const struct store_device_info *d)
{
	return json_array_append_new(ctx, view_json_device(d)) != 0;
}

static void print_run_text(const struct store_run *r)
{
	char t[32], d[32];

	printf("run %lld\n", (long long)r->run_id);
	printf("  name            ");
	safe_text_print(stdout, r->name, 0);
	printf("\n");
	if (r->domid >= 0)
		printf("  domid           %d\n", r->domid);
	else
		printf("  domid           -\n");
	printf("  uuid            ");
	safe_text_print(stdout, r->uuid[0] ? r->uuid : "-", 0);
	printf("\n  state           %s%s", store_run_state_name(r->state),
	       r->backend_gone ? " (backend down: nothing is being recorded; its end is not known yet)" : "");
	if (r->end_reason[0]) {
		printf(" (");
		safe_text_print(stdout, r->end_reason, 0);
		printf(")");
	}
	printf("\n");
	view_format_time(r->started_us, t, sizeof(t));
	printf("  started         %s\n", t);
	view_format_time(r->ended_us, t, sizeof(t));
	printf("  ended           %s\n", t);
	view_format_duration((r->ended_us ? r->ended_us : store_now_us()) - r->started_us, d,
	                    sizeof(d));
	if (r->backend_gone)
		printf("  duration        unknown (no backend running)\n");
	else
		printf("  duration        %s%s\n", d, r->ended_us ? "" : " (still running)");
	printf("  host            ");
	safe_text_print(stdout, r->host[0] ? r->host : "-", 0);
	printf("\n  recorded by     ");
	safe_text_print(stdout, r->backend_version[0] ? r->backend_version : "-", 0);
	printf("\n  source          %s\n", r->source);
}

int cmd_show(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "h", opts, 1, NULL};
	struct store_run run;
	struct store *s;
	int json = 0, rc = cli_parse_opts(&spec, argc, argv, NULL, &json);

	if (rc != CLI_GO_ON)
		return rc;
	if (cli_open_run(&s, db, argv[optind], &run) != 0)
		return 1;
	rc = 1;
	int64_t id = run.run_id;
	if (json) {
		/* {"run":{..}, "devices":[..], "trace":{..}|null, "samples":{..}|null}: docs/json.md */
		json_t *devs = json_array(), *trace = NULL, *samples = NULL;
		if (store_list_devices(s, id, add_device_json, devs) != 0) {
			cli_err("%s", store_errmsg(s));
			json_decref(devs);
			goto out;
		}
		cli_trace_show(s, &run, &trace);
		cli_samples_show(s, &run, &samples);
		rc = cli_json_print(json_pack("{s:o, s:o, s:o, s:o}", "run", view_json_run(&run, store_now_us()),
		                          "devices", devs, "trace", trace ? trace : json_null(),
		                          "samples", samples ? samples : json_null()));
		goto out;
	}
	print_run_text(&run);
	if (store_list_devices(s, id, print_device_text, NULL) != 0) {
		cli_err("%s", store_errmsg(s));
		goto out;
	}
	cli_trace_show(s, &run, NULL);
	rc = cli_samples_show(s, &run, NULL) == 0 && fflush(stdout) == 0 ? 0 : 1;
out:
	store_close(s);
	return rc;
}

static const char check_usage[] =
	"usage: profdb check [--json]\n"
	"  verifies the database's integrity (SQLite's checks and the data file's)\n";

int cmd_check(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {check_usage, "h", opts, 0, NULL};
	char report[1024] = "";
	struct store *s;
	int json = 0, rc = cli_parse_opts(&spec, argc, argv, NULL, &json);

	if (rc != CLI_GO_ON)
		return rc;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	rc = store_check_integrity(s, report, sizeof(report));
	if (rc != 0 && rc != STORE_ECORRUPT) {
		cli_err("%s", store_errmsg(s));
		store_close(s);
		return 1;
	}
	if (json) {
		/* the result goes to stdout either way; the exit status says it too */
		if (cli_json_print(json_pack("{s:{s:o, s:b, s:o}}", "check", "database", view_json_guest(db), "ok", rc == 0,
		                         "problems", rc == 0 ? json_null() : view_json_guest(report))) != 0)
			rc = -1;
	} else if (rc == 0) {
		printf("%s: ok\n", db);
	}
	if (rc == STORE_ECORRUPT)
		cli_err("%s is damaged: %s", db, report);
	store_close(s);
	return rc == 0 ? 0 : 1;
}
