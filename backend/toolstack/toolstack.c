/*
 * toolstack.c - what a toolstack does for profsvc disks, for the cases
 * stock xl cannot do alone.  `create GUEST.cfg` reads and checks the
 * config (xlcfg.c), then hands it to stock `xl create` with each
 * `backendtype=profsvc` disk in the form xl serves through us
 * (`script=block-profsvc`, xl_disks.c), so that xl keeps the disks for the
 * domain's life, reboots included.  `attach`/`detach` write and remove a
 * device's frontend and backend directories in one transaction, either
 * our own `backendtype=profsvc` form (keys and permissions as libxl writes
 * them for a vbd) or, with `,script=block-profsvc`, the directories stock
 * xl writes for that disk line.  On xensim, which has no xl, `create`
 * makes a simulated domain and writes its devices itself.
 *
 * May call: xlcfg.c, vdev.c, xenstore and xl, common/ (options.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xenstore.h>

#include "backend/common/options.h"
#include "backend/common/vdev.h"
#include "toolstack.h"
#include "xlcfg.h"

static struct xs_handle *open_xs(const struct be_options *o, struct plat **p)
{
	struct plat_opts po = {.kind = o->platform, .sim_dir = o->sim_dir, .sim_domid = 0};
	char err[512];

	if (plat_open(p, &po, err, sizeof(err)) != 0) {
		fprintf(stderr, "profile-backend: %s\n", err);
		return NULL;
	}
	struct xs_handle *xs = plat_xs_open(*p);
	if (!xs) {
		fprintf(stderr, "profile-backend: cannot open xenstore: %s\n", strerror(errno));
		plat_close(*p);
	}
	return xs;
}

static int put(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *node,
               const char *val)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, node);
	return xs_write(xs, t, path, val, (unsigned)strlen(val)) ? 0 : -1;
}

static int perms(struct xs_handle *xs, xs_transaction_t t, const char *path, uint32_t owner,
                 uint32_t reader)
{
	struct xs_permissions p[2] = {{.id = owner, .perms = XS_PERM_NONE},
	                              {.id = reader, .perms = XS_PERM_READ}};
	return xs_set_permissions(xs, t, path, p, 2) ? 0 : -1;
}

/* Resolves a domain name or id to a live domid. */
static int resolve_domain(struct xs_handle *xs, const char *arg, uint32_t *domid)
{
	char *end, path[64];
	unsigned n, len;

	unsigned long v = strtoul(arg, &end, 10);
	if (*arg && !*end && v < 32768) {
		snprintf(path, sizeof(path), "/local/domain/%lu/name", v);
		char *name = xs_read(xs, XBT_NULL, path, &len);
		free(name);
		if (!name) {
			fprintf(stderr, "profile-backend: no domain %lu\n", v);
			return -1;
		}
		*domid = (uint32_t)v;
		return 0;
	}
	char **doms = xs_directory(xs, XBT_NULL, "/local/domain", &n);
	for (unsigned i = 0; doms && i < n; i++) {
		snprintf(path, sizeof(path), "/local/domain/%s/name", doms[i]);
		char *name = xs_read(xs, XBT_NULL, path, &len);
		int match = name && strcmp(name, arg) == 0;
		free(name);
		if (match) {
			*domid = (uint32_t)strtoul(doms[i], NULL, 10);
			free(doms);
			return 0;
		}
	}
	free(doms);
	fprintf(stderr, "profile-backend: no domain named '%s'\n", arg);
	return -1;
}

/* Both directories of one device, in one transaction. */
/* xl: the directories as stock xl writes a `script=block-profsvc` disk
 * (kind vbd, the script's path, type phy): how xensim plays xl. */
