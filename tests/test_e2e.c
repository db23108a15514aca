/*
 * test_e2e.c - the whole system on xensim, with the frontend-stub program
 * as the guests and profile-backend as the backend, all real processes:
 *   - every GHC fixture replayed by a halvm guest, exported byte-identical;
 *   - guests crashing at >= 100 random points: the export equals what the
 *     independent convert-profile model extracts from the raw image the
 *     guest would have left on a raw-disk backend;
 *   - profile-backend SIGKILLed at >= 100 random points while four guests
 *     write, restarted each time: no guest sees an error, every export is
 *     identical, the store's integrity check is clean;
 *   - 16 guests x 2 devices at once, halvm and linux;
 *   - a hostile guest beside an honest one: the honest export is intact,
 *     the backend keeps running and exits clean;
 *   - a guest that reboots gives a second run.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "profile/eventlog/ghc_eventlog.h"
#include "ref_convert_profile.h"
#include "store/store_export.h"

static char **fixtures;

static pid_t stub(const char *const *args)
{
	char bin[4096];
	const char *argv[32] = {NULL};
	int n = 0;

	snprintf(bin, sizeof(bin), "%s/frontend-stub/frontend-stub", tu_builddir());
	argv[n++] = bin;
	argv[n++] = "-q";
	argv[n++] = "--platform";
	argv[n++] = "sim";
	argv[n++] = "--sim-dir";
	argv[n++] = sim.dir;
	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static uint32_t new_domain(const char *name, const char *vdevs)
{
	uint32_t d = tu_xensim_create(&sim, name);
	REQUIRE(cli("attach %u %s", d, vdevs) == 0, "attach %s", vdevs);
	return d;
}

static int same_as_file(int64_t run, const char *role, const char *path)
{
	size_t flen, elen;
	uint8_t *f = tu_read_file(path, &flen);
	uint8_t *e = export_profile(run, role, &elen, NULL);
	int same = f && e && flen == elen && !memcmp(f, e, flen);
	free(f);
	free(e);
	return same;
}

/* ---- every fixture ---------------------------------------------------------------- */

static void test_every_fixture(void)
{
	int n = 0;
	for (char **p = fixtures; *p; p++, n++) {
		int is_hp = strstr(*p, ".hp") != NULL;
		char name[32], dom[16];
		snprintf(name, sizeof(name), "fixture-%d", n);
		uint32_t d = new_domain(name, is_hp ? "vdev=xvdp2" : "vdev=xvdp1");
		snprintf(dom, sizeof(dom), "%u", d);
		const char *args[] = {"--mode", "halvm", "--domid", dom, is_hp ? "--hp" : "--prof", *p, NULL};
		int rc = wait_exit(stub(args));
		CHECK(rc == 0, "%s: the guest failed (%d)", *p, rc);
		destroy_domain(d);
		struct store_run r;
		CHECK(wait_run_state(name, STORE_RUN_COMPLETE, 5000) && find_run(name, &r), "%s: no complete run", *p);
		CHECK(same_as_file(r.run_id, is_hp ? "hp" : "prof", *p), "%s: export differs", *p);
	}
	printf("fixtures: %d profiles captured and exported byte-identical\n", n);
}

/* ---- guests crashing ------------------------------------------------------------------ */

/* Where the whole events of an eventlog's first len bytes end: an unclosed
 * eventlog is exported up to there (store_export.c, eventlog_cut). */
static size_t whole_events(const uint8_t *log, size_t len)
{
	struct gel_decoder d;
	struct gel_tail t;
	gel_init(&d, NULL, NULL);
	gel_feed(&d, log, len);
	gel_finish(&d, &t);
	size_t n = (size_t)gel_whole_prefix(&d);
	gel_free(&d);
	return n;
}

