/*
 * cmd_import.c - `profdb import-disk`: old HaLVM raw images (the
 * pre-sized prof.disk/hp.disk of the raw-disk way) become one run, so users
 * keep their history.  The whole import is one transaction: a failure
 * leaves no partial run behind.  Each image is recognised before anything
 * is stored (docs/halvm-profile-protocol.md: status block in sector 0, the
 * file from sector 1): a .hp begins with its JOB line, a .prof with GHC's
 * report header (or '{' for -pj); an image given in the other's place, an
 * all-zero one, or a file that is no profile disk is refused.
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

#include "../store/store_export.h"
#include "cli_json.h"
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb import-disk [--name NAME] [--force] [--json] PROF.disk [HP.disk]\n"
	"       profdb import-disk [--name NAME] [--force] [--json] [--prof PROF.disk] [--hp HP.disk]\n"
	"  PROF.disk is the image that was xvdp1 (.prof), HP.disk the one that was xvdp2 (.hp).\n"
	"  An image that holds the other kind of profile, only zeros, or no profile\n"
	"  at all is refused; --force imports the images as they are.\n"
	"  --json prints the new run and its devices (docs/json.md).\n";

struct image {
	const char *path;
	int fd;
	struct stat st;
	const char *vdev;
	int32_t devid;
};

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
	if (im->st.st_size < 2 * (off_t)STORE_SECTOR_SIZE) {
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

/* What the image holds, against the place it was given in (slot 0: the
 * .prof, xvdp1; slot 1: the .hp, xvdp2).  0 to import, -1 refused. */
static int recognise(const struct image *im, int slot, int force)
{
	uint8_t b[2 * STORE_SECTOR_SIZE];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t n = pread(im->fd, b + got, sizeof(b) - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			cli_err("reading %s: %s", im->path, n < 0 ? strerror(errno) : "it shrank");
			return -1;
		}
		got += (size_t)n;
	}
	const uint8_t *data = b + STORE_SECTOR_SIZE;
	int hp = !memcmp(data, "JOB ", 4), prof = !hp && looks_prof(data, STORE_SECTOR_SIZE);
	if (force)
		return 0;
	if (hp && slot == 0) {
		cli_err("%s holds a heap profile (its data begins with a JOB line), not a .prof: give it "
		        "with --hp (or as the second image)", im->path);
		return -1;
	}
	if (prof && slot == 1) {
		cli_err("%s holds a time profile (.prof), not a .hp (whose data begins with a JOB line): "
		        "give it with --prof (or as the first image)", im->path);
		return -1;
	}
	if (hp || prof)
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

