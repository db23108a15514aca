/*
 * test_platform_sim.c - grants and event channels through the platform
 * seam on xensim, as a backend (dom0) and a frontend (a guest) see them:
 * read-only enforcement, refs granted to someone else, unknown and ended
 * refs, batched copy both ways, revocation when the guest is destroyed (and
 * the dying state while dom0 still maps its pages), event channel binding
 * rules, masking, notification storms, notifying a dead peer.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>

#include "platform/platform.h"
#include "platform/sim_proto.h"
#include "testutil.h"

static struct tu_xensim sim;

static struct plat *open_plat(uint32_t domid)
{
	struct plat_opts o = {.kind = PLAT_SIM, .sim_dir = sim.dir, .sim_domid = domid};
	struct plat *p;
	char err[512];

	REQUIRE(plat_open(&p, &o, err, sizeof(err)) == 0, "plat_open dom%u: %s", domid, err);
	CHECK(plat_domid(p) == domid, "plat_domid %u != %u", plat_domid(p), domid);
	return p;
}

static int wait_readable(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	return poll(&p, 1, ms) == 1;
}

static void list_line(uint32_t domid, char *out, size_t len)
{
	char text[4096];
	tu_xensim_run(&sim, "list", text, sizeof(text));
	out[0] = '\0';
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned id;
		if (sscanf(l, "%u", &id) == 1 && id == domid)
			snprintf(out, len, "%s", l);
	}
}

static void test_grants(void)
{
	uint32_t g = tu_xensim_create(&sim, "grant-guest");
	uint32_t other = tu_xensim_create(&sim, "other-guest");
	struct plat *dom0 = open_plat(0), *guest = open_plat(g), *og = open_plat(other);
	struct plat_gntshr *shr = plat_gntshr_open(guest);
	struct plat_gnttab *tab = plat_gnttab_open(dom0);
	struct plat_gnttab *otab = plat_gnttab_open(og);
	uint32_t rw[4], ro[1], elsewhere[1];

	REQUIRE(shr && tab && otab, "open gntshr/gnttab");
	uint8_t *pages = plat_gntshr_share(shr, 0, 4, rw, 1);
	uint8_t *ropage = plat_gntshr_share(shr, 0, 1, ro, 0);
	uint8_t *theirs = plat_gntshr_share(shr, other, 1, elsewhere, 1);
	REQUIRE(pages && ropage && theirs, "share: %s", strerror(errno));
	for (int i = 0; i < 4; i++)
		memset(pages + i * 4096, 'a' + i, 4096);
	memset(ropage, 'R', 4096);

	/* Map several refs at once: one contiguous range, shared both ways. */
	uint8_t *m = plat_gnttab_map(tab, g, rw, 4, 1);
	REQUIRE(m, "map 4 refs: %s", strerror(errno));
	CHECK(m[0] == 'a' && m[3 * 4096 + 100] == 'd', "mapped contents");
	m[5] = 'Z';
	CHECK(pages[5] == 'Z', "a backend write is not seen by the guest");
	/* Read-only grants map read-only, never writable. */
	CHECK(!plat_gnttab_map(tab, g, ro, 1, 1), "writable map of a read-only grant");
	uint8_t *rom = plat_gnttab_map(tab, g, ro, 1, 0);
	CHECK(rom && rom[10] == 'R', "read-only map");
	/* Refs granted to someone else, unknown refs: all or nothing. */
	CHECK(!plat_gnttab_map(tab, g, elsewhere, 1, 0), "mapped a grant made to another domain");
	uint32_t mixed[2] = {rw[0], elsewhere[0]};
	CHECK(!plat_gnttab_map(tab, g, mixed, 2, 0), "a partly bad map succeeded");
	uint32_t unknown[3] = {9999, 0, SIM_GRANT_ENTRIES + 5};
	for (int i = 0; i < 3; i++)
		CHECK(!plat_gnttab_map(tab, g, &unknown[i], 1, 0), "mapped unknown ref %u", unknown[i]);
	CHECK(!plat_gnttab_map(tab, 31000, rw, 1, 0), "mapped from a domain that does not exist");
	uint8_t *om = plat_gnttab_map(otab, g, elsewhere, 1, 1);
	CHECK(om != NULL, "the intended grantee cannot map its grant");
	if (om)
		plat_gnttab_unmap(otab, om, 1);

	/* Batched copy, both directions, with a bad segment in the middle. */
	uint8_t local[3][100];
	struct plat_copy_seg segs[3] = {
		{rw[1], 10, 100, local[0], 1},
		{elsewhere[0], 0, 100, local[1], 1},
		{rw[2], 4000, 96, local[2], 1},
	};
	CHECK(plat_gnttab_copy(tab, g, 0, segs, 3) == 0, "copy from guest");
	CHECK(segs[0].status == 0 && local[0][0] == 'b', "segment 0: %d", segs[0].status);
	CHECK(segs[1].status < 0, "copy from a grant made to someone else succeeded");
	CHECK(segs[2].status == 0 && local[2][95] == 'c', "segment 2: %d", segs[2].status);
	memset(local[0], 'W', 100);
	struct plat_copy_seg to[2] = {{rw[3], 0, 100, local[0], 1}, {ro[0], 0, 100, local[0], 1}};
	CHECK(plat_gnttab_copy(tab, g, 1, to, 2) == 0, "copy to guest");
	CHECK(to[0].status == 0 && pages[3 * 4096 + 99] == 'W', "copy into the guest");
	CHECK(to[1].status < 0 && ropage[0] == 'R', "copy into a read-only grant");
	struct plat_copy_seg beyond = {rw[0], 4000, 200, local[0], 1};
	CHECK(plat_gnttab_copy(tab, g, 0, &beyond, 1) != 0, "copy past the end of a page accepted");

	/* Ending a grant: no new maps or copies; an existing map stays valid. */
	CHECK(plat_gntshr_unshare(shr, ropage, 1) == 0, "unshare");
	CHECK(!plat_gnttab_map(tab, g, ro, 1, 0), "mapped an ended grant");
	struct plat_copy_seg ended = {ro[0], 0, 10, local[0], 1};
	plat_gnttab_copy(tab, g, 0, &ended, 1);
	CHECK(ended.status < 0, "copied from an ended grant");
	CHECK(rom && rom[10] == 'R', "an existing mapping of an ended grant broke");
	CHECK(plat_gnttab_unmap(tab, rom, 1) == 0, "unmap");

	/* The guest dies while dom0 still maps its pages: dying, not gone. */
	char args[64], line[256];
	snprintf(args, sizeof(args), "destroy %u", g);
	CHECK(tu_xensim_run(&sim, args, NULL, 0) == 0, "destroy");
	struct plat_copy_seg dead = {rw[1], 0, 10, local[0], 1};
	CHECK(plat_gnttab_copy(tab, g, 0, &dead, 1) == 0 && dead.status < 0, "copy after destroy");
	CHECK(!plat_gnttab_map(tab, g, rw, 1, 0), "map after destroy");
	CHECK(m[0] == 'a', "dom0's mapping of a dead guest's page vanished");
	list_line(g, line, sizeof(line));
	CHECK(strstr(line, "dying") != NULL, "a destroyed guest with mapped pages is not dying: %s",
	      line);
	CHECK(plat_gnttab_unmap(tab, m, 4) == 0, "unmap after destroy");
	list_line(g, line, sizeof(line));
	CHECK(line[0] == '\0', "the guest lingers after its last mapping went: %s", line);
	CHECK(tu_xensim_create(&sim, "grant-guest") != 0, "a new guest with the same name");

	plat_gnttab_close(tab);
	plat_gnttab_close(otab);
	plat_gntshr_close(shr);
	plat_close(guest);
	plat_close(og);
	plat_close(dom0);
}

