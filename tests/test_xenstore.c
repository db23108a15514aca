/*
 * test_xenstore.c - xenstore conformance, written against the real
 * libxenstore only.  It runs against xensim (default: it starts one), and
 * with PROFSVC_XS_REAL=1 against whatever xenstored libxenstore finds (the
 * real one in a Xen dom0), which is what proves the simulation faithful.
 * Tests that need a guest's own connection (permissions, quotas, relative
 * paths) run only on xensim, where a test can be a guest.
 *
 * Covered: read/write/mkdir/rm/directory (and the DIRECTORY_PART fallback
 * for big directories), path validation, binary values, permissions,
 * watches (registration event, children, removal of an ancestor, relative
 * paths, unwatch, unreadable nodes, @introduceDomain/@releaseDomain),
 * transactions (isolation, abort, conflicts with EAGAIN), domain paths and
 * introduction, quotas.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>

#include "testutil.h"

static struct tu_xensim sim;
static int real;
static char base[64]; /* a scratch subtree, removed at the end */

static struct xs_handle *open_as(uint32_t domid)
{
	char path[600];

	if (!real) {
		snprintf(path, sizeof(path), "%s/dom%u/xs.sock", sim.dir, domid);
		setenv("XENSTORED_PATH", path, 1);
	}
	struct xs_handle *h = xs_open(0);
	REQUIRE(h, "xs_open as dom%u: %s", domid, strerror(errno));
	return h;
}

static char *rd(struct xs_handle *h, xs_transaction_t t, const char *path)
{
	unsigned len;
	return xs_read(h, t, path, &len);
}

static int wr(struct xs_handle *h, xs_transaction_t t, const char *path, const char *v)
{
	return xs_write(h, t, path, v, (unsigned)strlen(v)) ? 0 : errno;
}

static int read_is(struct xs_handle *h, const char *path, const char *want)
{
	char *v = rd(h, XBT_NULL, path);
	int ok = v && strcmp(v, want) == 0;
	free(v);
	return ok;
}

static int read_errno(struct xs_handle *h, const char *path)
{
	char *v = rd(h, XBT_NULL, path);
	if (v) {
		free(v);
		return 0;
	}
	return errno;
}

/* Waits up to ms for a watch event (path, token); others are skipped. */
static int got_event(struct xs_handle *h, const char *path, const char *token, int ms)
{
	struct pollfd p = {xs_fileno(h), POLLIN, 0};

	for (int waited = 0; waited <= ms; waited += 10) {
		char **ev;
		while ((ev = xs_check_watch(h))) {
			int match = strcmp(ev[XS_WATCH_PATH], path) == 0 &&
			            strcmp(ev[XS_WATCH_TOKEN], token) == 0;
			free(ev);
			if (match)
				return 1;
		}
		poll(&p, 1, 10);
	}
	return 0;
}

/* Consumes whatever events arrive within ms. */
static void drain(struct xs_handle *h, int ms)
{
	struct pollfd p = {xs_fileno(h), POLLIN, 0};
	for (int waited = 0; waited <= ms; waited += 10) {
		char **ev;
		while ((ev = xs_check_watch(h)))
			free(ev);
		poll(&p, 1, 10);
	}
}

static int no_event(struct xs_handle *h, int ms)
{
	struct pollfd p = {xs_fileno(h), POLLIN, 0};
	for (int waited = 0; waited <= ms; waited += 10) {
		char **ev = xs_check_watch(h);
		if (ev) {
			fprintf(stderr, "unexpected event %s %s\n", ev[0], ev[1]);
			free(ev);
			return 0;
		}
		poll(&p, 1, 10);
	}
	return 1;
}

