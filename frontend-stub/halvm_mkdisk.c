/*
 * halvm_mkdisk.c - `halvm-mkdisk`: the raw disk image a raw-disk backend
 * would hold after a HaLVM guest wrote a profile to it (the old way:
 * `dd ... seek=64M` and `disk = ["prof.disk,raw,xvdp1,rw"]`).  Used by the
 * demo (old images to import) and by tests as the reference disk.
 *
 * May call: the HaLVM writer (halvm_writer.c), util/units, util/grow.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/grow.h"
#include "util/units.h"
#include "halvm_writer.h"

static const char usage[] =
	"usage: halvm-mkdisk [--size BYTES] [--word-size 8|4] [--crash-at BYTES]\n"
	"                    [--hp|--prof|--eventlog] PROFILE DISK\n"
	"Writes PROFILE to the raw image DISK exactly as a HaLVM guest would\n"
	"(status block in sector 0, data from sector 1); by default its kind is\n"
	"its name's (.hp, .eventlog, else a .prof).  --size defaults to 64 MiB;\n"
	"--crash-at stops the guest dead after that many bytes (no close).\n";

struct disk {
	int fd;
	uint64_t size;
};

static int submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct disk *d = ctx;
	size_t len = (size_t)nsect * HALVM_SECTOR_SIZE;

	if ((sector + nsect) * HALVM_SECTOR_SIZE > d->size) {
		fprintf(stderr, "halvm-mkdisk: the profile does not fit the disk (--size): the "
		                "guest would print 'PROFILING: Block write failed!'\n");
		return -1;
	}
	if (pwrite(d->fd, data, len, (off_t)(sector * HALVM_SECTOR_SIZE)) != (ssize_t)len) {
		fprintf(stderr, "halvm-mkdisk: write: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* What the command line asks for. */
struct mkdisk_args {
	uint64_t size, crash;
	int ws, kind; /* HALVM_REPLAY_*, or -1: by the file's name */
};

/* The options into a; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct mkdisk_args *a)
{
	static const struct option opts[] = {
		{"size", required_argument, NULL, 's'},   {"word-size", required_argument, NULL, 'w'},
		{"crash-at", required_argument, NULL, 'c'}, {"hp", no_argument, NULL, 'H'},
		{"prof", no_argument, NULL, 'P'},         {"help", no_argument, NULL, 'h'},
		{"eventlog", no_argument, NULL, 'E'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (units_parse_size(optarg, &a->size) || a->size < 1024 || a->size % 512) {
				fprintf(stderr, "halvm-mkdisk: --size must be a multiple of 512, at least 1K\n");
				return 2;
			}
			break;
		case 'w':
			a->ws = atoi(optarg);
			if (a->ws != 4 && a->ws != 8) {
				fprintf(stderr, "halvm-mkdisk: --word-size is 8 or 4\n");
				return 2;
			}
			break;
		case 'c':
			if (units_parse_size(optarg, &a->crash)) {
				fprintf(stderr, "halvm-mkdisk: bad --crash-at\n");
				return 2;
			}
			break;
		case 'H':
			a->kind = HALVM_REPLAY_HP;
			break;
		case 'P':
			a->kind = HALVM_REPLAY_PROF;
			break;
		case 'E':
			a->kind = HALVM_REPLAY_EVENTLOG;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(usage, stderr);
		return 2;
	}
	return -1;
}

/* The whole profile in memory; NULL (said why) when it cannot be read. */
static uint8_t *read_profile(const char *src, size_t *lenp)
{
	FILE *f = fopen(src, "rb");
	if (!f) {
		fprintf(stderr, "halvm-mkdisk: %s: %s\n", src, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 20, len = 0, n;
	uint8_t *buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap && GROW(buf, cap, cap + 1) != 0) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	if (!buf)
		fprintf(stderr, "halvm-mkdisk: out of memory\n");
	*lenp = len;
	return buf;
}

int main(int argc, char **argv)
{
	struct mkdisk_args a = {.size = 64u << 20, .crash = UINT64_MAX, .ws = 8, .kind = -1};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct disk d = {.fd = -1, .size = a.size};
	const char *src = argv[optind], *dst = argv[optind + 1];
	if (a.kind < 0) {
		size_t n = strlen(src);
		a.kind = n > 3 && strcmp(src + n - 3, ".hp") == 0        ? HALVM_REPLAY_HP
		         : n > 9 && strcmp(src + n - 9, ".eventlog") == 0 ? HALVM_REPLAY_EVENTLOG
		                                                           : HALVM_REPLAY_PROF;
	}
	size_t len;
	uint8_t *buf = read_profile(src, &len);
	if (!buf)
		return 1;
	d.fd = open(dst, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (d.fd < 0 || ftruncate(d.fd, (off_t)d.size) != 0) {
		fprintf(stderr, "halvm-mkdisk: %s: %s\n", dst, strerror(errno));
		return 1;
	}
	struct halvm_writer w;
	halvm_writer_init(&w, a.ws, submit, &d);
	rc = halvm_writer_replay(&w, buf, len, a.kind, a.crash);
	free(buf);
	if (close(d.fd) != 0 || rc != 0) {
		unlink(dst);
		return 1;
	}
	return 0;
}
