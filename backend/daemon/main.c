/*
 * main.c - the profile-backend command line.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/common/options.h"
#include "backend/datapath/sink.h"
#include "backend/daemon/daemon.h"
#include "backend/toolstack/toolstack.h"
#include "fleet/fleet.h"
#include "util/units.h"

static const char usage[] =
	"usage: profile-backend start [--db PATH] [--platform xen|sim] [--sim-dir DIR]\n"
	"                             [--foreground] [-v] [--durability process|power]\n"
	"                             [--max-run-bytes N] [--max-store-bytes N] [--capacity SECTORS]\n"
	"                             [--mirror-raw DIR] [--max-trace-pages N] [--trace-poll-ms MS]\n"
	"                             [--sink store|null|raw=DIR|raw-direct=DIR] [--intake on|off]\n"
	"                             [--sync postgresql://HOST/DB]\n"
	"       profile-backend stop | status [--json]\n"
	"       profile-backend create [-v] [--dry-run] GUEST.cfg [xl options]\n"
	"                             (-v: xl -vvv, libxl's steps; --dry-run: print the config xl\n"
	"                             would get and the profsvc disks, create nothing)\n"
	"       profile-backend attach DOMAIN vdev=xvdp1 [vdev=xvdp2 ...]\n"
	"       profile-backend detach DOMAIN VDEV\n"
	"Common options: --run-dir DIR (pid file and control socket; default $PROFSVC_RUN_DIR,\n"
	"else " PROFSVC_DEFAULT_RUN_DIR "), --platform/--sim-dir (default: xen if\n"
	"/dev/xen/evtchn exists; sim uses $XENSIM_DIR).  The store is --db, else $PROFSVC_DB,\n"
	"else " PROFSVC_DEFAULT_DB ".\n"
	"Serves the xvdp1/xvdp2 disks of HaLVM guests (disk = ['vdev=xvdp1, backendtype=profsvc'])\n"
	"into the profsvc store, and keeps the mirage-profile trace buffer of any MirageOS guest\n"
	"that shares one (data/mprof/ring-ref); see profdb for the runs it records.\n";

/* --sink store | null | raw=DIR | raw-direct=DIR */
static int parse_sink(const char *arg, struct options *o)
{
	if (!strcmp(arg, "store"))
		o->sink = SINK_STORE;
	else if (!strcmp(arg, "null"))
		o->sink = SINK_NULL;
	else if (!strncmp(arg, "raw=", 4) && arg[4])
		o->sink = SINK_RAW, o->sink_dir = arg + 4;
	else if (!strncmp(arg, "raw-direct=", 11) && arg[11])
		o->sink = SINK_RAW_DIRECT, o->sink_dir = arg + 11;
	else
		return -1;
	return 0;
}

/* Moves the first word that is not an option (nor an option's argument)
 * to argv[1], keeping the order of the rest: what comes before the command
 * is then parsed as if it came after it.  Words after "--" are left. */
