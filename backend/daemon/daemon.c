/*
 * daemon.c - profile-backend as a daemon: one instance per run directory
 * (a locked pid file), the event loop, the control socket that answers
 * `status`, and stop/status as clients of it.
 *
 * Its service manager hears from it (sd_notify; a no-op without
 * NOTIFY_SOCKET): READY=1 once it serves, STATUS= the devices it serves,
 * STOPPING=1 when it is told to stop.  A start that fails says why on the
 * terminal too (the daemonised child passes its last error back through
 * the ready pipe).  status and stop follow the LSB init-script codes:
 * status 0 running, 3 not running, 1 cannot tell; stop 0 once nothing
 * runs (also when nothing ran), 1 when it cannot stop it.
 *
 * The loop: xenstore watch events move devices through their states;
 * event channel notifications put devices on the work list; one batch of
 * I/O per turn (io.c); ports are unmasked only after their ring was
 * drained, and later still for a device that storms us with empty
 * notifications.
 *
 * Owns struct be_backend, which composes every part's own state (struct
 * be_env, what it opened for all of them; the data path's be_io and
 * be_worker; the runs', domains', sync's, traces', sampling's): it makes
 * each part at the start and frees it at the end.
 *
 * May call: the control plane (control/: xenbus, xenbus_state, domains,
 * runs, trace, sampling, sync_push), the data path (datapath/: io_worker,
 * io, storm, sink), the control socket (control_socket.c), the read
 * service (read_service.c), log.c, common/, util/, the store, the
 * platform and the service manager; it wires xenbus's listener to runs
 * and traces.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <xenstore.h>

#include "backend/common/log.h"
#include "backend/common/state.h"
#include "backend/datapath/io.h"
#include "backend/datapath/io_worker.h"
#include "backend/datapath/sink.h"
#include "backend/datapath/storm.h"
#include "backend/control/domains.h"
#include "backend/control/runs.h"
#include "backend/control/sync_push.h"
#include "backend/control/sampling.h"
#include "backend/control/trace.h"
#include "backend/control/xenbus.h"
#include "backend/control/xenbus_state.h"
#include "control_socket.h"
#include "daemon.h"
#include "read_service.h"
#include "util/daemonize.h"
#include "util/private_dir.h"
#include "util/safe_text.h"

enum { SRC_XS, SRC_EVT, SRC_CTL, SRC_SIG, SRC_IO };
_Static_assert(SRC_CONTROL_CLIENT > SRC_IO, "epoll sources do not overlap");

static void path_in(const struct be_options *o, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", o->run_dir, name);
}

static int lock_pidfile(const struct be_options *o, int *fd_out)
{
	char path[512], pid[32] = "";

	path_in(o, "profile-backend.pid", path, sizeof(path));
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "profile-backend: %s: %s (is --run-dir writable, and the pid file not a link?)\n",
		        path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		fprintf(stderr, "profile-backend: already running (pid %s); 'profile-backend stop' first\n",
		        pid[0] ? pid : "unknown");
		close(fd);
		return -1;
	}
	*fd_out = fd;
	return 0;
}

static int add_fd(int ep, int fd, int src)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)src};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* STATUS= for the service manager: how many devices are connected. */
static void notify_status(struct be_backend *b, int *last)
{
	int n = 0;
	for (struct be_device *d = b->devices; d; d = d->next)
		n += d->connected;
	if (n == *last)
		return;
	*last = n;
	sd_notifyf(0, "STATUS=serving %d device%s", n, n == 1 ? "" : "s");
}

