/*
 * raw_mirror.h - a device's raw image (d->mirror): the --mirror-raw copy
 * beside the store, or with sink set the raw sink's image (sink.c writes
 * it).  raw_mirror.c calls only log.c and libaio.
 */
#ifndef PROFSVC_BE_RAW_MIRROR_H
#define PROFSVC_BE_RAW_MIRROR_H

#include <stdint.h>

#ifdef HAVE_AIO
#include <libaio.h>
#endif

struct be_device;

#define RAW_MIRROR_DEPTH 64 /* writes in flight per image */
struct be_raw_mirror {
	int fd;
	int direct;
	int sink;          /* the sink: writes waited for, buffers not ours */
#ifdef HAVE_AIO
	io_context_t ctx;  /* 0: no libaio, writes are pwrite */
	unsigned inflight;
#endif
	char path[512];
};

int be_raw_mirror_open(struct be_device *d, const char *dir, int direct, int sink);
void be_raw_mirror_write(struct be_device *d, uint64_t sector, const void *data, uint32_t nsect);
void be_raw_mirror_close(struct be_device *d);
#ifdef HAVE_AIO
/* Reaps the image's completed writes, waiting for at least min; -1 if any
 * failed.  A sink's write (iocb data: its int16_t status) that failed is
 * marked -1; a mirror's buffer (iocb data) is freed. */
int be_raw_mirror_reap(struct be_device *d, long min);
#endif

#endif
