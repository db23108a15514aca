/*
 * profdb.c - the profdb command: its usage, the global options (--db,
 * --help, --version, taken wherever they are before "--") and dispatch
 * to the subcommands in cmd_*.c.
 *
 * May call: the commands (commands.h), fleet/fleet.h (fleet_is_url),
 *           store/store.h, cli_util.h.
 */
#include "config.h"

#include <string.h>

#include "fleet/fleet.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb [--db PATH] COMMAND [ARGS]   (--db PATH, --db=PATH: anywhere before --)\n"
	"\n"
	"Reads the profsvc store of captured HaLVM profiles.\n"
	"\n"
	"commands:\n"
	"  query runs [--json] [--state S] [--name GLOB] [--since TIME] [--limit N]\n"
	"             [--host HOST]  list runs (one per guest boot)\n"
	"  show RUN [--json]       everything known about a run and its devices\n"
	"  export RUN [--prof FILE] [--hp FILE] [--eventlog FILE] [-o DIR] [--force]\n"
	"         [--salvage] [--json] [--speedscope FILE] [--ctf DIR] [--trace-json FILE]\n"
	"         [--chrome-trace FILE] [--folded FILE] [--perf-script FILE] [--pprof FILE]\n"
	"         [--samples]  write the run's .prof/.hp/eventlog, byte-exact, or speedscope's\n"
	"                          JSON, a CTF or Chrome trace, the stack samples' exports\n"
	"  export-disk [--size SIZE] [--force] [--json] RUN VDEV FILE\n"
	"                          write the raw disk image a raw-disk backend would hold\n"
	"  import [--name NAME] [--force] [--json] FILE...\n"
	"                          turn a .prof, .hp and eventlog GHC wrote into a run\n"
	"  import-disk [--name NAME] [--force] [--json] PROF.disk [HP.disk]\n"
	"  import-disk [--name NAME] [--force] [--json] [--prof PROF.disk] [--hp HP.disk]\n"
	"              [--eventlog E.disk]  turn old HaLVM raw images into a run\n"
	"  check [--quick] [--json]  verify the database's integrity\n"
	"  delete RUN... [--force] [--json]\n"
	"                          remove runs and give their space back\n"
	"  prune [--older-than DUR] [--keep N] [--name GLOB] [--state S] [--dry-run]\n"
	"        [--force] [--json]  remove the runs a retention rule lets go\n"
	"  du [-n N] [--json]      where the store's disk space goes\n"
	"  heap RUN [RUN...] [-o FILE.svg] [--csv] [--json] [--bands N] [--trace PCT]\n"
	"       [--sort area|stddev]\n"
	"                          the heap profile charted with hp2ps's rules\n"
	"  top RUN [--by time|alloc|entries|inherited-time|inherited-alloc] [-n N]\n"
	"      [--module M] [--focus RE]... [--ignore RE]... [--samples [--sandwich FUNC]]\n"
	"      [--json]            the cost centres (or sampled functions) that matter\n"
	"  flame RUN [--by time|alloc] [--samples] [--json | -o FILE.svg [--against RUN0]]\n"
	"      [--focus RE]... [--ignore RE]...\n"
	"                          folded stacks, or a flame graph\n"
	"  diff RUN_A RUN_B [-n N] [--json]\n"
	"                          what changed: call stacks and heap bands\n"
	"  report RUN [-o FILE.html | --json] [--against RUN0]\n"
	"                          everything about a run in one HTML file\n"
	"  serve [--listen ADDR:PORT] [--allow-host NAME]... [--open] [--access-log]\n"
	"                          a web view of every run, live while guests run\n"
	"  watch RUN [-n BANDS] [--json]\n"
	"                          a running guest's heap in the terminal, live\n"
	"  events RUN [--type NAME]... [--json]\n"
	"                          the GHC eventlog's events, as ghc-events show prints them\n"
	"  gc RUN [--json]         garbage collections from the GHC eventlog: pauses, share, peaks\n"
	"  symbols add ELF... | symbols path\n"
	"                          keep symbol files by build-id: sampled addresses named when read\n"
	"  sync --to URL [--since TIME] [--include-running] [--json] [-q]\n"
	"                          push this host's runs into a fleet catalogue (PostgreSQL)\n"
	"\n"
	"RUN is a run id or 'latest'.  The database is --db, else $PROFSVC_DB, else\n"
	PROFSVC_DEFAULT_DB ".\n"
	"--db postgresql://HOST/DB reads a fleet catalogue: query, show, export, export-disk,\n"
	"heap, top, flame, diff, report, serve, events and gc, RUN then N, HOST:N, latest or\n"
	"HOST:latest.\n"
	"--version and --help work anywhere; 'profdb COMMAND --help' is the command's usage.\n"
	"JSON output (--json) is documented in docs/json.md.\n"
	"Exit status: 0 ok, 1 error, 2 usage.\n";

