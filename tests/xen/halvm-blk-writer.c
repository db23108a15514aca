/*
 * halvm-blk-writer.c - runs inside a PV Linux guest (static, no libc
 * beyond the basics): writes a .prof to /dev/xvdp1, a .hp to /dev/xvdp2
 * and GHC's eventlog to /dev/xvdp3 in the HaLVM on-disk layout, with the HaLVM writer's exact request
 * pattern (frontend-stub/halvm_writer.c): the status block in sector 0,
 * data from sector 1, the status block rewritten after every 4 KiB block
 * and every flush.  Every request is one O_DIRECT pwrite, so it reaches the
 * kernel's blkfront (a peer nobody here wrote) as a request of its own.
 *
 *   halvm-blk-writer [--delay-us N] [--prof FILE] [--hp FILE] [--eventlog FILE]
 * Exit status: 0, or 1 after printing "PROFILING: Block write failed!".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend-stub/halvm_writer.h"

struct dev {
	int fd;
	void *buf; /* O_DIRECT needs aligned memory */
	useconds_t delay;
	unsigned long requests;
};

static int submit(void *ctx, uint64_t sector, const void *data, unsigned nsect)
{
	struct dev *d = ctx;
	size_t len = (size_t)nsect * 512;

	memcpy(d->buf, data, len);
	if (pwrite(d->fd, d->buf, len, (off_t)(sector * 512)) != (ssize_t)len) {
		printf("PROFILING: Block write failed! (%s)\n", strerror(errno));
		fflush(stdout);
		return -1;
	}
	d->requests++;
	if (d->delay)
		usleep(d->delay);
	return 0;
}

static int write_file(const char *dev, const char *path, int kind, useconds_t delay)
{
	struct dev d = {.delay = delay};
	struct halvm_writer w;
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 22];
	size_t len;

	if (!f) {
		printf("WRITER: %s: %s\n", path, strerror(errno));
		return 1;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	d.fd = open(dev, O_WRONLY | O_DIRECT);
	if (d.fd < 0 || posix_memalign(&d.buf, 4096, 4096) != 0) {
		printf("WRITER: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	halvm_writer_init(&w, 8, submit, &d);
	int rc = halvm_writer_replay(&w, buf, len, kind, UINT64_MAX);
	close(d.fd);
	printf("WRITER: %s: %zu bytes in %lu requests%s\n", dev, len, d.requests, rc ? " (FAILED)" : "");
	fflush(stdout);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *prof = NULL, *hp = NULL, *ev = NULL;
	useconds_t delay = 0;
	int rc = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--prof"))
			prof = argv[i + 1];
		else if (!strcmp(argv[i], "--hp"))
			hp = argv[i + 1];
		else if (!strcmp(argv[i], "--eventlog"))
			ev = argv[i + 1];
		else if (!strcmp(argv[i], "--delay-us"))
			delay = (useconds_t)atoi(argv[i + 1]);
	}
	if (ev)
		rc |= write_file("/dev/xvdp3", ev, HALVM_REPLAY_EVENTLOG, delay);
	if (hp)
		rc |= write_file("/dev/xvdp2", hp, HALVM_REPLAY_HP, delay);
	if (prof)
		rc |= write_file("/dev/xvdp1", prof, HALVM_REPLAY_PROF, delay);
	return rc;
}
