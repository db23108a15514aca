/*
 * harness.h - the system-test harness shared by test_backend, test_e2e,
 * test_faults and bench/capture_bench:
 * xensim and profile-backend as real processes, guests played in-process
 * (blkfront) or by the frontend-stub program, their seeded writes and
 * read-backs and the HaLVM writer's device, xenstore as dom0 sees it, runs
 * and exports from the store.
 */
#ifndef PROFSVC_HARNESS_H
#define PROFSVC_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frontend-stub/blkfront.h"
#include "store/store.h"
#include "testutil.h"

extern struct tu_xensim sim;
extern char *db, *rundir;
extern pid_t backend_pid;

/* xensim + a fresh store and run directory. */
void harness_start(void);
void harness_stop(void);
/* profile-backend --foreground on xensim (extra: more arguments). */
void backend_start(const char *extra);
/* Stops it; with SIGTERM it must exit 0 (under valgrind: no errors). */
int backend_stop(int sig);
/* `profile-backend CMD [ARGS]` with the platform options; exit status. */
int cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `profile-backend status` into out (cap bytes); "" if no answer. */
const char *backend_status(char *out, size_t cap);
/* The running backend's answer to WHAT on its control socket ("metrics":
 * Prometheus text) into out (cap bytes, cut there); "" if no answer. */
const char *backend_ask(const char *what, char *out, size_t cap);

struct xs_handle;
struct guest {
	uint32_t domid;
	struct plat *p;
	struct xs_handle *xs;
};
/* A new domain with devices attached (vdevs: "vdev=xvdp1 vdev=xvdp2"). */
void guest_new(struct guest *g, const char *name, const char *vdevs);
void guest_free(struct guest *g);
void destroy_domain(uint32_t domid);
/* The guest's domain dies (its devices with it, as when a guest exits). */
void guest_destroy(struct guest *g);
struct blkfront *connect_dev(struct guest *g, const char *vdev, const struct blkfront_opts *o);
/* A new guest with one disk, connected with o: the test stops here if it
 * does not connect. */
struct blkfront *guest_with_disk(struct guest *g, const char *name, const char *vdev,
                                 const struct blkfront_opts *o);

/* Writes nsect sectors at sector, filled by fill(seed); the response status. */
int write_seeded(struct blkfront *f, uint64_t sector, uint32_t nsect, uint64_t seed);
/* Do nsect sectors at sector read back as write_seeded() wrote them? */
int read_seeded(struct blkfront *f, uint64_t sector, uint32_t nsect, uint64_t seed);

/* A HaLVM profile writer's device (frontend-stub/halvm_writer.h): each
 * request a BLKIF_OP_WRITE through blkfront, the failed ones counted. */
struct halvm_link {
	struct blkfront *f;
	int failures;
};
/* A halvm_submit_fn; ctx is a struct halvm_link. */
int halvm_link_submit(void *ctx, uint64_t sector, const void *data, unsigned nsect);

char *dom0_read(const char *path);
int wait_node(const char *path, const char *want, int ms);
int find_run(const char *name, struct store_run *out);
int count_runs(const char *name);
int wait_run_state(const char *name, enum store_run_state st, int ms);
/* Exports a profile device ("prof"/"hp") of a run; NULL if refused. */
uint8_t *export_profile(int64_t run, const char *role, size_t *len, int *how);
int list_has_dying(void);
void fill(uint8_t *buf, size_t len, uint64_t seed);
/* A field of /proc/PID/status in KiB ("VmRSS", "RssAnon", ...); -1 if absent. */
long proc_status_kib(pid_t pid, const char *field);

#endif
