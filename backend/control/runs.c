/*
 * runs.c - one run per guest boot.  A domain instance is (domid, uuid): a
 * guest that reboots gets a new domid, a new domain may reuse a domid but
 * not a uuid.  The first device of an instance opens its run; the run ends
 * when the domain dies, "complete" if every profile device's status block
 * says closed, "crashed" otherwise.  A restarted backend adopts the runs
 * still marked running whose domains live, and ends the others.
 *
 * A domain saved (xl save, xl migrate) is the one exception to one run per
 * instance: its guest suspended itself mid-profile, and a restore makes a
 * new domain (new domid, same uuid) whose guest goes on writing where it
 * was.  A run whose devices were removed while its domain was shut down to
 * be saved ends crashed with RUN_SAVED_WHY; a new instance with that uuid
 * reopens it, so that the profile stays whole in one run.  A reboot (same
 * uuid too) never does: its run ended for another reason.
 *
 * May call: domains.c, sync_push.c, quota.c, log.c, util/clock and the
 * store, common/ (state.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstore.h>

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "domains.h"
#include "runs.h"
#include "sync_push.h"
#include "util/clock.h"

struct be_runs {
	const struct be_env *env;
	struct be_domains *dm;
	struct be_sync_push *sync;     /* NULL: no --sync */
	struct be_run *list;           /* newest first */
	uint64_t ended;                /* runs ended in the store */
};

struct be_runs *be_runs_new(const struct be_env *env, struct be_domains *dm, struct be_sync_push *sync)
{
	struct be_runs *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return NULL;
	rs->env = env;
	rs->dm = dm;
	rs->sync = sync;
	return rs;
}

void be_runs_free(struct be_runs *rs)
{
	if (!rs)
		return;
	while (rs->list) {
		struct be_run *r = rs->list;
		rs->list = r->next;
		be_quota_free(&r->chunks);
		free(r);
	}
	free(rs);
}

const struct be_run *be_runs_first(const struct be_runs *rs)
{
	return rs->list;
}

uint64_t be_runs_ended(const struct be_runs *rs)
{
	return rs->ended;
}

void be_run_device_added(struct be_run *r)
{
	r->ndevices++;
}

/* The domain's name and uuid, read in one transaction so that a domain
 * torn down between two reads cannot give its name without its uuid (which
 * would look like a new boot).  Returns -1 when the domain's directory is
 * already gone: a dying domain gets no new run. */
static int read_identity(struct be_runs *rs, uint32_t domid, char *name, size_t nlen, char *uuid,
                         size_t ulen)
{
	char path[64];
	unsigned len;

	for (int tries = 0; tries < 8; tries++) {
		xs_transaction_t t = xs_transaction_start(rs->env->xs);
		if (!t)
			return -1;
		snprintf(path, sizeof(path), "/local/domain/%u/domid", domid);
		char *id = xs_read(rs->env->xs, t, path, &len);
		snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
		char *v = xs_read(rs->env->xs, t, path, &len);
		snprintf(path, sizeof(path), "/local/domain/%u/vm", domid);
		char *vm = xs_read(rs->env->xs, t, path, &len);
		if (!xs_transaction_end(rs->env->xs, t, false) && errno == EAGAIN) {
			free(id), free(v), free(vm);
			continue;
		}
		int gone = id == NULL;
		snprintf(name, nlen, "%s", v && *v ? v : "unnamed");
		uuid[0] = '\0';
		const char *u = vm ? strrchr(vm, '/') : NULL;
		if (u && strlen(u + 1) < ulen && strspn(u + 1, "0123456789abcdefABCDEF-") == strlen(u + 1))
			snprintf(uuid, ulen, "%s", u + 1);
		free(id), free(v), free(vm);
		return gone ? -1 : 0;
	}
	return -1;
}

static struct be_run *adopt(struct be_runs *rs, int64_t run_id, uint32_t domid, const char *uuid,
                         const char *name)
{
	struct be_run *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->run_id = run_id;
	r->domid = domid;
	snprintf(r->uuid, sizeof(r->uuid), "%s", uuid);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->next = rs->list;
	rs->list = r;
	return r;
}