static void test_guest_crashes(int rounds)
{
	char path[4096], prof[4096], hp[4096], ev[4096];
	snprintf(prof, sizeof(prof), "%s/tests/data/ghc/wordfreq/wordfreq-P-hc.prof", tu_srcdir());
	snprintf(hp, sizeof(hp), "%s/tests/data/ghc/wordfreq/wordfreq-hd.hp", tu_srcdir());
	snprintf(ev, sizeof(ev), "%s/tests/data/ghc-eventlog/churn-l-hT.eventlog", tu_srcdir());
	char *refdir = tu_path("ref");
	mkdir(refdir, 0700);
	int unwritten = 0, partial = 0;

	for (int i = 0; i < rounds; i++) {
		char name[32], dom[16], seed[24];
		snprintf(name, sizeof(name), "crasher-%d", i);
		snprintf(seed, sizeof(seed), "%d", 7000 + i);
		/* Every other guest writes GHC's eventlog to xvdp3 too. */
		int with_ev = i % 2;
		uint32_t d = new_domain(name, with_ev ? "vdev=xvdp1 vdev=xvdp2 vdev=xvdp3" : "vdev=xvdp1 vdev=xvdp2");
		snprintf(dom, sizeof(dom), "%u", d);
		const char *args[] = {"--mode", "halvm", "--domid", dom, "--hp", hp, "--prof", prof,
		                      "--crash-random", seed, "--reference", refdir,
		                      with_ev ? "--eventlog" : NULL, ev, NULL};
		wait_exit(stub(args)); /* killed by its own destroy, or exits 0 */
		struct store_run r;
		if (!wait_run_state(name, STORE_RUN_CRASHED, 5000) || !find_run(name, &r)) {
			CHECK(0, "round %d: no crashed run", i);
			continue;
		}
		static const char *const roles[] = {"prof", "hp", "eventlog"};
		static const char *const disks[] = {"prof.disk", "hp.disk", "eventlog.disk"};
		for (int k = 0; k < 2 + with_ev; k++) {
			snprintf(path, sizeof(path), "%s/%s", refdir, disks[k]);
			size_t ilen, elen, rlen;
			uint8_t *img = tu_read_file(path, &ilen), *ref = NULL;
			enum ref_result rr = img ? ref_convert_profile(img, ilen, 8, &ref, &rlen) : REF_SHORT;
			uint8_t *e = export_profile(r.run_id, roles[k], &elen, NULL);
			if (rr == REF_CORRUPT) {
				/* Never written: convert-profile refuses; so do we. */
				CHECK(!e, "round %d %s: exported a file the guest never wrote", i, roles[k]);
				unwritten++;
			} else {
				CHECK(rr == REF_NOT_CLOSED || rr == REF_OK, "round %d %s: reference %d", i, roles[k], rr);
				/* an eventlog the guest did not close: cut at its last whole event */
				size_t want = k == 2 && rr == REF_NOT_CLOSED && ref ? whole_events(ref, rlen) : rlen;
				CHECK(e && elen == want && !memcmp(e, ref, want),
				      "round %d %s: export (%zu) differs from convert-profile (%zu, %zu expected)", i,
				      roles[k], e ? elen : 0, rlen, want);
				partial++;
			}
			free(img);
			free(ref);
			free(e);
		}
	}
	printf("guest crashes: %d rounds, %d files compared with convert-profile, %d never written\n",
	       rounds, partial, unwritten);
	free(refdir);
}

/* ---- the backend killed while guests write --------------------------------------------------- */

struct live {
	pid_t pid;
	uint32_t domid;
	int fixture;
	char name[32];
};

