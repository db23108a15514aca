/*
 * xlcfg.h - reading the xl config of `profile-backend create` through
 * libxlutil (xl's own parser): the guest's name, the backendtype=profsvc
 * disks profile-backend serves, and the config handed to `xl create -p`
 * without them.
 * xlcfg.c calls vdev.c and libxlutil.
 */
#ifndef PROFSVC_XLCFG_H
#define PROFSVC_XLCFG_H

#include <stddef.h>

/* More profsvc disks than any guest needs (HaLVM uses two). */
#define XLCFG_MAX_PROF 16
/* A config larger than this is not an xl config (xl's are a few KiB). */
#define XLCFG_MAX_BYTES (1024 * 1024)

struct be_xlcfg {
	char *name;                        /* the guest's name, dequoted */
	char *kernel;                      /* kernel = "...", or NULL */
	char *extra;                       /* extra = "...", or NULL */
	int nprof;                         /* backendtype=profsvc disks */
	char *prof_vdevs[XLCFG_MAX_PROF];  /* their vdevs, e.g. "xvdp1" */
	char *xl_text;                     /* the config for xl: the file as it is,
	                                      then disk = [ the other disks ] */
	size_t xl_len;
};

/* Reads and checks path; 0, or -1 with every fault said on stderr as
 * "path:line: what, and the fix".  Nothing outside is touched. */
int be_xlcfg_load(const char *path, struct be_xlcfg *c);
/* The same for a config already in memory (len bytes, no NUL needed),
 * named label in what is said. */
int be_xlcfg_load_buffer(const char *label, const char *buf, size_t len, struct be_xlcfg *c);
void be_xlcfg_free(struct be_xlcfg *c);

#endif
