/*
 * profdb.c - the profdb command: global options and dispatch to the
 * subcommands in cmd_*.c.
 */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb [--db PATH] COMMAND [ARGS]\n"
	"\n"
	"Reads the profsvc store of captured HaLVM profiles.\n"
	"\n"
	"commands:\n"
	"  query runs [--json] [--state S] [--name GLOB] [--since TIME] [--limit N]\n"
	"                          list runs (one per guest boot)\n"
	"  show RUN [--json]       everything known about a run and its devices\n"
	"  export RUN [--prof FILE] [--hp FILE] [-o DIR] [--force] [--salvage]\n"
	"                          write the run's .prof/.hp, byte-exact\n"
	"  export-disk [--size SIZE] RUN VDEV FILE\n"
	"                          write the raw disk image a raw-disk backend would hold\n"
	"  import-disk [--name NAME] [--force] PROF.disk [HP.disk]\n"
	"  import-disk [--name NAME] [--force] [--prof PROF.disk] [--hp HP.disk]\n"
	"                          turn old HaLVM raw images into a run\n"
	"  check                   verify the database's integrity\n"
	"  heap RUN [RUN...] [-o FILE.svg] [--csv] [--json] [--bands N] [--trace PCT]\n"
	"                          the heap profile charted with hp2ps's rules\n"
	"  top RUN [--by time|alloc|entries|inherited-time|inherited-alloc] [-n N]\n"
	"      [--module M] [--json]  the cost centres that matter\n"
	"  flame RUN [--by time|alloc] [--json | -o FILE.svg [--against RUN0]]\n"
	"                          folded stacks, or a flame graph\n"
	"  diff RUN_A RUN_B [-n N] [--json]\n"
	"                          what changed: call stacks and heap bands\n"
	"  report RUN [-o FILE.html | --json] [--against RUN0]\n"
	"                          everything about a run in one HTML file\n"
	"  serve [--listen ADDR:PORT] [--open]\n"
	"                          a web view of every run, live while guests run\n"
	"  watch RUN [-n BANDS]    a running guest's heap in the terminal, live\n"
	"\n"
	"RUN is a run id or 'latest'.  The database is --db, else $PROFSVC_DB, else\n"
	PROFSVC_DEFAULT_DB ".\n"
	"Exit status: 0 ok, 1 error, 2 usage.\n";

static const struct {
	const char *name;
	int (*fn)(const char *db, int argc, char **argv);
} commands[] = {
	{"query", cmd_query},         {"show", cmd_show},
	{"export", cmd_export},       {"export-disk", cmd_export_disk},
	{"import-disk", cmd_import_disk}, {"check", cmd_check},
	{"heap", cmd_heap},           {"top", cmd_top},
	{"flame", cmd_flame},         {"diff", cmd_diff},
	{"report", cmd_report},       {"serve", cmd_serve},
	{"watch", cmd_watch},
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *db = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("profdb (profsvc) %s\n", PACKAGE_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[optind], commands[i].name) == 0)
			return commands[i].fn(cli_db_path(db), argc - optind, argv + optind);
	cli_err("unknown command '%s' (profdb --help lists them)", argv[optind]);
	return EXIT_USAGE;
}