static int write_device(struct xs_handle *xs, uint32_t domid, const char *vdev, const char *protocol,
                        int xl)
{
	int64_t devid = be_vdev_to_devid(vdev);
	char fe[128], be[128], vbd[96], val[64], bdom[96];

	if (devid < 0) {
		fprintf(stderr, "profile-backend: '%s' is not a Xen disk name (xvdp1, xvdp2, ...)\n", vdev);
		return -1;
	}
	snprintf(vbd, sizeof(vbd), "/local/domain/%u/device/vbd", domid);
	snprintf(fe, sizeof(fe), "%s/%lld", vbd, (long long)devid);
	snprintf(bdom, sizeof(bdom), "%s/%u", xl ? VBD_ROOT : BACKEND_ROOT, domid);
	snprintf(be, sizeof(be), "%s/%lld", bdom, (long long)devid);
	for (int tries = 0; tries < 100; tries++) {
		unsigned len;
		xs_transaction_t t = xs_transaction_start(xs);
		if (!t)
			return -1;
		char *exists = xs_read(xs, t, fe, &len);
		if (exists) {
			free(exists);
			xs_transaction_end(xs, t, true);
			fprintf(stderr, "profile-backend: domain %u already has a device %s (%lld)\n", domid,
			        vdev, (long long)devid);
			return -1;
		}
		int rc = 0;
		/* The guest owns its device directories; dom0 may read them. */
		char *v = xs_read(xs, t, vbd, &len);
		if (!v)
			rc |= !xs_mkdir(xs, t, vbd) || perms(xs, t, vbd, domid, 0);
		free(v);
		rc |= !xs_mkdir(xs, t, fe) || perms(xs, t, fe, domid, 0);
		rc |= put(xs, t, fe, "backend", be) | put(xs, t, fe, "backend-id", "0") |
		      put(xs, t, fe, "state", "1") | put(xs, t, fe, "device-type", "disk");
		snprintf(val, sizeof(val), "%lld", (long long)devid);
		rc |= put(xs, t, fe, "virtual-device", val);
		if (protocol)
			rc |= put(xs, t, fe, "protocol", protocol);
		/* dom0 owns the backend directory; the guest may read it. */
		v = xs_read(xs, t, bdom, &len);
		if (!v)
			rc |= !xs_mkdir(xs, t, bdom) || perms(xs, t, bdom, 0, domid);
		free(v);
		rc |= !xs_mkdir(xs, t, be) || perms(xs, t, be, 0, domid);
		snprintf(val, sizeof(val), "%u", domid);
		rc |= put(xs, t, be, "frontend", fe) | put(xs, t, be, "frontend-id", val) |
		      put(xs, t, be, "online", "1") | put(xs, t, be, "removable", "0") |
		      put(xs, t, be, "bootable", "1") | put(xs, t, be, "state", "1") |
		      put(xs, t, be, "dev", vdev) | put(xs, t, be, "type", xl ? "phy" : BACKEND_TYPE) |
		      put(xs, t, be, "mode", "w") | put(xs, t, be, "device-type", "disk") |
		      put(xs, t, be, "params", xl ? "prof" : "");
		if (xl)
			rc |= put(xs, t, be, "script", "/etc/xen/scripts/" XL_HOTPLUG_SCRIPT);
		if (rc) {
			int e = errno;
			xs_transaction_end(xs, t, true);
			fprintf(stderr, "profile-backend: writing %s: %s\n", fe, strerror(e));
			return -1;
		}
		if (xs_transaction_end(xs, t, false))
			return 0;
		if (errno != EAGAIN) {
			fprintf(stderr, "profile-backend: writing %s: %s\n", fe, strerror(errno));
			return -1;
		}
	}
	fprintf(stderr, "profile-backend: xenstore kept conflicting; try again\n");
	return -1;
}

/*
 * What block-profsvc's "add" is to libxl: a stock xl disk is in use only
 * once profile-backend has taken it (its profsvc-backend node), and libxl
 * neither starts the guest nor returns from block-attach before.  Without
 * that wait an attach followed at once by a detach could reach a backend
 * that had not yet looked: it never takes a disk that is already being
 * removed, so nobody would say Closed and the detach would wait its 10 s.
 * Not taken within 10 s: both directories go again, as libxl removes a
 * disk whose hotplug script failed.
 */
static int wait_taken(struct xs_handle *xs, uint32_t domid, const char *vdev)
{
	int64_t devid = be_vdev_to_devid(vdev);
	char node[160], be[128], fe[128];
	unsigned len;

	snprintf(be, sizeof(be), "%s/%u/%lld", VBD_ROOT, domid, (long long)devid);
	snprintf(node, sizeof(node), "%s/profsvc-backend", be);
	for (int i = 0; i < 100; i++) {
		char *v = xs_read(xs, XBT_NULL, node, &len);
		free(v);
		if (v)
			return 0;
		usleep(100000);
	}
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/vbd/%lld", domid, (long long)devid);
	xs_rm(xs, XBT_NULL, be);
	xs_rm(xs, XBT_NULL, fe);
	fprintf(stderr, "profile-backend: %s was not taken by profile-backend within 10 s (is it running? see "
	                "its log); the disk is removed again, as libxl does when block-profsvc fails\n", be);
	return -1;
}

