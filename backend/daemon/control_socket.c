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
 * May call: trace.c, sampling.c, sync_push.c, xenbus_state.c (state names),
 * sink.c, quota.c, peer_room.c, read_service.c (its counts) and log.c: it
 * runs.c, metrics.c, common/ (state.h), datapath/ (io_worker.h),
 * util/safe_text; reads every part's state, nothing calls back.
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
#include "backend/datapath/io_worker.h"
#include "backend/datapath/sink.h"
#include "backend/control/runs.h"
#include "backend/control/sampling.h"
#include "backend/control/sync_push.h"
#include "backend/control/trace.h"
#include "backend/control/xenbus_state.h"
#include "backend/daemon/control_socket.h"
#include "backend/daemon/metrics.h"
#include "backend/daemon/peer_room.h"
#include "backend/daemon/read_service.h"
#include "util/safe_text.h"

#define CONTROL_TIMEOUT_US (10 * 1000000)

struct control_client {
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

static uint64_t accepted; /* clients accepted so far (their seq) */

static void status_text(struct backend *b, FILE *f)
{
	int64_t up = (store_now_us() - b->started_us) / 1000000;

	fprintf(f, "profile-backend %s, pid %ld, platform %s, up %llds\n", PACKAGE_VERSION,
	        (long)getpid(), plat_kind_name(b->opt.platform), (long long)up);
	fprintf(f, "store %s (durability %s)\n", store_path(b->store),
	        b->opt.durability == STORE_DURABLE_POWER ? "power" : "process");
	if (b->opt.sink != SINK_STORE)
		fprintf(f, "sink %s%s%s: data is NOT recorded (a benchmark baseline)\n", sink_name(b->opt.sink),
		        b->opt.sink_dir ? " in " : "", b->opt.sink_dir ? b->opt.sink_dir : "");
	/* What malloc has handed out and not had back: the leak checks of
	 * tests/test_faults read it (RSS also counts what free() kept). */
	struct mallinfo2 mi = mallinfo2();
	fprintf(f, "heap %zu KiB in use, %lld KiB of it the store's caches\n", mi.uordblks / 1024,
	        (long long)(store_memory_used() / 1024));
	fprintf(f, "batches %llu (%llu committed inline), failed commits %llu\n",
	        (unsigned long long)b->batches, (unsigned long long)b->inline_commits,
	        (unsigned long long)b->commits_failed);
	/* The data file's freed slots (store_checkpoint.c): how often the
	 * writer had to prove them unseen itself, and what that cost. */
	struct store_slot_proofs sp;
	if (b->store && store_slot_proofs(b->store, &sp) == 0)
		fprintf(f, "freed slots %lld waiting; the writer proved them unseen %lld times (%lld held up "
		        "by a reader), for %lld slots, waiting %lld ms for the checkpointer and %lld ms "
		        "checkpointing, at most %lld ms at once\n",
		        (long long)sp.waiting, (long long)sp.proofs, (long long)sp.failed, (long long)sp.given,
		        (long long)(sp.wait_us / 1000), (long long)(sp.prove_us / 1000), (long long)(sp.max_us / 1000));
	fprintf(f, "xenstore events %llu (%llu deferred by the frontend rate limit), rounds acted on %llu, "
	        "flooding domains polled instead of watched %llu times\n",
	        (unsigned long long)b->xs_events, (unsigned long long)b->xs_deferred,
	        (unsigned long long)b->xs_rounds, (unsigned long long)b->xs_unwatched);
	sync_push_status(b, f);
	fprintf(f, "\n%-6s %-7s %-12s %-12s %6s %10s %14s %7s  %s\n", "DOMID", "DEVICE", "BACKEND",
	        "FRONTEND", "RUN", "REQUESTS", "BYTES", "ERRORS", "LAST ERROR");
	int n = 0;
	/* Names and error texts can quote what a guest wrote: escaped. */
	char safe[512];
	for (struct device *d = b->devices; d; d = d->next, n++)
		fprintf(f, "%-6u %-7s %-12s %-12s %6lld %10llu %14llu %7llu  %s\n", d->domid, d->vdev,
		        xenbus_state_name(d->bstate), xenbus_state_name(d->fstate),
		        d->run ? (long long)d->run->run_id : -1LL, (unsigned long long)d->requests,
		        (unsigned long long)d->bytes, (unsigned long long)d->errors,
		        d->last_error[0] ? safe_text(safe, sizeof(safe), d->last_error) : "-");
	if (!n)
		fprintf(f, "(no devices)\n");
	trace_status(b, f);
	sampling_status(b, f);
	if (b->reads) {
		struct read_service_counts rc;
		read_service_counts(b->reads, &rc);
		fprintf(f, "\nread service: %d client%s now, %llu in all, %llu requests answered, %llu clients turned "
		        "away, %llu dropped\n", rc.open, rc.open == 1 ? "" : "s", (unsigned long long)rc.clients,
		        (unsigned long long)rc.requests, (unsigned long long)rc.turned_away, (unsigned long long)rc.dropped);
	}
	fprintf(f, "\n%-6s %-6s %-8s %14s  %s\n", "RUN", "DOMID", "DEVICES", "BYTES", "NAME");
	n = 0;
	for (struct run *r = b->runs; r; r = r->next, n++)
		fprintf(f, "%-6lld %-6u %-8d %14llu  %s\n", (long long)r->run_id, r->domid, r->ndevices,
		        (unsigned long long)quota_charged(&r->chunks), safe_text(safe, sizeof(safe), r->name));
	if (!n)
		fprintf(f, "(no runs in progress)\n");
	for (struct run *r = b->runs; r; r = r->next)
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
static void status_json(struct backend *b, FILE *f)
{
	struct mallinfo2 mi = mallinfo2();
	json_t *devs = json_array(), *runs = json_array();

	for (struct device *d = b->devices; d; d = d->next)
		json_array_append_new(devs, json_pack("{s:i, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:o}",
			"domid", (int)d->domid, "vdev", d->vdev,
			"backend_state", xenbus_state_name(d->bstate), "frontend_state", xenbus_state_name(d->fstate),
			"run_id", d->run ? json_integer(d->run->run_id) : json_null(),
			"requests", (json_int_t)d->requests, "bytes", (json_int_t)d->bytes,
			"errors", (json_int_t)d->errors,
			"last_error", d->last_error[0] ? guest_text(d->last_error) : json_null()));
	for (struct run *r = b->runs; r; r = r->next)
		json_array_append_new(runs, json_pack("{s:I, s:i, s:i, s:I, s:o, s:i, s:o}", "run_id", (json_int_t)r->run_id,
			"domid", (int)r->domid, "devices", r->ndevices,
			"bytes", (json_int_t)quota_charged(&r->chunks), "name", guest_text(r->name),
			"end_failures", r->end_failures,
			"end_error", r->end_failures ? guest_text(r->end_error) : json_null()));
	json_t *doc = json_pack("{s:{s:s, s:I, s:s, s:I, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, "
	                        "s:{s:I, s:I, s:I, s:I}, s:o, s:o, s:o, s:o}}",
		"backend",
		"version", PACKAGE_VERSION, "pid", (json_int_t)getpid(),
		"platform", plat_kind_name(b->opt.platform),
		"up_seconds", (json_int_t)((store_now_us() - b->started_us) / 1000000),
		"store", store_path(b->store),
		"durability", b->opt.durability == STORE_DURABLE_POWER ? "power" : "process",
		"sink", sink_name(b->opt.sink),
		"sink_dir", b->opt.sink_dir ? json_string(b->opt.sink_dir) : json_null(),
		"heap_bytes", (json_int_t)mi.uordblks, "store_cache_bytes", (json_int_t)store_memory_used(),
		"batches", (json_int_t)b->batches, "inline_commits", (json_int_t)b->inline_commits,
		"failed_commits", (json_int_t)b->commits_failed,
		"xenstore", "events", (json_int_t)b->xs_events, "deferred", (json_int_t)b->xs_deferred,
		"rounds", (json_int_t)b->xs_rounds, "unwatched", (json_int_t)b->xs_unwatched,
		"devices", devs, "traces", trace_status_json(b), "runs", runs, "sync", sync_push_status_json(b));
	if (doc)
		json_dumpf(doc, f, JSON_COMPACT | JSON_ENSURE_ASCII);
	fputc('\n', f);
	json_decref(doc);
}

/* The place of a client whose descriptor is gone, made free. */
static void client_close_slot(struct control_client *c)
{
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void client_close(struct backend *b, struct control_client *c)
{
	epoll_ctl(b->control_ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	client_close_slot(c);
}

void control_init(struct backend *b, int ep)
{
	b->control_ep = ep;
	b->control = calloc(CONTROL_CLIENTS_MAX, sizeof(*b->control));
	for (int i = 0; b->control && i < CONTROL_CLIENTS_MAX; i++)
		b->control[i].fd = -1;
}

void control_shutdown(struct backend *b)
{
	for (int i = 0; b->control && i < CONTROL_CLIENTS_MAX; i++)
		if (b->control[i].fd >= 0)
			client_close(b, &b->control[i]);
	free(b->control);
	b->control = NULL;
}

/* A client whose place may be taken (3): no sampling held, nothing of an
 * answer rendered. */
static int evictable(const struct control_client *c)
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
static struct control_client *place_for(struct backend *b, uid_t uid, int priv, char *why, size_t len)
{
	struct peer_slot slots[CONTROL_CLIENTS_MAX];
	for (int i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct control_client *c = &b->control[i];
		slots[i] = (struct peer_slot){c->fd >= 0, c->uid, c->may_act, c->seq, evictable(c)};
	}
	size_t idx;
	switch (peer_room_place(slots, CONTROL_CLIENTS_MAX, CONTROL_PER_USER_MAX, uid, priv, &idx, why, len)) {
	case PEER_FREE:
		return &b->control[idx];
	case PEER_EVICT: {
		struct control_client *c = &b->control[idx];
		epoll_ctl(b->control_ep, EPOLL_CTL_DEL, c->fd, NULL);
		tell_and_close(c->fd, "evicted", why);
		c->fd = -1;
		client_close_slot(c);
		return c;
	}
	default:
		return NULL;
	}
}

void control_accept(struct backend *b, int lfd)
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
		struct control_client *c = place_for(b, uid, priv, why, sizeof(why));
		if (!c) {
			tell_and_close(fd, "refused", why);
			continue;
		}
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = SRC_CONTROL_CLIENT + (uint32_t)(c - b->control)};
		if (epoll_ctl(b->control_ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = uid;
		c->may_act = priv;
		c->seq = ++accepted;
		c->deadline_us = store_now_us() + CONTROL_TIMEOUT_US;
	}
}

/* Sends what the client will take now; closes it when all is sent. */
static void client_send(struct backend *b, struct control_client *c)
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
 * so, and holds the client until the sampling ends (control_expire) or it
 * hangs up (control_event: the sampling stops).  The paths are the rest of
 * the line (they may hold spaces, never a tab: the client refuses those). */
static void sample_request(struct backend *b, struct control_client *c, FILE *f)
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
	struct sampling_request rq = {domain, hz, us, *paths ? paths : NULL, tab && *tab ? tab : NULL};
	uint32_t domid;
	if (sampling_start(b, &rq, &domid, err, sizeof(err)) != 0) {
		fprintf(f, "error: %s\n", err);
		return;
	}
	char line[128];
	int n = snprintf(line, sizeof(line), "sampling domain %u at %u Hz\n", domid, hz);
	if (send(c->fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		sampling_stop(b, domid);
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
static void end_run_request(struct backend *b, struct control_client *c, FILE *f)
{
	long long id = 0;
	int pos = 0;
	struct stat mine, theirs;
	c->cmd[strcspn(c->cmd, "\n")] = '\0';
	if (sscanf(c->cmd, "end-run %lld %n", &id, &pos) < 1 || pos == 0 || !c->cmd[pos]) {
		fprintf(f, "error: malformed end-run request\n");
		return;
	}
	if (stat(c->cmd + pos, &theirs) != 0 || stat(store_path(b->store), &mine) != 0 ||
	    theirs.st_dev != mine.st_dev || theirs.st_ino != mine.st_ino) {
		fprintf(f, "not here: this backend's store is %s\n", store_path(b->store));
		return;
	}
	struct run *r = run_find(b, id);
	if (!r) {
		fprintf(f, "not here: run %lld is not being captured by this backend\n", id);
		return;
	}
	/* Nothing in flight may refer to its devices. */
	io_quiesce(b);
	int n = devices_close_run(b, r);
	trace_run_closed(b, r);
	sampling_run_closed(b, r);
	elog_at(LOG_NOTICE, r->domid, id, "dom%u run %lld: closed to be deleted (%d device%s)", r->domid, id, n,
	        n == 1 ? "" : "s");
	run_close(b, r, "deleted while running (profdb delete or prune --force)");
	fprintf(f, "closed run %lld: %d device%s\n", id, n, n == 1 ? "" : "s");
}

static void client_answer(struct backend *b, struct control_client *c)
{
	FILE *f = open_memstream(&c->out, &c->outlen);
	if (!f) {
		client_close(b, c);
		return;
	}
	if (strncmp(c->cmd, "metrics", 7) == 0)
		metrics_text(b, f);
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
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = SRC_CONTROL_CLIENT + (uint32_t)(c - b->control)};
	epoll_ctl(b->control_ep, EPOLL_CTL_MOD, c->fd, &ev);
	client_send(b, c);
}

void control_event(struct backend *b, unsigned idx)
{
	if (!b->control || idx >= CONTROL_CLIENTS_MAX || b->control[idx].fd < 0)
		return;
	struct control_client *c = &b->control[idx];
	if (c->out) {
		client_send(b, c);
		return;
	}
	if (c->sampling) {
		/* It hung up (or wrote more, which it should not): the sampling
		 * it asked for stops. */
		sampling_stop(b, c->sample_domid);
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
static void held_sampling(struct backend *b, struct control_client *c)
{
	char line[1100];
	int rc = sampling_result(b, c->sample_domid, line, sizeof(line));
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
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = SRC_CONTROL_CLIENT + (uint32_t)(c - b->control)};
	epoll_ctl(b->control_ep, EPOLL_CTL_MOD, c->fd, &ev);
	client_send(b, c);
}

int control_expire(struct backend *b)
{
	int64_t now = store_now_us(), next = -1;

	for (int i = 0; b->control && i < CONTROL_CLIENTS_MAX; i++) {
		struct control_client *c = &b->control[i];
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
