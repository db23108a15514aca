/*
 * cmd_export.c - `profdb export` (the .prof/.hp files, exactly as
 * convert-profile would have extracted them, and the eventlog the guest
 * wrote to xvdp3 the same way) and `profdb export-disk` (the
 * raw image a raw-disk backend would have held).  Both read one consistent
 * snapshot and never leave a half-written output file; export replaces no
 * existing file unless --force, and makes -o DIR as mkdir -p would.
 *
 * May call: store/ (store.h, store_export.h), profile/render/speedscope.h,
 * profile/prof/time_profile.h, util/units.h, view/ through cli_view.h,
 * cli_util.h, cli_json.h, cli_trace.h, cli_samples.c.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/render/speedscope.h"
#include "profile/prof/time_profile.h"
#include "store/store_export.h"
#include "util/units.h"
#include "cli_trace.h"
#include "cli_json.h"
#include "cli_samples.h"
#include "cli_util.h"
#include "cli_view.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb export RUN [--prof FILE] [--hp FILE] [--eventlog FILE] [-o DIR] [--force]\n"
	"                         [--salvage] [--json]\n"
	"                         [--speedscope FILE] [--ctf DIR] [--trace-json FILE]\n"
	"                         [--chrome-trace FILE]\n"
	"                         [--folded FILE] [--perf-script FILE] [--pprof FILE] [--samples]\n"
	"  RUN is a run id or 'latest'; FILE '-' is standard output.\n"
	"  --speedscope writes the time profile in speedscope's format (from\n"
	"  text profiles too), alone unless a profile or -o is asked for.\n"
	"  --eventlog writes GHC's eventlog (xvdp3) byte for byte as the guest\n"
	"  wrote it; a guest that did not close it leaves the bytes it flushed.\n"
	"  Without --prof/--hp/--eventlog, every profile of the run goes to DIR\n"
	"  (default: .) as NAME-RUN.prof, NAME-RUN.hp and NAME-RUN.eventlog; DIR\n"
	"  is made (with its parents, mode 0755) if missing.  An existing file (any\n"
	"  output) is replaced only with --force.  --json lists the profile files\n"
	"  written (docs/json.md).\n"
	"  A MirageOS run's trace: --ctf DIR (a CTF trace directory that babeltrace2\n"
	"  reads), --trace-json FILE (its events), --chrome-trace FILE (Perfetto,\n"
	"  chrome://tracing, speedscope); alone unless a profile or -o is asked for.\n"
	"  A run's stack samples (profile-backend sample): --folded FILE (folded\n"
	"  stacks), --perf-script FILE (perf script's text), --pprof FILE (pprof's\n"
	"  gzipped profile.proto), and --speedscope FILE when the run has no .prof\n"
	"  or --samples is given; alone unless a profile or -o is asked for.\n";

static const char usage_disk[] =
	"usage: profdb export-disk [--size SIZE] [--force] [--json] RUN VDEV FILE\n"
	"  VDEV is xvdp1, xvdp2, xvdp3 (or prof, hp, eventlog).  The image is SIZE\n"
	"  bytes (K, M, G, T: binary units; whole 512-byte sectors, at least what\n"
	"  the guest wrote); by default what the guest wrote rounded up to a whole\n"
	"  MiB, never more than the device (a backend's devices are 1 TiB, mostly\n"
	"  never written).\n"
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
	snprintf(def, len, "%s/%s-%lld.%s", dir, safe, (long long)run->run_id, store_profile_ext(t->role));
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
	const char *ext = store_profile_ext(t->role);
	struct store_device_info dev;
	struct store_extract_report rep;
	struct outfile o;
	char def[4096];
	const char *path;
	int rc;

	if (store_find_device(s, run->run_id, ext, &dev) != 0) {
		if (!t->explicit)
			return 2;
		cli_err("run %lld has no .%s device (%s)", (long long)run->run_id, ext, store_profile_vdev(t->role));
		return 1;
	}
	path = target_path(run, t, dir, def, sizeof(def));
	if (outfile_open(&o, path) != 0)
		return 1;
	/* (an unclosed eventlog's cut, when it has one, is the store's:
	 * store_profile_extent) */
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
	if (rep.how == STORE_EXTRACT_UNCLOSED && rep.cut[0])
		cli_warn("%s of run %lld: eventlog not cleanly closed (the guest did not close it: it crashed "
		         "or still runs); exported %llu bytes, %s",
		         dev.vdev, (long long)run->run_id, (unsigned long long)rep.size, rep.cut);
	else if (rep.how == STORE_EXTRACT_UNCLOSED)
		cli_warn("%s of run %lld: profile not cleanly closed (the guest did not close it); "
		         "exported the %llu bytes its status block records",
		         dev.vdev, (long long)run->run_id, (unsigned long long)rep.size);
	else if (rep.how == STORE_EXTRACT_MAJORITY || rep.how == STORE_EXTRACT_EXTENT)
		cli_warn("%s of run %lld salvaged: %s%s%s", dev.vdev, (long long)run->run_id, rep.note,
		         rep.cut[0] ? "; the eventlog is " : "", rep.cut);
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

