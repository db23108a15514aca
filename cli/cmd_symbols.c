/*
 * cmd_symbols.c - `profdb symbols`: symbol files kept by build-id, so
 * that a run's sampled addresses the sampler could not name (a stripped
 * program, a library without symbols) are named when the run is read
 * (view/view_symbols.h says where files are looked for).
 *   add ELF...   keeps each file in the store's symbols directory
 *   path         prints that directory
 *
 * May call: view/view_symbols.h, view/view_err.h, cli_util.h.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "view/view_err.h"
#include "view/view_symbols.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb symbols add ELF...\n"
	"       profdb symbols path\n"
	"  add: keep each ELF (a program, a library or its .debug file, with its\n"
	"  symbols) in the store's symbols directory by its build-id, so that\n"
	"  the stack samples of any run of that build name their addresses from\n"
	"  it when read (top, flame, report, export, serve), the sampler having\n"
	"  kept each address and its object's build-id.  Also looked in:\n"
	"  /usr/lib/debug/.build-id (Debian's -dbgsym packages) and debuginfod\n"
	"  when DEBUGINFOD_URLS is set.\n"
	"  path: print the directory ($PROFSVC_SYMBOLS, else 'symbols' beside\n"
	"  the store).\n";

int cmd_symbols(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "+h", opts, -1, NULL};
	int rc = cli_parse_opts(&spec, argc, argv, NULL, NULL);
	if (rc != CLI_GO_ON)
		return rc;
	char dir[4096];
	view_symbols_dir(cli_db_path(db), dir, sizeof(dir));
	const char *verb = optind < argc ? argv[optind] : "";
	if (!strcmp(verb, "path") && optind + 1 == argc) {
		if (!*dir) {
			cli_err("a catalogue has no symbols directory: set PROFSVC_SYMBOLS");
			return 1;
		}
		printf("%s\n", dir);
		return 0;
	}
	if (strcmp(verb, "add") != 0 || optind + 1 >= argc)
		return cli_usage(usage, '?');
	rc = 0;
	for (int i = optind + 1; i < argc; i++) {
		struct view_err e;
		char id[160];
		view_err_init(&e);
		cli_view_err(&e);
		if (view_symbols_add(dir, argv[i], id, sizeof(id), &e) != 0) {
			rc = 1;
			continue;
		}
		printf("%s: build-id %s\n", argv[i], id);
	}
	return rc;
}
