/*
 * xl_disks.c - disks that stock xl made: which of libxl's vbd directories
 * are ours, and taking one over from the dom0 kernel.
 *
 * A guest config says `vdev=xvdp1, script=block-profsvc, target=prof`.
 * libxl then writes an ordinary vbd (backend/vbd/<domid>/<devid>, the
 * frontend in device/vbd/<devid>) and runs our hotplug script; it knows
 * nothing else of us.  The dom0 kernel's xen-blkback watches the same
 * directories and probes every new one: it writes InitWait and then waits
 * for `physical-device`, which only the `block` script writes, so it never
 * touches the guest's ring before we unbind it here.  The whole xl
 * lifecycle (reboot, block-attach/-detach, shutdown, destroy, save and
 * restore) then works as for any vbd: libxl makes and removes the
 * directories, we serve what is in them.
 *
 * May call: log.c, xenstore and sysfs, common/ (state.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xenstore.h>

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "xl_disks.h"

#define KERNEL_VBD_DEVICES "/sys/bus/xen-backend/devices"
#define KERNEL_VBD_UNBIND "/sys/bus/xen-backend/drivers/vbd/unbind"

static char *read_node(struct be_backend *b, const char *dir, const char *node)
{
	char path[256];
	unsigned len;
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_read(b->env.xs, XBT_NULL, path, &len);
}

int be_xl_disk_is_ours(struct be_backend *b, const char *bpath)
{
	char *script = read_node(b, bpath, "script");
	if (!script)
		return 0;
	/* libxl writes the script's absolute path (/etc/xen/scripts/...). */
	const char *base = strrchr(script, '/');
	base = base ? base + 1 : script;
	int ours = strcmp(base, XL_HOTPLUG_SCRIPT) == 0;
	free(script);
	if (!ours)
		return 0;
	/* One that libxl is already removing is not taken (again). */
	char *online = read_node(b, bpath, "online"), *state = read_node(b, bpath, "state");
	int leaving = (online && strcmp(online, "0") == 0) ||
	              (state && (strcmp(state, "5") == 0 || strcmp(state, "6") == 0));
	free(online);
	free(state);
	return !leaving;
}

/* Nodes the kernel's xen-blkback writes at probe that we do not (a
 * frontend must not read its limits as ours). */
static const char *const kernel_nodes[] = {"multi-queue-max-queues", "feature-barrier",
                                           "physical-device-path", NULL};

/* Waits (1 ms steps, at most ms) for path to exist; 0 once it does. */
static int wait_for(const char *path, int ms)
{
	struct stat st;
	for (int i = 0; i <= ms; i++) {
		if (lstat(path, &st) == 0)
			return 0;
		usleep(1000);
	}
	return -1;
}

/*
 * The kernel makes its device for the directory when its watch fires,
 * as we do, and binds xen-blkback to it if that is loaded: both are
 * waited for (briefly: milliseconds on a live host), so that the unbind
 * comes after the bind and not before it.
 */
void be_xl_release_kernel(struct be_device *d, int wait)
{
	char name[64], dev[160], link[192];
	struct stat st;

	if (lstat(KERNEL_VBD_DEVICES, &st) != 0)
		return; /* not a Linux dom0 with the backend bus (xensim) */
	snprintf(name, sizeof(name), "vbd-%u-%u", d->domid, d->devid);
	snprintf(dev, sizeof(dev), KERNEL_VBD_DEVICES "/%s", name);
	snprintf(link, sizeof(link), "%s/driver", dev);
	if (wait && wait_for(dev, 2000) == 0 && lstat(KERNEL_VBD_UNBIND, &st) == 0)
		wait_for(link, 1000);
	if (lstat(link, &st) != 0)
		return;
	int fd = open(KERNEL_VBD_UNBIND, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? write(fd, name, strlen(name)) : -1;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		be_dlog_at(LOG_ERR, d, "cannot take %s over from the kernel's xen-blkback (%s: %s): it "
		        "may serve the guest too; unload it (modprobe -r xen-blkback) if this host serves no kernel vbds",
		        name, KERNEL_VBD_UNBIND, strerror(e));
	else
		be_dlog_at(wait ? LOG_INFO : LOG_WARNING, d, "taken over from the kernel's xen-blkback%s",
		        wait ? "" : " (it bound the device late)");
}

void be_xl_claim(struct be_device *d)
{
	struct be_backend *b = d->b;

	be_xl_release_kernel(d, 1);
	for (int i = 0; kernel_nodes[i]; i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", d->bpath, kernel_nodes[i]);
		xs_rm(b->env.xs, XBT_NULL, path);
	}
	/* What the hotplug script waits for before libxl lets the guest run. */
	char path[256], pid[24];
	snprintf(path, sizeof(path), "%s/profsvc-backend", d->bpath);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	xs_write(b->env.xs, XBT_NULL, path, pid, (unsigned)strlen(pid));
	be_dlog_at(LOG_NOTICE, d, "stock xl disk (script=%s)", XL_HOTPLUG_SCRIPT);
}
