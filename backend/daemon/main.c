/*
 * main.c - the profile-backend command line: a table of its subcommands
 * (name, usage, a line of description, the function that runs it), the
 * usage generated from that table, `profile-backend SUB --help` for one
 * subcommand, and the options every subcommand shares.  Calls daemon.c
 * (start, stop, status, sample), toolstack.c (create, attach, detach) and
 * sink.c's names.
 *
 * May call: daemon.c, the data path's sinks (datapath/sink.h), the
 * toolstack (toolstack/), common/ (options.h), fleet/ (fleet.h),
 * util/units.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/common/options.h"
#include "daemon.h"
#include "backend/datapath/sink.h"
#include "backend/toolstack/toolstack.h"
#include "fleet/fleet.h"
#include "util/units.h"

static int cmd_start(struct be_options *o, int argc, char **argv)
{
	(void)argc, (void)argv;
	return be_daemon_start(o);
}

static int cmd_stop(struct be_options *o, int argc, char **argv)
{
	(void)argc, (void)argv;
	return be_daemon_stop(o);
}

static int cmd_status(struct be_options *o, int argc, char **argv)
{
	(void)argc, (void)argv;
	return be_daemon_status(o);
}

static int cmd_sample(struct be_options *o, int argc, char **argv)
{
	(void)argc;
	return be_daemon_sample(o, argv[0]);
}

static int cmd_create(struct be_options *o, int argc, char **argv)
{
	return be_toolstack_create(o, argv[0], argc - 1, argv + 1);
}

static int cmd_attach(struct be_options *o, int argc, char **argv)
{
	return be_toolstack_attach(o, argv[0], argc - 1, argv + 1);
}

static int cmd_detach(struct be_options *o, int argc, char **argv)
{
	(void)argc;
	return be_toolstack_detach(o, argv[0], argv[1]);
}

/* The subcommands, in the usage's order.  synopsis follows
 * "profile-backend "; same_line: on the line before, after " | ".  The
 * words after the options: min_args..max_args (-1: no limit). */
static const struct subcommand {
	const char *name;
	const char *synopsis;
	const char *description;
	int same_line;
	int min_args, max_args;
	int needs_platform;           /* xenstore and event channels (but --dry-run) */
	int (*fn)(struct be_options *o, int argc, char **argv);
} subcommands[] = {
	{"start",
	 "start [--db PATH] [--platform xen|sim] [--sim-dir DIR]\n"
	 "                             [--foreground] [-v] [--durability process|power]\n"
	 "                             [--max-run-bytes N] [--max-store-bytes N] [--capacity SECTORS]\n"
	 "                             [--mirror-raw DIR] [--max-trace-pages N] [--trace-poll-ms MS]\n"
	 "                             [--sink store|null|raw=DIR|raw-direct=DIR] [--intake on|off]\n"
	 "                             [--sync postgresql://HOST/DB] [--sample-hz N [--kernel-symbols MAP]]",
	 "Serves the guests' profsvc disks and MirageOS trace buffers into the store, as a daemon.",
	 0, 0, 0, 1, cmd_start},
	{"stop", "stop", "Stops the running backend; its guests stay connected for the next start.",
	 0, 0, 0, 0, cmd_stop},
	{"status", "status [--json]",
	 "Says whether the backend runs and what it serves (--json: as docs/json.md says).",
	 1, 0, 0, 0, cmd_status},
	{"create",
	 "create [-v] [--dry-run] GUEST.cfg [xl options]\n"
	 "                             (-v: xl -vvv, libxl's steps; --dry-run: print the config xl\n"
	 "                             would get and the profsvc disks, create nothing)",
	 "Creates a guest from its xl config, its backendtype=profsvc disks served by the backend.",
	 0, 1, -1, 1, cmd_create},
	{"attach", "attach DOMAIN vdev=xvdp1 [vdev=xvdp2 vdev=xvdp3 ...]",
	 "Attaches profsvc disks to a running domain.", 0, 2, -1, 1, cmd_attach},
	{"detach", "detach [--force] DOMAIN VDEV",
	 "Detaches a profsvc disk from a domain (--force: without waiting for its frontend to close).",
	 0, 2, 2, 1, cmd_detach},
	{"sample", "sample DOMAIN [--hz 99] [--seconds S] [--symbols ELF] [--kernel-symbols MAP]",
	 "Samples a running domain's stacks from dom0 into its run, until it ends or S seconds pass.",
	 0, 1, 1, 0, cmd_sample},
};
#define NSUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