int cmd_import_disk(const char *db, int argc, char **argv)
{
	static const struct option opts[] = {
		{"name", required_argument, NULL, 'n'},
		{"prof", required_argument, NULL, 'p'},
		{"hp", required_argument, NULL, 'H'},
		{"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct image im[2] = {{.fd = -1, .vdev = "xvdp1", .devid = 51953},
	                      {.fd = -1, .vdev = "xvdp2", .devid = 51954}};
	struct store_device *dev[2] = {NULL, NULL};
	struct store_run run;
	struct store *s = NULL;
	const char *name = NULL;
	int n, c, rc = 1, all_closed = 1, run_made = 0, force = 0, json = 0, first = -1;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'n') {
			name = optarg;
		} else if (c == 'p' || c == 'H') {
			im[c == 'H'].path = optarg;
		} else if (c == 'f') {
			force = 1;
		} else if (c == 'j') {
			json = 1;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else {
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	n = argc - optind;
	if ((im[0].path || im[1].path) && n > 0) {
		cli_err("give the images either as PROF.disk [HP.disk] or with --prof/--hp, not both");
		return EXIT_USAGE;
	}
	if (!im[0].path && !im[1].path && (n < 1 || n > 2)) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		im[i].path = argv[optind + i];
	/* Every image checked before the store is touched. */
	for (int i = 0; i < 2; i++) {
		if (!im[i].path)
			continue;
		if (open_image(&im[i]) != 0 || recognise(&im[i], i, force) != 0)
			goto out;
		if (first < 0)
			first = i;
	}
	memset(&run, 0, sizeof(run));
	run.domid = -1;
	if (name)
		snprintf(run.name, sizeof(run.name), "%s", name);
	else
		default_name(im[first].path, run.name, sizeof(run.name));
	/* The image's mtime is the best we know of when the run ended. */
	run.started_us = (int64_t)im[first].st.st_mtim.tv_sec * 1000000 + im[first].st.st_mtim.tv_nsec / 1000;
	snprintf(run.source, sizeof(run.source), "import");
	snprintf(run.backend_version, sizeof(run.backend_version), "profdb %s", PACKAGE_VERSION);
	if (gethostname(run.host, sizeof(run.host) - 1) != 0)
		run.host[0] = '\0';

	if (cli_open_store(&s, db, STORE_WRITE) != 0)
		goto out;
	/* The run and its devices first, then the data in transactions of
	 * IMPORT_BATCH_BYTES, each holding the write lock only briefly, so
	 * that a backend serving live guests waits milliseconds, never long
	 * enough for their writes to fail.  Meanwhile the run shows as
	 * running; if the import fails or is interrupted, it is deleted. */
	catch_signals(); /* before the run exists: a signal then removes it */
	if (store_run_begin(s, &run) != 0)
		goto store_error;
	run_made = 1;
	for (int i = 0; i < 2; i++) {
		if (!im[i].path)
			continue;
		uint64_t size = (uint64_t)im[i].st.st_size;
		uint64_t cap = (size + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE;
		if (store_device_create(s, run.run_id, im[i].vdev, im[i].devid, cap, &dev[i]) != 0)
			goto store_error;
	}
	for (int i = 0; i < 2; i++) {
		if (!im[i].path)
			continue;
		uint64_t size = (uint64_t)im[i].st.st_size, pos = 0;
		struct store_device_info info;

		while (pos < size) {
			if (interrupted) {
				cli_err("interrupted: the partial run %lld is removed", (long long)run.run_id);
				goto abort;
			}
			if (store_batch_begin(s) != 0)
				goto store_error;
			if (store_import_disk(dev[i], im[i].fd, size, &pos, IMPORT_BATCH_BYTES) != 0) {
				cli_err("importing %s: %s", im[i].path, store_errmsg(s));
				goto abort;
			}
			if (store_batch_commit(s) != 0)
				goto store_error;
			/* A gap for a waiting writer (the backend) to take the lock. */
			usleep(500);
		}
		store_device_get_info(dev[i], &info);
		if (info.status == STORE_STATUS_NONE) {
			cli_warn("%s: no status block: the guest never wrote this file", im[i].path);
			all_closed = 0;
		} else if (info.status == STORE_STATUS_CORRUPT) {
			cli_warn("%s: header block corrupted; imported anyway (export needs --salvage)",
			         im[i].path);
			all_closed = 0;
		} else if (!info.closed) {
			cli_warn("%s: profile not cleanly closed", im[i].path);
			all_closed = 0;
		} else if (!store_device_profile_whole(&info)) {
			cli_warn("%s: status block claims %lld bytes but the image holds only %llu",
			         im[i].path, (long long)info.file_size,
			         (unsigned long long)store_device_written_bytes(&info));
			all_closed = 0;
		}
	}
	if (store_run_end(s, run.run_id, all_closed ? STORE_RUN_COMPLETE : STORE_RUN_CRASHED,
	                  run.started_us) != 0)
		goto store_error;
	if (json) {
		/* the run as it now stands in the store, with its devices */
		struct store_run now;
		json_t *devs = json_array();
		if (store_get_run(s, run.run_id, &now) != 0)
			goto store_error;
		for (int i = 0; i < 2; i++) {
			struct store_device_info info;
			if (!dev[i])
				continue;
			store_device_get_info(dev[i], &info);
			json_array_append_new(devs, view_json_device(&info));
		}
		rc = cli_json_print(json_pack("{s:o,s:o}", "run", view_json_run(&now, store_now_us()), "devices", devs));
		goto out;
	}
	printf("imported run %lld (", (long long)run.run_id);
	safe_text_print(stdout, run.name, 0);
	printf(")");
	for (int i = 0; i < 2; i++) {
		struct store_device_info info;
		if (!dev[i])
			continue;
		store_device_get_info(dev[i], &info);
		if (info.status == STORE_STATUS_OK)
			printf(", %s: %lld bytes", info.role == STORE_ROLE_PROF ? ".prof" : ".hp",
			       (long long)info.file_size);
	}
	printf("\n");
	rc = 0;
	goto out;
store_error:
	cli_err("%s", store_errmsg(s));
abort:
	if (s && store_in_batch(s))
		store_batch_abort(s);
	for (int i = 0; i < 2; i++)
		if (dev[i]) {
			store_device_release(dev[i]);
			dev[i] = NULL;
		}
	if (run_made && store_run_delete(s, run.run_id) != 0)
		cli_err("the partial run %lld could not be removed (%s): it stays in the catalogue, "
		        "marked running",
		        (long long)run.run_id, store_errmsg(s));
out:
	for (int i = 0; i < 2; i++)
		if (im[i].fd >= 0)
			close(im[i].fd);
	store_close(s);
	return rc;
}