/* A run whose end the store refused (a full disk, a locked database) is
 * tried again this often, from the event loop, until it ends; meanwhile
 * readers see it running, as they would after a crash of the backend,
 * and a restart's reconciliation would end it all the same. */
#define RUN_END_RETRY_MS 1000

#define RUN_SAVED_WHY "the domain was saved (xl save or migrate); restoring it continues this run"

/* The run that a saved domain of this uuid left, reopened for domid. */
static struct be_run *continue_saved(struct be_runs *rs, uint32_t domid, const char *uuid,
                                  const char *name)
{
	int64_t id;
	struct store_run sr;

	if (!uuid[0] || store_latest_run_of_uuid(rs->env->store, uuid, &id) != 0 ||
	    store_get_run(rs->env->store, id, &sr) != 0 || sr.state != STORE_RUN_CRASHED ||
	    strcmp(sr.end_reason, RUN_SAVED_WHY) != 0)
		return NULL;
	if (store_run_reopen(rs->env->store, id, (int32_t)domid, RUN_SAVED_WHY) != 0) {
		be_rlog_at(LOG_ERR, domid, id, "cannot continue the saved run: %s (a new run starts)",
		        store_errmsg(rs->env->store));
		return NULL;
	}
	struct be_run *r = adopt(rs, id, domid, uuid, name);
	if (r)
		be_rlog_at(LOG_NOTICE, domid, id, "continued: %s restored (was domain %d when saved)", name,
		        sr.domid);
	return r;
}

struct be_run *be_run_for_domain(struct be_runs *rs, uint32_t domid, int *gone)
{
	char name[STORE_NAME_MAX], uuid[40];
	int64_t *ids;
	size_t n;

	*gone = read_identity(rs, domid, name, sizeof(name), uuid, sizeof(uuid)) != 0;
	if (*gone)
		return NULL;
	for (struct be_run *r = rs->list; r; r = r->next)
		if (r->domid == domid && strcmp(r->uuid, uuid) == 0 && !r->end_retry_at_us && !r->closed)
			return r;
	/* A backend restarted during the run: the run is still in the store. */
	if (store_list_running(rs->env->store, &ids, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			struct store_run sr;
			if (store_get_run(rs->env->store, ids[i], &sr) == 0 && sr.domid == (int32_t)domid &&
			    strcmp(sr.uuid, uuid) == 0 && strcmp(sr.source, "capture") == 0) {
				free(ids);
				struct be_run *r = adopt(rs, sr.run_id, domid, uuid, name);
				if (r)
					be_rlog_at(LOG_NOTICE, domid, sr.run_id, "resumed (%s)", name);
				return r;
			}
		}
		free(ids);
	}
	struct be_run *saved = continue_saved(rs, domid, uuid, name);
	if (saved)
		return saved;
	struct store_run sr = {.domid = (int32_t)domid};
	snprintf(sr.name, sizeof(sr.name), "%s", name);
	snprintf(sr.uuid, sizeof(sr.uuid), "%s", uuid);
	snprintf(sr.backend_version, sizeof(sr.backend_version), "profile-backend %s", PACKAGE_VERSION);
	snprintf(sr.source, sizeof(sr.source), "capture");
	if (gethostname(sr.host, sizeof(sr.host) - 1) != 0)
		sr.host[0] = '\0';
	if (store_run_begin(rs->env->store, &sr) != 0)
		return NULL;
	struct be_run *r = adopt(rs, sr.run_id, domid, uuid, name);
	if (r)
		be_rlog_at(LOG_NOTICE, domid, sr.run_id, "started (%s, uuid %s)", name,
		     uuid[0] ? uuid : "-");
	return r;
}

struct verdict {
	int profiles, closed;
	int64_t prof, hp, eventlog;
};

static int judge(void *ctx, const struct store_device_info *d)
{
	struct verdict *v = ctx;
	if (!store_role_is_profile(d->role))
		return 0;
	v->profiles++;
	v->closed += store_device_profile_whole(d);
	if (d->status == STORE_STATUS_OK)
		*(d->role == STORE_ROLE_PROF ? &v->prof : d->role == STORE_ROLE_HP ? &v->hp : &v->eventlog) = d->file_size;
	return 0;
}

