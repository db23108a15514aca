/*
 * cmd_top.c - `profdb top`: the cost centres of a run's time profile that
 * matter, as a table or JSON, from text (-p, -P, -pa, old layouts) and
 * -pj profiles alike (profile/prof/time_profile.h).  The self figures and the
 * order by time are GHC's own table's where the profile has one (tp_rank
 * says which rows): the table printed here marks where GHC's ends and
 * says under it where the figures came from.  --focus and --ignore cut
 * the call tree to some stacks (view/view_focus.h).  A run's stack
 * samples are shown as samples (cli_samples.c), with a function's
 * sandwich.
 *
 * May call: profile/prof/time_profile.h, view/ through cli_view.h, cli_util.h,
 *           cli_json.h, cli_samples.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "profile/prof/time_profile.h"
#include "cli_json.h"
#include "cli_samples.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb top RUN [--by time|alloc|entries|inherited-time|inherited-alloc]\n"
	"                  [-n N] [--module M] [--focus RE]... [--ignore RE]...\n"
	"                  [--samples [--sandwich FUNC]] [--json]\n"
	"  The cost centres of the run's time profile (.prof), largest first:\n"
	"  individual time and allocation as GHC's own table at the head of a\n"
	"  text profile gives them (GHC's order; the rest, under 1%, after it),\n"
	"  else summed over all their call stacks (exactly, from ticks and bytes,\n"
	"  with -P or -pj); inherited over the outermost stacks.  -n 0 lists all\n"
	"  (default 20).\n"
	"  --focus RE keeps the call stacks with a function matching RE (a POSIX\n"
	"  extended regular expression over \"Module.name\" or the name), --ignore RE\n"
	"  drops those with one; both repeat; the shares stay of the whole.\n"
	"  --samples: the run's stack samples (profile-backend sample) as samples:\n"
	"  how they were taken, then each function's samples as the leaf (self) and\n"
	"  anywhere on the stack (total, once a sample), their shares of the time\n"
	"  the samples stand for, its module and source (--by time: by self,\n"
	"  inherited-time: by total).  --sandwich FUNC adds FUNC's callers and\n"
	"  callees.  A run with samples and no .prof shows them without it.\n";

static const struct {
	const char *name;
	enum tp_by by;
} bys[] = {
	{"time", TP_BY_TIME},       {"alloc", TP_BY_ALLOC},
	{"entries", TP_BY_ENTRIES}, {"inherited-time", TP_BY_INH_TIME},
	{"inherited-alloc", TP_BY_INH_ALLOC},
};

/* Where a row's self %time and %alloc come from (JSON's "self_from"). */
static const char *self_from(const struct time_profile *p, const struct tp_row *r)
{
	if (r->listed)
		return "ghc_table";
	if ((p->has_ticks || p->format == TP_JSON) && p->total_ticks)
		return "ticks";
	return "stacks";
}

/* The line under the table: where its self figures came from. */
static void print_source(const struct time_profile *p)
{
	int exact = (p->has_ticks || p->format == TP_JSON) && p->total_ticks;
	const char *how = exact ? "from ticks and bytes" : "summed over the call stacks (each rounded to 0.1%)";
	if (p->table == TP_TABLE_USED)
		printf("\n  %%time %%alloc: GHC's own table for the %zu it lists; the rest %s\n", p->nlisted, how);
	else
		printf("\n  %%time %%alloc: %s%s\n", how,
		       p->table == TP_TABLE_IGNORED ? " (GHC's table set aside)" : "");
}

static void print_table(const struct time_profile *p, const struct view_profile_read *rd,
                        const struct tp_row *rows, size_t n, enum tp_by by, int samples)
{
	char caption[400];
	view_profile_caption(&rd->run, caption, sizeof(caption));
	safe_text_print(stdout, caption, 0);
	fputs("\n  ", stdout);
	safe_text_print(stdout, p->command ? p->command : "(no command line)", 0);
	printf("\n  total time %.2f s (%llu ticks), total alloc %llu bytes, %zu cost centres, %zu "
	       "call stacks\n\n",
	       p->total_secs, (unsigned long long)p->total_ticks, (unsigned long long)p->total_alloc,
	       p->nccs, p->nnodes);
	printf("  %-30s %-20s %12s %6s %6s %7s %7s", "COST CENTRE", "MODULE", "entries", "%time",
	       "%alloc", "inh%tm", "inh%al");
	if (p->has_ticks)
		printf(" %9s %14s", "ticks", "bytes");
	fputc('\n', stdout);
	for (size_t i = 0; i < n; i++) {
		const struct tp_row *r = &rows[i];
		const struct tp_cc *c = &p->ccs[r->cc];
		if (i && rows[i - 1].listed && !r->listed && (by == TP_BY_TIME || by == TP_BY_ALLOC))
			puts("  -- not in GHC's table (under 1% of the time and of the allocation) --");
		fputs("  ", stdout);
		safe_text_print(stdout, c->name, 30);
		fputc(' ', stdout);
		safe_text_print(stdout, c->module, 20);
		printf(" %12llu %6.1f %6.1f %7.1f %7.1f", (unsigned long long)r->entries, r->time,
		       r->alloc, r->inh_time, r->inh_alloc);
		if (p->has_ticks)
			printf(" %9llu %14llu", (unsigned long long)r->ticks, (unsigned long long)r->bytes);
		fputc('\n', stdout);
	}
	if (!samples)
		print_source(p);
}