/* What --db a command takes: a host's store only, a fleet catalogue
 * (postgresql://...) too, or a catalogue it says itself what it does
 * with (sync pushes into one: --to). */
enum { HOST_ONLY, FLEET_TOO, FLEET_OWN };

static const struct {
	const char *name;
	int (*fn)(const char *db, int argc, char **argv);
	int db;
} commands[] = {
	{"query", cmd_query, FLEET_TOO},         {"show", cmd_show, FLEET_TOO},
	{"export", cmd_export, FLEET_TOO},       {"export-disk", cmd_export_disk, FLEET_TOO},
	{"import", cmd_import, HOST_ONLY},       {"import-disk", cmd_import_disk, HOST_ONLY},
	{"check", cmd_check, HOST_ONLY},
	{"heap", cmd_heap, FLEET_TOO},           {"top", cmd_top, FLEET_TOO},
	{"flame", cmd_flame, FLEET_TOO},         {"diff", cmd_diff, FLEET_TOO},
	{"report", cmd_report, FLEET_TOO},       {"serve", cmd_serve, FLEET_TOO},
	{"watch", cmd_watch, HOST_ONLY},         {"delete", cmd_delete, HOST_ONLY},
	{"prune", cmd_prune, HOST_ONLY},         {"du", cmd_du, HOST_ONLY},
	{"sync", cmd_sync, FLEET_OWN},           {"events", cmd_events, FLEET_TOO},
	{"gc", cmd_gc, FLEET_TOO},               {"symbols", cmd_symbols, FLEET_TOO},
};

/*
 * Global options anywhere before "--": they are taken out of argv, so
 * that each command's own parser never sees them ("profdb query runs
 * --db X" as well as "profdb --db X query runs").  --help is global only
 * before the command; after it, it is the command's.  Returns -1 to go
 * on, else the exit status.
 */
static int take_global_options(int *argc, char **argv, const char **db, int *help)
{
	int out = 1, seen_cmd = 0, rest = 0;

	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		if (rest || strcmp(a, "--") == 0) {
			rest = 1;
			argv[out++] = argv[i];
			continue;
		}
		if (strcmp(a, "--db") == 0) {
			if (i + 1 >= *argc) {
				cli_err("--db needs a path (--db PATH or --db=PATH)");
				return EXIT_USAGE;
			}
			*db = argv[++i];
		} else if (strncmp(a, "--db=", 5) == 0) {
			*db = a + 5;
		} else if (strcmp(a, "--version") == 0) {
			printf("profdb (profsvc) %s\n", PACKAGE_VERSION);
			return 0;
		} else if (!seen_cmd && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
			*help = 1;
		} else {
			if (!seen_cmd && a[0] == '-') {
				cli_err("unknown option '%s' before the command (profdb --help lists them)", a);
				return EXIT_USAGE;
			}
			seen_cmd = 1;
			argv[out++] = argv[i];
		}
	}
	argv[out] = NULL;
	*argc = out;
	if (*db && !**db) {
		cli_err("--db needs a path, not an empty string");
		return EXIT_USAGE;
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *db = NULL;
	int help = 0, rc = take_global_options(&argc, argv, &db, &help);

	/* SQLite's global memory statistics take a mutex on every allocation;
	 * profdb never asks for them. */
	store_tune_for_threads();
	if (rc >= 0)
		return rc;
	if (help) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	const char *path = cli_db_path(db);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		if (fleet_is_url(path) && commands[i].db == HOST_ONLY) {
			cli_err("%s works on a host's store (--db PATH); a fleet catalogue (--db "
			        "postgresql://...) is read by query, show, export, export-disk, heap, top, "
			        "flame, diff, report, serve, events and gc",
			        argv[1]);
			return EXIT_USAGE;
		}
		/* A command that reads and exits tidies after itself (no -wal or
		 * -shm left beside a store it only read); serve and watch live
		 * on beside files an admin may move, and never write a byte. */
		store_readers_tidy(strcmp(argv[1], "serve") != 0 && strcmp(argv[1], "watch") != 0);
		return commands[i].fn(path, argc - 1, argv + 1);
	}
	cli_err("unknown command '%s' (profdb --help lists them)", argv[1]);
	return EXIT_USAGE;
}