/* "vdev=xvdp1" or "xvdp1"; ",script=block-profsvc" after it: as stock xl */
static const char *vdev_arg(const char *a)
{
	return strncmp(a, "vdev=", 5) == 0 ? a + 5 : a;
}

int be_toolstack_attach(const struct be_options *o, const char *domain, int nvdev, char **vdevs)
{
	struct plat *p;
	struct xs_handle *xs = open_xs(o, &p);
	uint32_t domid;
	int rc = 1;

	if (!xs)
		return 1;
	if (resolve_domain(xs, domain, &domid) == 0) {
		rc = 0;
		for (int i = 0; i < nvdev && !rc; i++) {
			char vdev[32];
			snprintf(vdev, sizeof(vdev), "%s", vdev_arg(vdevs[i]));
			char *xl = strstr(vdev, ",script=" XL_HOTPLUG_SCRIPT);
			if (xl)
				*xl = '\0';
			rc = write_device(xs, domid, vdev, o->platform == PLAT_SIM ? "x86_64-abi" : NULL,
			                  xl != NULL) ? 1 : 0;
			if (!rc && xl && wait_taken(xs, domid, vdev) != 0)
				rc = 1;
			if (!rc)
				printf("attached %s to domain %u\n", vdev, domid);
		}
	}
	xs_close(xs);
	plat_close(p);
	return rc;
}

/*
 * What libxl does to remove a vbd (libxl__initiate_device_generic_remove):
 * online=0 and Closing in one transaction, up to 10 s for the backend to
 * say Closed, then both directories removed (the hotplug script's
 * "remove" runs in between; block-profsvc's has nothing to do).  On
 * xensim this is xl block-detach; on Xen, xl itself does it.
 */
static int xl_style_detach(struct xs_handle *xs, uint32_t domid, int64_t devid, const char *be, int force)
{
	char state[160], fe[96];
	unsigned len;

	snprintf(state, sizeof(state), "%s/state", be);
	for (int tries = 0;; tries++) {
		xs_transaction_t t = xs_transaction_start(xs);
		if (!t)
			return -1;
		int rc = put(xs, t, be, "online", "0") | put(xs, t, be, "state", "5");
		if (rc) {
			xs_transaction_end(xs, t, true);
			fprintf(stderr, "profile-backend: %s: %s\n", be, strerror(errno));
			return -1;
		}
		if (xs_transaction_end(xs, t, false))
			break;
		if (errno != EAGAIN || tries > 100)
			return -1;
	}
	int closed = 0;
	for (int i = 0; i < (force ? 100 : 1000) && !closed; i++) {
		char *v = xs_read(xs, XBT_NULL, state, &len);
		closed = v && strcmp(v, "6") == 0;
		free(v);
		if (!closed)
			usleep(10000);
	}
	if (!closed && !force)
		fprintf(stderr, "profile-backend: %s did not reach Closed within 10 s (is profile-backend "
		                "running?); removed anyway, as libxl does ('detach --force' does not wait)\n", be);
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/vbd/%lld", domid, (long long)devid);
	xs_rm(xs, XBT_NULL, be);
	xs_rm(xs, XBT_NULL, fe);
	return closed || force ? 0 : -1;
}

/* A frontend's state node as read (the guest wrote it): one XenbusState
 * digit, else "unreadable". */
static const char *safe_state(const char *v)
{
	return v[0] >= '0' && v[0] <= '8' && !v[1] ? v : "unreadable";
}