/* gone_unseen: the domain died while no backend ran.  The verdict is
 * still the status blocks' (a guest that closed its profiles and exited
 * meanwhile left a complete run), but the reason says that its end was
 * not seen, so that a crashed run's reader knows why it is crashed. */
static int end_run(struct be_runs *rs, int64_t run_id, uint32_t domid, int gone_unseen, int saved,
                   int quiet_failure, const char *lost)
{
	struct verdict v = {0, 0, -1, -1, -1};
	store_list_devices(rs->env->store, run_id, judge, &v);
	enum store_run_state st = v.closed == v.profiles ? STORE_RUN_COMPLETE : STORE_RUN_CRASHED;
	/* (a guest saved after it closed its profiles has nothing to go on
	 * with: its run is complete) */
	const char *why = gone_unseen ? "domain gone while no backend ran"
	                  : st != STORE_RUN_CRASHED ? NULL
	                  : saved                   ? RUN_SAVED_WHY
	                                            : "the domain ended before closing its profiles";
	char both[512];
	if (lost && *lost) { /* what was not captured (a trace never mapped) first */
		snprintf(both, sizeof(both), "%s%s%s", lost, why ? "; " : "", why ? why : "");
		why = both;
	}
	if (store_run_end_why(rs->env->store, run_id, st, 0, why) != 0) {
		if (!quiet_failure)
			be_rlog_at(LOG_ERR, domid, run_id, "cannot end: %s (retried every %d s)", store_errmsg(rs->env->store),
			        RUN_END_RETRY_MS / 1000);
		else
			be_rlog_at(LOG_DEBUG, domid, run_id, "still cannot end: %s", store_errmsg(rs->env->store));
		return -1;
	}
	char prof[32] = "-", hp[32] = "-", ev[48] = "";
	if (v.prof >= 0)
		snprintf(prof, sizeof(prof), "%lld", (long long)v.prof);
	if (v.hp >= 0)
		snprintf(hp, sizeof(hp), "%lld", (long long)v.hp);
	if (v.eventlog >= 0) /* said only for a run that has one */
		snprintf(ev, sizeof(ev), ", eventlog %lld bytes", (long long)v.eventlog);
	be_rlog_at(LOG_NOTICE, domid, run_id, "ended %s%s%s%s (.prof %s bytes, .hp %s bytes%s)",
	        store_run_state_name(st), why ? " (" : "", why ? why : "", why ? ")" : "", prof, hp, ev);
	be_sync_push_run_ended(rs->sync, run_id);
	/* what its last rewrites freed goes back once the guests are quiet
	 * (daemon.c), not at some later guest's write */
	rs->ended++;
	return 0;
}

static void forget(struct be_runs *rs, struct be_run *r)
{
	for (struct be_run **p = &rs->list; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	be_quota_free(&r->chunks);
	free(r);
}

/* Ends r, whose domain is gone, and forgets it; or, when the store cannot
 * end it now, keeps it for be_runs_retry_ends(). */
static void end_or_retry(struct be_runs *rs, struct be_run *r)
{
	if (end_run(rs, r->run_id, r->domid, 0, r->saved, r->end_failures > 0, r->lost_why) == 0) {
		if (r->end_failures)
			be_rlog_at(LOG_NOTICE, r->domid, r->run_id, "ended at last, %d retries after the first try",
			        r->end_failures);
		forget(rs, r);
		return;
	}
	r->end_failures++;
	snprintf(r->end_error, sizeof(r->end_error), "%s", store_errmsg(rs->env->store));
	r->end_retry_at_us = clock_mono_us() + RUN_END_RETRY_MS * 1000LL;
}

int be_runs_retry_ends(struct be_runs *rs)
{
	int64_t now = clock_mono_us(), next = -1;

	for (struct be_run *r = rs->list, *n; r; r = n) {
		n = r->next;
		if (!r->end_retry_at_us)
			continue;
		if (r->end_retry_at_us <= now)
			end_or_retry(rs, r); /* may forget r */
	}
	for (struct be_run *r = rs->list; r; r = r->next)
		if (r->end_retry_at_us && (next < 0 || r->end_retry_at_us < next))
			next = r->end_retry_at_us;
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999) / 1000);
}