/* The sooner of two timeouts in milliseconds, -1 meaning none. */
static int sooner(int a, int b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/* What xenbus tells the runs and the traces: some domain died, the traces'
 * own watches fired. */
static void domains_changed(struct be_backend *b)
{
	be_trace_domains_changed(b);
	be_sampling_domains_changed(b);
	be_runs_domains_changed(b->runs);
}

/* A round's end: the traces' work, and --sample-hz's new domains (those
 * @introduceDomain announced, which the traces watch). */
static void round_end(struct be_backend *b)
{
	if (be_trace_round(b))
		be_sampling_new_domains(b);
}

static const struct be_xenbus_listener xenbus_listener = {
	.note_event = be_trace_note_event,
	.domains_changed = domains_changed,
	.round = round_end,
};

/* One epoll event: 1 when the host went away under us (stop now). */
static int handle_event(struct be_backend *b, const struct epoll_event *ev, int ctl, int sig)
{
	/* xenstored or the event channel device went away (xensim
	 * stopped under us; never on Xen): a hung-up fd is readable
	 * forever, and reading it again and again spun a core. */
	if ((ev->data.u32 == SRC_XS || ev->data.u32 == SRC_EVT) &&
	    (ev->events & (EPOLLHUP | EPOLLERR))) {
		be_blog_at(LOG_WARNING, "%s closed under us (the simulated host stopped?): stopping; guests keep "
		     "their state for the next start",
		     ev->data.u32 == SRC_XS ? "the xenstore connection" : "the event channel device");
		b->stopping = 1;
		sd_notify(0, "STOPPING=1\nSTATUS=stopping: the host's xenstore or event channels are gone");
		return 1;
	}
	switch (ev->data.u32) {
	case SRC_XS:
		be_xenbus_watch_events(b);
		break;
	case SRC_EVT: {
		int port;
		while ((port = plat_evtchn_pending(b->env.evt)) >= 0) {
			struct be_device *d = be_device_by_port(b, (uint32_t)port);
			if (d) {
				d->port_masked = 1;
				be_io_schedule(d);
			} else {
				plat_evtchn_unmask(b->env.evt, (uint32_t)port);
			}
		}
		break;
	}
	case SRC_CTL:
		be_control_accept(b, ctl);
		break;
	case SRC_IO:
		be_worker_completed(b->worker);
		break;
	case SRC_SIG: {
		struct signalfd_siginfo si;
		if (read(sig, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo != SIGHUP) {
			be_blog_at(LOG_NOTICE, "signal %u: stopping (guests stay connected for the next start)",
			     si.ssi_signo);
			b->stopping = 1;
			sd_notify(0, "STOPPING=1\nSTATUS=stopping");
		}
		break;
	}
	default:
		be_control_event(b, ev->data.u32 - SRC_CONTROL_CLIENT);
		break;
	}
	return 0;
}

static int event_loop(struct be_backend *b, int ctl, int sig)
{
	int served = -1;

	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || add_fd(ep, xs_fileno(b->env.xs), SRC_XS) || add_fd(ep, plat_evtchn_fd(b->env.evt), SRC_EVT) ||
	    add_fd(ep, ctl, SRC_CTL) || add_fd(ep, sig, SRC_SIG) ||
	    add_fd(ep, be_worker_event_fd(b->worker), SRC_IO)) {
		be_blog_at(LOG_ERR, "cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	be_control_init(b, ep);
	/* what the open could not give back (a reader was behind) */
	be_worker_give_back_due(b->worker);
	int timeout = -1;
	uint64_t trimmed_at = 0; /* batches when memory was last trimmed */
	while (!b->stopping) {
		struct epoll_event evs[8];
		/* A second after the guests go quiet, the heap a burst grew is
		 * handed back (batches of up to BATCH_BYTES_MAX each, freed but
		 * kept by malloc): a fleet's peak is not the daemon's size. */
		int wait = be_worker_can_run(b->worker) ? 0 : timeout;
		if (be_io_batches(b->io) != trimmed_at && (wait < 0 || wait > 1000))
			wait = 1000;
		int n = epoll_wait(ep, evs, 8, wait);
		if (n < 0 && errno != EINTR) {
			be_blog_at(LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		if (n == 0 && wait == 1000 && !be_worker_can_run(b->worker) && be_io_batches(b->io) != trimmed_at) {
			be_worker_quiesce(b->worker);
			malloc_trim(0);
			trimmed_at = be_io_batches(b->io);
		}
		for (int i = 0; i < n; i++)
			if (handle_event(b, &evs[i], ctl, sig))
				break;
		if (be_worker_can_run(b->worker))
			be_worker_run_batch(b->worker);
		be_xenbus_fail_broken(b);
		/* the soonest of the timers' next times (-1: none) */
		timeout = be_storm_unmask_ports(b->env.evt, b->devices);
		timeout = sooner(timeout, be_control_expire(b));
		timeout = sooner(timeout, be_xenbus_deferred_run(b));
		timeout = sooner(timeout, be_runs_retry_ends(b->runs));
		timeout = sooner(timeout, be_trace_poll(b));
		timeout = sooner(timeout, be_sampling_poll(b));
		timeout = sooner(timeout, be_worker_give_back(b->worker, be_runs_ended(b->runs)));
		if (!b->stopping)
			notify_status(b, &served);
	}
	be_sampling_shutdown(b);
	be_control_shutdown(b);
	close(ep);
	return 0;
}


/* The store (and --sink's directory): 0, or -1 (logged). */
static int open_store(struct be_backend *b, const struct be_options *o)
{
	struct store_open_opts so = {.mode = STORE_OWNER, .durability = o->durability, .bulk_file = 1,
	                             .intake = !o->no_intake};
	/* The intake log only has to outlive this process under durability
	 * process: it goes in the run directory (tmpfs on a host, as the
	 * response journals), not on the disk the store may fill; under power
	 * it must be on stable storage, beside the database. */
	char intake[1024], err[1024];
	const char *base = strrchr(o->db, '/');
	snprintf(intake, sizeof(intake), "%s/%s-intake", o->run_dir, base ? base + 1 : o->db);
	if (o->durability == STORE_DURABLE_PROCESS)
		so.intake_path = intake;
	else
		so.intake_other = intake; /* left by a start with durability process */
	if (o->sink_dir) {
		struct stat st;
		if (stat(o->sink_dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(o->sink_dir, W_OK) != 0) {
			be_blog_at(LOG_ERR, "--sink %s=%s: not a writable directory (create it first)", be_sink_name(o->sink),
			     o->sink_dir);
			return -1;
		}
	}
	if (store_open(&b->env.store, o->db, &so, err, sizeof(err)) != 0) {
		be_blog_at(LOG_ERR, "%s", err);
		return -1;
	}
	if (store_open_note(b->env.store)[0])
		be_blog_at(LOG_NOTICE, "%s", store_open_note(b->env.store));
	return 0;
}

/* The platform: xenstore, event channels, grant tables.  0, or -1 (logged). */
static int open_platform(struct be_backend *b, const struct be_options *o)
{
	struct plat_opts po = {.kind = o->platform, .sim_dir = o->sim_dir, .sim_domid = 0};
	char err[512];

	if (plat_open(&b->env.plat, &po, err, sizeof(err)) != 0) {
		be_blog_at(LOG_ERR, "%s", err);
		return -1;
	}
	b->env.xs = plat_xs_open(b->env.plat);
	b->env.evt = plat_evtchn_open(b->env.plat);
	b->env.gnt = plat_gnttab_open(b->env.plat);
	if (!b->env.xs || !b->env.evt || !b->env.gnt) {
		be_blog_at(LOG_ERR, "cannot open %s: %s", !b->env.xs ? "xenstore" : !b->env.evt ? "event channels" : "grant tables",
		     strerror(errno));
		return -1;
	}
	return 0;
}

/* The control socket, listening under its name: 0, or -1 (logged).  *ctl
 * is its fd (-1: none) either way, for serve_end to close. */
/* A run directory that grants its group read and search (2750, the
 * group of profdb-serve.service's user): the control socket is the
 * group's too, for status and metrics (control_socket.c lets such a peer
 * do nothing else).  Otherwise root's alone. */
static int run_dir_shared(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && (st.st_mode & (S_IRGRP | S_IXGRP)) == (S_IRGRP | S_IXGRP);
}

static int control_listen(const struct be_options *o, int *ctl_out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[512];

	path_in(o, "backend.sock", path, sizeof(path));
	if (strlen(path) >= sizeof(sa.sun_path)) {
		be_blog_at(LOG_ERR, "--run-dir %s is too long for a Unix socket path", o->run_dir);
		return -1;
	}
	/* The socket gets its name only once it listens, mode 0600 (0660 in a
	 * shared run directory): a client
	 * (or a script waiting for the file) never finds it refusing. */
	char bound[sizeof(sa.sun_path) + 8];
	snprintf(bound, sizeof(bound), "%s.new", path);
	if (strlen(bound) >= sizeof(sa.sun_path)) {
		be_blog_at(LOG_ERR, "--run-dir %s is too long for a Unix socket path", o->run_dir);
		return -1;
	}
	memcpy(sa.sun_path, bound, strlen(bound) + 1);
	unlink(bound);
	int ctl = *ctl_out = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ctl < 0 || bind(ctl, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(bound, run_dir_shared(o->run_dir) ? 0660 : 0600) != 0 ||
	    listen(ctl, 64) != 0 || rename(bound, path) != 0) {
		be_blog_at(LOG_ERR, "control socket %s: %s", path, strerror(errno));
		unlink(bound);
		return -1;
	}
	return 0;
}

/* The commit worker, the fleet's thread, the watches; the runs left by a
 * previous start reconciled.  0, or -1 (logged). */
static int start_parts(struct be_backend *b, const struct be_options *o)
{
	if (!(b->domains = be_domains_new(b->env.xs))) {
		be_blog_at(LOG_ERR, "cannot start: out of memory");
		return -1;
	}
	if (!(b->io = be_io_new(&b->env)) || !(b->sampling = be_sampling_new())) {
		be_blog_at(LOG_ERR, "cannot start: out of memory");
		return -1;
	}
	if (!(b->worker = be_worker_start(b->io, b->env.store))) {
		be_blog_at(LOG_ERR, "cannot start the commit worker: %s", strerror(errno));
		return -1;
	}
	if (o->sync_url && o->sink == SINK_STORE && !(b->sync = be_sync_push_start(o->sync_url, store_path(b->env.store)))) {
		be_blog_at(LOG_ERR, "cannot start the fleet catalogue's thread: %s", strerror(errno));
		return -1;
	}
	if (!(b->runs = be_runs_new(&b->env, b->domains, b->sync))) {
		be_blog_at(LOG_ERR, "cannot start: out of memory");
		return -1;
	}
	if (be_xenbus_init(b, &xenbus_listener) != 0) {
		be_blog_at(LOG_ERR, "cannot watch %s in xenstore: %s", BACKEND_ROOT, strerror(errno));
		return -1;
	}
	be_xenbus_scan(b);
	if (o->sink == SINK_STORE && be_trace_init(b) != 0) {
		be_blog_at(LOG_ERR, "cannot watch @introduceDomain in xenstore: %s", strerror(errno));
		return -1;
	}
	be_runs_reconcile(b->runs);
	if (o->sink == SINK_STORE)
		be_sampling_new_domains(b); /* --sample-hz: those already running too */
	return 0;
}

/* Everything serve() opened, closed: the guests stay connected in
 * xenstore for the next start. */
static void serve_end(struct be_backend *b, const struct be_options *o, int ctl, int sig)
{
	char path[512];

	if (b->worker)
		be_xenbus_shutdown(b);
	be_trace_shutdown(b);
	be_worker_stop(b->worker);
	b->worker = NULL;
	be_io_free(b->io);
	b->io = NULL;
	be_sampling_free(b->sampling);
	b->sampling = NULL;
	be_sync_push_stop(b->sync);
	b->sync = NULL;
	be_runs_free(b->runs);
	b->runs = NULL;
	be_domains_free(b->domains);
	b->domains = NULL;
	if (ctl >= 0) {
		close(ctl);
		path_in(o, "backend.sock", path, sizeof(path));
		unlink(path);
	}
	if (sig >= 0)
		close(sig);
	plat_gnttab_close(b->env.gnt);
	plat_evtchn_close(b->env.evt);
	if (b->env.xs)
		xs_close(b->env.xs);
	plat_close(b->env.plat);
	char note[1024];
	store_close_note(b->env.store, note, sizeof(note)); /* the -wal emptied: store_open.c */
	if (note[0])
		be_blog_at(LOG_WARNING, "%s", note);
}

/* The read service (read_service.c): readers that may not open the
 * store's files read it through read.sock.  0, or -1 (logged). */
static int reads_listen(struct be_backend *b, const struct be_options *o)
{
	char err[600];
	if (o->sink != SINK_STORE)
		return 0; /* a benchmark's sink records no data to read */
	b->reads = be_read_service_start(store_path(b->env.store), o->run_dir, run_dir_shared(o->run_dir), err, sizeof(err));
	if (!b->reads) {
		be_blog_at(LOG_ERR, "%s", err);
		return -1;
	}
	return 0;
}

static int serve(struct be_options *o, int ready_fd)
{
	struct be_traces traces = {0};
	struct be_backend b = {.env.opt = *o, .traces = &traces};
	int ctl = -1, sig, rc = 1;

	b.env.started_us = store_now_us();
	sig = daemonize_signal_fd();
	/* SIGCHLD blocked in every thread (all are made after this): the
	 * sampling thread, tracer of xensim's program domains, takes their
	 * stops from a signalfd (platform_sim_inspect.c, invariant 6).  The
	 * daemon has no children of its own. */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, NULL);
	if (open_store(&b, o) != 0 || open_platform(&b, o) != 0 || control_listen(o, &ctl) != 0 ||
	    reads_listen(&b, o) != 0 || start_parts(&b, o) != 0)
		goto out;
	be_blog_at(LOG_NOTICE, "started: platform %s, store %s, durability %s%s%s", plat_kind_name(o->platform), o->db,
	     o->durability == STORE_DURABLE_POWER ? "power" : "process",
	     o->sink == SINK_STORE ? "" : ", BENCHMARK SINK (data not recorded): ",
	     o->sink == SINK_STORE ? "" : be_sink_name(o->sink));
	if (ready_fd >= 0) {
		daemonize_ready(ready_fd);
		ready_fd = -1;
	}
	/* Daemonised, we are not the pid the service manager started:
	 * MAINPID says which process it is to watch. */
	if (o->foreground)
		sd_notify(0, "READY=1");
	else
		sd_notifyf(0, "READY=1\nMAINPID=%ld", (long)getpid());
	rc = event_loop(&b, ctl, sig);
	be_blog_at(LOG_NOTICE, "stopped");
out:
	if (ready_fd >= 0) {
		const char *why = be_log_last_error();
		daemonize_failed(ready_fd, why ? why : "stopped before it served (no reason logged)");
	}
	be_read_service_stop(b.reads); /* its connection closes before the owner's */
	b.reads = NULL;
	serve_end(&b, o, ctl, sig);
	return rc ? 1 : 0;
}

int be_daemon_start(struct be_options *o)
{
	int lockfd;
	char path[512], why[512];

	if (mkdir(o->run_dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "profile-backend: cannot create %s: %s\n", o->run_dir, strerror(errno));
		return 1;
	}
	/* The pid file, the socket and the response journals are made there
	 * by root: nobody else may be able to plant links in it. */
	if (private_dir_check(o->run_dir, "the run directory (--run-dir)", why, sizeof(why)) != 0) {
		fprintf(stderr, "profile-backend: %s\n", why);
		return 1;
	}
	if (lock_pidfile(o, &lockfd) != 0)
		return 1;
	if (o->foreground) {
		be_log_open(1, o->verbose, o->log_fields);
		if (ftruncate(lockfd, 0) == 0)
			dprintf(lockfd, "%ld\n", (long)getpid());
		int rc = serve(o, -1);
		path_in(o, "profile-backend.pid", path, sizeof(path));
		unlink(path);
		close(lockfd);
		return rc;
	}
	int ready;
	char reason[1024];
	pid_t pid = daemonize_why("profile-backend", &ready, reason, sizeof(reason));
	if (pid == 0) {
		be_log_open(0, o->verbose, 0);
		if (ftruncate(lockfd, 0) == 0)
			dprintf(lockfd, "%ld\n", (long)getpid());
		int rc = serve(o, ready);
		path_in(o, "profile-backend.pid", path, sizeof(path));
		unlink(path);
		_exit(rc);
	}
	close(lockfd); /* the child keeps the lock */
	if (pid < 0) {
		if (reason[0])
			fprintf(stderr, "profile-backend: failed to start: %s\n", reason);
		else
			fprintf(stderr, "profile-backend: failed to start (see the system log: journalctl -t "
			                "profile-backend, or run with --foreground)\n");
		return 1;
	}
	printf("profile-backend running (pid %ld)\n", (long)pid);
	return 0;
}

static pid_t running_pid(const struct be_options *o)
{
	char path[512], buf[32] = "";
	int fd;

	path_in(o, "profile-backend.pid", path, sizeof(path));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		close(fd); /* nobody holds it: not running */
		return 0;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return (pid_t)strtol(buf, NULL, 10);
}

int be_daemon_stop(const struct be_options *o)
{
	pid_t pid = running_pid(o);

	if (pid <= 0) {
		/* Already where stop would take it: success (LSB). */
		fprintf(stderr, "profile-backend: not running (no locked pid file in %s): nothing to stop\n",
		        o->run_dir);
		return 0;
	}
	if (kill(pid, SIGTERM) != 0) {
		fprintf(stderr, "profile-backend: cannot signal pid %ld: %s\n", (long)pid, strerror(errno));
		return 1;
	}
	for (int i = 0; i < 1000; i++) {
		if (running_pid(o) == 0)
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "profile-backend: pid %ld did not stop within 10 s\n", (long)pid);
	return 1;
}

/* A connection to the running backend's control socket, or -1 and the
 * exit code in *rc (said why). */
static int control_connect(const struct be_options *o, int *rc)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(o->run_dir) + 14 > sizeof(sa.sun_path)) {
		fprintf(stderr, "profile-backend: --run-dir too long\n");
		if (fd >= 0)
			close(fd);
		*rc = 1;
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/backend.sock", o->run_dir);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		pid_t pid = running_pid(o);
		if (pid > 0) {
			fprintf(stderr, "profile-backend: pid %ld holds the pid file but %s does not answer: %s\n",
			        (long)pid, sa.sun_path, strerror(e));
			*rc = 1;
			return -1;
		}
		fprintf(stderr, "profile-backend: not running (%s: %s)\n", sa.sun_path, strerror(e));
		*rc = 3; /* LSB: program is not running */
		return -1;
	}
	return fd;
}

/* The control socket turned the request away (control_socket.c, (3)):
 * its one line says why. */
static int turned_away(const char *buf, size_t n)
{
	return (n >= 9 && strncmp(buf, "evicted: ", 9) == 0) || (n >= 9 && strncmp(buf, "refused: ", 9) == 0);
}

/* Sends the request, then reads what the backend says (also when the send
 * failed: a client turned away before it asked still finds the line that
 * says why).  Copies the answer to out as it comes; an answer that is the
 * backend turning it away, or none, is said on stderr.  0 when answered. */
static int ask_backend(int fd, const char *ask, size_t asklen, FILE *out)
{
	char buf[4096];
	size_t got = 0;
	ssize_t n;
	int sent = send(fd, ask, asklen, MSG_NOSIGNAL) == (ssize_t)asklen, first = 1;

	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		if (first && got < 9 && !memchr(buf, '\n', got))
			continue; /* not enough yet to tell a refusal */
		if (first && turned_away(buf, got)) {
			while (!memchr(buf, '\n', got) && got < sizeof(buf) - 1 &&
			       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
				got += (size_t)n;
			buf[got] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			fprintf(stderr, "profile-backend: the backend turned this request away: %s\n", buf);
			return 1;
		}
		fwrite(buf, 1, got, out);
		got = 0;
		first = 0;
	}
	if (got) { /* a short answer, whole */
		fwrite(buf, 1, got, out);
		return 0;
	}
	if (ferror(out) || n < 0 || !sent)
		fprintf(stderr, "profile-backend: the backend closed the connection without an answer%s%s\n",
		        n < 0 ? ": " : "", n < 0 ? strerror(errno) : !sent ? " (it did not take the request)" : "");
	else
		return 0;
	return 1;
}

int be_daemon_status(const struct be_options *o)
{
	int rc = 1, fd = control_connect(o, &rc);
	if (fd < 0)
		return rc;
	const char *ask = o->json ? "status json\n" : "status\n";
	FILE *mem;
	char *text = NULL;
	size_t len = 0;
	/* held until whole: an answer cut short is no status */
	if (!(mem = open_memstream(&text, &len))) {
		close(fd);
		return 1;
	}
	rc = ask_backend(fd, ask, strlen(ask), mem);
	close(fd);
	if (fclose(mem) != 0)
		rc = 1;
	if (rc == 0 && len == 0) {
		fprintf(stderr, "profile-backend: the backend closed the connection without an answer\n");
		rc = 1;
	}
	if (rc == 0)
		fwrite(text, 1, len, stdout);
	free(text);
	return rc;
}

int be_daemon_sample(const struct be_options *o, const char *domain)
{
	char sym[4096] = "", ksym[4096] = "", ask[CONTROL_CMD_MAX], buf[4096];
	if ((o->symbols && !realpath(o->symbols, sym)) || (o->kernel_symbols && !realpath(o->kernel_symbols, ksym))) {
		fprintf(stderr, "profile-backend: %s %s: %s\n", sym[0] || !o->symbols ? "--kernel-symbols" : "--symbols",
		        sym[0] || !o->symbols ? o->kernel_symbols : o->symbols, strerror(errno));
		return 1;
	}
	if (strpbrk(sym, "\t\n") || strpbrk(ksym, "\t\n") || strlen(sym) + strlen(ksym) > 4096) {
		fprintf(stderr, "profile-backend: sample: a symbols path with a tab or a newline, or too long: rename it\n");
		return 2;
	}
	if (strlen(domain) > 200 || strpbrk(domain, " \t\n")) {
		fprintf(stderr, "profile-backend: sample: '%.200s' is not a domain's id or name\n", domain);
		return 2;
	}
	int rc = 1, fd = control_connect(o, &rc);
	if (fd < 0)
		return rc;
	int n = snprintf(ask, sizeof(ask), "sample %u %llu %s %s%s%s\n", o->sample_hz ? o->sample_hz : 99,
	                 (unsigned long long)o->sample_us, domain, sym, ksym[0] ? "\t" : "", ksym);
	/* Lines as they come: "sampling ...", then the summary; an error
	 * instead says why. */
	FILE *mem = fmemopen(buf, sizeof(buf), "w");
	if (!mem) {
		close(fd);
		return 1;
	}
	setvbuf(mem, NULL, _IONBF, 0);
	int turned = ask_backend(fd, ask, (size_t)n, mem);
	close(fd);
	long at = ftell(mem);
	size_t len = at > 0 && (size_t)at < sizeof(buf) ? (size_t)at : at > 0 ? sizeof(buf) - 1 : 0;
	fclose(mem);
	buf[len] = '\0';
	if (turned)
		return 1;
	/* an error at once, or once the sampler found it could not start */
	char *e = strncmp(buf, "error: ", 7) == 0 ? buf : strstr(buf, "\nerror: ");
	if (e) {
		*e = '\0';
		fputs(buf, stdout);
		fprintf(stderr, "profile-backend: sample: %s", e + (e == buf ? 7 : 8));
		return 1;
	}
	fputs(buf, stdout);
	return len ? 0 : 1;
}
