/*
 * cmd_show.c - `profdb show RUN`: everything known about one run and its
 * devices; and `profdb check`: the database's integrity.
 *
 * May call: store/store.h, view/ (view_format.h, view_json.h,
 *           view_samples.h), cli_util.h, cli_view.h (the run's view), cli_json.h,
 *           cli_trace.h, cli_samples.h.
 */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "view/view_samples.h"
#include "cli_json.h"
#include "cli_trace.h"
#include "cli_samples.h"
#include "cli_util.h"
#include "cli_view.h"
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
	view_format_duration(view_run_duration_us(r, store_now_us()), d, sizeof(d));
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
	struct view v;
	struct view_run vr;
	int json = 0, rc = cli_parse_opts(&spec, argc, argv, NULL, &json);

	if (rc != CLI_GO_ON)
		return rc;
	if (cli_open_run(&v, db, argv[optind], &vr, &run) != 0)
		return 1;
	rc = 1;
	struct store *s = v.s;
	int64_t id = run.run_id;
	view_count_samples(s, &run, NULL);
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
	view_close(&v);
	return rc;
}

static const char check_usage[] =
	"usage: profdb check [--quick] [--json]\n"
	"  verifies the database's integrity (SQLite's checks and the data file's)\n"
	"  and every stored chunk's and trace packet's checksum; --quick: SQLite's\n"
	"  and the data file's checks alone.  The first problems are named, then\n"
	"  one summary line says what was found.\n";

/* The problems check names one by one; the rest are counted. */
#define CHECK_SHOWN 5
/* store_check_integrity stops SQLite's integrity_check at this many */
#define CHECK_SQLITE_MAX 20

struct check_ctx {
	const char *db;
	int shown;
	json_t *damaged; /* --json: the first CHECK_SHOWN */
};

static int check_damage(void *ctx, const struct store_damage *d)
{
	struct check_ctx *c = ctx;
	char what[256];

	if (c->shown >= CHECK_SHOWN)
		return 0;
	c->shown++;
	store_damage_describe(d, what, sizeof(what));
	if (c->damaged)
		json_array_append_new(
			c->damaged,
			json_pack("{s:I,s:s,s:I,s:I,s:I,s:o,s:o,s:o}", "run_id", (json_int_t)d->run_id, "vdev",
			          d->vdev, "device_id", (json_int_t)d->device_id, "offset", (json_int_t)d->off,
			          "length", (json_int_t)d->len,
			          "chunk", d->chunk >= 0 ? json_integer(d->chunk) : json_null(),
			          "trace_packet", d->seq >= 0 ? json_integer(d->seq) : json_null(),
			          "what", view_json_guest(what)));
	else
		cli_err("%s: %s", c->db, what);
	return 0;
}

/* "N chunk(s)" */
static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static int check_opt(int c, const char *arg, void *ctx)
{
	(void)arg;
	if (c != 'q')
		return CLI_NOT_MINE;
	*(int *)ctx = 1;
	return 0;
}

/* SQLite's problems in report, each its own line on stderr (the first
 * CHECK_SHOWN); how many there were. */
static int tell_sqlite_problems(const char *db, const char *report, size_t len)
{
	char copy[1024], *p = copy;
	int n = 0;

	snprintf(copy, sizeof(copy) < len ? sizeof(copy) : len, "%s", report);
	for (char *nl = copy; (nl = strchr(nl, '\n'));)
		*nl = ' '; /* one problem, one line */
	for (int i = 0; p && *p; i++) {
		char *next = strstr(p, "; ");
		if (next)
			*next = '\0';
		if (i < CHECK_SHOWN)
			cli_err("%s: %s", db, p);
		n++;
		p = next ? next + 2 : NULL;
	}
	return n;
}

/* What a check found, in one line: ok or damaged, SQLite's problems, the
 * checksums verified or failed. */
