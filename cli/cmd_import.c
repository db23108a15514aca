/*
 * cmd_import.c - putting profiles a user already has into the store as
 * runs.  `profdb import FILE...`: plain .prof, .hp and eventlog files, as
 * GHC wrote them, become one run whose exports give them back byte for
 * byte.  `profdb import-disk`: old HaLVM raw images (the pre-sized
 * prof.disk/hp.disk of the raw-disk way) become one run, so users keep
 * their history.  Either import commits in transactions of 1 MiB and
 * leaves no partial run behind when it fails.  Each file or image is
 * recognised before anything is stored (docs/halvm-profile-protocol.md:
 * an image has its status block in sector 0, the file from sector 1): a
 * .hp begins with its JOB line, a .prof with GHC's report header (or '{'
 * for -pj), an eventlog (xvdp3) with GHC's header marker "hdrb"; an image
 * given in another's place, an all-zero one, or a file that is no
 * profile is refused.
 *
 * May call: store/ (store.h, store_export.h), view/view_json.h, cli_util.h,
 *           cli_json.h, libc.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_export.h"
#include "cli_json.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb import-disk [--name NAME] [--force] [--json] PROF.disk [HP.disk]\n"
	"       profdb import-disk [--name NAME] [--force] [--json] [--prof PROF.disk] [--hp HP.disk]\n"
	"                          [--eventlog E.disk]\n"
	"  PROF.disk is the image that was xvdp1 (.prof), HP.disk the one that was xvdp2 (.hp),\n"
	"  E.disk the one that was xvdp3 (GHC's eventlog).\n"
	"  An image that holds the other kind of profile, only zeros, or no profile\n"
	"  at all is refused; --force imports the images as they are.\n"
	"  --json prints the new run and its devices (docs/json.md).\n";

struct image {
	const char *path;
	int fd;
	struct stat st;
	const char *vdev;
	int32_t devid;
	int plain;        /* a plain file (import), not a raw disk image (import-disk) */
};

/* 0; -1 (reported); 1 for an empty plain file (import leaves it out). */
static int open_image(struct image *im)
{
	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer
	 * forever; it is refused below like any other non-file. */
	im->fd = open(im->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (im->fd < 0) {
		cli_err("cannot open %s: %s", im->path, strerror(errno));
		return -1;
	}
	if (fstat(im->fd, &im->st) != 0 || !S_ISREG(im->st.st_mode)) {
		cli_err("%s is not a regular file (a raw disk image is expected)", im->path);
		return -1;
	}
	if (im->plain && im->st.st_size == 0)
		return 1; /* the caller says so */
	if (!im->plain && im->st.st_size < 2 * (off_t)STORE_SECTOR_SIZE) {
		cli_err("%s is %s: a profile disk holds at least a status block and one sector",
		        im->path, im->st.st_size == 0 ? "empty" : "too small");
		return -1;
	}
	return 0;
}

/* GHC's .prof: "\t<date> Time and Allocation Profiling Report" on its
 * first line, or a JSON object (-pj). */
static int looks_prof(const uint8_t *d, size_t n)
{
	size_t i = 0;
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	if (i < n && d[i] == '{')
		return 1;
	const uint8_t *nl = memchr(d, '\n', n);
	size_t line = nl ? (size_t)(nl - d) : n;
	static const char head[] = "Time and Allocation Profiling Report";
	return memmem(d, line, head, sizeof(head) - 1) != NULL;
}

static int all_zero(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i])
			return 0;
	return 1;
}

/* Is the whole image zeros?  -1 on a read error (reported). */
static int image_all_zero(const struct image *im)
{
	static uint8_t buf[1 << 16];
	for (off_t off = 0; off < im->st.st_size;) {
		ssize_t n = pread(im->fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			cli_err("reading %s: %s", im->path, n < 0 ? strerror(errno) : "it shrank");
			return -1;
		}
		if (!all_zero(buf, (size_t)n))
			return 0;
		off += n;
	}
	return 1;
}

/* The images import-disk takes, by slot: .prof, .hp, eventlog. */
#define NIMAGES 3

/* GHC's eventlog begins with its header's marker, EVENT_HEADER_BEGIN
 * ("hdrb", big-endian like the whole format). */
static int looks_eventlog(const uint8_t *d)
{
	return !memcmp(d, "hdrb", 4);
}

/* The first len bytes of the file (which holds at least that many): 0, or
 * -1 (reported). */
