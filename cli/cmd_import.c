/*
 * cmd_import.c - `profdb import-disk`: old HaLVM raw images (the
 * pre-sized prof.disk/hp.disk of the raw-disk way) become one run, so users
 * keep their history.  The whole import is one transaction: a failure
 * leaves no partial run behind.
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
#include "cli_util.h"
#include "commands.h"

static const char usage[] =
	"usage: profdb import-disk [--name NAME] PROF.disk [HP.disk]\n"
	"  PROF.disk is the image that was xvdp1 (.prof), HP.disk the one that was xvdp2 (.hp)\n";

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
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct image im[2] = {{.fd = -1, .vdev = "xvdp1", .devid = 51953},
	                      {.fd = -1, .vdev = "xvdp2", .devid = 51954}};
	struct store_device *dev[2] = {NULL, NULL};
	struct store_run run;
	struct store *s = NULL;
	const char *name = NULL;
	int n, c, rc = 1, all_closed = 1, run_made = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'n') {
			name = optarg;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else {
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	n = argc - optind;
	if (n < 1 || n > 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	for (int i = 0; i < n; i++) {
		im[i].path = argv[optind + i];
		if (open_image(&im[i]) != 0)
			goto out;
	}
	memset(&run, 0, sizeof(run));
	run.domid = -1;
	if (name)
		snprintf(run.name, sizeof(run.name), "%s", name);
	else
		default_name(im[0].path, run.name, sizeof(run.name));
	/* The image's mtime is the best we know of when the run ended. */
	run.started_us = (int64_t)im[0].st.st_mtim.tv_sec * 1000000 + im[0].st.st_mtim.tv_nsec / 1000;
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
	for (int i = 0; i < n; i++) {
		uint64_t size = (uint64_t)im[i].st.st_size;
		uint64_t cap = (size + STORE_SECTOR_SIZE - 1) / STORE_SECTOR_SIZE;
		if (store_device_create(s, run.run_id, im[i].vdev, im[i].devid, cap, &dev[i]) != 0)
			goto store_error;
	}
	for (int i = 0; i < n; i++) {
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
	printf("imported run %lld (", (long long)run.run_id);
	safe_text_print(stdout, run.name, 0);
	printf(")");
	for (int i = 0; i < n; i++) {
		struct store_device_info info;
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
