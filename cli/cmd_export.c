/*
 * cmd_export.c - `profdb export` (the .prof/.hp files, exactly as
 * convert-profile would have extracted them) and `profdb export-disk` (the
 * raw image a raw-disk backend would have held).  Both read one consistent
 * snapshot and never leave a half-written output file; export replaces no
 * existing file unless --force, and makes -o DIR as mkdir -p would.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../profile/speedscope.h"
#include "../profile/time_profile.h"
#include "../store/store_export.h"
#include "../util/units.h"
#include "cli_trace.h"
#include "cli_json.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb export RUN [--prof FILE] [--hp FILE] [-o DIR] [--force] [--salvage] [--json]\n"
	"                         [--speedscope FILE] [--ctf DIR] [--trace-json FILE]\n"
	"                         [--chrome-trace FILE]\n"
	"  RUN is a run id or 'latest'; FILE '-' is standard output.\n"
	"  --speedscope writes the time profile in speedscope's format (from\n"
	"  text profiles too), alone unless --prof, --hp or -o are given.\n"
	"  Without --prof/--hp, every profile of the run goes to DIR (default: .)\n"
	"  as NAME-RUN.prof and NAME-RUN.hp; DIR is made (with its parents, mode\n"
	"  0755) if missing.  An existing file (any output) is replaced only with\n"
	"  --force.  --json lists the profile files written (docs/json.md).\n"
	"  A MirageOS run's trace: --ctf DIR (a CTF trace directory that babeltrace2\n"
	"  reads), --trace-json FILE (its events), --chrome-trace FILE (Perfetto,\n"
	"  chrome://tracing, speedscope); alone unless --prof, --hp or -o are given.\n";

static const char usage_disk[] =
	"usage: profdb export-disk [--size SIZE] [--force] [--json] RUN VDEV FILE\n"
	"  VDEV is xvdp1, xvdp2 (or prof, hp).  The image is SIZE bytes (K, M, G, T:\n"
	"  binary units; whole 512-byte sectors, at least what the guest wrote);\n"
	"  by default what the guest wrote rounded up to a whole MiB, never more\n"
	"  than the device (a backend's devices are 1 TiB, mostly never written).\n"
	"  An existing FILE is replaced only with --force.\n";

static int out_cb(void *ctx, uint64_t off, const void *data, size_t len)
{
	static const uint8_t zeros[65536];
	struct outfile *o = ctx;

	(void)off;
	if (data)
		return outfile_write(o, data, len) ? 1 : 0;
	while (len > 0) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);
		if (outfile_write(o, zeros, n))
			return 1;
		len -= n;
	}
	return 0;
}

struct target {
	enum store_role role;
	const char *path;  /* explicit, or NULL for the default name */
	int explicit;
};

/* Where t goes: its own path, or DIR/NAME-RUN.EXT. */
static const char *target_path(const struct store_run *run, const struct target *t, const char *dir,
                               char *def, size_t len)
{
	char safe[80];
	if (t->path)
		return t->path;
	cli_safe_filename(run->name, safe, sizeof(safe));
	snprintf(def, len, "%s/%s-%lld.%s", dir, safe, (long long)run->run_id,
	         t->role == STORE_ROLE_PROF ? "prof" : "hp");
	return def;
}

/* mkdir -p DIR, mode 0755 (less the umask) for what it makes. */
/* 0 if path may be written: absent, standard output, or --force; else
 * says so.  Checked for every output before anything is written, so a
 * refusal leaves no partial export. */
static int may_write(const char *path, int force)
{
	struct stat st;

	if (!path || force || strcmp(path, "-") == 0 || lstat(path, &st) != 0)
		return 0;
	cli_err("%s exists; nothing exported (--force replaces it)", path);
	return -1;
}

static int make_dirs(const char *dir)
{
	char p[4096];
	struct stat st;
	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
		cli_err("-o %s: path too long", dir);
		return -1;
	}
	for (char *c = p + 1;; c++) {
		if (*c != '/' && *c)
			continue;
		char keep = *c;
		*c = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			cli_err("-o %s: cannot make %s: %s", dir, p, strerror(errno));
			return -1;
		}
		*c = keep;
		if (!keep)
			break;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		cli_err("-o %s: not a directory", dir);
		return -1;
	}
	return 0;
}