static int read_head(const struct image *im, uint8_t *b, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(im->fd, b + got, len - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			cli_err("reading %s: %s", im->path, n < 0 ? strerror(errno) : "it shrank");
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

/* What the image holds, against the place it was given in (slot 0: the
 * .prof, xvdp1; slot 1: the .hp, xvdp2; slot 2: the eventlog, xvdp3).
 * 0 to import, -1 refused. */
static int recognise(const struct image *im, int slot, int force)
{
	uint8_t b[2 * STORE_SECTOR_SIZE];
	if (read_head(im, b, sizeof(b)) != 0)
		return -1;
	const uint8_t *data = b + STORE_SECTOR_SIZE;
	int hp = !memcmp(data, "JOB ", 4), ev = !hp && looks_eventlog(data);
	int prof = !hp && !ev && looks_prof(data, STORE_SECTOR_SIZE);
	if (force)
		return 0;
	if (hp && slot != 1) {
		cli_err("%s holds a heap profile (its data begins with a JOB line), not %s: give it "
		        "with --hp%s", im->path, slot == 0 ? "a .prof" : "an eventlog",
		        slot == 0 ? " (or as the second image)" : "");
		return -1;
	}
	if (prof && slot != 0) {
		cli_err("%s holds a time profile (.prof), not %s: give it with --prof (or as the first image)",
		        im->path, slot == 1 ? "a .hp (whose data begins with a JOB line)" : "an eventlog");
		return -1;
	}
	if (ev && slot != 2) {
		cli_err("%s holds GHC's eventlog (its data begins with \"hdrb\"), not a %s: give it with "
		        "--eventlog", im->path, slot == 0 ? ".prof" : ".hp");
		return -1;
	}
	if (slot == 2 && !ev && !all_zero(data, STORE_SECTOR_SIZE)) {
		cli_err("%s is not an eventlog disk: at byte 512 it holds no GHC eventlog header (\"hdrb\"); "
		        "give the raw image the guest wrote to xvdp3 (--force imports it anyway)", im->path);
		return -1;
	}
	if (hp || prof || ev)
		return 0;
	if (all_zero(data, STORE_SECTOR_SIZE)) {
		/* Nothing written at the start: a guest that never got to write
		 * its file keeps a status block, or nothing at all. */
		int z = all_zero(b, STORE_SECTOR_SIZE) ? image_all_zero(im) : 0;
		if (z == 1)
			cli_err("%s is all zeros: no guest ever wrote to it, there is nothing to import",
			        im->path);
		return z == 0 ? 0 : -1;
	}
	cli_err("%s is not a HaLVM profile disk: at byte 512 it holds neither a .prof (GHC's report "
	        "header) nor a .hp (a JOB line); give the raw image the guest wrote (--force imports "
	        "it anyway)", im->path);
	return -1;
}

static void default_name(const char *path, char *out, size_t len)
{
	char *copy = strdup(path);
	const char *base = copy ? basename(copy) : "import";
	size_t n = strcspn(base, ".");

	snprintf(out, len, "%.*s", (int)(n ? n : strlen(base)), base);
	free(copy);
}

/* Data per transaction: a few milliseconds of the write lock. */
#define IMPORT_BATCH_BYTES (1u << 20)

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* SIGINT/SIGTERM/SIGHUP end the import between transactions, and the
 * partial run goes. */
static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* What import-disk is asked: the images (0: the .prof, xvdp1; 1: the
 * .hp, xvdp2; 2: the eventlog, xvdp3), the run's name, --force, --json. */
struct import_opts {
	struct image im[NIMAGES];
	const char *name;
	int force, json;
};

static int import_opt(int c, const char *arg, void *ctx)
{
	struct import_opts *o = ctx;

	if (c == 'n')
		o->name = arg;
	else if (c == 'p' || c == 'H' || c == 'E')
		o->im[c == 'p' ? 0 : c == 'H' ? 1 : 2].path = arg;
	else if (c == 'f')
		o->force = 1;
	else
		return CLI_NOT_MINE;
	return 0;
}

/* The options, then the images given as arguments: CLI_GO_ON, or the
 * exit status. */
static int parse_options(int argc, char **argv, struct import_opts *o)
{
	static const struct option opts[] = {
		{"name", required_argument, NULL, 'n'},
		{"prof", required_argument, NULL, 'p'},
		{"hp", required_argument, NULL, 'H'},
		{"eventlog", required_argument, NULL, 'E'},
		{"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {usage, "h", opts, -1, import_opt};
	int n, rc = cli_parse_opts(&spec, argc, argv, o, &o->json);

	if (rc != CLI_GO_ON)
		return rc;
	n = argc - optind;
	int named = o->im[0].path || o->im[1].path || o->im[2].path;
	if (named && n > 0) {
		cli_err("give the images either as PROF.disk [HP.disk] or with --prof/--hp/--eventlog, not both");
		return EXIT_USAGE;
	}
	if (!named && (n < 1 || n > 2)) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		o->im[i].path = argv[optind + i];
	return CLI_GO_ON;
}

/* Every image opened and recognised before the store is touched: the
 * first one given, or -1 (reported). */
static int check_images(struct import_opts *o)
{
	int first = -1;

	for (int i = 0; i < NIMAGES; i++) {
		if (!o->im[i].path)
			continue;
		if (open_image(&o->im[i]) != 0 || recognise(&o->im[i], i, o->force) != 0)
			return -1;
		if (first < 0)
			first = i;
	}
	return first;
}

/* The run an import makes, named after its first image unless --name. */
static void new_run(struct store_run *run, const struct import_opts *o, const struct image *first)
{
	memset(run, 0, sizeof(*run));
	run->domid = -1;
	if (o->name)
		snprintf(run->name, sizeof(run->name), "%s", o->name);
	else
		default_name(first->path, run->name, sizeof(run->name));
	/* The image's mtime is the best we know of when the run ended. */
	run->started_us = (int64_t)first->st.st_mtim.tv_sec * 1000000 + first->st.st_mtim.tv_nsec / 1000;
	snprintf(run->source, sizeof(run->source), "import");
	snprintf(run->backend_version, sizeof(run->backend_version), "profdb %s", PACKAGE_VERSION);
	if (gethostname(run->host, sizeof(run->host) - 1) != 0)
		run->host[0] = '\0';
}

/* An import under way: the store, the run once made, its devices. */
struct import {
	struct store *s;
	struct store_run run;
	struct store_device *dev[NIMAGES];
	int run_made;
};

/* One image's data into its device, IMPORT_BATCH_BYTES a transaction:
 * 0, -1 (a store error, not yet said), or 1 (reported). */
static int copy_image(struct import *x, const struct image *im, struct store_device *dev)
{
	uint64_t size = (uint64_t)im->st.st_size, pos = 0;

	while (pos < size) {
		if (interrupted) {
			cli_err("interrupted: the partial run %lld is removed", (long long)x->run.run_id);
			return 1;
		}
		if (store_batch_begin(x->s) != 0)
			return -1;
		if ((im->plain ? store_import_file : store_import_disk)(dev, im->fd, size, &pos, IMPORT_BATCH_BYTES) != 0) {
			cli_err("importing %s: %s", im->path, store_errmsg(x->s));
			return 1;
		}
		if (store_batch_commit(x->s) != 0)
			return -1;
		/* A gap for a waiting writer (the backend) to take the lock. */
		usleep(500);
	}
	return 0;
}

/* 1 when the device imported from path holds a whole, closed profile;
 * else 0, said in a warning. */
static int device_closed(struct store_device *dev, const char *path)
{
	struct store_device_info info;

	store_device_get_info(dev, &info);
	if (info.status == STORE_STATUS_NONE)
		cli_warn("%s: no status block: the guest never wrote this file", path);
	else if (info.status == STORE_STATUS_CORRUPT)
		cli_warn("%s: header block corrupted; imported anyway (export needs --salvage)", path);
	else if (!info.closed)
		cli_warn("%s: profile not cleanly closed", path);
	else if (!store_device_profile_whole(&info))
		cli_warn("%s: status block claims %lld bytes but the image holds only %llu", path,
		         (long long)info.file_size, (unsigned long long)store_device_written_bytes(&info));
	else
		return 1;
	return 0;
}

/*
 * The run and its devices first, then the data in transactions of
 * IMPORT_BATCH_BYTES, each holding the write lock only briefly, so that a
 * backend serving live guests waits milliseconds, never long enough for
 * their writes to fail.  Meanwhile the run shows as running; if the
 * import fails or is interrupted, it is deleted (remove_partial).
 * 0, -1 (a store error, not yet said), or 1 (reported).
 */
static int import_run(struct import *x, const struct image *im)
{
	int all_closed = 1, rc;

	catch_signals(); /* before the run exists: a signal then removes it */
	if (store_run_begin(x->s, &x->run) != 0)
		return -1;
	x->run_made = 1;
	for (int i = 0; i < NIMAGES; i++) {
		if (!im[i].path)
			continue;
		uint64_t size = (uint64_t)im[i].st.st_size;
		/* a plain file goes after a status block, as a guest writes it */
		uint64_t cap = (size + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE + (im[i].plain ? 1 : 0);
		if (store_device_create(x->s, x->run.run_id, im[i].vdev, im[i].devid, cap, &x->dev[i]) != 0)
			return -1;
	}
	for (int i = 0; i < NIMAGES; i++) {
		if (!im[i].path)
			continue;
		if ((rc = copy_image(x, &im[i], x->dev[i])) != 0)
			return rc;
		if (!device_closed(x->dev[i], im[i].path))
			all_closed = 0;
	}
	if (store_run_end(x->s, x->run.run_id, all_closed ? STORE_RUN_COMPLETE : STORE_RUN_CRASHED,
	                  x->run.started_us) != 0)
		return -1;
	return 0;
}

/* The new run said on stdout: the exit status, or -1 (a store error,
 * not yet said). */
static int print_result(struct import *x, int json)
{
	struct store_device_info info;

	if (json) {
		/* the run as it now stands in the store, with its devices */
		struct store_run now;
		json_t *devs = json_array();
		if (store_get_run(x->s, x->run.run_id, &now) != 0)
			return -1;
		for (int i = 0; i < NIMAGES; i++) {
			if (!x->dev[i])
				continue;
			store_device_get_info(x->dev[i], &info);
			json_array_append_new(devs, view_json_device(&info));
		}
		return cli_json_print(json_pack("{s:o,s:o}", "run", view_json_run(&now, store_now_us()), "devices", devs));
	}
	printf("imported run %lld (", (long long)x->run.run_id);
	safe_text_print(stdout, x->run.name, 0);
	printf(")");
	for (int i = 0; i < NIMAGES; i++) {
		if (!x->dev[i])
			continue;
		store_device_get_info(x->dev[i], &info);
		if (info.status == STORE_STATUS_OK) {
			/* what it holds: a status block may claim more than was written */
			uint64_t held = store_device_written_bytes(&info);
			printf(", %s%s: %llu bytes", info.role == STORE_ROLE_EVENTLOG ? "" : ".",
			       store_profile_ext(info.role),
			       (unsigned long long)((uint64_t)info.file_size < held ? (uint64_t)info.file_size : held));
		}
	}
	printf("\n");
	return 0;
}

/* A failed or interrupted import's run goes, with what it holds. */
static void remove_partial(struct import *x)
{
	if (x->s && store_in_batch(x->s))
		store_batch_abort(x->s);
	for (int i = 0; i < NIMAGES; i++)
		if (x->dev[i]) {
			store_device_release(x->dev[i]);
			x->dev[i] = NULL;
		}
	if (x->run_made && store_run_delete(x->s, x->run.run_id) != 0)
		cli_err("the partial run %lld could not be removed (%s): it stays in the catalogue, "
		        "marked running",
		        (long long)x->run.run_id, store_errmsg(x->s));
}

/* The import once its images are checked: the exit status. */
static int import(const char *db, const struct import_opts *o, int first)
{
	struct import x = {0};
	int rc = 1, r;

	new_run(&x.run, o, &o->im[first]);
	if (cli_open_store(&x.s, db, STORE_WRITE) != 0)
		return 1;
	r = import_run(&x, o->im);
	if (r == 0 && (r = print_result(&x, o->json)) >= 0) {
		rc = r;
	} else {
		if (r < 0)
			cli_err("%s", store_errmsg(x.s));
		remove_partial(&x);
	}
	store_close(x.s);
	return rc;
}

int cmd_import_disk(const char *db, int argc, char **argv)
{
	struct import_opts o = {.im = {{.fd = -1, .vdev = "xvdp1", .devid = 51953},
	                               {.fd = -1, .vdev = "xvdp2", .devid = 51954},
	                               {.fd = -1, .vdev = "xvdp3", .devid = 51955}}};
	int first, rc = parse_options(argc, argv, &o);

	if (rc != CLI_GO_ON)
		return rc;
	first = check_images(&o);
	rc = first < 0 ? 1 : import(db, &o, first);
	for (int i = 0; i < NIMAGES; i++)
		if (o.im[i].fd >= 0)
			close(o.im[i].fd);
	return rc;
}

/* ---- profdb import FILE... ----------------------------------------------------- */

static const char import_usage[] =
	"usage: profdb import [--name NAME] [--force] [--json] FILE...\n"
	"  Plain profiles as GHC wrote them become one run: a .prof (time profile),\n"
	"  a .hp (heap profile), an eventlog (+RTS -l), at most one of each, told\n"
	"  apart by their first bytes; exporting the run gives each back byte for\n"
	"  byte.  The run is named after the first FILE (up to its first '.')\n"
	"  unless --name.  A file that is none of them is refused; --force takes\n"
	"  it by its name's ending (.prof, .hp, .eventlog).  HaLVM raw disk\n"
	"  images go through import-disk.\n"
	"  --json prints the new run and its devices (docs/json.md).\n";

/* Which slot a plain file takes (0 .prof, 1 .hp, 2 eventlog), by its
 * first bytes (with force, by its name when they say nothing): the slot,
 * or -1 (reported). */
static int file_slot(const struct image *im, int force)
{
	uint8_t b[STORE_SECTOR_SIZE];
	size_t got = (uint64_t)im->st.st_size < sizeof(b) ? (size_t)im->st.st_size : sizeof(b);
	if (read_head(im, b, got) != 0)
		return -1;
	if (got >= 4 && !memcmp(b, "JOB ", 4))
		return 1;
	if (got >= 4 && looks_eventlog(b))
		return 2;
	if (looks_prof(b, got))
		return 0;
	if (force) {
		static const char *const ends[] = {".prof", ".hp", ".eventlog"};
		size_t len = strlen(im->path);
		for (int i = 0; i < NIMAGES; i++) {
			size_t e = strlen(ends[i]);
			if (len > e && !strcmp(im->path + len - e, ends[i]))
				return i;
		}
		cli_err("%s: neither its first bytes nor its name (.prof, .hp, .eventlog) say what it is", im->path);
		return -1;
	}
	static const char retainer[] = "Retainer Profiling";
	if (got >= sizeof(retainer) - 1 && !memcmp(b, retainer, sizeof(retainer) - 1))
		cli_err("%s is GHC's retainer profiling log (+RTS -hr), not a time profile: its heap profile is "
		        "the .hp (--force imports it as the .prof anyway)", im->path);
	else if (got == sizeof(b) && status_block_decode(b, &(struct status_block){0}) == STATUS_BLOCK_VALID)
		cli_err("%s is a raw disk image (its first sector is a HaLVM status block): profdb import-disk "
		        "takes those", im->path);
	else
		cli_err("%s is not a profile GHC wrote: a .prof begins with GHC's report header (or '{' for -pj), "
		        "a .hp with a JOB line, an eventlog with \"hdrb\" (--force takes it by its name)", im->path);
	return -1;
}

int cmd_import(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"name", required_argument, NULL, 'n'},
		{"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct cli_optspec spec = {import_usage, "h", opts, -1, import_opt};
	static const char *const what[] = {"time profile (.prof)", "heap profile (.hp)", "eventlog"};
	struct import_opts o = {.im = {{.fd = -1, .vdev = "xvdp1", .devid = 51953, .plain = 1},
	                               {.fd = -1, .vdev = "xvdp2", .devid = 51954, .plain = 1},
	                               {.fd = -1, .vdev = "xvdp3", .devid = 51955, .plain = 1}}};
	int rc = cli_parse_opts(&spec, argc, argv, &o, &o.json), first = -1;

	if (rc != CLI_GO_ON)
		return rc;
	int n = argc - optind;
	if (n < 1 || n > NIMAGES) {
		if (n > NIMAGES)
			cli_err("at most %d files: a .prof, a .hp and an eventlog of one run", NIMAGES);
		fputs(import_usage, stderr);
		return EXIT_USAGE;
	}
	rc = 1;
	for (int i = 0; i < n; i++) {
		struct image im = {.path = argv[optind + i], .fd = -1, .plain = 1};
		int r = open_image(&im);
		if (r == 1) { /* GHC leaves an empty .prof when its program is killed */
			cli_warn("%s is empty (a program killed before it wrote its profile leaves one): left out", im.path);
			close(im.fd);
			continue;
		}
		if (r != 0) {
			if (im.fd >= 0)
				close(im.fd);
			goto out;
		}
		int slot = file_slot(&im, o.force);
		if (slot >= 0 && o.im[slot].path) {
			cli_err("%s and %s are both a %s: a run has one of each", o.im[slot].path, im.path, what[slot]);
			slot = -1;
		}
		if (slot < 0) {
			close(im.fd);
			goto out;
		}
		o.im[slot].path = im.path;
		o.im[slot].fd = im.fd;
		o.im[slot].st = im.st;
		if (first < 0)
			first = slot;
	}
	if (first < 0)
		cli_err("nothing to import: every file given is empty");
	else
		rc = import(db, &o, first);
out:
	for (int i = 0; i < NIMAGES; i++)
		if (o.im[i].fd >= 0)
			close(o.im[i].fd);
	return rc;
}
