/*
 * cmd_flame.c - `profdb flame`: a run's time profile as folded stacks
 * (for flamegraph.pl, speedscope, inferno) or as a flame graph SVG drawn
 * here (profile/render/flame.h).  --focus and --ignore cut the call
 * tree to some stacks first (view/view_focus.h).
 *
 * May call: profile/render/flame.h, profile/prof/time_profile.h, view/ through
 *           cli_view.h, cli_util.h.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "profile/render/flame.h"
#include "profile/prof/time_profile.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb flame RUN [--by time|alloc] [--samples] [--json | -o FILE.svg [--against RUN0]]\n"
	"                       [--focus RE]... [--ignore RE]...\n"
	"  The run's call tree as folded stacks (\"Main.main;Main.go 123\" per line,\n"
	"  flamegraph.pl's input) on standard output, the same stacks as JSON with\n"
	"  --json, or with -o a flame graph SVG.\n"
	"  Values are ticks (--by time) or bytes (--by alloc).  --against RUN0 draws\n"
	"  a differential flame graph: red grew since RUN0, blue shrank.\n"
	"  --samples: the run's stack samples (profile-backend sample), a sample a\n"
	"  tick, instead of its .prof.\n"
	"  --focus RE keeps the stacks with a function matching RE (a POSIX extended\n"
	"  regular expression over \"Module.name\" or the name), --ignore RE drops\n"
	"  those with one; both repeat.\n";

struct flame_job {
	const struct time_profile *p, *before;
	enum flame_by by;
	char caption[400], against[64];
};

static int render(FILE *f, void *ctx)
{
	struct flame_job *j = ctx;
	return j->before ? flame_svg_diff(f, j->before, j->p, j->by, j->caption, j->against)
	                 : flame_svg(f, j->p, j->by, j->caption);
}

/* What flame is asked: the values, -o, --against, --json. */
struct flame_opts {
	enum flame_by by;
	const char *svg, *against;
	int json, samples;
	struct view_focus focus;
};

static int flame_opt(int c, const char *arg, void *ctx)
{
	struct flame_opts *o = ctx;

	switch (c) {
	case 'b':
		if (strcmp(arg, "time") != 0 && strcmp(arg, "alloc") != 0) {
			cli_err("--by is time or alloc, not '%s'", arg);
			return EXIT_USAGE;
		}
		o->by = strcmp(arg, "time") == 0 ? FLAME_TIME : FLAME_ALLOC;
		return 0;
	case 'o':
		o->svg = arg;
		return 0;
	case 'a':
		o->against = arg;
		return 0;
	case 'S':
		o->samples = 1;
		return 0;
	case 'F':
	case 'I':
		return cli_focus_opt(&o->focus, c == 'I', arg);
	}
	return CLI_NOT_MINE;
}

static int parse_options(int argc, char **argv, struct flame_opts *o)
{
	static const struct option opts[] = {
		{"by", required_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'},
		{"against", required_argument, NULL, 'a'}, {"json", no_argument, NULL, 'j'},
		{"samples", no_argument, NULL, 'S'}, {"focus", required_argument, NULL, 'F'},
		{"ignore", required_argument, NULL, 'I'}, {NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "o:h", opts, -1, flame_opt};
	int rc = cli_parse_opts(&spec, argc, argv, o, &o->json);

	if (rc != CLI_GO_ON)
		return rc;
	if (o->json && o->svg) {
		cli_err("--json writes the stacks to standard output; -o draws an SVG: one or the other");
		return EXIT_USAGE;
	}
	if (argc - optind == 1 && (!o->against || o->svg))
		return CLI_GO_ON;
	if (o->against && !o->svg)
		cli_err("--against draws a differential flame graph: it needs -o FILE.svg");
	fputs(usage, stderr);
	return EXIT_USAGE;
}

int cmd_flame(const char *db, int argc, char **argv)
{
	struct flame_opts o = {.by = FLAME_TIME};
	view_focus_init(&o.focus);
	int rc = parse_options(argc, argv, &o);

	if (rc != CLI_GO_ON) {
		view_focus_free(&o.focus);
		return rc;
	}
	struct time_profile p, before;
	struct view_profile_read brd;
	tp_init(&before);
	tp_init(&p);
	struct view_profile_read rd;
	struct view v = {0};
	rc = 1;
	int asked = o.samples; /* each run read as asked: without --samples, its samples when it has no .prof */
	struct view_run run, arun;
	if (cli_view_open(&v, db) != 0 || cli_view_resolve(&v, argv[optind], &run) != 0 ||
	    cli_read_profile_or_samples(&v, &run, &o.samples, &p, &rd) != 0)
		goto out;
	if (o.against && (cli_view_resolve(&v, o.against, &arun) != 0 ||
	                  cli_read_profile_or_samples(&v, &arun, &asked, &before, &brd) != 0))
		goto out;
	double kept;
	if (cli_focus_profile(&o.focus, &p, rd.run.run_id, &kept) != 0 ||
	    (o.against && cli_focus_profile(&o.focus, &before, brd.run.run_id, &kept) != 0))
		goto out;
	if (!o.svg) {
		rc = (o.json ? flame_json(stdout, &p, o.by) : flame_folded(stdout, &p, o.by)) || fflush(stdout) ? 1 : 0;
		if (rc)
			cli_err("standard output: %s", strerror(errno));
		goto out;
	}
	struct flame_job job = {&p, o.against ? &before : NULL, o.by, {0}, {0}};
	char what[64];
	view_profile_caption(&rd.run, job.caption, sizeof(job.caption));
	if (o.against)
		snprintf(job.against, sizeof(job.against), "run %lld", (long long)brd.run.run_id);
	snprintf(what, sizeof(what), "%zu call stacks", p.nnodes);
	rc = outfile_render(o.svg, render, &job, what);
out:
	tp_free(&before);
	tp_free(&p);
	view_close(&v);
	view_focus_free(&o.focus);
	return rc;
}