/* One file written, as --json lists it (docs/json.md "exported"). */
static json_t *json_exported(int64_t run_id, const char *vdev, const char *path, uint64_t bytes)
{
	return json_pack("{s:I,s:s,s:o,s:I}", "run_id", (json_int_t)run_id, "vdev", vdev, "path",
	                 view_json_guest(path), "bytes", (json_int_t)bytes);
}

/* Exports one profile: 0 exported, 1 failed (reported), 2 nothing to do.
 * The file is said on info, or added to files (--json). */
static int export_one(struct store *s, const struct store_run *run, const struct target *t,
                      const char *dir, int salvage, FILE *info, json_t *files)
{
	const char *ext = t->role == STORE_ROLE_PROF ? "prof" : "hp";
	struct store_device_info dev;
	struct store_extract_report rep;
	struct outfile o;
	char def[4096];
	const char *path;
	int rc;

	if (store_find_device(s, run->run_id, ext, &dev) != 0) {
		if (!t->explicit)
			return 2;
		cli_err("run %lld has no .%s device (%s)", (long long)run->run_id, ext,
		        t->role == STORE_ROLE_PROF ? "xvdp1" : "xvdp2");
		return 1;
	}
	path = target_path(run, t, dir, def, sizeof(def));
	if (outfile_open(&o, path) != 0)
		return 1;
	rc = store_extract_profile(s, &dev, salvage, out_cb, &o, &rep);
	if (rc != 0) {
		outfile_abort(&o);
		/* A profile the guest never wrote is not an error unless asked for. */
		if (rc == STORE_ECORRUPT && rep.header == STATUS_BLOCK_EMPTY && !t->explicit &&
		    !salvage) {
			cli_warn("%s", store_errmsg(s));
			return 2;
		}
		if (rc < 0)
			cli_err("%s", store_errmsg(s));
		else
			cli_err("export of %s from run %lld stopped; %s left untouched", dev.vdev,
			        (long long)run->run_id, path);
		return 1;
	}
	if (outfile_commit(&o) != 0)
		return 1;
	if (rep.how == STORE_EXTRACT_UNCLOSED)
		cli_warn("%s of run %lld: profile not cleanly closed (the guest did not close it); "
		         "exported the %llu bytes its status block records",
		         dev.vdev, (long long)run->run_id, (unsigned long long)rep.size);
	else if (rep.how == STORE_EXTRACT_MAJORITY || rep.how == STORE_EXTRACT_EXTENT)
		cli_warn("%s of run %lld salvaged: %s", dev.vdev, (long long)run->run_id, rep.note);
	if (files)
		json_array_append_new(files, json_exported(run->run_id, dev.vdev, path, rep.size));
	else if (strcmp(path, "-") != 0)
		fprintf(info, "run %lld %s -> %s (%llu bytes)\n", (long long)run->run_id, dev.vdev,
		        path, (unsigned long long)rep.size);
	return 0;
}

struct speedscope_job {
	const struct time_profile *p;
	char name[400];
};

static int render_speedscope(FILE *f, void *ctx)
{
	struct speedscope_job *j = ctx;
	return speedscope_write(f, j->p, j->name);
}

/* The run's time profile as a speedscope file; 0 or 1 (reported). */
static int export_speedscope(const char *db, const char *arg, const char *path)
{
	struct time_profile p;
	struct view_profile_read rd;
	struct view v;
	int rc = 1;

	tp_init(&p);
	if (cli_view_open(&v, db) != 0)
		return 1;
	if (cli_read_time_profile(&v, arg, &p, &rd) == 0) {
		struct speedscope_job job = {&p, {0}};
		char what[64];
		view_profile_caption(&rd.run, job.name, sizeof(job.name));
		snprintf(what, sizeof(what), "run %lld in speedscope's format", (long long)rd.run.run_id);
		rc = outfile_render(path, render_speedscope, &job, what);
	}
	tp_free(&p);
	view_close(&v);
	return rc;
}