static json_t *top_json(const struct time_profile *p, const struct view_profile_read *rd,
                        const struct tp_row *rows, size_t n)
{
	json_t *ccs = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct tp_row *r = &rows[i];
		const struct tp_cc *c = &p->ccs[r->cc];
		json_t *o = json_pack("{s:o, s:o, s:o, s:I, s:f, s:f, s:f, s:f, s:I, s:s}", "name", view_json_guest(c->name),
			"module", view_json_guest(c->module), "src", view_json_guest(c->src), "entries", (json_int_t)r->entries,
			"time", r->time, "alloc", r->alloc, "inherited_time", r->inh_time,
			"inherited_alloc", r->inh_alloc, "stacks", (json_int_t)r->stacks, "self_from", self_from(p, r));
		if (p->has_ticks || p->format == TP_JSON) {
			json_object_set_new(o, "ticks", json_integer((json_int_t)r->ticks));
			json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
		}
		json_array_append_new(ccs, o);
	}
	static const char *const table[] = {"none", "used", "set_aside"};
	return json_pack("{s:o, s:s, s:o, s:f, s:I, s:I, s:s, s:o}", "run", view_json_run(&rd->run, store_now_us()),
		"format", p->format == TP_JSON ? "json" : "text", "command", view_json_guest(p->command ? p->command : ""),
		"total_time", p->total_secs, "total_ticks", (json_int_t)p->total_ticks,
		"total_alloc", (json_int_t)p->total_alloc, "ghc_table", table[p->table], "cost_centres", ccs);
}

/* What top is asked: the order, -n (0: all), --module, --json. */
struct top_opts {
	enum tp_by by;
	const char *module, *sandwich;
	uint64_t limit;
	int json, samples;
	struct view_focus focus;
};

static int top_opt(int c, const char *arg, void *ctx)
{
	struct top_opts *o = ctx;

	switch (c) {
	case 'b':
		for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++)
			if (!strcmp(arg, bys[i].name)) {
				o->by = bys[i].by;
				return 0;
			}
		cli_err("--by is time, alloc, entries, inherited-time or inherited-alloc, not '%s'", arg);
		return EXIT_USAGE;
	case 'n':
		return cli_rows_opt(arg, &o->limit);
	case 'm':
		o->module = arg;
		return 0;
	case 'S':
		o->samples = 1;
		return 0;
	case 'F':
	case 'I':
		return cli_focus_opt(&o->focus, c == 'I', arg);
	case 'W':
		o->sandwich = arg;
		return 0;
	}
	return CLI_NOT_MINE;
}

/* --by for stack samples: time (self) or inherited-time (total) only. */
static int samples_by(const struct top_opts *o)
{
	if (!o->samples || o->by == TP_BY_TIME || o->by == TP_BY_INH_TIME)
		return CLI_GO_ON;
	cli_err("--samples: --by is time (self) or inherited-time (total)");
	return EXIT_USAGE;
}

int cmd_top(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"by", required_argument, NULL, 'b'}, {"module", required_argument, NULL, 'm'},
		{"json", no_argument, NULL, 'j'},     {"help", no_argument, NULL, 'h'},
		{"samples", no_argument, NULL, 'S'},  {"focus", required_argument, NULL, 'F'},
		{"ignore", required_argument, NULL, 'I'}, {"sandwich", required_argument, NULL, 'W'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "n:h", opts, 1, top_opt};
	struct top_opts o = {.by = TP_BY_TIME, .limit = 20};
	view_focus_init(&o.focus);
	int rc = cli_parse_opts(&spec, argc, argv, &o, &o.json);

	if (rc != CLI_GO_ON || (rc = samples_by(&o)) != CLI_GO_ON) {
		view_focus_free(&o.focus);
		return rc;
	}
	struct time_profile p;
	struct view_profile_read rd;
	struct view v = {0};
	rc = 1;
	tp_init(&p);
	struct view_run run;
	if (cli_view_open(&v, db) != 0 || cli_view_resolve(&v, argv[optind], &run) != 0)
		goto out;
	if (!o.samples && cli_read_profile_or_samples(&v, &run, &o.samples, &p, &rd) != 0)
		goto out;
	if (o.samples) { /* asked, or the run has samples and no .prof */
		struct cli_sampled_opts so = {&o.focus, o.sandwich, o.module, o.limit, o.json, o.by == TP_BY_INH_TIME};
		rc = cli_samples_top(&v, &run, &so);
		goto out;
	}
	if (o.sandwich) {
		cli_err("--sandwich is for a run's stack samples (--samples); run %lld's profile is a .prof",
		        (long long)rd.run.run_id);
		rc = EXIT_USAGE;
		goto out;
	}
	double kept = 100;
	if (cli_focus_profile(&o.focus, &p, rd.run.run_id, &kept) != 0)
		goto out;
	size_t n;
	struct tp_row *rows = tp_rank(&p, o.by, o.module, &n);
	if (!rows) {
		cli_err("out of memory ranking run %lld", (long long)rd.run.run_id);
		goto out;
	}
	if (o.module && n == 0)
		cli_warn("run %lld has no cost centre in module '%s'", (long long)rd.run.run_id, o.module);
	if (p.table == TP_TABLE_IGNORED)
		cli_warn("run %lld: %s: self %%time and %%alloc from the call tree instead",
		         (long long)rd.run.run_id, p.table_note);
	if (o.limit && n > o.limit)
		n = (size_t)o.limit;
	if (o.json) {
		rc = cli_json_print(top_json(&p, &rd, rows, n));
		free(rows);
		goto out;
	}
	print_table(&p, &rd, rows, n, o.by, o.samples);
	if (view_focus_any(&o.focus))
		printf("  --focus/--ignore: the stacks kept hold %.1f%% of the time; the shares are of all of it\n", kept);
	free(rows);
	rc = 0;
	if (fflush(stdout) != 0) {
		cli_err("standard output: %s", strerror(errno));
		rc = 1;
	}
out:
	tp_free(&p);
	view_close(&v);
	view_focus_free(&o.focus);
	return rc;
}