void be_run_device_gone(struct be_runs *rs, struct be_run *r, int domain_dead)
{
	/* Removed while the domain lives: is it being saved?  Asked now, as
	 * the hypervisor forgets the domain once the toolstack destroys it
	 * (libxl removes the disks first and waits for us). */
	if (!domain_dead && plat_domain_suspended(rs->env->plat, r->domid) == 1 && !r->saved) {
		r->saved = 1;
		be_rlog_at(LOG_INFO, r->domid, r->run_id, "its domain is being saved (xl save or migrate)");
	}
	if (r->ndevices > 0)
		r->ndevices--;
	if (r->closed) {
		if (r->ndevices == 0)
			forget(rs, r); /* ended already */
		return;
	}
	if (domain_dead && r->ndevices == 0 && !r->end_retry_at_us)
		end_or_retry(rs, r);
}

struct be_run *be_run_find(struct be_runs *rs, int64_t run_id)
{
	for (struct be_run *r = rs->list; r; r = r->next)
		if (r->run_id == run_id && !r->closed)
			return r;
	return NULL;
}

int be_run_close(struct be_runs *rs, struct be_run *r, const char *why)
{
	int rc = 0;
	if (!r->end_retry_at_us) {
		struct verdict v = {0, 0, -1, -1, -1};
		store_list_devices(rs->env->store, r->run_id, judge, &v);
		enum store_run_state st = v.closed == v.profiles ? STORE_RUN_COMPLETE : STORE_RUN_CRASHED;
		rc = store_run_end_why(rs->env->store, r->run_id, st, 0, why);
		if (rc == 0) {
			be_rlog_at(LOG_NOTICE, r->domid, r->run_id, "ended %s (%s)", store_run_state_name(st), why);
			be_sync_push_run_ended(rs->sync, r->run_id);
		} else if (rc != STORE_ENOTFOUND) { /* (deleted already: nothing to end) */
			be_rlog_at(LOG_WARNING, r->domid, r->run_id, "cannot end it before it is deleted: %s",
			        store_errmsg(rs->env->store));
		}
	}
	r->closed = 1;
	r->end_retry_at_us = 0;
	if (r->ndevices == 0)
		forget(rs, r);
	return rc;
}

void be_runs_domains_changed(struct be_runs *rs)
{
	for (struct be_run *r = rs->list, *next; r; r = next) {
		next = r->next;
		if (r->closed)
			continue;
		if (r->ndevices == 0 && !r->end_retry_at_us && !be_domain_alive(rs->dm, r->domid))
			end_or_retry(rs, r);
	}
}

void be_runs_reconcile(struct be_runs *rs)
{
	int64_t *ids;
	size_t n;

	if (store_list_running(rs->env->store, &ids, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct store_run sr;
		int known = 0;
		for (struct be_run *r = rs->list; r; r = r->next)
			known |= r->run_id == ids[i];
		if (known || store_get_run(rs->env->store, ids[i], &sr) != 0 || strcmp(sr.source, "capture"))
			continue;
		char name[STORE_NAME_MAX], uuid[40];
		if (sr.domid >= 0 && be_domain_alive(rs->dm, (uint32_t)sr.domid)) {
			if (read_identity(rs, (uint32_t)sr.domid, name, sizeof(name), uuid, sizeof(uuid)) == 0 &&
			    strcmp(uuid, sr.uuid) == 0) {
				adopt(rs, sr.run_id, (uint32_t)sr.domid, uuid, name);
				continue; /* alive, devices detached: the run goes on */
			}
		}
		be_rlog_at(LOG_WARNING, sr.domid, sr.run_id, "its domain is gone (it died while no backend ran)");
		end_run(rs, sr.run_id, (uint32_t)sr.domid, 1, 0, 0, NULL); /* (or at the next start) */
	}
	free(ids);
}