int cmd_export(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"prof", required_argument, NULL, 'p'}, {"hp", required_argument, NULL, 'H'},
		{"salvage", no_argument, NULL, 's'},    {"help", no_argument, NULL, 'h'},
		{"speedscope", required_argument, NULL, 'S'},
		{"ctf", required_argument, NULL, 'C'},  {"trace-json", required_argument, NULL, 'J'},
		{"chrome-trace", required_argument, NULL, 'T'},
		{"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	const char *speedscope = NULL, *ctf = NULL, *trace_json = NULL, *chrome = NULL;
	struct target t[2] = {{STORE_ROLE_PROF, NULL, 0}, {STORE_ROLE_HP, NULL, 0}};
	const char *dir = NULL;
	struct store_run run;
	struct store *s;
	struct stat st;
	int64_t id;
	int salvage = 0, c, failed = 0, to_stdout = 0, force = 0, json = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			t[0].path = optarg;
			t[0].explicit = 1;
			break;
		case 'H':
			t[1].path = optarg;
			t[1].explicit = 1;
			break;
		case 'o':
			dir = optarg;
			break;
		case 's':
			salvage = 1;
			break;
		case 'f':
			force = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'S':
			speedscope = optarg;
			break;
		case 'C':
			ctf = optarg;
			break;
		case 'J':
			trace_json = optarg;
			break;
		case 'T':
			chrome = optarg;
			break;
		default:
			return cli_usage(usage, c);
		}
	}
	if (cli_nargs(argc, 1, usage) != 0)
		return EXIT_USAGE;
	if (t[0].path && t[1].path && strcmp(t[0].path, "-") == 0 && strcmp(t[1].path, "-") == 0) {
		cli_err("--prof and --hp cannot both go to standard output");
		return EXIT_USAGE;
	}
	if (t[0].path && t[1].path && strcmp(t[0].path, t[1].path) == 0) {
		cli_err("--prof and --hp name the same file '%s'", t[0].path);
		return EXIT_USAGE;
	}
	int trace = ctf || trace_json || chrome;
	/* (--ctf DIR must be empty or new: cli_trace_export refuses others) */
	if (may_write(speedscope, force) || may_write(trace_json, force) || may_write(chrome, force))
		return 1;
	if (trace && !dir && !t[0].explicit && !t[1].explicit) {
		if (speedscope && export_speedscope(db, argv[optind], speedscope) != 0)
			return 1;
		return cli_trace_export(db, argv[optind], ctf, trace_json, chrome);
	}
	if (trace && cli_trace_export(db, argv[optind], ctf, trace_json, chrome) != 0)
		return 1;
	if (speedscope && !dir && !t[0].explicit && !t[1].explicit)
		return export_speedscope(db, argv[optind], speedscope);
	if (speedscope && export_speedscope(db, argv[optind], speedscope) != 0)
		return 1;
	to_stdout = (t[0].path && !strcmp(t[0].path, "-")) || (t[1].path && !strcmp(t[1].path, "-"));
	if (json && to_stdout) {
		cli_err("--json prints on standard output: a profile cannot go there too");
		return EXIT_USAGE;
	}
	/* Files not named go to DIR, or when nothing is named, to the cwd. */
	if (dir || (!t[0].explicit && !t[1].explicit)) {
		if (!dir)
			dir = ".";
		if (make_dirs(dir) != 0)
			return 1;
	} else {
		/* Only the named files. */
		for (int i = 0; i < 2; i++)
			if (!t[i].explicit)
				t[i].role = (enum store_role)-1;
	}
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (cli_resolve_run(s, argv[optind], &id) != 0) {
		store_close(s);
		return 1;
	}
	if (store_read_begin(s) != 0 || store_get_run(s, id, &run) != 0) {
		cli_err("%s", store_errmsg(s));
		store_close(s);
		return 1;
	}
	/* Nothing is written while any output exists (unless --force):
	 * checked for every profile first, so a refusal leaves no export. */
	for (int i = 0; i < 2 && !force; i++) {
		struct store_device_info dev;
		char def[4096];
		if ((int)t[i].role < 0 ||
		    store_find_device(s, run.run_id, t[i].role == STORE_ROLE_PROF ? "prof" : "hp", &dev) != 0)
			continue;
		const char *path = target_path(&run, &t[i], dir, def, sizeof(def));
		if (strcmp(path, "-") != 0 && lstat(path, &st) == 0) {
			cli_err("%s exists; nothing exported (--force replaces it)", path);
			store_close(s);
			return 1;
		}
	}
	int exported = 0;
	json_t *files = json ? json_array() : NULL;
	for (int i = 0; i < 2; i++) {
		if ((int)t[i].role < 0)
			continue;
		int r = export_one(s, &run, &t[i], dir, salvage, to_stdout ? stderr : stdout, files);
		failed |= r == 1;
		exported += r == 0;
	}
	if (!failed && !exported) {
		cli_err("run %lld has no profile to export", (long long)id);
		failed = 1;
	}
	store_close(s);
	if (files && !failed)
		return cli_json_print(json_pack("{s:o}", "exported", files));
	json_decref(files);
	return failed ? 1 : 0;
}

