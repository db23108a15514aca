/*
 * control.c - the control socket (<run-dir>/backend.sock): answers
 * `profile-backend status` (the text a person reads, or with --json the
 * backend object of docs/json.md, built with jansson).  The event loop serves guests, so no client
 * may ever make it wait: clients are non-blocking, at most
 * CONTROL_CLIENTS_MAX at once (more are turned away), the answer is
 * rendered into memory and sent as the client reads it, and a client
 * that does not finish within CONTROL_TIMEOUT_US is dropped.  (A status
 * written on a blocking socket to a client that never read, as
 * `profile-backend status | less` did, once stopped every guest.)
 *
 * Room is shared by peer credentials (SO_PEERCRED), because the socket is
 * the group's too when the run directory is shared: peer_room.c's rules
 * (a user other than root and ours holds at most CONTROL_PER_USER_MAX
 * places; root's clients are never dropped for another user's), and a
 * client dropped or refused is told why in one line ("evicted: ..." or
 * "refused: ...") before the close.  Only one whose command has not been
 * answered yet is ever dropped: a held sampling or an answer on its way is
 * never cut.
 * (A group member's flood of connections once evicted root's `status` in
 * 2 to 4 calls of 60, its `sample` and its `end-run` the same way; `profdb
 * delete --force` then deleted a running run without closing it first.)
 *
 * `profdb delete/prune --force` asks here (end-run) before it deletes a
 * running run, so that its guest's disk closes rather than fails.
 *
 * `profdb serve` asks for "metrics" (metrics.c: Prometheus text) at /metrics.
 *
 * `profile-backend sample` asks here too: the client is held, without a
 * deadline, until its domain's sampling ends (its summary is sent) or it
 * hangs up (the sampling stops).
 *
 * Owns struct be_control (b->control): the clients, how many were
 * accepted, and the loop's epoll fd it adds them to.
 *
 * May call: runs.c, domains.c (its counts), trace.c, sampling.c,
 * sync_push.c, xenbus_state.c (state names, a run's devices closed), the
 * data path (io.c's counts, io_worker.c's quiesce and inline count,
 * sink.c's names), quota.c, metrics.c, peer_room.c, read_service.c (its
 * counts), log.c, common/ (state.h) and util/safe_text: it reads every
 * part's state through its own calls, and nothing calls back.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "backend/datapath/io.h"
#include "backend/datapath/io_worker.h"
#include "backend/datapath/sink.h"
#include "backend/control/domains.h"
#include "backend/control/runs.h"
#include "backend/control/sampling.h"
#include "backend/control/sync_push.h"
#include "backend/control/trace.h"
#include "backend/control/xenbus_state.h"
#include "control_socket.h"
#include "metrics.h"
#include "peer_room.h"
#include "read_service.h"
#include "util/safe_text.h"

#define CONTROL_TIMEOUT_US (10 * 1000000)

struct be_control_client {
	int fd;                 /* -1: free */
	char cmd[CONTROL_CMD_MAX];
	size_t cmdlen;
	char *out;              /* the answer, once the command is complete */
	size_t outlen, sent;
	int64_t deadline_us;
	int sampling;           /* waits for a domain's sampling to end */
	uint32_t sample_domid;
	int may_act;            /* root or our own user: may sample and end runs */
	uid_t uid;              /* the peer's user (SO_PEERCRED); (uid_t)-1: unknown */
	uint64_t seq;           /* accept order: the oldest has the smallest */
};

struct be_control {
	int ep;                 /* the loop's epoll fd, which the clients join */
	uint64_t accepted;      /* clients accepted so far (their seq) */
	struct be_control_client clients[CONTROL_CLIENTS_MAX];
};