static const char common_usage[] =
	"Common options: --run-dir DIR (pid file and control socket; default $PROFSVC_RUN_DIR,\n"
	"else " PROFSVC_DEFAULT_RUN_DIR "), --platform/--sim-dir (default: xen if\n"
	"/dev/xen/evtchn exists; sim uses $XENSIM_DIR).  The store is --db, else $PROFSVC_DB,\n"
	"else " PROFSVC_DEFAULT_DB ".\n";

static const char about[] =
	"Serves the xvdp1/xvdp2/xvdp3 disks of HaLVM guests (.prof, .hp, GHC's eventlog;\n"
	"disk = ['vdev=xvdp1, backendtype=profsvc'])\n"
	"into the profsvc store, and keeps the mirage-profile trace buffer of any MirageOS guest\n"
	"that shares one (data/mprof/ring-ref); see profdb for the runs it records.\n";

/* The whole usage, generated from the table. */
static void usage(FILE *f)
{
	for (size_t i = 0; i < NSUBCOMMANDS; i++) {
		const char *lead = i == 0 ? "usage: profile-backend "
		                   : subcommands[i].same_line ? " | " : "\n       profile-backend ";
		fprintf(f, "%s%s", lead, subcommands[i].synopsis);
	}
	fputs("\nCommands (profile-backend COMMAND --help says more of one):\n", f);
	for (size_t i = 0; i < NSUBCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].description);
	fprintf(f, "%s%s", common_usage, about);
}

/* profile-backend SUB --help: its usage and what it does. */
static void subcommand_usage(const struct subcommand *s, FILE *f)
{
	fprintf(f, "usage: profile-backend %s\n%s\n%s", s->synopsis, s->description, common_usage);
}

static const struct subcommand *subcommand_find(const char *name)
{
	for (size_t i = 0; i < NSUBCOMMANDS; i++)
		if (!strcmp(subcommands[i].name, name))
			return &subcommands[i];
	return NULL;
}

/* --sink store | null | raw=DIR | raw-direct=DIR */
static int parse_sink(const char *arg, struct be_options *o)
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

static const struct option opts[] = {
	{"db", required_argument, NULL, 'd'},         {"platform", required_argument, NULL, 'p'},
	{"sim-dir", required_argument, NULL, 's'},    {"run-dir", required_argument, NULL, 'r'},
	{"foreground", no_argument, NULL, 'f'},       {"verbose", no_argument, NULL, 'v'},
	{"durability", required_argument, NULL, 'D'}, {"max-run-bytes", required_argument, NULL, 'm'},
	{"capacity", required_argument, NULL, 'c'},   {"mirror-raw", required_argument, NULL, 'M'},
	{"sink", required_argument, NULL, 'S'},       {"help", no_argument, NULL, 'h'},
	{"max-store-bytes", required_argument, NULL, 'B'},
	{"dry-run", no_argument, NULL, 'n'},
	{"force", no_argument, NULL, 'F'},
	{"max-trace-pages", required_argument, NULL, 'T'},
	{"trace-poll-ms", required_argument, NULL, 'P'},
	{"version", no_argument, NULL, 'V'},
	{"json", no_argument, NULL, 'j'},
	{"intake", required_argument, NULL, 'I'},
	{"sync", required_argument, NULL, 'Y'},
	{"hz", required_argument, NULL, 'H'},
	{"seconds", required_argument, NULL, 'E'},
	{"symbols", required_argument, NULL, 'Z'},
	{"kernel-symbols", required_argument, NULL, 'X'},
	{"sample-hz", required_argument, NULL, 'K'},
	/* Not in the usage: the tests' view of the journal fields. */
	{"log-format", required_argument, NULL, 'L'},
	{NULL, 0, NULL, 0},
};