/* The run every output of export reads: the view is opened and RUN
 * resolved when an output first needs it (after the checks of what it
 * would write), once; each output reads in a snapshot of its own. */
struct export_run {
	const char *db, *arg;
	struct view v;
	struct view_run run;
	int state; /* 0: not yet, 1: open, -1: failed (said) */
};

/* 0 with x->v open and x->run resolved, or 1 (reported once). */
static int export_run(struct export_run *x)
{
	if (x->state == 0) {
		x->state = -1;
		if (cli_view_open(&x->v, x->db) == 0) {
			if (cli_view_resolve(&x->v, x->arg, &x->run) == 0)
				x->state = 1;
			else
				view_close(&x->v);
		}
	}
	if (x->state < 0)
		return 1;
	view_snapshot_end(&x->v); /* the output's reads are of a moment of their own */
	return 0;
}

/* export_run, its snapshot begun and the run's row read: 0, or 1 (reported). */
static int export_run_row(struct export_run *x, struct store_run *row)
{
	struct view_err e;
	cli_view_err(&e);
	if (export_run(x) != 0 || view_snapshot(&x->v, &e) != 0)
		return 1;
	if (store_get_run(x->v.s, x->run.id, row) != 0) {
		cli_err("%s", store_errmsg(x->v.s));
		return 1;
	}
	return 0;
}

static void export_run_close(struct export_run *x)
{
	if (x->state > 0)
		view_close(&x->v);
	x->state = 0;
}

/* The run's time profile as a speedscope file; 0 or 1 (reported). */
static int export_speedscope(struct export_run *x, const char *path)
{
	struct time_profile p;
	struct view_profile_read rd;
	int rc = 1;

	tp_init(&p);
	if (export_run(x) != 0)
		return 1;
	if (cli_read_time_profile(&x->v, &x->run, &p, &rd) == 0) {
		struct speedscope_job job = {&p, {0}};
		char what[64];
		view_profile_caption(&rd.run, job.name, sizeof(job.name));
		snprintf(what, sizeof(what), "run %lld in speedscope's format", (long long)rd.run.run_id);
		rc = outfile_render(path, render_speedscope, &job, what);
	}
	tp_free(&p);
	return rc;
}

/* The profiles export writes: .prof, .hp, the eventlog. */
#define NTARGETS 3

/* What export is asked: the profiles (0: .prof, 1: .hp, 2: the eventlog)
 * and where they go, the other outputs, --salvage, --force, --json. */
struct export_opts {
	struct target t[NTARGETS];
	const char *dir, *speedscope, *ctf, *trace_json, *chrome;
	struct samples_outputs so;
	int salvage, force, json, samples;
};