static void test_backend_kills(int kills)
{
	/* Pairs of the bigger fixtures, so a guest spans several kills. */
	char prof[4096], hp[4096];
	snprintf(prof, sizeof(prof), "%s/tests/data/ghc/exprcalc/exprcalc-p.prof", tu_srcdir());
	snprintf(hp, sizeof(hp), "%s/tests/data/ghc/phases/phases-hd-i0.01.hp", tu_srcdir());
	struct live g[4] = {{0}};
	char done_names[512][32];
	int ndone = 0, started = 0, failed = 0;
	uint64_t rng = tu_seed(4242);

	for (int k = 0; k < kills || started == 0; k++) {
		for (int i = 0; i < 4; i++) {
			int st;
			if (g[i].pid && waitpid(g[i].pid, &st, WNOHANG) == g[i].pid) {
				int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				CHECK(rc == 0, "guest %s saw an error across backend restarts (%d)", g[i].name, rc);
				failed += rc != 0;
				destroy_domain(g[i].domid);
				if (ndone < 512)
					snprintf(done_names[ndone++], 32, "%s", g[i].name);
				g[i].pid = 0;
			}
			if (!g[i].pid && k < kills) {
				char dom[16];
				snprintf(g[i].name, sizeof(g[i].name), "survivor-%d", started++);
				g[i].domid = new_domain(g[i].name, "vdev=xvdp1 vdev=xvdp2");
				snprintf(dom, sizeof(dom), "%u", g[i].domid);
				const char *args[] = {"--mode", "halvm", "--domid", dom, "--hp", hp, "--prof", prof, NULL};
				g[i].pid = stub(args);
			}
		}
		if (k < kills) {
			usleep((useconds_t)(2000 + tu_rand_below(&rng, 20000)));
			backend_stop(SIGKILL);
			backend_start(NULL);
		}
	}
	for (int i = 0; i < 4; i++)
		if (g[i].pid) {
			int rc = wait_exit(g[i].pid);
			CHECK(rc == 0, "guest %s saw an error across backend restarts (%d)", g[i].name, rc);
			destroy_domain(g[i].domid);
			snprintf(done_names[ndone++], 32, "%s", g[i].name);
		}
	int identical = 0;
	for (int i = 0; i < ndone; i++) {
		struct store_run r;
		if (!wait_run_state(done_names[i], STORE_RUN_COMPLETE, 5000) || !find_run(done_names[i], &r)) {
			CHECK(0, "%s: run not complete", done_names[i]);
			continue;
		}
		int runs = count_runs(done_names[i]);
		CHECK(runs == 1, "%s: %d runs for one boot (a restarted backend must resume, not start again)",
		      done_names[i], runs);
		int ok = same_as_file(r.run_id, "prof", prof) && same_as_file(r.run_id, "hp", hp);
		CHECK(ok, "%s: export differs after backend restarts", done_names[i]);
		identical += ok;
	}
	struct store *s = tu_open_store(db, STORE_READ);
	char report[256];
	CHECK(store_check_integrity(s, report, sizeof(report)) == 0, "integrity: %s", report);
	store_close(s);
	printf("backend kills: %d SIGKILLs while %d guests wrote; %d exports identical, %d guest errors\n",
	       kills, ndone, identical, failed);
}

/* ---- a fleet ---------------------------------------------------------------------------------- */

static void test_fleet(void)
{
	enum { N = 16 };
	pid_t pids[N * 3];
	uint32_t doms[N * 2];
	char dom[N * 2][16], names[N * 2][32];
	const char *pairs[N][2];
	int np = 0;

	/* 16 halvm guests, each a .hp and a .prof of the fixtures. */
	char **hps = NULL, **profs = NULL;
	int nh = 0, npf = 0;
	for (char **p = fixtures; *p; p++) {
		if (strstr(*p, ".hp")) {
			hps = realloc(hps, (size_t)(nh + 1) * sizeof(*hps));
			hps[nh++] = *p;
		} else {
			profs = realloc(profs, (size_t)(npf + 1) * sizeof(*profs));
			profs[npf++] = *p;
		}
	}
	for (int i = 0; i < N; i++) {
		pairs[i][0] = profs[i % npf];
		pairs[i][1] = hps[i % nh];
		snprintf(names[i], 32, "fleet-halvm-%d", i);
		doms[i] = new_domain(names[i], "vdev=xvdp1 vdev=xvdp2");
		snprintf(dom[i], 16, "%u", doms[i]);
	}
	/* 16 linux guests with 2 disks each: one stub process per disk. */
	for (int i = 0; i < N; i++) {
		snprintf(names[N + i], 32, "fleet-linux-%d", i);
		doms[N + i] = new_domain(names[N + i], "vdev=xvdb vdev=xvdc");
		snprintf(dom[N + i], 16, "%u", doms[N + i]);
	}
	for (int i = 0; i < N; i++) {
		const char *args[] = {"--mode", "halvm", "--domid", dom[i], "--prof", pairs[i][0], "--hp",
		                      pairs[i][1], NULL};
		pids[np++] = stub(args);
	}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < 2; k++) {
			char seed[16];
			snprintf(seed, sizeof(seed), "%d", i * 2 + k + 1);
			const char *args[] = {"--mode", "linux", "--domid", dom[N + i], "--vdev", k ? "xvdc" : "xvdb",
			                      "--requests", "300", "--span", "8", "--seed", seed, NULL};
			pids[np++] = stub(args);
		}
	int errors = 0;
	for (int i = 0; i < np; i++) {
		int rc = wait_exit(pids[i]);
		CHECK(rc == 0, "fleet guest process %d failed (%d)", i, rc);
		errors += rc != 0;
	}
	for (int i = 0; i < 2 * N; i++)
		destroy_domain(doms[i]);
	int identical = 0;
	for (int i = 0; i < N; i++) {
		struct store_run r;
		if (!wait_run_state(names[i], STORE_RUN_COMPLETE, 5000) || !find_run(names[i], &r)) {
			CHECK(0, "%s: run not complete", names[i]);
			continue;
		}
		int ok = same_as_file(r.run_id, "prof", pairs[i][0]) && same_as_file(r.run_id, "hp", pairs[i][1]);
		CHECK(ok, "%s: export differs", names[i]);
		identical += ok;
	}
	printf("fleet: 16 halvm guests x 2 devices (%d of 16 exports identical) and 16 linux guests x 2 "
	       "devices (verified by read-back) at once; %d failures\n",
	       identical, errors);
	free(hps);
	free(profs);
}