int be_toolstack_detach(const struct be_options *o, const char *domain, const char *vdev)
{
	struct plat *p;
	struct xs_handle *xs = open_xs(o, &p);
	uint32_t domid;
	char be[128];
	unsigned len;
	int rc = 1;

	if (!xs)
		return 1;
	int64_t devid = be_vdev_to_devid(vdev_arg(vdev));
	if (devid < 0) {
		fprintf(stderr, "profile-backend: '%s' is not a Xen disk name\n", vdev);
		goto out;
	}
	if (resolve_domain(xs, domain, &domid) != 0)
		goto out;
	snprintf(be, sizeof(be), "%s/%u/%lld", BACKEND_ROOT, domid, (long long)devid);
	char *v = xs_read(xs, XBT_NULL, be, &len);
	if (!v) {
		/* A stock xl disk: removed as libxl does it (xl block-detach). */
		snprintf(be, sizeof(be), "%s/%u/%lld", VBD_ROOT, domid, (long long)devid);
		v = xs_read(xs, XBT_NULL, be, &len);
		if (v) {
			free(v);
			rc = xl_style_detach(xs, domid, devid, be, o->force) ? 1 : 0;
			if (!rc)
				printf("detached %s from domain %u\n", vdev_arg(vdev), domid);
			goto out;
		}
		fprintf(stderr, "profile-backend: domain %u has no profsvc device %s\n", domid, vdev);
		goto out;
	}
	free(v);
	if (put(xs, XBT_NULL, be, "online", "0") != 0) {
		fprintf(stderr, "profile-backend: %s: %s\n", be, strerror(errno));
		goto out;
	}
	/* The backend closes it with the frontend and removes both
	 * directories; wait for that (--force: a moment, then remove them
	 * here, as libxl's forced removal does; a running backend sees its
	 * directory go and frees the device). */
	for (int i = 0; i < (o->force ? 100 : 1000); i++) {
		v = xs_read(xs, XBT_NULL, be, &len);
		free(v);
		if (!v) {
			printf("detached %s from domain %u\n", vdev_arg(vdev), domid);
			rc = 0;
			goto out;
		}
		usleep(10000);
	}
	if (o->force) {
		char fe[96], *fs;
		snprintf(fe, sizeof(fe), "/local/domain/%u/device/vbd/%lld/state", domid, (long long)devid);
		fs = xs_read(xs, XBT_NULL, fe, &len);
		fe[strlen(fe) - strlen("/state")] = '\0';
		/* Either may be gone already: the backend's own close may race this. */
		int gone = (xs_rm(xs, XBT_NULL, be) || errno == ENOENT) && (xs_rm(xs, XBT_NULL, fe) || errno == ENOENT);
		if (gone)
			printf("detached %s from domain %u (forced: its frontend had not closed, state %s)\n",
			       vdev_arg(vdev), domid, fs ? safe_state(fs) : "gone");
		else
			fprintf(stderr, "profile-backend: %s: %s\n", be, strerror(errno));
		free(fs);
		rc = !gone;
		goto out;
	}
	fprintf(stderr, "profile-backend: %s still there after 10 s: the frontend has not closed "
	                "(or profile-backend is not running); 'profile-backend detach --force %u %s' "
	                "removes it anyway\n",
	        be, domid, vdev_arg(vdev));
out:
	xs_close(xs);
	plat_close(p);
	return rc;
}

