/*
 * xensim_hv_dom.c - the hypervisor's domain table: creating a domain (its
 * id, uuid, memory, directory and the two sockets its clients connect
 * to), freeing its pages and grant entries, and a destroyed domain kept
 * "dying" (Xen's zombie) while others still map its pages, then reaped.
 *
 * May call: the event loop and log (xensim_loop.h), xs_domain_introduce (the
 * xenstored).  The bottom of the hypervisor (xensim_hv_parts.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "xensim_hv_parts.h"

static struct domain *domains[SIM_MAX_DOMID + 1];
static uint32_t incarnations;
static char rundir[256];

int hv_init(const char *dir)
{
	snprintf(rundir, sizeof(rundir), "%s", dir);
	return 0;
}

const char *hv_rundir(void)
{
	return rundir;
}

struct domain *hv_domain(uint32_t domid)
{
	return domid <= SIM_MAX_DOMID ? domains[domid] : NULL;
}

struct domain *hv_running_domain(uint32_t domid)
{
	struct domain *d = hv_domain(domid);
	return d && d->state == DOM_RUNNING ? d : NULL;
}

static int listen_on(struct hv_listener *l, const char *path, uint32_t domid, int is_xs)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, (is_xs ? SOCK_STREAM : SOCK_SEQPACKET) | SOCK_CLOEXEC | SOCK_NONBLOCK,
	                0);

	if (fd < 0)
		return -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		close(fd);
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 64) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	l->it.kind = is_xs ? EV_XS_LISTEN : EV_HV_LISTEN;
	l->it.fd = fd;
	l->domid = domid;
	l->is_xs = is_xs;
	return loop_add(&l->it, 0);
}

static void close_listener(struct hv_listener *l, const char *dir, const char *name)
{
	char path[600];

	if (l->it.fd < 0)
		return;
	loop_del(&l->it);
	close(l->it.fd);
	l->it.fd = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

void hv_domain_unlisten(struct domain *d)
{
	close_listener(&d->xs_listen, d->dir, "xs.sock");
	close_listener(&d->hv_listen, d->dir, "hv.sock");
	rmdir(d->dir);
}

/* As Xen: ids keep increasing (and wrap), so a new domain does not take
 * the id of one that just died while its backends still clean up after
 * it.  SIM_MAX_DOMID + 1 if none is free. */
static uint32_t next_free_domid(void)
{
	static uint32_t next = 1;
	uint32_t domid, tried = 0;

	for (domid = next; tried < SIM_MAX_DOMID && domains[domid]; tried++)
		domid = domid % SIM_MAX_DOMID + 1;
	if (tried < SIM_MAX_DOMID)
		next = domid % SIM_MAX_DOMID + 1;
	else
		domid = SIM_MAX_DOMID + 1;
	return domid;
}

/* Why no domain can be created with that id and name: an errno and err,
 * else 0. */
static int refuse_create(uint32_t domid, const char *name, char *err, size_t errlen)
{
	if (domid > SIM_MAX_DOMID) {
		snprintf(err, errlen, "no free domain id");
		return EBUSY;
	}
	if (domains[domid]) {
		snprintf(err, errlen, "domain %u already exists (%s)", domid,
		         domains[domid]->state == DOM_DYING ? "dying" : "running");
		return EEXIST;
	}
	for (uint32_t i = 0; i <= SIM_MAX_DOMID; i++)
		if (domains[i] && domains[i]->state == DOM_RUNNING && strcmp(domains[i]->name, name) == 0) {
			snprintf(err, errlen, "a domain named '%s' already exists (domid %u)", name, i);
			return EEXIST;
		}
	return 0;
}

/* A uuid for a domain created without one: random (version 4), as Xen's
 * toolstack makes them; rand() unseeded gave every fresh xensim's first
 * domain the same one. */
static void make_uuid(char *out, size_t len, uint32_t domid)
{
	unsigned char b[16];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		/* no entropy yet (early boot): still distinct per domain and run */
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)(rand() ^ (domid >> (i % 4 * 8)) ^ (incarnations >> (i % 4 * 8)) ^ getpid());
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
	         b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The domain's memory, directory and sockets: 0, or -1 and err. */
static int domain_open(struct domain *d, char *err, size_t errlen)
{
	char path[600];

	snprintf(path, sizeof(path), "dom%u", d->domid);
	d->memfd = memfd_create(path, MFD_CLOEXEC);
	if (d->memfd < 0 || ftruncate(d->memfd, (off_t)SIM_DOMAIN_PAGES * SIM_PAGE_SIZE) != 0 ||
	    (mkdir(d->dir, 0700) != 0 && errno != EEXIST)) {
		snprintf(err, errlen, "creating domain %u: %s", d->domid, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/xs.sock", d->dir);
	if (listen_on(&d->xs_listen, path, d->domid, 1) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/hv.sock", d->dir);
	if (listen_on(&d->hv_listen, path, d->domid, 0) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int hv_create_domain(uint32_t domid, const char *name, const char *uuid, uint32_t *out,
                     char *err, size_t errlen)
{
	struct domain *d;
	char genuuid[40];
	int rc;

	if (domid == UINT32_MAX)
		domid = next_free_domid();
	if ((rc = refuse_create(domid, name, err, errlen)) != 0)
		return rc;
	if (!uuid || !*uuid) {
		make_uuid(genuuid, sizeof(genuuid), domid);
		uuid = genuuid;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return ENOMEM;
	}
	d->domid = domid;
	d->incarnation = ++incarnations;
	d->next_ref = FIRST_REF;
	d->next_pfn = 0;
	d->xs_listen.it.fd = d->hv_listen.it.fd = -1;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	snprintf(d->dir, sizeof(d->dir), "%s/dom%u", rundir, domid);
	if (domain_open(d, err, errlen) != 0) {
		hv_domain_unlisten(d);
		if (d->memfd >= 0)
			close(d->memfd);
		free(d);
		return EIO;
	}
	domains[domid] = d;
	xs_domain_introduce(domid, d->name, d->uuid);
	sim_log("domain %u (%s) created", domid, d->name);
	*out = domid;
	return 0;
}

static void free_page(struct domain *d, uint32_t pfn)
{
	/* Punching the hole frees the memory and makes the page read zeros
	 * for its next owner. */
	fallocate(d->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)pfn * SIM_PAGE_SIZE,
	          SIM_PAGE_SIZE);
	d->page_used[pfn / 8] &= (uint8_t)~(1u << (pfn % 8));
}

void hv_free_grant(struct domain *d, uint32_t ref)
{
	free_page(d, d->gt[ref].pfn);
	memset(&d->gt[ref], 0, sizeof(d->gt[ref]));
}

void hv_reap_domain(struct domain *d)
{
	if (d->state != DOM_DYING || d->maps_held)
		return;
	sim_log("domain %u (%s) is gone", d->domid, d->name);
	domains[d->domid] = NULL;
	close(d->memfd);
	free(d);
}

void hv_domains_free(void)
{
	for (uint32_t i = 0; i <= SIM_MAX_DOMID; i++) {
		struct domain *d = domains[i];
		if (!d)
			continue;
		hv_domain_unlisten(d);
		close(d->memfd);
		free(d);
		domains[i] = NULL;
	}
}