int cmd_export_disk(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, NULL, 'z'},
		{"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct store_device_info dev;
	struct outfile o;
	struct store *s;
	uint64_t size = 0;
	const char *size_arg = NULL;
	int64_t id;
	int rc = 1, c, force = 0, json = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'f') {
			force = 1;
		} else if (c == 'j') {
			json = 1;
		} else if (c == 'z') {
			size_arg = optarg;
			if (units_parse_size(optarg, &size) != 0 || size == 0 || size % STORE_SECTOR_SIZE) {
				cli_err("--size %s: give a size in whole 512-byte sectors (e.g. 64M)", optarg);
				return EXIT_USAGE;
			}
		} else if (c == 'h') {
			fputs(usage_disk, stdout);
			return 0;
		} else {
			fputs(usage_disk, stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 3) {
		fputs(usage_disk, stderr);
		return EXIT_USAGE;
	}
	argv += optind - 1; /* RUN VDEV FILE as argv[1..3] */
	if (strcmp(argv[3], "-") == 0) {
		cli_err("a disk image must be a seekable file, not standard output");
		return EXIT_USAGE;
	}
	if (may_write(argv[3], force) != 0)
		return 1;
	if (cli_open_store(&s, db, STORE_READ) != 0)
		return 1;
	if (cli_resolve_run(s, argv[1], &id) != 0)
		goto out;
	if (store_read_begin(s) != 0 || store_find_device(s, id, argv[2], &dev) != 0) {
		cli_err("%s", store_errmsg(s));
		goto out;
	}
	/* What the guest wrote (status block included), in sectors. */
	uint64_t data = dev.written_end_sector > 2 ? dev.written_end_sector : 2;
	uint64_t sectors;
	if (size) {
		sectors = size / STORE_SECTOR_SIZE;
		if (sectors < data) {
			cli_err("--size %s: run %lld's %s holds %" PRIu64 " bytes; give at least that",
			        size_arg, (long long)id, dev.vdev, data * STORE_SECTOR_SIZE);
			goto out;
		}
	} else {
		uint64_t mib = (1u << 20) / STORE_SECTOR_SIZE;
		sectors = (data + mib - 1) / mib * mib;
		if (sectors > dev.capacity_sectors)
			sectors = dev.capacity_sectors > data ? dev.capacity_sectors : data;
	}
	dev.capacity_sectors = sectors; /* the size of the image written */
	if (outfile_open(&o, argv[3]) != 0)
		goto out;
	if (store_export_disk(s, &dev, o.fd) != 0) {
		cli_err("%s: %s", argv[3], store_errmsg(s));
		outfile_abort(&o);
		goto out;
	}
	if (outfile_commit(&o) != 0)
		goto out;
	if (json)
		rc = cli_json_print(json_pack("{s:[o]}", "exported",
		                          json_exported(id, dev.vdev, argv[3], sectors * STORE_SECTOR_SIZE)));
	else {
		printf("run %lld %s -> %s (%" PRIu64 " bytes, sparse)\n", (long long)id, dev.vdev, argv[3],
		       sectors * STORE_SECTOR_SIZE);
		rc = 0;
	}
out:
	store_close(s);
	return rc;
}
