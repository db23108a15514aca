/*
 * xlcfg.c - the xl config of `profile-backend create`, read by libxlutil,
 * the library xl itself parses configs with, so that a config means to
 * profile-backend exactly what it means to xl: comments, `;`, spacing,
 * `+=`, string escapes, and the whole disk-spec grammar (positional and
 * key=value forms) are xl's.  Everything is checked before anything is
 * created: a config xl would refuse, or a profsvc disk that cannot be
 * served, is refused here with file:line and the fix.
 *
 * A profsvc disk is recognised as xl's lexer would see its backendtype:
 * a spec is a comma-separated list of parameters (leading blanks skipped)
 * until a `target=`, which takes the rest.  xl compares backendtype
 * values exactly (libxl_disk_backend_from_string): `PROFSVC` or
 * `profsvc ` are not profsvc, xl would refuse them, and so do we.  The
 * profsvc spec is then parsed by xlu_disk_parse with the backendtype
 * given as `phy`: in xl's grammar backendtype only selects the enum, so
 * vdev, format, access, devtype and target come out as xl reads them.
 *
 * xl gets the file unchanged followed by one `disk = [...]`, built from
 * the parsed strings: the last assignment of a setting is the one xl
 * uses, so no text of the user's is cut or moved.  In it each profsvc
 * disk is written as stock xl takes it, `vdev=V, script=block-profsvc,
 * target=prof` (xl_disks.c): xl then makes and removes those disks itself
 * for the domain's whole life, a reboot included, which profile-backend
 * could not follow from outside.
 *
 * May call: vdev.c and libxlutil, common/ (options.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxlutil.h>

#include "backend/common/options.h"
#include "backend/common/vdev.h"
#include "xlcfg.h"

#define MAX_DISKS 256

/* The line of setting n, as libxlutil knows it: asking for the other
 * type makes it warn "L:LINE: warning: ..." into our memstream. */
struct lines {
	XLU_Config *cfg;
	FILE *f;
	char *buf;
	size_t len;
};

static int setting_line(struct lines *l, const char *n, int is_list)
{
	if (!l->cfg)
		return 0;
	long at = ftell(l->f);
	const char *s;
	XLU_ConfigList *list;
	if (is_list)
		xlu_cfg_get_string(l->cfg, n, &s, 0);
	else
		xlu_cfg_get_list(l->cfg, n, &list, NULL, 0);
	fflush(l->f);
	int line = 0;
	if (at >= 0 && (size_t)at < l->len && sscanf(l->buf + at, "L:%d:", &line) != 1)
		line = 0;
	return line;
}

/* "path:LINE" (or "path" when the line is unknown) */
static void where(char *out, size_t len, const char *path, int line)
{
	if (line > 0)
		snprintf(out, len, "%s:%d", path, line);
	else
		snprintf(out, len, "%s", path);
}

/* Reads a regular file of at most XLCFG_MAX_BYTES; a FIFO is refused, not
 * waited on (O_NONBLOCK). */
