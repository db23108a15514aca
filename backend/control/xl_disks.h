/*
 * xl_disks.h - stock xl's vbds with our hotplug script: which are ours,
 * and taking one over from the dom0 kernel.  xl_disks.c calls log.c and
 * xenstore.
 */
#ifndef PROFSVC_BE_XL_DISKS_H
#define PROFSVC_BE_XL_DISKS_H

struct be_backend;
struct be_device;

int be_xl_disk_is_ours(struct be_backend *b, const char *bpath);
void be_xl_claim(struct be_device *d);
void be_xl_release_kernel(struct be_device *d, int wait);

#endif
