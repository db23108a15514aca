/*
 * vdev.c - Xen virtual disk names and numbers (Xen's
 * docs/misc/vbd-interface.txt): xvd<letter><partition> with disks a..p and
 * partitions 0..15 is (202 << 8) | (disk << 4) | partition; xvdp1 = 51953.
 * Longer disk names use the extended form (1 << 28) | (disk << 8) | part.
 *
 * May call: only the C library.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "vdev.h"

int64_t be_vdev_to_devid(const char *vdev)
{
	unsigned disk = 0, part = 0;
	size_t i = 3, letters = 0;

	if (strncmp(vdev, "xvd", 3) != 0)
		return -1;
	/* Disk letters: a..z, aa..zz, ... (bijective base 26). */
	while (vdev[i] >= 'a' && vdev[i] <= 'z' && letters < 3) {
		disk = disk * 26 + (unsigned)(vdev[i] - 'a' + 1);
		i++;
		letters++;
	}
	if (letters == 0)
		return -1;
	disk -= 1;
	if (vdev[i]) {
		if (vdev[i] < '0' || vdev[i] > '9' || (vdev[i] == '0' && vdev[i + 1]))
			return -1;
		for (; vdev[i] >= '0' && vdev[i] <= '9' && part < 1000; i++)
			part = part * 10 + (unsigned)(vdev[i] - '0');
		if (vdev[i])
			return -1;
	}
	if (disk < 16 && part < 16)
		return (202 << 8) | (disk << 4) | part;
	if (disk < (1u << 20) && part < 256)
		return (int64_t)((1u << 28) | (disk << 8) | part);
	return -1;
}

int be_devid_to_vdev(uint32_t devid, char *out, size_t len)
{
	unsigned disk, part;

	if ((devid >> 8) == 202) {
		disk = (devid >> 4) & 15;
		part = devid & 15;
	} else if ((devid >> 28) == 1) {
		disk = (devid >> 8) & 0xfffff;
		part = devid & 0xff;
	} else {
		return -1;
	}
	char letters[8];
	int n = 0;
	for (unsigned d = disk + 1; d > 0 && n < 7; d = (d - 1) / 26)
		letters[n++] = (char)('a' + (d - 1) % 26);
	char name[8];
	for (int k = 0; k < n; k++)
		name[k] = letters[n - 1 - k];
	name[n] = '\0';
	if (part)
		snprintf(out, len, "xvd%s%u", name, part);
	else
		snprintf(out, len, "xvd%s", name);
	return 0;
}