static void status_text(struct be_backend *b, FILE *f)
{
	int64_t up = (store_now_us() - b->env.started_us) / 1000000;

	fprintf(f, "profile-backend %s, pid %ld, platform %s, up %llds\n", PACKAGE_VERSION,
	        (long)getpid(), plat_kind_name(b->env.opt.platform), (long long)up);
	fprintf(f, "store %s (durability %s)\n", store_path(b->env.store),
	        b->env.opt.durability == STORE_DURABLE_POWER ? "power" : "process");
	if (b->env.opt.sink != SINK_STORE)
		fprintf(f, "sink %s%s%s: data is NOT recorded (a benchmark baseline)\n", be_sink_name(b->env.opt.sink),
		        b->env.opt.sink_dir ? " in " : "", b->env.opt.sink_dir ? b->env.opt.sink_dir : "");
	/* What malloc has handed out and not had back: the leak checks of
	 * tests/test_faults read it (RSS also counts what free() kept). */
	struct mallinfo2 mi = mallinfo2();
	fprintf(f, "heap %zu KiB in use, %lld KiB of it the store's caches\n", mi.uordblks / 1024,
	        (long long)(store_memory_used() / 1024));
	struct be_io_stats io;
	be_io_stats(b->io, &io);
	fprintf(f, "batches %llu (%llu committed inline), failed commits %llu\n",
	        (unsigned long long)io.batches, (unsigned long long)be_worker_inline_commits(b->worker),
	        (unsigned long long)io.commits_failed);
	/* The data file's freed slots (store_checkpoint.c): how often the
	 * writer had to prove them unseen itself, and what that cost. */
	struct store_slot_proofs sp;
	if (b->env.store && store_slot_proofs(b->env.store, &sp) == 0)
		fprintf(f, "freed slots %lld waiting; the writer proved them unseen %lld times (%lld held up "
		        "by a reader), for %lld slots, waiting %lld ms for the checkpointer and %lld ms "
		        "checkpointing, at most %lld ms at once\n",
		        (long long)sp.waiting, (long long)sp.proofs, (long long)sp.failed, (long long)sp.given,
		        (long long)(sp.wait_us / 1000), (long long)(sp.prove_us / 1000), (long long)(sp.max_us / 1000));
	struct be_xs_stats xs;
	be_domains_stats(b->domains, &xs);
	fprintf(f, "xenstore events %llu (%llu deferred by the frontend rate limit), rounds acted on %llu, "
	        "flooding domains polled instead of watched %llu times\n",
	        (unsigned long long)xs.events, (unsigned long long)xs.deferred,
	        (unsigned long long)xs.rounds, (unsigned long long)xs.unwatched);
	be_sync_push_status(b->sync, f);
	fprintf(f, "\n%-6s %-7s %-12s %-12s %6s %10s %14s %7s  %s\n", "DOMID", "DEVICE", "BACKEND",
	        "FRONTEND", "RUN", "REQUESTS", "BYTES", "ERRORS", "LAST ERROR");
	int n = 0;
	/* Names and error texts can quote what a guest wrote: escaped. */
	char safe[512];
	for (struct be_device *d = b->devices; d; d = d->next, n++)
		fprintf(f, "%-6u %-7s %-12s %-12s %6lld %10llu %14llu %7llu  %s\n", d->domid, d->vdev,
		        be_xenbus_state_name(d->bstate), be_xenbus_state_name(d->fstate),
		        d->run ? (long long)d->run->run_id : -1LL, (unsigned long long)d->requests,
		        (unsigned long long)d->bytes, (unsigned long long)d->errors,
		        d->last_error[0] ? safe_text(safe, sizeof(safe), d->last_error) : "-");
	if (!n)
		fprintf(f, "(no devices)\n");
	be_trace_status(b->traces, f);
	be_sampling_status(b->sampling, f);
	if (b->reads) {
		struct be_read_service_counts rc;
		be_read_service_counts(b->reads, &rc);
		fprintf(f, "\nread service: %d client%s now, %llu in all, %llu requests answered, %llu clients turned "
		        "away, %llu dropped\n", rc.open, rc.open == 1 ? "" : "s", (unsigned long long)rc.clients,
		        (unsigned long long)rc.requests, (unsigned long long)rc.turned_away, (unsigned long long)rc.dropped);
	}
	fprintf(f, "\n%-6s %-6s %-8s %14s  %s\n", "RUN", "DOMID", "DEVICES", "BYTES", "NAME");
	n = 0;
	for (const struct be_run *r = be_runs_first(b->runs); r; r = r->next, n++)
		fprintf(f, "%-6lld %-6u %-8d %14llu  %s\n", (long long)r->run_id, r->domid, r->ndevices,
		        (unsigned long long)be_quota_charged(&r->chunks), safe_text(safe, sizeof(safe), r->name));
	if (!n)
		fprintf(f, "(no runs in progress)\n");
	for (const struct be_run *r = be_runs_first(b->runs); r; r = r->next)
		if (r->end_failures)
			fprintf(f, "run %lld: its domain is gone but the run is not ended yet: the store refused %d "
			        "time(s), retried every second (%s)\n",
			        (long long)r->run_id, r->end_failures, safe_text(safe, sizeof(safe), r->end_error));
}