static int run_cmd(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		/* xl create leaves a monitor process behind for the domain's
		 * lifetime: it must not hold our stdout, which callers capture
		 * for the domid (`D=$(profile-backend create ...)`). */
		dup2(2, 1);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0) {
			dup2(null, 0);
			close(null);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "profile-backend: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Undoes a create whose devices could not all be written: on Xen the
 * paused domain goes (xl destroy), on xensim the simulated one. */
static void undo_domain(const struct be_options *o, struct plat *p, uint32_t domid)
{
	char id[16];
	snprintf(id, sizeof(id), "%u", domid);
	if (o->platform == PLAT_XEN) {
		char *destroy[] = {"xl", "destroy", id, NULL};
		if (run_cmd(destroy) != 0)
			fprintf(stderr, "profile-backend: xl destroy %s failed: destroy it by hand\n", id);
	} else if (plat_domain_destroy(p, domid) != 0) {
		fprintf(stderr, "profile-backend: cannot destroy simulated domain %s: %s\n", id,
		        strerror(errno));
	}
}

/* On xensim, which has no xl: a simulated domain and its devices written
 * here.  0 with *domid, or -1 (said why, undone). */
static int create_sim(const struct be_options *o, struct plat *p, struct xs_handle *xs, const struct be_xlcfg *c,
                      uint32_t *domid)
{
	char err[512];

	if (plat_domain_create(p, c->name, domid, err, sizeof(err)) != 0) {
		fprintf(stderr, "profile-backend: %s\n", err);
		return -1;
	}
	for (int i = 0; i < c->nprof; i++) {
		/* libxl writes protocol for PV guests: 64-bit x86 here. */
		if (write_device(xs, *domid, c->prof_vdevs[i], "x86_64-abi", 0) != 0) {
			undo_domain(o, p, *domid);
			return -1;
		}
	}
	return 0;
}

/* Stock xl, with the profsvc disks in its own form (xlcfg.c): libxl writes
 * them and runs block-profsvc before the guest runs, and does so again at
 * every reboot.  xl undoes a create that fails half-way itself.  0 with
 * *domid, or -1 (said why). */
static int create_xl(const struct be_options *o, struct xs_handle *xs, const struct be_xlcfg *c, int argc,
                     char **argv, uint32_t *domid)
{
	char tmp[] = "/tmp/profsvc-xl-XXXXXX.cfg";
	int fd = mkstemps(tmp, 4);
	if (fd < 0 || write(fd, c->xl_text, c->xl_len) != (ssize_t)c->xl_len) {
		fprintf(stderr, "profile-backend: cannot write a temporary config: %s\n", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -1;
	}
	close(fd);
	/* -v: xl's own debug log (libxl's every step) on stderr, so a
	 * create that stalls says where. */
	char *xl[64] = {"xl"};
	int k = 1;
	if (o->verbose) {
		xl[k++] = "-vvv";
		fprintf(stderr, "profile-backend: running xl -vvv create %s\n", tmp);
	}
	xl[k++] = "create";
	xl[k++] = tmp;
	for (int i = 0; i < argc && k < 63; i++)
		xl[k++] = argv[i];
	xl[k] = NULL;
	int st = run_cmd(xl);
	unlink(tmp);
	if (st != 0) {
		fprintf(stderr, "profile-backend: xl create failed (status %d)%s\n", st,
		        c->nprof ? "; if xl said hotplug-error, see above (is profile-backend running?)" : "");
		return -1;
	}
	if (resolve_domain(xs, c->name, domid) != 0)
		return -1;
	if (o->verbose)
		fprintf(stderr, "profile-backend: xl created domain %u (%s)\n", *domid, c->name);
	return 0;
}

/* The config's kernel, as an absolute path (xl reads it from the cwd
 * too); NULL when it has none or it is not a file here. */
static char *kernel_path(const struct be_xlcfg *c)
{
	return c->kernel ? realpath(c->kernel, NULL) : NULL;
}

/* Tells the sampler which ELF the domain runs (KERNEL_ROOT/DOMID). */
static void note_kernel(struct xs_handle *xs, uint32_t domid, const char *kernel)
{
	char node[128];
	snprintf(node, sizeof(node), KERNEL_ROOT "/%u", domid);
	if (!xs_write(xs, XBT_NULL, node, kernel, (unsigned)strlen(kernel)))
		fprintf(stderr, "profile-backend: cannot note domain %u's kernel in %s: %s (sample it with "
		                "--symbols)\n", domid, node, strerror(errno));
}

/* On xensim: the kernel, when it is a program here, runs as the domain
 * with extra's words as its arguments (xl would boot it).  0, or -1 (said
 * why). */
static int exec_kernel(struct plat *p, uint32_t domid, const char *kernel, const char *extra)
{
	char *words = strdup(extra ? extra : ""), *argv[130] = {(char *)kernel}, err[600];
	int argc = 1;
	if (!words)
		return -1;
	for (char *w = strtok(words, " \t"); w && argc < 129; w = strtok(NULL, " \t"))
		argv[argc++] = w;
	argv[argc] = NULL;
	int rc = plat_domain_exec(p, domid, argv, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "profile-backend: %s\n", err);
	free(words);
	return rc;
}

int be_toolstack_create(const struct be_options *o, const char *cfgpath, int argc, char **argv)
{
	struct be_xlcfg c;
	int rc = 1;

	/* Everything is checked before anything is made. */
	if (be_xlcfg_load(cfgpath, &c) != 0)
		return 1;
	if (o->dry_run) {
		/* What xl would be given, then the disks profsvc serves. */
		fwrite(c.xl_text, 1, c.xl_len, stdout);
		for (int i = 0; i < c.nprof; i++)
			printf("# profsvc disk: %s\n", c.prof_vdevs[i]);
		be_xlcfg_free(&c);
		return 0;
	}
	struct plat *p;
	struct xs_handle *xs = open_xs(o, &p);
	if (xs) {
		uint32_t domid = 0;
		int made = o->platform == PLAT_SIM ? create_sim(o, p, xs, &c, &domid)
		                                   : create_xl(o, xs, &c, argc, argv, &domid);
		char *kernel = made == 0 ? kernel_path(&c) : NULL;
		if (kernel)
			note_kernel(xs, domid, kernel);
		if (made == 0 && kernel && o->platform == PLAT_SIM && access(kernel, X_OK) == 0 &&
		    exec_kernel(p, domid, kernel, c.extra) != 0) {
			undo_domain(o, p, domid);
			made = -1;
		}
		if (made == 0) {
			printf("%u\n", domid);
			rc = 0;
		}
		free(kernel);
		xs_close(xs);
		plat_close(p);
	}
	be_xlcfg_free(&c);
	return rc;
}