static void check_summary(char *out, size_t cap, const char *db, int sqlite_bad, int sqlite_problems, int quick,
                          const struct store_sums_report *sums)
{
	uint64_t bad = sums->bad_chunks + sums->bad_packets;
	size_t used = (size_t)snprintf(out, cap, "%s: %s", db, !sqlite_bad && bad == 0 ? "ok" : "damaged");
	if (sqlite_bad && used < cap)
		used += (size_t)snprintf(out + used, cap - used, ": SQLite's checks found %s%d %s%s",
		                         sqlite_problems >= CHECK_SQLITE_MAX ? "at least " : "", sqlite_problems,
		                         sqlite_problems == 1 ? "problem" : "problems",
		                         sqlite_problems > CHECK_SHOWN ? " (the first named above)" : "");
	if (used >= cap)
		return;
	if (quick)
		snprintf(out + used, cap - used, " (--quick: checksums not verified)");
	else if (bad)
		snprintf(out + used, cap - used, "%s %llu of %llu %s and %llu of %llu trace %s fail their checksums%s",
		         sqlite_bad ? ";" : ":", (unsigned long long)sums->bad_chunks,
		         (unsigned long long)sums->chunks, plural(sums->chunks, "chunk", "chunks"),
		         (unsigned long long)sums->bad_packets, (unsigned long long)sums->packets,
		         plural(sums->packets, "packet", "packets"), bad > CHECK_SHOWN ? " (the first named above)" : "");
	else
		snprintf(out + used, cap - used, "%s %llu %s and %llu trace %s verified%s", sqlite_bad ? ";" : ",",
		         (unsigned long long)sums->chunks, plural(sums->chunks, "chunk", "chunks"),
		         (unsigned long long)sums->packets, plural(sums->packets, "packet", "packets"),
		         sums->unsummed ? "; an older store's data has no checksums until its next writer computes them"
		                        : "");
}

int cmd_check(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"quick", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char report[1024] = "", summary[1024];
	struct store *s;
	int json = 0, quick = 0;

	static const struct cli_optspec spec = {check_usage, "h", opts, 0, check_opt};
	int rc0 = cli_parse_opts(&spec, argc, argv, &quick, &json);
	if (rc0 != CLI_GO_ON)
		return rc0;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (cli_need_files(s, "check") != 0) {
		store_close(s);
		return 1;
	}
	int rc = store_check_integrity(s, report, sizeof(report));
	if (rc != 0 && rc != STORE_ECORRUPT) {
		cli_err("%s", store_errmsg(s));
		store_close(s);
		return 1;
	}
	int sqlite_bad = rc == STORE_ECORRUPT;
	int sqlite_problems = 0;
	struct store_sums_report sums = {0};
	struct check_ctx cc = {db, 0, json ? json_array() : NULL};
	/* SQLite's problems first, each its own line (the first few). */
	if (sqlite_bad && !json)
		sqlite_problems = tell_sqlite_problems(db, report, sizeof(report));
	if (!quick && (rc = store_check_sums(s, check_damage, &cc, &sums)) != 0) {
		/* A store too damaged to read its rows: SQLite's check said so. */
		if (!sqlite_bad) {
			cli_err("%s", store_errmsg(s));
			json_decref(cc.damaged);
			store_close(s);
			return 1;
		}
	}
	uint64_t bad = sums.bad_chunks + sums.bad_packets;
	int ok = !sqlite_bad && bad == 0;
	check_summary(summary, sizeof(summary), db, sqlite_bad, sqlite_problems, quick, &sums);
	if (json) {
		/* the result goes to stdout either way; the exit status says it too */
		rc = cli_json_print(json_pack(
			"{s:{s:o, s:b, s:b, s:o, s:I, s:I, s:I, s:o, s:o}}", "check", "database", view_json_guest(db), "ok",
			ok, "quick", quick, "problems", ok ? json_null() : view_json_guest(sqlite_bad ? report : summary),
			"chunks_verified", (json_int_t)sums.chunks, "packets_verified", (json_int_t)sums.packets,
			"checksum_failures", (json_int_t)bad, "damaged", cc.damaged, "summary",
			view_json_guest(summary))) != 0;
	} else if (ok) {
		printf("%s\n", summary);
		rc = fflush(stdout) != 0;
	} else {
		cli_err("%s", summary);
	}
	store_close(s);
	return ok && rc == 0 ? 0 : 1;
}