/* A guest's text as JSON: escaped as everywhere (docs/json.md). */
static json_t *guest_text(const char *s)
{
	char safe[1024];
	return json_string(safe_text(safe, sizeof(safe), s));
}

/* The backend object of docs/json.md: what status_text says, as data. */
static void status_json(struct be_backend *b, FILE *f)
{
	struct mallinfo2 mi = mallinfo2();
	json_t *devs = json_array(), *runs = json_array();
	struct be_xs_stats xs;
	be_domains_stats(b->domains, &xs);
	struct be_io_stats io;
	be_io_stats(b->io, &io);

	for (struct be_device *d = b->devices; d; d = d->next)
		json_array_append_new(devs, json_pack("{s:i, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:o}",
			"domid", (int)d->domid, "vdev", d->vdev,
			"backend_state", be_xenbus_state_name(d->bstate), "frontend_state", be_xenbus_state_name(d->fstate),
			"run_id", d->run ? json_integer(d->run->run_id) : json_null(),
			"requests", (json_int_t)d->requests, "bytes", (json_int_t)d->bytes,
			"errors", (json_int_t)d->errors,
			"last_error", d->last_error[0] ? guest_text(d->last_error) : json_null()));
	for (const struct be_run *r = be_runs_first(b->runs); r; r = r->next)
		json_array_append_new(runs, json_pack("{s:I, s:i, s:i, s:I, s:o, s:i, s:o}", "run_id", (json_int_t)r->run_id,
			"domid", (int)r->domid, "devices", r->ndevices,
			"bytes", (json_int_t)be_quota_charged(&r->chunks), "name", guest_text(r->name),
			"end_failures", r->end_failures,
			"end_error", r->end_failures ? guest_text(r->end_error) : json_null()));
	json_t *doc = json_pack("{s:{s:s, s:I, s:s, s:I, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, "
	                        "s:{s:I, s:I, s:I, s:I}, s:o, s:o, s:o, s:o}}",
		"backend",
		"version", PACKAGE_VERSION, "pid", (json_int_t)getpid(),
		"platform", plat_kind_name(b->env.opt.platform),
		"up_seconds", (json_int_t)((store_now_us() - b->env.started_us) / 1000000),
		"store", store_path(b->env.store),
		"durability", b->env.opt.durability == STORE_DURABLE_POWER ? "power" : "process",
		"sink", be_sink_name(b->env.opt.sink),
		"sink_dir", b->env.opt.sink_dir ? json_string(b->env.opt.sink_dir) : json_null(),
		"heap_bytes", (json_int_t)mi.uordblks, "store_cache_bytes", (json_int_t)store_memory_used(),
		"batches", (json_int_t)io.batches, "inline_commits", (json_int_t)be_worker_inline_commits(b->worker),
		"failed_commits", (json_int_t)io.commits_failed,
		"xenstore", "events", (json_int_t)xs.events, "deferred", (json_int_t)xs.deferred,
		"rounds", (json_int_t)xs.rounds, "unwatched", (json_int_t)xs.unwatched,
		"devices", devs, "traces", be_trace_status_json(b->traces), "runs", runs, "sync", be_sync_push_status_json(b->sync));
	if (doc)
		json_dumpf(doc, f, JSON_COMPACT | JSON_ENSURE_ASCII);
	fputc('\n', f);
	json_decref(doc);
}

