/*
 * xl_disks.h - stock xl's vbds with our hotplug script: which are ours,
 * and taking one over from the dom0 kernel.  xl_disks.c calls log.c and
 * xenstore.
 */
#ifndef PROFSVC_BE_XL_DISKS_H
#define PROFSVC_BE_XL_DISKS_H

struct backend;
struct device;

int xl_disk_is_ours(struct backend *b, const char *bpath);
void xl_claim(struct device *d);
void xl_release_kernel(struct device *d, int wait);

#endif