static void test_basic(struct xs_handle *h)
{
	char p[256], *v;
	unsigned n;

	snprintf(p, sizeof(p), "%s/a/b/c", base);
	CHECK(wr(h, XBT_NULL, p, "hello") == 0, "write with missing parents");
	CHECK(read_is(h, p, "hello"), "read back");
	snprintf(p, sizeof(p), "%s/a/b", base);
	CHECK(read_is(h, p, ""), "implicit parent is empty");
	snprintf(p, sizeof(p), "%s/nope", base);
	CHECK(read_errno(h, p) == ENOENT, "missing node: ENOENT");
	/* As C xenstored: removing a missing node is fine if its parent
	 * exists, ENOENT if not. */
	CHECK(xs_rm(h, XBT_NULL, p), "rm of a missing node under an existing parent");
	snprintf(p, sizeof(p), "%s/nope/deeper", base);
	CHECK(!xs_rm(h, XBT_NULL, p) && errno == ENOENT, "rm under a missing parent: ENOENT");
	snprintf(p, sizeof(p), "%s/dir", base);
	CHECK(xs_mkdir(h, XBT_NULL, p), "mkdir");
	CHECK(xs_mkdir(h, XBT_NULL, p), "mkdir twice is fine");
	/* Binary values with NULs survive. */
	snprintf(p, sizeof(p), "%s/bin", base);
	static const char bin[] = {'a', 0, 'b', (char)0xff, 0, 'z'};
	CHECK(xs_write(h, XBT_NULL, p, bin, sizeof(bin)), "binary write");
	v = xs_read(h, XBT_NULL, p, &n);
	CHECK(v && n == sizeof(bin) && memcmp(v, bin, n) == 0, "binary read back");
	free(v);
	/* Directory listing. */
	char **kids = xs_directory(h, XBT_NULL, base, &n);
	CHECK(kids && n == 3, "directory of %s has %u entries", base, n);
	free(kids);
	/* A directory too big for one message (DIRECTORY_PART fallback). */
	snprintf(p, sizeof(p), "%s/big", base);
	for (int i = 0; i < 400; i++) {
		char k[300];
		snprintf(k, sizeof(k), "%s/child-with-a-longish-name-%04d", p, i);
		if (wr(h, XBT_NULL, k, "x"))
			break;
	}
	kids = xs_directory(h, XBT_NULL, p, &n);
	CHECK(kids && n == 400, "big directory: %u of 400 entries (%s)", n, kids ? "" : strerror(errno));
	free(kids);
	/* rm is recursive. */
	CHECK(xs_rm(h, XBT_NULL, p), "recursive rm");
	CHECK(read_errno(h, p) == ENOENT, "rm removed the subtree");
	/* Bad paths. */
	static const char *const bad[] = {"/a b", "/a//b", "/a/", "/a%b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(wr(h, XBT_NULL, bad[i], "x") == EINVAL, "path '%s' accepted", bad[i]);
	/* Value of the maximal size. */
	char big[XENSTORE_PAYLOAD_MAX];
	snprintf(p, sizeof(p), "%s/max", base);
	size_t maxv = XENSTORE_PAYLOAD_MAX - strlen(p) - 1;
	memset(big, 'v', sizeof(big));
	CHECK(xs_write(h, XBT_NULL, p, big, (unsigned)maxv), "maximal value");
	v = xs_read(h, XBT_NULL, p, &n);
	CHECK(v && n == maxv, "maximal value read back (%u)", n);
	free(v);
	/* Domain paths. */
	char *dp = xs_get_domain_path(h, 7);
	CHECK(dp && strcmp(dp, "/local/domain/7") == 0, "domain path: %s", dp ? dp : "(null)");
	free(dp);
}

static void test_watches(struct xs_handle *h, struct xs_handle *other)
{
	char p[256], q[256];

	snprintf(p, sizeof(p), "%s/w", base);
	CHECK(xs_watch(h, p, "tok"), "watch");
	CHECK(got_event(h, p, "tok", 1000), "no event at registration");
	snprintf(q, sizeof(q), "%s/w/child", base);
	CHECK(wr(other, XBT_NULL, q, "1") == 0, "write");
	CHECK(got_event(h, q, "tok", 1000), "no event for a child written by another client");
	snprintf(q, sizeof(q), "%s/unrelated", base);
	wr(other, XBT_NULL, q, "1");
	CHECK(no_event(h, 100), "event for an unrelated path");
	/* '@' inside a path is an ordinary character. */
	snprintf(q, sizeof(q), "%s/mail@host", base);
	CHECK(wr(other, XBT_NULL, q, "x") == 0, "a path with '@' inside refused");
	/* Removing an ancestor fires a watch on each removed node below it. */
	snprintf(q, sizeof(q), "%s/w/deep/er", base);
	CHECK(wr(other, XBT_NULL, q, "1") == 0, "write deep node");
	CHECK(xs_watch(h, q, "deep"), "watch below");
	CHECK(got_event(h, q, "deep", 1000), "registration event (deep)");
	CHECK(xs_rm(other, XBT_NULL, p), "rm ancestor");
	CHECK(got_event(h, q, "deep", 1000), "no event for a node removed with its ancestor");
	drain(h, 100); /* the removal's event for p itself */
	CHECK(xs_unwatch(h, p, "tok") && xs_unwatch(h, q, "deep"), "unwatch");
	wr(other, XBT_NULL, p, "again");
	CHECK(no_event(h, 100), "event after unwatch");
	CHECK(!xs_unwatch(h, p, "tok") && errno == ENOENT, "unwatch of a missing watch");
	/* Duplicate watch. */
	CHECK(xs_watch(h, p, "dup") && got_event(h, p, "dup", 1000), "watch dup");
	CHECK(!xs_watch(h, p, "dup") && errno == EEXIST, "duplicate watch: EEXIST");
	xs_unwatch(h, p, "dup");
}

static void test_transactions(struct xs_handle *h, struct xs_handle *other)
{
	char x[256], y[256];
	xs_transaction_t t;

	snprintf(x, sizeof(x), "%s/tx-x", base);
	snprintf(y, sizeof(y), "%s/tx-y", base);
	wr(h, XBT_NULL, x, "0");
	/* Isolation and commit. */
	t = xs_transaction_start(h);
	REQUIRE(t, "transaction_start: %s", strerror(errno));
	CHECK(wr(h, t, y, "in-tx") == 0, "tx write");
	char *v = rd(h, t, y);
	CHECK(v && !strcmp(v, "in-tx"), "a transaction sees its own write");
	free(v);
	CHECK(read_errno(other, y) == ENOENT, "uncommitted write visible outside");
	CHECK(xs_transaction_end(h, t, false), "commit: %s", strerror(errno));
	CHECK(read_is(other, y, "in-tx"), "committed write not visible");
	/* Abort. */
	t = xs_transaction_start(h);
	wr(h, t, y, "aborted");
	CHECK(xs_transaction_end(h, t, true), "abort");
	CHECK(read_is(h, y, "in-tx"), "aborted write applied");
	/* Conflict: read x, someone else writes x, commit fails, nothing applied. */
	t = xs_transaction_start(h);
	free(rd(h, t, x));
	wr(h, t, y, "conflicting");
	CHECK(wr(other, XBT_NULL, x, "changed") == 0, "concurrent write");
	CHECK(!xs_transaction_end(h, t, false) && errno == EAGAIN, "conflict not detected: %s",
	      strerror(errno));
	CHECK(read_is(h, y, "in-tx"), "a failed transaction applied its write");
	/* Retry succeeds. */
	t = xs_transaction_start(h);
	free(rd(h, t, x));
	wr(h, t, y, "retried");
	CHECK(xs_transaction_end(h, t, false), "retry: %s", strerror(errno));
	CHECK(read_is(other, y, "retried"), "retry not applied");
	/* Removal inside a transaction. */
	t = xs_transaction_start(h);
	CHECK(xs_rm(h, t, y), "tx rm");
	CHECK(read_is(other, y, "retried"), "uncommitted rm visible");
	CHECK(xs_transaction_end(h, t, false), "commit rm");
	CHECK(read_errno(other, y) == ENOENT, "committed rm not applied");
}

/* ---- xensim only: a guest's view ---------------------------------------------- */

static void test_guest(struct xs_handle *h)
{
	uint32_t a = tu_xensim_create(&sim, "conf-guest-a");
	uint32_t b = tu_xensim_create(&sim, "conf-guest-b");
	struct xs_handle *ga = open_as(a), *gb = open_as(b);
	char p[256];
	struct xs_permissions perms[2];

	CHECK(read_is(ga, "name", "conf-guest-a"), "relative path to the guest's home");
	snprintf(p, sizeof(p), "/local/domain/%u/name", a);
	CHECK(wr(ga, XBT_NULL, p, "renamed") == EACCES, "a guest renamed itself");
	CHECK(wr(ga, XBT_NULL, "data/x", "1") == 0, "guest writes its data/");
	unsigned n;
	snprintf(p, sizeof(p), "/local/domain/%u/data/x", a);
	struct xs_permissions *got = xs_get_permissions(h, XBT_NULL, p, &n);
	CHECK(got && n >= 1 && got[0].id == a, "a guest owns what it creates");
	free(got);
	CHECK(read_errno(gb, p) == EACCES, "another guest reads it");
	CHECK(read_errno(ga, "/local/domain/0/name") == EACCES, "a guest reads dom0's nodes");
	CHECK(wr(ga, XBT_NULL, "/local/domain/0/x", "1") == EACCES, "a guest writes under dom0");
	CHECK(wr(ga, XBT_NULL, "/tool/x", "1") == EACCES, "a guest writes /tool");
	/* dom0 shares a node with guest b. */
	perms[0] = (struct xs_permissions){.id = a, .perms = XS_PERM_NONE};
	perms[1] = (struct xs_permissions){.id = b, .perms = XS_PERM_READ};
	CHECK(xs_set_permissions(h, XBT_NULL, p, perms, 2), "dom0 set_permissions");
	CHECK(read_is(gb, p, "1"), "guest b cannot read after being granted");
	CHECK(wr(gb, XBT_NULL, p, "2") == EACCES, "read-only grant allowed a write");
	/* A guest cannot give its node away, nor change dom0's. */
	perms[0].id = b;
	CHECK(!xs_set_permissions(ga, XBT_NULL, p, perms, 1) && errno == EPERM,
	      "a guest gave a node away");
	CHECK(!xs_set_permissions(ga, XBT_NULL, "/local/domain/0", perms, 1) && errno == EACCES,
	      "a guest changed dom0's permissions");
	CHECK(!xs_introduce_domain(ga, 99, 0, 0) && errno == EACCES, "a guest introduced a domain");

	/* Watches: relative paths come back relative; unreadable nodes are
	 * not reported. */
	CHECK(xs_watch(ga, "data", "rel") && got_event(ga, "data", "rel", 1000), "relative watch");
	wr(ga, XBT_NULL, "data/y", "1");
	CHECK(got_event(ga, "data/y", "rel", 1000), "relative event path");
	CHECK(xs_watch(gb, "/local/domain", "all") && got_event(gb, "/local/domain", "all", 1000),
	      "watch on /local/domain");
	snprintf(p, sizeof(p), "/local/domain/%u/data/secret", a);
	wr(h, XBT_NULL, p, "s"); /* inherits a's permissions: b cannot read */
	CHECK(no_event(gb, 150), "event for a node the watcher cannot read");

	/* Quotas. */
	int err = 0, i;
	for (i = 0; i < 1100 && !err; i++) {
		snprintf(p, sizeof(p), "data/q%d", i);
		err = wr(gb, XBT_NULL, p, "x");
	}
	CHECK(err == ENOSPC && i < 1050, "node quota: stopped at %d with %s", i, strerror(err));
	for (i = 0; i < 200; i++) {
		char tok[16];
		snprintf(tok, sizeof(tok), "t%d", i);
		if (!xs_watch(gb, "data", tok))
			break;
	}
	CHECK(i < 200 && errno == E2BIG, "watch quota: stopped at %d (%s)", i, strerror(errno));
	xs_transaction_t ts[20];
	for (i = 0; i < 20; i++)
		if (!(ts[i] = xs_transaction_start(gb)))
			break;
	CHECK(i == 10 && errno == ENOSPC, "transaction quota: stopped at %d", i);
	while (i-- > 0)
		xs_transaction_end(gb, ts[i], true);

	/* Domains coming and going. */
	CHECK(xs_watch(h, "@introduceDomain", "intro") && got_event(h, "@introduceDomain", "intro", 1000),
	      "@introduceDomain watch");
	CHECK(xs_watch(h, "@releaseDomain", "rel") && got_event(h, "@releaseDomain", "rel", 1000),
	      "@releaseDomain watch");
	CHECK(xs_is_domain_introduced(h, a), "guest a not introduced");
	uint32_t c = tu_xensim_create(&sim, "conf-guest-c");
	CHECK(got_event(h, "@introduceDomain", "intro", 2000), "no @introduceDomain on create");
	char args[64];
	snprintf(args, sizeof(args), "destroy %u", c);
	CHECK(tu_xensim_run(&sim, args, NULL, 0) == 0, "destroy");
	CHECK(got_event(h, "@releaseDomain", "rel", 2000), "no @releaseDomain on destroy");
	CHECK(!xs_is_domain_introduced(h, c), "destroyed domain still introduced");
	snprintf(p, sizeof(p), "/local/domain/%u", c);
	CHECK(read_errno(h, p) == ENOENT, "a destroyed domain's home remains");
	xs_unwatch(h, "@introduceDomain", "intro");
	xs_unwatch(h, "@releaseDomain", "rel");
	xs_close(ga);
	xs_close(gb);
}

int main(void)
{
	real = getenv("PROFSVC_XS_REAL") && *getenv("PROFSVC_XS_REAL") == '1';
	if (!real)
		tu_xensim_start(&sim);
	snprintf(base, sizeof(base), "/tool/profsvc-conformance-%d", (int)getpid());

	struct xs_handle *h = open_as(0), *other = open_as(0);
	test_basic(h);
	test_watches(h, other);
	test_transactions(h, other);
	if (!real)
		test_guest(h);
	else
		printf("real xenstored: guest-view tests skipped (they need a guest connection)\n");
	xs_rm(h, XBT_NULL, base);
	xs_close(h);
	xs_close(other);
	if (!real)
		tu_xensim_stop(&sim);
	return tu_finish("test_xenstore");
}