static char *read_config(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "profile-backend: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > XLCFG_MAX_BYTES) {
		fprintf(stderr, "profile-backend: %s: %s\n", path,
		        S_ISDIR(st.st_mode)   ? "is a directory: give the guest's xl config file"
		        : !S_ISREG(st.st_mode) ? "not a regular file: give the guest's xl config file"
		                               : "larger than 1 MiB: not an xl config");
		close(fd);
		return NULL;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	int e = errno;
	close(fd);
	if (!buf || got != (size_t)st.st_size) {
		fprintf(stderr, "profile-backend: %s: %s\n", path, buf ? (got ? "changed while read" : strerror(e))
		                                                       : "out of memory");
		free(buf);
		return NULL;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* The value of the spec's backendtype parameter as xl's lexer splits it
 * (NULL if none); *key_spaced is set when a parameter reads
 * "backendtype =" (xl's grammar has no blanks around '='). */
static const char *backendtype_of(const char *spec, size_t *vlen, int *key_spaced)
{
	const char *found = NULL;
	*key_spaced = 0;
	for (const char *p = spec; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!strncmp(p, "target=", 7))
			break; /* the rest is the target */
		size_t n = strcspn(p, ",");
		if (n >= 12 && !strncmp(p, "backendtype=", 12)) {
			found = p + 12;
			*vlen = n - 12;
		} else if (!strncmp(p, "backendtype", 11) && strchr(" \t", p[11]) && memchr(p, '=', n)) {
			*key_spaced = 1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return found;
}

/* Near misses xl would refuse: "PROFSVC", "profsvc ", " profsvc". */
static int looks_like_profsvc(const char *v, size_t n)
{
	while (n && strchr(" \t", *v))
		v++, n--;
	while (n && strchr(" \t", v[n - 1]))
		n--;
	return n == strlen(BACKEND_TYPE) && !strncasecmp(v, BACKEND_TYPE, n);
}

/* xlu_disk_parse of one spec; for a profsvc disk, with backendtype=phy
 * in its place.  A profsvc disk has no target, which xl's parser
 * requires of a disk that is not a cdrom: when the spec gives none, an
 * empty one is added (it cannot clash with the user's). */
static int parse_disk(const char *at, const char *spec, const char *bt, size_t btlen, int prof,
                      libxl_device_disk *d)
{
	char *mapped = NULL;
	const char *one = spec;
	if (prof) {
		size_t off = (size_t)(bt - spec);
		mapped = malloc(strlen(spec) + 4);
		if (!mapped)
			return -1;
		memcpy(mapped, spec, off);
		strcpy(mapped + off, "phy");
		strcpy(mapped + off + 3, bt + btlen);
		one = mapped;
	}
	/* libxlutil says what is wrong with a spec on the report of the
	 * config it is given, prefixed with that config's name. */
	XLU_Config *dc = xlu_cfg_init(stderr, at);
	if (!dc) {
		free(mapped);
		return -1;
	}
	int rc;
	if (prof) {
		/* First without a target, silently, to see whether one is given. */
		FILE *devnull = fopen("/dev/null", "w");
		XLU_Config *probe = devnull ? xlu_cfg_init(devnull, at) : NULL;
		libxl_device_disk t;
		libxl_device_disk_init(&t);
		int has_target = 0;
		if (probe) {
			xlu_disk_parse(probe, 1, &one, &t);
			has_target = t.pdev_path != NULL;
			xlu_cfg_destroy(probe);
		}
		libxl_device_disk_dispose(&t);
		if (devnull)
			fclose(devnull);
		const char *two[2] = {one, "target="};
		rc = xlu_disk_parse(dc, has_target ? 1 : 2, two, d);
	} else {
		rc = xlu_disk_parse(dc, 1, &one, d);
	}
	xlu_cfg_destroy(dc);
	free(mapped);
	return rc ? -1 : 0;
}

/* A profsvc disk profile-backend can serve: a vdev Xen knows, writable,
 * raw, no target (the data goes to the store), not a cdrom, no hotplug
 * script, served from dom0. */
static int check_prof(const char *at, int i, const char *spec, const libxl_device_disk *d)
{
	const char *why = NULL;
	if (d->pdev_path && *d->pdev_path)
		why = "has a target; a profsvc disk has none (the store holds its data): drop the target";
	else if (d->is_cdrom)
		why = "is a cdrom; a profsvc disk is a writable disk: drop devtype=cdrom";
	else if (!d->readwrite)
		why = "is read-only; the guest writes its profile there: drop access=ro";
	else if (d->format != LIBXL_DISK_FORMAT_RAW)
		why = "has a format other than raw; profsvc serves raw sectors: drop format= or give format=raw";
	else if (d->script && *d->script)
		why = "has a script; profile-backend serves it with none: drop script=";
	else if (d->backend_domname && *d->backend_domname && strcmp(d->backend_domname, "0") &&
	         strcmp(d->backend_domname, "Domain-0"))
		why = "names a backend domain; profile-backend serves from dom0: drop backend=";
	else if (be_vdev_to_devid(d->vdev) < 0)
		why = "has a vdev that is not a Xen disk name: give one such as vdev=xvdp1";
	if (!why)
		return 0;
	fprintf(stderr, "profile-backend: %s: disk entry %d '%s' %s\n", at, i + 1, spec, why);
	return -1;
}

/* Appends s to the xl text as a double-quoted xl string. */
static int put_quoted(char **out, size_t *len, size_t *cap, const char *s)
{
	size_t need = *len + 2 * strlen(s) + 8;
	if (need > *cap) {
		char *n = realloc(*out, need);
		if (!n)
			return -1;
		*out = n;
		*cap = need;
	}
	char *o = *out + *len;
	*o++ = '"';
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return -1; /* xl's strings cannot carry them back */
		if (*s == '"' || *s == '\\')
			*o++ = '\\';
		*o++ = *s;
	}
	*o++ = '"';
	*len = (size_t)(o - *out);
	return 0;
}

static int load_src(const char *path, char *src, size_t len, struct be_xlcfg *c);

int be_xlcfg_load(const char *path, struct be_xlcfg *c)
{
	memset(c, 0, sizeof(*c));
	size_t len;
	char *src = read_config(path, &len);
	if (!src)
		return -1;
	return load_src(path, src, len, c);
}

int be_xlcfg_load_buffer(const char *label, const char *buf, size_t len, struct be_xlcfg *c)
{
	memset(c, 0, sizeof(*c));
	if (len > XLCFG_MAX_BYTES) {
		fprintf(stderr, "profile-backend: %s: larger than 1 MiB: not an xl config\n", label);
		return -1;
	}
	char *src = malloc(len + 1);
	if (!src) {
		fprintf(stderr, "profile-backend: %s: out of memory\n", label);
		return -1;
	}
	memcpy(src, buf, len);
	src[len] = '\0';
	return load_src(label, src, len, c);
}

/* The config src (len bytes and a NUL, freed here) read as path. */
/* A disk entry seen: its vdev (ours), its number, whether it is ours. */
struct disk_seen {
	char *vdev;
	int64_t devid;
	int prof;
};

/* libxlutil asserts (aborts) on a NUL inside a quoted string: 0 if there
 * is none, else -1 (said where). */
static int check_no_nul(const char *path, const char *src, size_t len)
{
	const char *nul = memchr(src, '\0', len);
	if (!nul)
		return 0;
	int line = 1;
	for (const char *p = src; p < nul; p++)
		line += *p == '\n';
	fprintf(stderr, "profile-backend: %s:%d: a NUL byte: not an xl config; nothing created\n", path, line);
	return -1;
}

/* name = "GUEST" into c->name (at: where it is said).  0, or -1 (said
 * why). */
static int take_name(XLU_Config *cfg, struct lines *l, const char *path, char *at, size_t atlen,
                     struct be_xlcfg *c)
{
	const char *name;
	int e = xlu_cfg_get_string(cfg, "name", &name, 1);
	where(at, atlen, path, e == ESRCH ? 0 : setting_line(l, "name", e != 0));
	if (e == ESRCH) {
		fprintf(stderr, "profile-backend: %s: no name = \"...\": xl needs the guest's name\n", at);
		return -1;
	}
	if (e) {
		fprintf(stderr, "profile-backend: %s: name is a list; write name = \"GUEST\"\n", at);
		return -1;
	}
	if (!*name) {
		fprintf(stderr, "profile-backend: %s: name is empty; write name = \"GUEST\"\n", at);
		return -1;
	}
	return (c->name = strdup(name)) ? 0 : -1;
}

/* Disk entry i (spec) parsed as xl would and, if it is a profsvc disk,
 * checked; its vdev kept in seen[*ndisks] (counted there once held) and a
 * profsvc one's in c.  0, or -1 (said why). */
static int take_disk(const char *at, int i, const char *spec, struct disk_seen *seen, int *ndisks,
                     struct be_xlcfg *c)
{
	if (!spec) {
		fprintf(stderr, "profile-backend: %s: disk entry %d is a list; each disk is one string\n", at, i + 1);
		return -1;
	}
	size_t btlen = 0;
	int spaced;
	const char *bt = backendtype_of(spec, &btlen, &spaced);
	int prof = bt && btlen == strlen(BACKEND_TYPE) && !strncmp(bt, BACKEND_TYPE, btlen);
	libxl_device_disk d;
	libxl_device_disk_init(&d);
	if (parse_disk(at, spec, bt, btlen, prof, &d) != 0) {
		libxl_device_disk_dispose(&d);
		if (prof)
			fprintf(stderr, "profile-backend: %s: disk entry %d '%s' is not a disk xl accepts (see "
			                "above); a profsvc disk reads 'vdev=xvdp1, backendtype=%s'\n",
			        at, i + 1, spec, BACKEND_TYPE);
		else if ((bt && looks_like_profsvc(bt, btlen)) || spaced)
			fprintf(stderr, "profile-backend: %s: disk entry %d: xl takes backendtype=%s exactly "
			                "(lower case, no blanks around '=' or the value)\n",
			        at, i + 1, BACKEND_TYPE);
		else
			fprintf(stderr, "profile-backend: %s: disk entry %d '%s' is not a disk xl accepts "
			                "(see above; docs/misc/xl-disk-configuration.txt)\n",
			        at, i + 1, spec);
		return -1;
	}
	int bad = prof && check_prof(at, i, spec, &d) != 0;
	struct disk_seen *me = &seen[*ndisks];
	me->vdev = d.vdev ? strdup(d.vdev) : NULL;
	libxl_device_disk_dispose(&d);
	if (bad || !me->vdev) {
		free(me->vdev); /* not yet counted in ndisks */
		return -1;
	}
	me->devid = be_vdev_to_devid(me->vdev);
	me->prof = prof;
	for (int k = 0; k < *ndisks; k++) {
		int same = seen[k].devid >= 0 ? seen[k].devid == me->devid : !strcmp(seen[k].vdev, me->vdev);
		if (same && (prof || seen[k].prof)) {
			fprintf(stderr, "profile-backend: %s: disk entries %d and %d are both %s; give each "
			                "disk its own vdev\n", at, k + 1, i + 1, me->vdev);
			(*ndisks)++;
			return -1;
		}
	}
	(*ndisks)++;
	if (!prof)
		return 0;
	if (c->nprof == XLCFG_MAX_PROF) {
		fprintf(stderr, "profile-backend: %s: more than %d profsvc disks\n", at, XLCFG_MAX_PROF);
		return -1;
	}
	return (c->prof_vdevs[c->nprof++] = strdup(me->vdev)) ? 0 : -1;
}

/* The config for xl: the file as it is, then (if profsvc disks were taken
 * out) the list of the others, which xl reads instead of the first.  0,
 * or -1 (said why, if not out of memory). */
static int make_xl_text(struct be_xlcfg *c, const char *src, size_t len, XLU_ConfigList *list, int n,
                        const struct disk_seen *seen, const char *at)
{
	int rc = 0;

	c->xl_len = len;
	size_t cap = len + 256;
	c->xl_text = malloc(cap);
	if (!c->xl_text)
		return -1;
	memcpy(c->xl_text, src, len);
	if (c->nprof) {
		static const char head[] = "\n# profile-backend: the disks as stock xl takes them (each "
		                           "backendtype=profsvc one as script=" XL_HOTPLUG_SCRIPT ")\ndisk = [";
		memcpy(c->xl_text + c->xl_len, head, sizeof(head) - 1);
		c->xl_len += sizeof(head) - 1;
		int kept = 0;
		for (int i = 0; i < n && rc == 0; i++) {
			/* A profsvc disk in the form stock xl serves through
			 * profile-backend (xl_disks.c): what xl keeps for the
			 * domain's life, so that a reboot brings it back. */
			char stock[96];
			const char *spec = xlu_cfg_get_listitem(list, i);
			if (seen[i].prof) {
				/* target: what the disk holds (xl wants one; the
				 * hotplug script ignores it), as the README writes it */
				snprintf(stock, sizeof(stock), "vdev=%s, script=%s, target=%s", seen[i].vdev,
				         XL_HOTPLUG_SCRIPT, store_role_name(store_role_for_vdev(seen[i].vdev)));
				spec = stock;
			}
			if (kept++)
				c->xl_text[c->xl_len++] = ',';
			c->xl_text[c->xl_len++] = ' ';
			if (put_quoted(&c->xl_text, &c->xl_len, &cap, spec) != 0) {
				fprintf(stderr, "profile-backend: %s: disk entry %d holds a control character xl "
				                "cannot be given back\n", at, i + 1);
				rc = -1;
			}
		}
		/* put_quoted leaves 6 bytes spare: " ]\n" and the NUL fit */
		if (rc == 0) {
			memcpy(c->xl_text + c->xl_len, " ]\n", 3);
			c->xl_len += 3;
		}
	}
	if (rc == 0)
		c->xl_text[c->xl_len] = '\0';
	return rc;
}

static int load_src(const char *path, char *src, size_t len, struct be_xlcfg *c)
{
	struct lines l = {0};
	XLU_Config *cfg = NULL;
	XLU_ConfigList *list = NULL;
	int rc = -1, ndisks = 0, n = 0;
	char at[4200];
	struct disk_seen seen[MAX_DISKS];

	if (check_no_nul(path, src, len) != 0)
		goto out;
	/* Syntax errors: libxlutil prints "path:line: config parsing error
	 * near ..." on stderr. */
	cfg = xlu_cfg_init(stderr, path);
	if (!cfg || xlu_cfg_readdata(cfg, src, (int)len) != 0) {
		fprintf(stderr, "profile-backend: %s: not a config xl can read (see above); nothing created\n",
		        path);
		goto out;
	}
	l.f = open_memstream(&l.buf, &l.len);
	l.cfg = l.f ? xlu_cfg_init(l.f, "L") : NULL;
	if (l.cfg && xlu_cfg_readdata(l.cfg, src, (int)len) != 0) {
		xlu_cfg_destroy(l.cfg);
		l.cfg = NULL;
	}
	if (take_name(cfg, &l, path, at, sizeof(at), c) != 0)
		goto out;
	/* kernel and extra: what the sampler names the guest's code by, and
	 * what xensim runs as the guest (a list is xl's to refuse). */
	const char *v;
	if (xlu_cfg_get_string(cfg, "kernel", &v, 1) == 0 && *v && !(c->kernel = strdup(v)))
		goto out;
	if (xlu_cfg_get_string(cfg, "extra", &v, 1) == 0 && *v && !(c->extra = strdup(v)))
		goto out;
	int e = xlu_cfg_get_list(cfg, "disk", &list, &n, 1);
	if (e != ESRCH) { /* no disks: xl gets the file as it is */
		where(at, sizeof(at), path, setting_line(&l, "disk", e == 0));
		if (e) {
			fprintf(stderr, "profile-backend: %s: disk is a single string, not a list (xl would ignore "
			                "it): write disk = [ '...', '...' ]\n", at);
			goto out;
		}
		if (n > MAX_DISKS) {
			fprintf(stderr, "profile-backend: %s: %d disks; at most %d\n", at, n, MAX_DISKS);
			goto out;
		}
		for (int i = 0; i < n; i++)
			if (take_disk(at, i, xlu_cfg_get_listitem(list, i), seen, &ndisks, c) != 0)
				goto bad;
	}
	rc = make_xl_text(c, src, len, list, n, seen, at);
bad:
	for (int k = 0; k < ndisks; k++)
		free(seen[k].vdev);
out:
	if (cfg)
		xlu_cfg_destroy(cfg);
	if (l.cfg)
		xlu_cfg_destroy(l.cfg);
	if (l.f)
		fclose(l.f);
	free(l.buf);
	free(src);
	if (rc != 0)
		be_xlcfg_free(c);
	return rc;
}

void be_xlcfg_free(struct be_xlcfg *c)
{
	free(c->kernel);
	free(c->extra);
	free(c->name);
	for (int i = 0; i < c->nprof; i++)
		free(c->prof_vdevs[i]);
	free(c->xl_text);
	memset(c, 0, sizeof(*c));
}