/* --max-run-bytes, --max-store-bytes, --capacity: 0, or 2 (said why). */
static int opt_size(int c, const char *arg, struct be_options *o)
{
	switch (c) {
	case 'm':
		if (units_parse_size(arg, &o->max_run_bytes) || o->max_run_bytes == 0) {
			fprintf(stderr, "profile-backend: --max-run-bytes takes a size (e.g. 4G)\n");
			return 2;
		}
		break;
	case 'B':
		if (units_parse_size(arg, &o->max_store_bytes) || o->max_store_bytes == 0) {
			fprintf(stderr, "profile-backend: --max-store-bytes takes a size (e.g. 100G)\n");
			return 2;
		}
		break;
	default: /* 'c' */
		if (units_parse_size(arg, &o->capacity) || o->capacity < 2 || o->capacity > store_max_capacity()) {
			fprintf(stderr, "profile-backend: --capacity takes 2..%llu sectors\n",
			        (unsigned long long)store_max_capacity());
			return 2;
		}
		break;
	}
	return 0;
}

/* --max-trace-pages, --trace-poll-ms: 0, or 2 (said why). */
static int opt_count(int c, const char *arg, struct be_options *o)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	unsigned long max = c == 'T' ? 262144 : 10000; /* 1 GiB of buffer; 10 s */
	if (!*arg || *arg == '-' || *end || errno || v < 1 || v > max) {
		fprintf(stderr, "profile-backend: --%s takes 1..%lu\n", c == 'T' ? "max-trace-pages" : "trace-poll-ms",
		        max);
		return 2;
	}
	if (c == 'T')
		o->max_trace_pages = (uint32_t)v;
	else
		o->trace_poll_ms = (unsigned)v;
	return 0;
}

/* sample's --hz, --seconds, --symbols, --kernel-symbols: 0, or 2 (said why). */
static int opt_sample(int c, const char *arg, struct be_options *o)
{
	char *end;
	errno = 0;
	if (c == 'H' || c == 'K') {
		unsigned long v = strtoul(arg, &end, 10);
		if (!*arg || *arg == '-' || *end || errno || v < 1 || v > 10000) {
			fprintf(stderr, "profile-backend: --%s takes 1..10000 (samples a second)\n",
			        c == 'H' ? "hz" : "sample-hz");
			return 2;
		}
		*(c == 'H' ? &o->sample_hz : &o->start_sample_hz) = (uint32_t)v;
	} else if (c == 'E') {
		double v = strtod(arg, &end);
		if (!*arg || *end || errno || !(v > 0) || v > 31536000) {
			fprintf(stderr, "profile-backend: --seconds takes a number of seconds above 0 (e.g. 10 or 0.5)\n");
			return 2;
		}
		o->sample_us = (uint64_t)(v * 1e6);
	} else if (c == 'X') {
		/* absolute now: start's daemon leaves the directory it was started in */
		static char path[4096];
		if (!realpath(arg, path)) {
			fprintf(stderr, "profile-backend: --kernel-symbols %s: %s\n", arg, strerror(errno));
			return 2;
		}
		o->kernel_symbols = path;
	} else {
		o->symbols = arg;
	}
	return 0;
}

/* The options that take one of a few words: 0, or 2 (said why). */
static int opt_choice(int c, const char *arg, struct be_options *o)
{
	const char *bad = NULL;

	switch (c) {
	case 'D':
		if (!strcmp(arg, "process"))
			o->durability = STORE_DURABLE_PROCESS;
		else if (!strcmp(arg, "power"))
			o->durability = STORE_DURABLE_POWER;
		else
			bad = "--durability is process or power";
		break;
	case 'L':
		/* "fields" prints, with --foreground, each line as the
		 * journal fields it would send (one KEY=value a line, a
		 * blank line after each): the tests' way to check them
		 * without a journald.  "text" is the default. */
		if (strcmp(arg, "fields") && strcmp(arg, "text"))
			bad = "--log-format is text or fields";
		o->log_fields = !strcmp(arg, "fields");
		break;
	case 'I':
		if (strcmp(arg, "on") && strcmp(arg, "off"))
			bad = "--intake is on or off";
		o->no_intake = !strcmp(arg, "off");
		break;
	case 'Y':
		if (!fleet_is_url(arg))
			bad = "--sync takes the fleet catalogue's postgresql:// URL (the password from ~/.pgpass or "
			      "PGPASSFILE)";
		o->sync_url = arg;
		break;
	default: /* 'S' */
		if (parse_sink(arg, o) != 0)
			bad = "--sink is store, null, raw=DIR or raw-direct=DIR (the baselines of `make bench`)";
		break;
	}
	if (bad) {
		fprintf(stderr, "profile-backend: %s\n", bad);
		return 2;
	}
	return 0;
}

