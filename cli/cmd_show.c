/*
 * cmd_show.c - `profdb show RUN`: everything known about one run and its
 * devices; and `profdb check`: the database's integrity.
 */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "cli_trace.h"
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
	cli_format_time(d->status_updated_us, t, sizeof(t));
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

static int print_device_json(void *ctx, const struct store_device_info *d)
{
	int *first = ctx;
	static const char *const st[] = {"none", "ok", "corrupt"};

	printf("%s{\"vdev\":", *first ? "" : ",");
	*first = 0;
	safe_text_json(stdout, d->vdev);
	printf(",\"devid\":%d,\"role\":\"%s\",\"capacity_sectors\":%llu,\"status\":\"%s\"",
	       d->devid, store_role_name(d->role), (unsigned long long)d->capacity_sectors,
	       st[d->status]);
	if (d->status == STORE_STATUS_OK)
		printf(",\"file_size\":%lld,\"closed\":%s,\"word_size\":%d", (long long)d->file_size,
		       d->closed ? "true" : "false", d->word_size);
	printf(",\"write_requests\":%lld,\"write_bytes\":%lld,\"read_requests\":%lld,"
	       "\"read_bytes\":%lld,\"flush_requests\":%lld,\"discard_requests\":%lld,"
	       "\"errors\":%lld,\"written_end_sector\":%llu}",
	       (long long)d->write_requests, (long long)d->write_bytes,
	       (long long)d->read_requests, (long long)d->read_bytes,
	       (long long)d->flush_requests, (long long)d->discard_requests, (long long)d->errors,
	       (unsigned long long)d->written_end_sector);
	return 0;
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
	cli_format_time(r->started_us, t, sizeof(t));
	printf("  started         %s\n", t);
	cli_format_time(r->ended_us, t, sizeof(t));
	printf("  ended           %s\n", t);
	cli_format_duration((r->ended_us ? r->ended_us : store_now_us()) - r->started_us, d,
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

static void print_run_json(const struct store_run *r)
{
	printf("{\"run_id\":%lld,\"name\":", (long long)r->run_id);
	safe_text_json(stdout, r->name);
	if (r->domid >= 0)
		printf(",\"domid\":%d", r->domid);
	else
		printf(",\"domid\":null");
	printf(",\"uuid\":");
	safe_text_json(stdout, r->uuid);
	printf(",\"state\":\"%s\",\"started_us\":%lld,\"ended_us\":", store_run_state_name(r->state),
	       (long long)r->started_us);
	if (r->ended_us)
		printf("%lld", (long long)r->ended_us);
	else
		printf("null");
	printf(",\"backend_alive\":%s,\"end_reason\":",
	       r->state != STORE_RUN_RUNNING ? "null" : r->backend_gone ? "false" : "true");
	if (r->end_reason[0])
		safe_text_json(stdout, r->end_reason);
	else
		printf("null");
	printf(",\"host\":");
	safe_text_json(stdout, r->host);
	printf(",\"backend_version\":");
	safe_text_json(stdout, r->backend_version);
	printf(",\"source\":\"%s\",\"devices\":[", strcmp(r->source, "import") ? "capture" : "import");
}

int cmd_show(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct store_run run;
	struct store *s;
	int64_t id;
	int json = 0, c, rc = 1, first = 1;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j') {
			json = 1;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else {
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (cli_nargs(argc, 1, usage) != 0)
		return EXIT_USAGE;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (cli_resolve_run(s, argv[optind], &id) != 0)
		goto out;
	if (store_read_begin(s) != 0 || store_get_run(s, id, &run) != 0) {
		cli_err("%s", store_errmsg(s));
		goto out;
	}
	if (json)
		print_run_json(&run);
	else
		print_run_text(&run);
	if (store_list_devices(s, id, json ? print_device_json : print_device_text, &first) != 0) {
		cli_err("%s", store_errmsg(s));
		goto out;
	}
	if (json)
		printf("]");
	cli_trace_show(s, &run, json);
	if (json)
		printf("}\n");
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	store_close(s);
	return rc;
}

int cmd_check(const char *db, int argc, char **argv)
{
	char report[1024];
	struct store *s;
	int rc;

	(void)argv;
	if (argc != 1) {
		fputs("usage: profdb check\n", stderr);
		return EXIT_USAGE;
	}
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	rc = store_check_integrity(s, report, sizeof(report));
	if (rc == 0)
		printf("%s: ok\n", db);
	else if (rc == STORE_ECORRUPT)
		cli_err("%s is damaged: %s", db, report);
	else
		cli_err("%s", store_errmsg(s));
	store_close(s);
	return rc == 0 ? 0 : 1;
}