static int export_opt(int c, const char *arg, void *ctx)
{
	struct export_opts *o = ctx;

	switch (c) {
	case 'p':
	case 'H':
	case 'E': {
		int i = c == 'p' ? 0 : c == 'H' ? 1 : 2;
		o->t[i].path = arg;
		o->t[i].explicit = 1;
		break;
	}
	case 'o':
		o->dir = arg;
		break;
	case 's':
		o->salvage = 1;
		break;
	case 'f':
		o->force = 1;
		break;
	case 'S':
		o->speedscope = arg;
		break;
	case 'C':
		o->ctf = arg;
		break;
	case 'J':
		o->trace_json = arg;
		break;
	case 'T':
		o->chrome = arg;
		break;
	case 'F':
		o->so.folded = arg;
		break;
	case 'P':
		o->so.perf_script = arg;
		break;
	case 'G':
		o->so.pprof = arg;
		break;
	case 'm':
		o->samples = 1;
		break;
	default:
		return CLI_NOT_MINE;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct export_opts *o)
{
	static const struct option opts[] = {
		{"prof", required_argument, NULL, 'p'}, {"hp", required_argument, NULL, 'H'},
		{"eventlog", required_argument, NULL, 'E'},
		{"salvage", no_argument, NULL, 's'},    {"help", no_argument, NULL, 'h'},
		{"speedscope", required_argument, NULL, 'S'},
		{"ctf", required_argument, NULL, 'C'},  {"trace-json", required_argument, NULL, 'J'},
		{"chrome-trace", required_argument, NULL, 'T'},
		{"folded", required_argument, NULL, 'F'}, {"perf-script", required_argument, NULL, 'P'},
		{"pprof", required_argument, NULL, 'G'},  {"samples", no_argument, NULL, 'm'},
		{"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "o:h", opts, 1, export_opt};
	const struct target *t = o->t;
	int rc = cli_parse_opts(&spec, argc, argv, o, &o->json);

	if (rc != CLI_GO_ON)
		return rc;
	for (int i = 0; i < NTARGETS; i++)
		for (int j = i + 1; j < NTARGETS; j++) {
			if (!t[i].path || !t[j].path || strcmp(t[i].path, t[j].path) != 0)
				continue;
			if (strcmp(t[i].path, "-") == 0)
				cli_err("--%s and --%s cannot both go to standard output", store_profile_ext(t[i].role),
				        store_profile_ext(t[j].role));
			else
				cli_err("--%s and --%s name the same file '%s'", store_profile_ext(t[i].role),
				        store_profile_ext(t[j].role), t[i].path);
			return EXIT_USAGE;
		}
	return CLI_GO_ON;
}

/* Is any profile named (--prof, --hp, --eventlog)? */
static int any_explicit(const struct export_opts *o)
{
	for (int i = 0; i < NTARGETS; i++)
		if (o->t[i].explicit)
			return 1;
	return 0;
}

/* Files not named go to DIR, or when nothing is named, to the cwd (made
 * as mkdir -p would); else only the named files.  0, or -1 (reported). */
static int place_targets(struct export_opts *o)
{
	if (o->dir || !any_explicit(o)) {
		if (!o->dir)
			o->dir = ".";
		return make_dirs(o->dir);
	}
	for (int i = 0; i < NTARGETS; i++)
		if (!o->t[i].explicit)
			o->t[i].role = (enum store_role)-1;
	return 0;
}

/* Nothing is written while any output exists (unless --force): checked
 * for every profile first, so a refusal leaves no export.  0, or -1
 * (reported). */
static int targets_free(struct store *s, const struct store_run *run, const struct export_opts *o)
{
	for (int i = 0; i < NTARGETS && !o->force; i++) {
		struct store_device_info dev;
		char def[4096];
		if ((int)o->t[i].role < 0 || store_find_device(s, run->run_id, store_profile_ext(o->t[i].role), &dev) != 0)
			continue;
		if (may_write(target_path(run, &o->t[i], o->dir, def, sizeof(def)), 0) != 0)
			return -1;
	}
	return 0;
}

/* --salvage: the chunks whose checksums fail, each said once as it is
 * found (the status block's and the file's reads may meet it twice). */
#define DAMAGE_SEEN 64
struct damage_seen {
	int64_t dev[DAMAGE_SEEN], chunk[DAMAGE_SEEN];
	int n;
};

static int damage_warn(void *ctx, const struct store_damage *d)
{
	struct damage_seen *w = ctx;
	char what[256];

	for (int i = 0; i < w->n; i++)
		if (w->dev[i] == d->device_id && w->chunk[i] == d->chunk)
			return 0;
	if (w->n < DAMAGE_SEEN) {
		w->dev[w->n] = d->device_id;
		w->chunk[w->n++] = d->chunk;
	}
	store_damage_describe(d, what, sizeof(what));
	cli_warn("%s: not sound, salvaged as zeros", what);
	return 0;
}

/* The run's .prof, .hp and eventlog as the options say: the exit status. */
static int export_profiles(struct export_run *x, struct export_opts *o)
{
	const struct target *t = o->t;
	int to_stdout = 0;
	for (int i = 0; i < NTARGETS; i++)
		to_stdout |= t[i].path && !strcmp(t[i].path, "-");
	struct store_run run;

	if (o->json && to_stdout) {
		cli_err("--json prints on standard output: a profile cannot go there too");
		return EXIT_USAGE;
	}
	if (place_targets(o) != 0 || export_run_row(x, &run) != 0)
		return 1;
	struct store *s = x->v.s;
	if (targets_free(s, &run, o) != 0)
		return 1;
	struct damage_seen seen = {.n = 0};
	if (o->salvage)
		store_salvage_damage(s, damage_warn, &seen);
	int exported = 0, failed = 0;
	json_t *files = o->json ? json_array() : NULL;
	for (int i = 0; i < NTARGETS; i++) {
		if ((int)t[i].role < 0)
			continue;
		int r = export_one(s, &run, &t[i], o->dir, o->salvage, to_stdout ? stderr : stdout, files);
		failed |= r == 1;
		exported += r == 0;
	}
	if (!failed && !exported) {
		cli_err("run %lld has no profile to export", (long long)run.run_id);
		failed = 1;
	}
	if (files && !failed)
		return cli_json_print(json_pack("{s:o}", "exported", files));
	json_decref(files);
	return failed ? 1 : 0;
}

/* --speedscope from the samples: asked (--samples), or the run has
 * samples and no .prof to draw it from. */
static int speedscope_of_samples(struct export_run *x, int asked)
{
	struct store_device_info dev;
	if (asked)
		return 1;
	return export_run(x) == 0 && view_snapshot(&x->v, NULL) == 0 &&
	       store_find_device(x->v.s, x->run.id, "prof", &dev) != 0 &&
	       store_find_device(x->v.s, x->run.id, STORE_SAMPLES_VDEV, &dev) == 0;
}

/* The samples' outputs (with --speedscope when it is theirs), then
 * whatever else was asked: the exit status. */
static int export_samples_first(struct export_run *x, struct export_opts *o, int alone)
{
	if (o->speedscope && speedscope_of_samples(x, o->samples)) {
		o->so.speedscope = o->speedscope;
		o->speedscope = NULL;
	}
	if (samples_outputs_any(&o->so) && (export_run(x) != 0 || cli_samples_export(&x->v, &x->run, &o->so) != 0))
		return 1;
	return alone && !o->speedscope && !o->ctf && !o->trace_json && !o->chrome ? 0 : -1;
}

/* The trace's outputs: 0, or 1 (reported). */
static int export_trace(struct export_run *x, const struct export_opts *o)
{
	return export_run(x) != 0 || cli_trace_export(&x->v, &x->run, o->ctf, o->trace_json, o->chrome) != 0;
}

/* The outputs asked for, in their order: the exit status. */
static int export_outputs(struct export_run *x, struct export_opts *o)
{
	int trace = o->ctf || o->trace_json || o->chrome;
	int alone = !o->dir && !any_explicit(o); /* no profile asked for */
	int rc;
	if (samples_outputs_any(&o->so) || o->speedscope) {
		rc = export_samples_first(x, o, alone);
		if (rc >= 0)
			return rc;
	}
	if (trace && alone) {
		if (o->speedscope && export_speedscope(x, o->speedscope) != 0)
			return 1;
		return export_trace(x, o);
	}
	if (trace && export_trace(x, o) != 0)
		return 1;
	if (o->speedscope && ((rc = export_speedscope(x, o->speedscope)) != 0 || alone))
		return rc;
	return export_profiles(x, o);
}

int cmd_export(const char *db, int argc, char **argv)
{
	struct export_opts o = {
		.t = {{STORE_ROLE_PROF, NULL, 0}, {STORE_ROLE_HP, NULL, 0}, {STORE_ROLE_EVENTLOG, NULL, 0}}};
	int rc = parse_options(argc, argv, &o);

	if (rc != CLI_GO_ON)
		return rc;
	/* (--ctf DIR must be empty or new: cli_trace_export refuses others) */
	if (may_write(o.speedscope, o.force) || may_write(o.trace_json, o.force) ||
	    may_write(o.chrome, o.force) || may_write(o.so.folded, o.force) ||
	    may_write(o.so.perf_script, o.force) || may_write(o.so.pprof, o.force))
		return 1;
	if (o.samples && !o.speedscope) {
		cli_err("--samples says where --speedscope comes from: give --speedscope FILE too");
		return EXIT_USAGE;
	}
	struct export_run x = {.db = db, .arg = argv[optind]};
	rc = export_outputs(&x, &o);
	export_run_close(&x);
	return rc;
}

/* What export-disk is asked: --size (0: by default), --force, --json. */
struct disk_opts {
	uint64_t size;
	const char *size_arg;
	int force, json;
};

static int disk_opt(int c, const char *arg, void *ctx)
{
	struct disk_opts *o = ctx;

	if (c == 'f') {
		o->force = 1;
	} else if (c == 'z') {
		o->size_arg = arg;
		if (units_parse_size(arg, &o->size) != 0 || o->size == 0 || o->size % STORE_SECTOR_SIZE) {
			cli_err("--size %s: give a size in whole 512-byte sectors (e.g. 64M)", arg);
			return EXIT_USAGE;
		}
	} else {
		return CLI_NOT_MINE;
	}
	return 0;
}

/* The image's size in sectors: --size, else what the guest wrote (status
 * block included) rounded up to a whole MiB, never more than the device.
 * A guest whose status block gives its file's size but that also wrote
 * far past it (its disk's last sector: a 1 TiB image by default) gets an
 * image of its file, saying so; --size takes the rest.  0 when --size is
 * smaller than what the guest wrote (reported). */
static uint64_t image_sectors(const struct store_device_info *dev, const struct disk_opts *o, int64_t id)
{
	uint64_t data = dev->written_end_sector > 2 ? dev->written_end_sector : 2;
	uint64_t sectors, mib = (1u << 20) / STORE_SECTOR_SIZE;

	if (o->size) {
		sectors = o->size / STORE_SECTOR_SIZE;
		if (sectors < data) {
			cli_err("--size %s: run %lld's %s holds %" PRIu64 " bytes; give at least that",
			        o->size_arg, (long long)id, dev->vdev, data * STORE_SECTOR_SIZE);
			return 0;
		}
		return sectors;
	}
	uint64_t file_end = dev->status == STORE_STATUS_OK && dev->file_size >= 0
	                            ? 1 + ((uint64_t)dev->file_size + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE
	                            : data;
	if (file_end < data && (data - file_end) > mib) {
		fprintf(stderr,
		        "%s: run %lld's %s: the guest wrote up to byte %" PRIu64 ", far past its file's end (%" PRIu64
		        " bytes): the image holds the file; --size %" PRIu64 " takes all it wrote\n",
		        cli_prog, (long long)id, dev->vdev, data * STORE_SECTOR_SIZE, (uint64_t)dev->file_size,
		        data * STORE_SECTOR_SIZE);
		data = file_end > 2 ? file_end : 2;
	}
	sectors = (data + mib - 1) / mib * mib;
	if (sectors > dev->capacity_sectors)
		sectors = dev->capacity_sectors > data ? dev->capacity_sectors : data;
	return sectors;
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
	static const struct cli_optspec spec = {usage_disk, "h", opts, 3, disk_opt};
	struct disk_opts o = {0};
	struct store_device_info dev;
	struct outfile of;
	struct view v;
	struct view_run run;
	uint64_t sectors;
	int rc = cli_parse_opts(&spec, argc, argv, &o, &o.json);

	if (rc != CLI_GO_ON)
		return rc;
	argv += optind - 1; /* RUN VDEV FILE as argv[1..3] */
	if (strcmp(argv[3], "-") == 0) {
		cli_err("a disk image must be a seekable file, not standard output");
		return EXIT_USAGE;
	}
	if (may_write(argv[3], o.force) != 0 || cli_view_open(&v, db) != 0)
		return 1;
	rc = 1;
	struct store *s = v.s;
	if (cli_view_resolve(&v, argv[1], &run) != 0)
		goto out;
	int64_t id = run.id;
	struct view_err e;
	cli_view_err(&e);
	if (view_snapshot(&v, &e) != 0)
		goto out;
	if (store_find_device(s, id, argv[2], &dev) != 0) {
		cli_err("%s", store_errmsg(s));
		goto out;
	}
	struct stat st;
	if (stat(argv[3], &st) == 0 && !S_ISREG(st.st_mode)) {
		/* before opening it: a FIFO's open would wait for a reader */
		cli_err("%s is not a regular file: a disk image is written sparse, which takes one (nothing written)",
		        argv[3]);
		goto out;
	}
	if (!(sectors = image_sectors(&dev, &o, id)) || outfile_open(&of, argv[3]) != 0)
		goto out;
	dev.capacity_sectors = sectors; /* the size of the image written */
	if (dev.written_end_sector > sectors)
		dev.written_end_sector = sectors; /* what lies past the image stays out of it */
	if (store_export_disk(s, &dev, of.fd) != 0) {
		cli_err("%s: %s", argv[3], store_errmsg(s));
		outfile_abort(&of);
		goto out;
	}
	if (outfile_commit(&of) != 0)
		goto out;
	if (o.json)
		rc = cli_json_print(json_pack("{s:[o]}", "exported",
		                          json_exported(id, dev.vdev, argv[3], sectors * STORE_SECTOR_SIZE)));
	else {
		printf("run %lld %s -> %s (%" PRIu64 " bytes, sparse)\n", (long long)id, dev.vdev, argv[3],
		       sectors * STORE_SECTOR_SIZE);
		rc = 0;
	}
out:
	view_close(&v);
	return rc;
}