/* ---- hostile beside honest ---------------------------------------------------------------------- */

static void test_hostile_beside_honest(void)
{
	char prof[4096], hp[4096], dh[16], dv[16];
	snprintf(prof, sizeof(prof), "%s/tests/data/ghc/leak/leak-p-hc.prof", tu_srcdir());
	snprintf(hp, sizeof(hp), "%s/tests/data/ghc/exprcalc/exprcalc-hc-i0.01.hp", tu_srcdir());
	uint32_t bad = new_domain("hostile", "vdev=xvdc vdev=xvdd");
	uint32_t good = new_domain("honest", "vdev=xvdp1 vdev=xvdp2");
	snprintf(dh, sizeof(dh), "%u", bad);
	snprintf(dv, sizeof(dv), "%u", good);
	const char *hargs[] = {"--mode", "hostile", "--domid", dh, NULL};
	const char *gargs[] = {"--mode", "halvm", "--domid", dv, "--prof", prof, "--hp", hp, NULL};
	pid_t ph = stub(hargs), pg = stub(gargs);
	int rh = wait_exit(ph), rg = wait_exit(pg);
	CHECK(rh == 0, "the hostile guest found an unsafe answer (exit %d)", rh);
	CHECK(rg == 0, "the honest guest failed beside the hostile one (exit %d)", rg);
	CHECK(kill(backend_pid, 0) == 0, "profile-backend died");
	destroy_domain(bad);
	destroy_domain(good);
	struct store_run r;
	CHECK(wait_run_state("honest", STORE_RUN_COMPLETE, 5000) && find_run("honest", &r), "honest run");
	CHECK(same_as_file(r.run_id, "prof", prof) && same_as_file(r.run_id, "hp", hp),
	      "the honest guest's export differs");
	CHECK(!list_has_dying(), "a dying domain is left");
}

static void test_reboot(void)
{
	char prof[4096], dom[16];
	snprintf(prof, sizeof(prof), "%s/tests/data/ghc/leak/leak-hr.prof", tu_srcdir());
	int64_t ids[2] = {0, 0};
	for (int boot = 0; boot < 2; boot++) {
		uint32_t d = new_domain("rebooting-guest", "vdev=xvdp1");
		snprintf(dom, sizeof(dom), "%u", d);
		const char *args[] = {"--mode", "halvm", "--domid", dom, "--prof", prof, NULL};
		CHECK(wait_exit(stub(args)) == 0, "boot %d", boot);
		destroy_domain(d);
		struct store_run r;
		CHECK(wait_run_state("rebooting-guest", STORE_RUN_COMPLETE, 5000) && find_run("rebooting-guest", &r),
		      "boot %d: no run", boot);
		ids[boot] = r.run_id;
		CHECK(same_as_file(r.run_id, "prof", prof), "boot %d: export differs", boot);
	}
	CHECK(ids[0] && ids[1] && ids[0] != ids[1], "a reboot did not give a second run");
}

int main(void)
{
	int many = getenv("PROFSVC_LONG") ? 500 : 100;

	fixtures = tu_fixture_list();
	harness_start();
	backend_start(NULL);
	test_every_fixture();
	test_guest_crashes(many);
	test_backend_kills(many);
	test_fleet();
	test_hostile_beside_honest();
	test_reboot();
	harness_stop();
	tu_free_list(fixtures);
	return tu_finish("test_e2e");
}
