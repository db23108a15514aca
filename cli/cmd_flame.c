/*
 * cmd_flame.c - `profdb flame`: a run's time profile as folded stacks
 * (for flamegraph.pl, speedscope, inferno) or as a flame graph SVG drawn
 * here (profile/flame.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/flame.h"
#include "../profile/time_profile.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb flame RUN [--by time|alloc] [--json | -o FILE.svg [--against RUN0]]\n"
	"  The run's call tree as folded stacks (\"Main.main;Main.go 123\" per line,\n"
	"  flamegraph.pl's input) on standard output, the same stacks as JSON with\n"
	"  --json, or with -o a flame graph SVG.\n"
	"  Values are ticks (--by time) or bytes (--by alloc).  --against RUN0 draws\n"
	"  a differential flame graph: red grew since RUN0, blue shrank.\n";

struct flame_job {
	const struct time_profile *p, *before;
	enum flame_by by;
	char caption[400];
};

static int render(FILE *f, void *ctx)
{
	struct flame_job *j = ctx;
	return j->before ? flame_svg_diff(f, j->before, j->p, j->by, j->caption)
	                 : flame_svg(f, j->p, j->by, j->caption);
}

int cmd_flame(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"by", required_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'},
		{"against", required_argument, NULL, 'a'}, {"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	enum flame_by by = FLAME_TIME;
	const char *svg = NULL, *against = NULL;
	int c, json = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (!strcmp(optarg, "time"))
				by = FLAME_TIME;
			else if (!strcmp(optarg, "alloc"))
				by = FLAME_ALLOC;
			else {
				cli_err("--by is time or alloc, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			svg = optarg;
			break;
		case 'a':
			against = optarg;
			break;
		case 'j':
			json = 1;
			break;
		default:
			return cli_usage(usage, c);
		}
	}
	if (json && svg) {
		cli_err("--json writes the stacks to standard output; -o draws an SVG: one or the other");
		return EXIT_USAGE;
	}
	if (argc - optind != 1 || (against && !svg)) {
		if (against && !svg)
			cli_err("--against draws a differential flame graph: it needs -o FILE.svg");
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	struct time_profile p, before;
	struct view_profile_read brd;
	tp_init(&before);
	tp_init(&p);
	struct view_profile_read rd;
	struct view v = {0};
	int rc = 1;
	if (cli_view_open(&v, db) != 0 || cli_read_time_profile(&v, argv[optind], &p, &rd) != 0)
		goto out;
	if (against && cli_read_time_profile(&v, against, &before, &brd) != 0)
		goto out;
	if (!svg) {
		rc = (json ? flame_json(stdout, &p, by) : flame_folded(stdout, &p, by)) || fflush(stdout) ? 1 : 0;
		if (rc)
			cli_err("standard output: %s", strerror(errno));
		goto out;
	}
	struct flame_job job = {&p, against ? &before : NULL, by, {0}};
	char what[64];
	view_profile_caption(&rd.run, job.caption, sizeof(job.caption));
	snprintf(what, sizeof(what), "%zu call stacks", p.nnodes);
	rc = outfile_render(svg, render, &job, what);
out:
	tp_free(&before);
	tp_free(&p);
	view_close(&v);
	return rc;
}