/* Parses the options after the subcommand (s: NULL if unknown); -1 to go
 * on, else the exit code (an error said, or --help or --version done). */
static int parse_options(int argc, char **argv, const struct subcommand *s, struct be_options *o,
                         const char **platform)
{
	int c, rc = 0;

	optind = 2;
	/* "+" for create: xl options after the config belong to xl.  Others
	 * take options after their words too (sample DOMAIN --hz 99). */
	const char *shorts = s && strcmp(s->name, "create") == 0 ? "+vh" : "vh";
	while (rc == 0 && (c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 'p': *platform = optarg; break;
		case 's': o->sim_dir = optarg; break;
		case 'r': o->run_dir = optarg; break;
		case 'f': o->foreground = 1; break;
		case 'v': o->verbose = 1; break;
		case 'M': o->mirror_raw = optarg; break;
		case 'n': o->dry_run = 1; break;
		case 'F': o->force = 1; break;
		case 'j': o->json = 1; break;
		case 'm': case 'B': case 'c': rc = opt_size(c, optarg, o); break;
		case 'T': case 'P': rc = opt_count(c, optarg, o); break;
		case 'H': case 'E': case 'Z': case 'X': case 'K': rc = opt_sample(c, optarg, o); break;
		case 'D': case 'L': case 'I': case 'Y': case 'S': rc = opt_choice(c, optarg, o); break;
		case 'h':
			if (s)
				subcommand_usage(s, stdout);
			else
				usage(stdout);
			return 0;
		case 'V':
			printf("profile-backend (profsvc) %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	return rc ? rc : -1;
}

/* What the options say together; 0 if they agree, else 2 (said why). */
static int check_options(struct be_options *o, const char *platform, int needs_platform)
{
	if (o->sink != SINK_STORE && o->mirror_raw) {
		fprintf(stderr, "profile-backend: --mirror-raw copies what the store records; with "
		                "--sink %s nothing is recorded: drop one of them\n", be_sink_name(o->sink));
		return 2;
	}
	if (plat_parse_kind(platform, &o->platform) != 0) {
		fprintf(stderr, "profile-backend: --platform is xen or sim, not '%s'\n", platform);
		return 2;
	}
	if (needs_platform && !o->dry_run && o->platform == PLAT_SIM && (!o->sim_dir || !*o->sim_dir)) {
		fprintf(stderr, "profile-backend: the sim platform needs --sim-dir DIR (or XENSIM_DIR): "
		                "the directory of 'xensim start --dir DIR'\n");
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct be_options o = {
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

	/* Options may come before the command too (profile-backend --run-dir
	 * DIR status): the command is moved first, the options after it. */
	command_first(argc, argv, opts);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("profile-backend (profsvc) %s\n", PACKAGE_VERSION);
		return 0;
	}
	const struct subcommand *s = subcommand_find(argv[1]);
	int rc = parse_options(argc, argv, s, &o, &platform);
	if (rc >= 0)
		return rc;
	/* $PROFSVC_SYNC: --sync for `start` when the option is not given (a
	 * unit's drop-in sets it: docs/examples/sync.conf). */
	const char *env_sync = getenv("PROFSVC_SYNC");
	if (!o.sync_url && env_sync && *env_sync && s && !strcmp(s->name, "start")) {
		if (!fleet_is_url(env_sync)) {
			fprintf(stderr, "profile-backend: PROFSVC_SYNC is not a postgresql:// URL of the fleet "
			                "catalogue\n");
			return 2;
		}
		o.sync_url = env_sync;
	}
	if (check_options(&o, platform, !s || s->needs_platform))
		return 2;
	if (o.force && s && strcmp(s->name, "detach")) {
		fprintf(stderr, "profile-backend: --force is detach's (profile-backend detach --force DOMAIN VDEV)\n");
		return 2;
	}
	int rest = argc - optind;
	if (!s || rest < s->min_args || (s->max_args >= 0 && rest > s->max_args)) {
		usage(stderr);
		return 2;
	}
	return s->fn(&o, rest, argv + optind);
}