static void command_first(int argc, char **argv, const struct option *opts)
{
	int i = 1;

	while (i < argc && argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--")) {
		const char *a = argv[i];
		int takes_arg = 0;
		if (a[1] == '-' && !strchr(a, '=')) {
			for (const struct option *o = opts; o->name; o++)
				if (!strcmp(a + 2, o->name))
					takes_arg = o->has_arg == required_argument;
		}
		i += takes_arg ? 2 : 1;
	}
	if (i <= 1 || i >= argc || !strcmp(argv[i], "--"))
		return;
	char *cmd = argv[i];
	memmove(argv + 2, argv + 1, (size_t)(i - 1) * sizeof(*argv));
	argv[1] = cmd;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},         {"platform", required_argument, NULL, 'p'},
		{"sim-dir", required_argument, NULL, 's'},    {"run-dir", required_argument, NULL, 'r'},
		{"foreground", no_argument, NULL, 'f'},       {"verbose", no_argument, NULL, 'v'},
		{"durability", required_argument, NULL, 'D'}, {"max-run-bytes", required_argument, NULL, 'm'},
		{"capacity", required_argument, NULL, 'c'},   {"mirror-raw", required_argument, NULL, 'M'},
		{"sink", required_argument, NULL, 'S'},       {"help", no_argument, NULL, 'h'},
		{"max-store-bytes", required_argument, NULL, 'B'},
		{"dry-run", no_argument, NULL, 'n'},
		{"max-trace-pages", required_argument, NULL, 'T'},
		{"trace-poll-ms", required_argument, NULL, 'P'},
		{"version", no_argument, NULL, 'V'},
		{"json", no_argument, NULL, 'j'},
		{"intake", required_argument, NULL, 'I'},
		{"sync", required_argument, NULL, 'Y'},
		/* Not in the usage: the tests' view of the journal fields. */
		{"log-format", required_argument, NULL, 'L'},
		{NULL, 0, NULL, 0},
	};
	struct options o = {
		.db = getenv("PROFSVC_DB") && *getenv("PROFSVC_DB") ? getenv("PROFSVC_DB") : PROFSVC_DEFAULT_DB,
		.sim_dir = getenv("XENSIM_DIR"),
		.run_dir = getenv("PROFSVC_RUN_DIR") && *getenv("PROFSVC_RUN_DIR") ? getenv("PROFSVC_RUN_DIR")
		                                                                   : PROFSVC_DEFAULT_RUN_DIR,
		.durability = STORE_DURABLE_PROCESS,
		.max_run_bytes = DEFAULT_MAX_RUN_BYTES,
		.capacity = DEFAULT_CAPACITY,
		.max_trace_pages = DEFAULT_MAX_TRACE_PAGES,
		.trace_poll_ms = DEFAULT_TRACE_POLL_MS,
	};
	const char *platform = NULL;
	int c;

	/* Options may come before the command too (profile-backend --run-dir
	 * DIR status): the command is moved first, the options after it. */
	command_first(argc, argv, opts);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("profile-backend (profsvc) %s\n", PACKAGE_VERSION);
		return 0;
	}
	const char *cmd = argv[1];
	optind = 2;
	/* "+": xl options after the config belong to xl. */
	while ((c = getopt_long(argc, argv, "+vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.db = optarg;
			break;
		case 'p':
			platform = optarg;
			break;
		case 's':
			o.sim_dir = optarg;
			break;
		case 'r':
			o.run_dir = optarg;
			break;
		case 'f':
			o.foreground = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'D':
			if (!strcmp(optarg, "process"))
				o.durability = STORE_DURABLE_PROCESS;
			else if (!strcmp(optarg, "power"))
				o.durability = STORE_DURABLE_POWER;
			else {
				fprintf(stderr, "profile-backend: --durability is process or power\n");
				return 2;
			}
			break;
		case 'm':
			if (units_parse_size(optarg, &o.max_run_bytes) || o.max_run_bytes == 0) {
				fprintf(stderr, "profile-backend: --max-run-bytes takes a size (e.g. 4G)\n");
				return 2;
			}
			break;
		case 'B':
			if (units_parse_size(optarg, &o.max_store_bytes) || o.max_store_bytes == 0) {
				fprintf(stderr, "profile-backend: --max-store-bytes takes a size (e.g. 100G)\n");
				return 2;
			}
			break;
		case 'c':
			if (units_parse_size(optarg, &o.capacity) || o.capacity < 2 || o.capacity > store_max_capacity()) {
				fprintf(stderr, "profile-backend: --capacity takes 2..%llu sectors\n",
				        (unsigned long long)store_max_capacity());
				return 2;
			}
			break;
		case 'T':
		case 'P': {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			unsigned long max = c == 'T' ? 262144 : 10000; /* 1 GiB of buffer; 10 s */
			if (!*optarg || *optarg == '-' || *end || errno || v < 1 || v > max) {
				fprintf(stderr, "profile-backend: --%s takes 1..%lu\n",
				        c == 'T' ? "max-trace-pages" : "trace-poll-ms", max);
				return 2;
			}
			if (c == 'T')
				o.max_trace_pages = (uint32_t)v;
			else
				o.trace_poll_ms = (unsigned)v;
			break;
		}
		case 'L':
			/* "fields" prints, with --foreground, each line as the
			 * journal fields it would send (one KEY=value a line, a
			 * blank line after each): the tests' way to check them
			 * without a journald.  "text" is the default. */
			if (strcmp(optarg, "fields") && strcmp(optarg, "text")) {
				fprintf(stderr, "profile-backend: --log-format is text or fields\n");
				return 2;
			}
			o.log_fields = !strcmp(optarg, "fields");
			break;
		case 'M':
			o.mirror_raw = optarg;
			break;
		case 'n':
			o.dry_run = 1;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'I':
			if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
				fprintf(stderr, "profile-backend: --intake is on or off\n");
				return 2;
			}
			o.no_intake = !strcmp(optarg, "off");
			break;
		case 'Y':
			if (!fleet_is_url(optarg)) {
				fprintf(stderr, "profile-backend: --sync takes the fleet catalogue's "
				                "postgresql:// URL (the password from ~/.pgpass or PGPASSFILE)\n");
				return 2;
			}
			o.sync_url = optarg;
			break;
		case 'S':
			if (parse_sink(optarg, &o) != 0) {
				fprintf(stderr, "profile-backend: --sink is store, null, raw=DIR or raw-direct=DIR "
				                "(the baselines of `make bench`)\n");
				return 2;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("profile-backend (profsvc) %s\n", PACKAGE_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (o.sink != SINK_STORE && o.mirror_raw) {
		fprintf(stderr, "profile-backend: --mirror-raw copies what the store records; with "
		                "--sink %s nothing is recorded: drop one of them\n", sink_name(o.sink));
		return 2;
	}
	if (plat_parse_kind(platform, &o.platform) != 0) {
		fprintf(stderr, "profile-backend: --platform is xen or sim, not '%s'\n", platform);
		return 2;
	}
	int needs_platform = strcmp(cmd, "stop") && strcmp(cmd, "status") && !o.dry_run;
	if (needs_platform && o.platform == PLAT_SIM && (!o.sim_dir || !*o.sim_dir)) {
		fprintf(stderr, "profile-backend: the sim platform needs --sim-dir DIR (or XENSIM_DIR): "
		                "the directory of 'xensim start --dir DIR'\n");
		return 2;
	}
	int rest = argc - optind;
	if (!strcmp(cmd, "start") && rest == 0)
		return daemon_start(&o);
	if (!strcmp(cmd, "stop") && rest == 0)
		return daemon_stop(&o);
	if (!strcmp(cmd, "status") && rest == 0)
		return daemon_status(&o);
	if (!strcmp(cmd, "create") && rest >= 1)
		return toolstack_create(&o, argv[optind], rest - 1, argv + optind + 1);
	if (!strcmp(cmd, "attach") && rest >= 2)
		return toolstack_attach(&o, argv[optind], rest - 1, argv + optind + 1);
	if (!strcmp(cmd, "detach") && rest == 2)
		return toolstack_detach(&o, argv[optind], argv[optind + 1]);
	fputs(usage, stderr);
	return 2;
}