/* The place of a client whose descriptor is gone, made free. */
static void client_close_slot(struct be_control_client *c)
{
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void client_close(struct be_backend *b, struct be_control_client *c)
{
	epoll_ctl(b->control->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	client_close_slot(c);
}

void be_control_init(struct be_backend *b, int ep)
{
	b->control = calloc(1, sizeof(*b->control));
	if (!b->control)
		return; /* clients turned away */
	b->control->ep = ep;
	for (int i = 0; i < CONTROL_CLIENTS_MAX; i++)
		b->control->clients[i].fd = -1;
}

void be_control_shutdown(struct be_backend *b)
{
	for (int i = 0; b->control && i < CONTROL_CLIENTS_MAX; i++)
		if (b->control->clients[i].fd >= 0)
			client_close(b, &b->control->clients[i]);
	free(b->control);
	b->control = NULL;
}

/* A client whose place may be taken (3): no sampling held, nothing of an
 * answer rendered. */
static int evictable(const struct be_control_client *c)
{
	return c->fd >= 0 && !c->sampling && !c->out;
}

/* Says why in one line (never blocking: nothing else was sent to it), then
 * closes. */
static void tell_and_close(int fd, const char *what, const char *why)
{
	char line[320];
	int n = snprintf(line, sizeof(line), "%s: %s\n", what, why);
	(void)send(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

/* The place for a newcomer of user uid (priv: root or ours), by
 * peer_room.c's rules (1) and (2): a free one, or one whose client was
 * evicted and told; NULL, with the reason to refuse it with in why. */
static struct be_control_client *place_for(struct be_backend *b, uid_t uid, int priv, char *why, size_t len)
{
	struct be_peer_slot slots[CONTROL_CLIENTS_MAX];
	for (int i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct be_control_client *c = &b->control->clients[i];
		slots[i] = (struct be_peer_slot){c->fd >= 0, c->uid, c->may_act, c->seq, evictable(c)};
	}
	size_t idx;
	switch (be_peer_room_place(slots, CONTROL_CLIENTS_MAX, CONTROL_PER_USER_MAX, uid, priv, &idx, why, len)) {
	case PEER_FREE:
		return &b->control->clients[idx];
	case PEER_EVICT: {
		struct be_control_client *c = &b->control->clients[idx];
		epoll_ctl(b->control->ep, EPOLL_CTL_DEL, c->fd, NULL);
		tell_and_close(c->fd, "evicted", why);
		c->fd = -1;
		client_close_slot(c);
		return c;
	}
	default:
		return NULL;
	}
}

void be_control_accept(struct be_backend *b, int lfd)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		if (!b->control) {
			close(fd);
			continue;
		}
		/* Who asks: the socket is the run directory's group's too when
		 * that directory is shared (profdb-serve.service's user asks for
		 * metrics); such a peer may read, never act. */
		struct ucred cred;
		socklen_t credlen = sizeof(cred);
		int known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) == 0;
		uid_t uid = known ? cred.uid : (uid_t)-1;
		int priv = known && (cred.uid == 0 || cred.uid == geteuid());
		char why[256];
		struct be_control_client *c = place_for(b, uid, priv, why, sizeof(why));
		if (!c) {
			tell_and_close(fd, "refused", why);
			continue;
		}
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = SRC_CONTROL_CLIENT + (uint32_t)(c - b->control->clients)};
		if (epoll_ctl(b->control->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = uid;
		c->may_act = priv;
		c->seq = ++b->control->accepted;
		c->deadline_us = store_now_us() + CONTROL_TIMEOUT_US;
	}
}

/* Sends what the client will take now; closes it when all is sent. */
static void client_send(struct be_backend *b, struct be_control_client *c)
{
	while (c->sent < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->sent, c->outlen - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* EPOLLOUT will say when */
		break;
	}
	client_close(b, c);
}

/* "sample HZ DURATION_US DOMAIN [SYMBOLS][\tKERNEL_SYMBOLS]": starts, says
 * so, and holds the client until the sampling ends (be_control_expire) or it
 * hangs up (be_control_event: the sampling stops).  The paths are the rest of
 * the line (they may hold spaces, never a tab: the client refuses those). */
static void sample_request(struct be_backend *b, struct be_control_client *c, FILE *f)
{
	char domain[256] = "", err[512];
	unsigned hz = 0;
	unsigned long long us = 0;
	int pos = 0;
	c->cmd[strcspn(c->cmd, "\n")] = '\0';
	/* %n right after the domain: a space in the format would also eat
	 * the tab that starts an empty SYMBOLS */
	if (sscanf(c->cmd, "sample %u %llu %255s%n", &hz, &us, domain, &pos) < 3) {
		fprintf(f, "error: malformed sample request\n");
		return;
	}
	char *paths = c->cmd + pos;
	if (*paths == ' ')
		paths++;
	char *tab = strchr(paths, '\t');
	if (tab)
		*tab++ = '\0';
	struct be_sampling_request rq = {domain, hz, us, *paths ? paths : NULL, tab && *tab ? tab : NULL};
	uint32_t domid;
	if (be_sampling_start(b, &rq, &domid, err, sizeof(err)) != 0) {
		fprintf(f, "error: %s\n", err);
		return;
	}
	char line[128];
	int n = snprintf(line, sizeof(line), "sampling domain %u at %u Hz\n", domid, hz);
	if (send(c->fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		be_sampling_stop(b, domid);
		return;
	}
	c->sampling = 1;
	c->sample_domid = domid;
}

/* "end-run RUN_ID DB": profdb is about to delete a running run of the
 * store DB (the rest of the line).  Its devices go to Closing through
 * xenbus (what was answered stays answered; nothing more is taken), its
 * trace and sampler stop, and it ends in the store, so that its guest
 * sees its disk go rather than I/O errors.  Answers "closed run N: K
 * devices", or "not here: ..." when this backend does not capture it
 * (another store, or not a run of ours), or "error: ...". */
static void end_run_request(struct be_backend *b, struct be_control_client *c, FILE *f)
{
	long long id = 0;
	int pos = 0;
	struct stat mine, theirs;
	c->cmd[strcspn(c->cmd, "\n")] = '\0';
	if (sscanf(c->cmd, "end-run %lld %n", &id, &pos) < 1 || pos == 0 || !c->cmd[pos]) {
		fprintf(f, "error: malformed end-run request\n");
		return;
	}
	if (stat(c->cmd + pos, &theirs) != 0 || stat(store_path(b->env.store), &mine) != 0 ||
	    theirs.st_dev != mine.st_dev || theirs.st_ino != mine.st_ino) {
		fprintf(f, "not here: this backend's store is %s\n", store_path(b->env.store));
		return;
	}
	struct be_run *r = be_run_find(b->runs, id);
	if (!r) {
		fprintf(f, "not here: run %lld is not being captured by this backend\n", id);
		return;
	}
	/* Nothing in flight may refer to its devices. */
	be_worker_quiesce(b->worker);
	int n = be_devices_close_run(b, r);
	be_trace_run_closed(b, r);
	be_sampling_run_closed(b, r);
	be_elog_at(LOG_NOTICE, r->domid, id, "dom%u run %lld: closed to be deleted (%d device%s)", r->domid, id, n,
	        n == 1 ? "" : "s");
	be_run_close(b->runs, r, "deleted while running (profdb delete or prune --force)");
	fprintf(f, "closed run %lld: %d device%s\n", id, n, n == 1 ? "" : "s");
}

static void client_answer(struct be_backend *b, struct be_control_client *c)
{
	FILE *f = open_memstream(&c->out, &c->outlen);
	if (!f) {
		client_close(b, c);
		return;
	}
	if (strncmp(c->cmd, "metrics", 7) == 0)
		be_metrics_text(b, f);
	else if (strncmp(c->cmd, "status json", 11) == 0)
		status_json(b, f);
	else if (strncmp(c->cmd, "status", 6) == 0)
		status_text(b, f);
	else if ((strncmp(c->cmd, "sample ", 7) == 0 || strncmp(c->cmd, "end-run ", 8) == 0) && !c->may_act)
		fprintf(f, "not allowed: only root may sample or end runs (this user may ask for status "
		           "and metrics)\n");
	else if (strncmp(c->cmd, "sample ", 7) == 0)
		sample_request(b, c, f);
	else if (strncmp(c->cmd, "end-run ", 8) == 0)
		end_run_request(b, c, f);
	else
		fprintf(f, "unknown command\n");
	if (fclose(f) != 0) {
		client_close(b, c);
		return;
	}
	if (c->sampling) {
		free(c->out); /* nothing more until the sampling ends */
		c->out = NULL;
		c->outlen = 0;
		return;
	}
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = SRC_CONTROL_CLIENT + (uint32_t)(c - b->control->clients)};
	epoll_ctl(b->control->ep, EPOLL_CTL_MOD, c->fd, &ev);
	client_send(b, c);
}

void be_control_event(struct be_backend *b, unsigned idx)
{
	if (!b->control || idx >= CONTROL_CLIENTS_MAX || b->control->clients[idx].fd < 0)
		return;
	struct be_control_client *c = &b->control->clients[idx];
	if (c->out) {
		client_send(b, c);
		return;
	}
	if (c->sampling) {
		/* It hung up (or wrote more, which it should not): the sampling
		 * it asked for stops. */
		be_sampling_stop(b, c->sample_domid);
		client_close(b, c);
		return;
	}
	ssize_t n = recv(c->fd, c->cmd + c->cmdlen, sizeof(c->cmd) - 1 - c->cmdlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n > 0)
		c->cmdlen += (size_t)n;
	c->cmd[c->cmdlen] = '\0';
	/* A command is a line; EOF or a full buffer ends it too. */
	if (n <= 0 || memchr(c->cmd, '\n', c->cmdlen) || c->cmdlen == sizeof(c->cmd) - 1)
		client_answer(b, c);
}

/* A client waiting for its sampling: its summary once it ended. */
static void held_sampling(struct be_backend *b, struct be_control_client *c)
{
	char line[1100];
	int rc = be_sampling_result(b->sampling, c->sample_domid, line, sizeof(line));
	if (rc == 0)
		return;
	c->sampling = 0;
	if (rc < 0 || !(c->out = strdup(line))) {
		client_close(b, c);
		return;
	}
	c->outlen = strlen(line);
	c->sent = 0;
	c->deadline_us = store_now_us() + CONTROL_TIMEOUT_US;
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = SRC_CONTROL_CLIENT + (uint32_t)(c - b->control->clients)};
	epoll_ctl(b->control->ep, EPOLL_CTL_MOD, c->fd, &ev);
	client_send(b, c);
}

int be_control_expire(struct be_backend *b)
{
	int64_t now = store_now_us(), next = -1;

	for (int i = 0; b->control && i < CONTROL_CLIENTS_MAX; i++) {
		struct be_control_client *c = &b->control->clients[i];
		if (c->fd < 0)
			continue;
		if (c->sampling) {
			held_sampling(b, c);
			continue;
		}
		if (c->deadline_us <= now) {
			client_close(b, c);
			continue;
		}
		int64_t wait = (c->deadline_us - now) / 1000 + 1;
		next = next < 0 || wait < next ? wait : next;
	}
	return (int)next;
}