static void test_evtchn(void)
{
	uint32_t g = tu_xensim_create(&sim, "evt-guest");
	uint32_t x = tu_xensim_create(&sim, "evt-intruder");
	struct plat *dom0 = open_plat(0), *guest = open_plat(g), *intr = open_plat(x);
	struct plat_evtchn *be = plat_evtchn_open(dom0), *fe = plat_evtchn_open(guest);
	struct plat_evtchn *xe = plat_evtchn_open(intr);

	REQUIRE(be && fe && xe, "evtchn_open");
	int fport = plat_evtchn_alloc_unbound(fe, 0);
	REQUIRE(fport > 0, "alloc_unbound: %s", strerror(errno));
	/* Only the domain it was allocated for may bind it. */
	CHECK(plat_evtchn_bind_interdomain(xe, g, (uint32_t)fport) < 0, "a third domain bound it");
	CHECK(plat_evtchn_bind_interdomain(be, g, 999) < 0, "bound a port that does not exist");
	int bport = plat_evtchn_bind_interdomain(be, g, (uint32_t)fport);
	REQUIRE(bport > 0, "bind_interdomain: %s", strerror(errno));
	CHECK(plat_evtchn_bind_interdomain(be, g, (uint32_t)fport) < 0, "bound the same port twice");

	/* Guest -> backend. */
	CHECK(plat_evtchn_pending(be) < 0 && errno == EAGAIN, "pending with nothing fired");
	plat_evtchn_notify(fe, (uint32_t)fport);
	CHECK(wait_readable(plat_evtchn_fd(be), 2000), "backend fd not readable");
	CHECK(plat_evtchn_pending(be) == bport, "pending port");
	/* Masked until unmask: a storm collapses into one pending event. */
	for (int i = 0; i < 100000; i++)
		plat_evtchn_notify(fe, (uint32_t)fport);
	/* A round trip through xensim so the storm has arrived. */
	plat_evtchn_notify(be, (uint32_t)bport);
	CHECK(wait_readable(plat_evtchn_fd(fe), 2000) && plat_evtchn_pending(fe) == fport,
	      "backend -> guest");
	CHECK(!wait_readable(plat_evtchn_fd(be), 50), "a masked port fired again");
	plat_evtchn_unmask(be, (uint32_t)bport);
	CHECK(wait_readable(plat_evtchn_fd(be), 2000) && plat_evtchn_pending(be) == bport,
	      "the pending event was not delivered at unmask");
	plat_evtchn_unmask(be, (uint32_t)bport);
	CHECK(!wait_readable(plat_evtchn_fd(be), 50), "the storm left more than one event");

	/* The peer dies: notifying it is harmless. */
	char args[64];
	snprintf(args, sizeof(args), "destroy %u", g);
	CHECK(tu_xensim_run(&sim, args, NULL, 0) == 0, "destroy");
	for (int i = 0; i < 1000; i++)
		plat_evtchn_notify(be, (uint32_t)bport);
	CHECK(plat_evtchn_unbind(be, (uint32_t)bport) == 0, "unbind after the peer died");
	/* xensim still serves. */
	int p2 = plat_evtchn_alloc_unbound(xe, 0);
	CHECK(p2 > 0, "xensim stopped serving after the storm");
	plat_evtchn_close(be);
	plat_evtchn_close(xe);
	plat_close(dom0);
	plat_close(intr);
	/* The guest's own handle died with its domain: closing it is safe. */
	plat_evtchn_close(fe);
	plat_close(guest);
}

static void test_xs_open(void)
{
	struct plat *dom0 = open_plat(0);
	struct xs_handle *h = plat_xs_open(dom0);
	CHECK(h != NULL, "plat_xs_open");
	if (h)
		xs_close(h);
	plat_close(dom0);
	struct plat_opts o = {.kind = PLAT_SIM, .sim_dir = sim.dir, .sim_domid = 4242};
	struct plat *p;
	char err[512];
	CHECK(plat_open(&p, &o, err, sizeof(err)) != 0 && strstr(err, "cannot reach xensim"),
	      "a domain that does not exist: %s", err);
	enum plat_kind k;
	CHECK(plat_parse_kind("sim", &k) == 0 && k == PLAT_SIM, "parse sim");
	CHECK(plat_parse_kind("xen", &k) == 0 && k == PLAT_XEN, "parse xen");
	CHECK(plat_parse_kind("kvm", &k) != 0, "parse kvm");
}

int main(void)
{
	tu_xensim_start(&sim);
	test_grants();
	test_evtchn();
	test_xs_open();
	tu_xensim_stop(&sim);
	return tu_finish("test_platform_sim");
}
