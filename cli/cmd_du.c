/*
 * cmd_du.c - `profdb du`: where the store's disk space goes: the
 * database, its WAL, the data file (allocated against apparent size: the
 * holes of given-back slots are free), what is free or waiting to be
 * given back, and the runs that hold the most.
 *
 * Sizes as every view writes them (profile/render/report.h's report_fmt_size:
 * "8.2 kB (8,176 bytes)").
 *
 * May call: store/store.h, view/view_json.h, profile/render/report.h (sizes),
 *           cli_util.h, cli_json.h.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "profile/render/report.h"
#include "cli_json.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb du [-n N] [--json]\n"
	"  the database, WAL and data file (allocated and apparent bytes), free and\n"
	"  reclaimable space, and the N runs holding the most (default 10; 0: all)\n";

static json_t *file_json(const struct store_file_space *f)
{
	if (f->apparent < 0)
		return json_null();
	return json_pack("{s:I, s:I}", "apparent_bytes", (json_int_t)f->apparent, "allocated_bytes",
	                 (json_int_t)f->allocated);
}

/* A size as the views write it: "8.2 kB (8,176 bytes)", "512 B". */
static const char *size_text(int64_t bytes, char *buf, size_t len)
{
	report_fmt_size(bytes > 0 ? (uint64_t)bytes : 0, buf, len);
	return buf;
}

static void file_text(const char *what, const struct store_file_space *f)
{
	char a[64], b[64];
	if (f->apparent < 0)
		printf("  %-10s -\n", what);
	else
		printf("  %-10s %s allocated, %s apparent\n", what, size_text(f->allocated, a, sizeof(a)),
		       size_text(f->apparent, b, sizeof(b)));
}

/* -n N: how many runs to list, the largest first (0: all). */
static int top_opt(int c, const char *arg, void *ctx)
{
	uint64_t v;

	if (c != 'n')
		return CLI_NOT_MINE;
	if (view_parse_u64(arg, &v) != 0 || v > INT64_MAX) {
		cli_err("-n must be a number of runs (0: all), not '%s'", arg);
		return EXIT_USAGE;
	}
	*(uint64_t *)ctx = v;
	return 0;
}

int cmd_du(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "hn:", opts, 0, top_opt};
	struct store_space sp;
	struct store_run_space *runs = NULL;
	size_t n = 0;
	struct store *s;
	uint64_t top = 10;
	int json = 0, rc = cli_parse_opts(&spec, argc, argv, &top, &json);

	if (rc != CLI_GO_ON)
		return rc;
	rc = 1;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (store_space(s, &sp) != 0 || store_runs_space(s, (int64_t)top, &runs, &n) != 0) {
		cli_err("%s", store_errmsg(s));
		goto out;
	}
	int64_t free_db = sp.free_pages * sp.page_size;
	int64_t freed_slots = sp.slots_freed * (int64_t)STORE_CHUNK_BYTES;
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:I}", "run_id", (json_int_t)runs[i].run_id,
			                                   "bytes", (json_int_t)(runs[i].db_bytes + runs[i].slot_bytes),
			                                   "db_bytes", (json_int_t)runs[i].db_bytes, "data_bytes",
			                                   (json_int_t)runs[i].slot_bytes));
		rc = cli_json_print(json_pack("{s:{s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:o}}", "du",
		                          "database", file_json(&sp.db), "wal", file_json(&sp.wal), "data",
		                          file_json(&sp.data), "path", view_json_guest(db), "page_size",
		                          (json_int_t)sp.page_size, "free_db_bytes", (json_int_t)free_db,
		                          "data_slots_in_use", (json_int_t)sp.slots_in_use,
		                          "reclaimable_data_bytes", (json_int_t)freed_slots, "runs", a));
		goto out;
	}
	char a[64], b[64], c[64];
	safe_text_print(stdout, db, 0);
	putchar('\n');
	file_text("database", &sp.db);
	file_text("WAL", &sp.wal);
	file_text("data file", &sp.data);
	printf("  free       %s of database pages (given back by delete/prune)\n", size_text(free_db, a, sizeof(a)));
	printf("  freed      %s of data-file slots waiting to be given back\n", size_text(freed_slots, a, sizeof(a)));
	if (n)
		printf("%8s  %-30s  %-30s  %s\n", "RUN", "SIZE", "IN DATABASE", "IN DATA FILE");
	for (size_t i = 0; i < n; i++)
		printf("%8lld  %-30s  %-30s  %s\n", (long long)runs[i].run_id,
		       size_text(runs[i].db_bytes + runs[i].slot_bytes, a, sizeof(a)),
		       size_text(runs[i].db_bytes, b, sizeof(b)), size_text(runs[i].slot_bytes, c, sizeof(c)));
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	free(runs);
	store_close(s);
	return rc;
}
