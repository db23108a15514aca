/*
 * vdev.h - Xen virtual disk names and numbers: "xvdp1" <-> 51953.  Pure
 * functions over strings (fuzzed); vdev.c calls only the C library.
 */
#ifndef PROFSVC_BE_VDEV_H
#define PROFSVC_BE_VDEV_H

#include <stddef.h>
#include <stdint.h>

/* "xvdp1" -> 51953; -1 if not a vdev name we accept. */
int64_t be_vdev_to_devid(const char *vdev);
int be_devid_to_vdev(uint32_t devid, char *out, size_t len);

#endif
