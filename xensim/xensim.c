/*
 * xensim.c - the simulated hypervisor and xenstored, one daemon: the event
 * loop, start/stop, and the command line that creates, destroys and lists
 * domains.
 *
 *   xensim start   --dir DIR [--foreground] [-v]
 *   xensim stop    --dir DIR
 *   xensim create  --dir DIR --name NAME [--domid N] [--uuid UUID]
 *                  [--console FILE] [--exec PROGRAM [ARGS...]]
 *   xensim destroy --dir DIR DOMID|NAME
 *   xensim list    --dir DIR
 *
 * DIR defaults to $XENSIM_DIR.  Inside it: dom<N>/xs.sock (xenstored wire
 * protocol: point libxenstore at it with XENSTORED_PATH) and dom<N>/hv.sock
 * (platform/sim_proto.h), xensim.pid, xensim.log when not in the foreground.
 * One daemon per directory; it removes what it created when it stops.
 *
 * May call: the xenstored (xensim_xenstored.h), the hypervisor
 * (xensim_hypervisor.h), the event loop and log (xensim_loop.h),
 * util/daemonize, platform/sim_proto.h (the wire).  Nothing calls it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

#include "util/daemonize.h"
#include "xensim.h"

static void usage(FILE *f)
{
	fputs("usage: xensim start   --dir DIR [--foreground] [-v]\n"
	      "       xensim stop    --dir DIR\n"
	      "       xensim create  --dir DIR --name NAME [--domid N] [--uuid UUID]\n"
	      "                      [--console FILE] [--exec PROGRAM [ARGS...]]\n"
	      "       xensim destroy --dir DIR DOMID|NAME\n"
	      "       xensim list    --dir DIR\n"
	      "A simulated Xen (hypervisor + xenstored) for running profsvc without Xen.\n"
	      "DIR defaults to $XENSIM_DIR.  Clients: XENSTORED_PATH=DIR/dom0/xs.sock for\n"
	      "libxenstore, and --platform sim --sim-dir DIR for profsvc programs.\n"
	      "--exec runs PROGRAM as the domain (its threads are the vCPUs, which dom0\n"
	      "may trace to pause and sample them); the domain ends when it exits.  Its output goes to\n"
	      "--console FILE (default DIR/dom<DOMID>.console).\n",
	      f);
}

/* ---- the daemon ---------------------------------------------------------------- */

/* One event of the loop: 1 if a signal says stop. */
static int on_event(struct ev_item *it, uint32_t events)
{
	int rd = (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0;
	int wr = (events & EPOLLOUT) != 0;

	switch (it->kind) {
	case EV_SIGNAL: {
		struct signalfd_siginfo si;
		if (read(it->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			sim_log("signal %u: stopping", si.ssi_signo);
			return 1;
		}
		break;
	}
	case EV_XS_LISTEN:
	case EV_HV_LISTEN: {
		struct hv_listener *l = (struct hv_listener *)it;
		int fd;
		while ((fd = accept4(it->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
			if (l->is_xs)
				xs_accept(fd, l->domid);
			else
				hv_accept(fd, l->domid);
		}
		break;
	}
	case EV_CHILD: {
		struct signalfd_siginfo si;
		while (read(it->fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		hv_children();
		break;
	}
	case EV_XS_CONN:
		xs_conn_event(it, rd, wr);
		break;
	case EV_HV_CONN:
		hv_conn_event(it, rd, wr);
		break;
	}
	return 0;
}

static int serve(const char *dir, int ready_fd)
{
	struct ev_item sig = {.kind = EV_SIGNAL}, child = {.kind = EV_CHILD};
	char path[600], err[256];
	uint32_t dom0;
	int rc = 1;

	sig.fd = daemonize_signal_fd();
	/* Domains that are programs are our children (xensim_hv_exec.c). */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	child.fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	int lerr = loop_open();
	if (lerr != 0 || sig.fd < 0 || child.fd < 0 || loop_add(&sig, 0) != 0 || loop_add(&child, 0) != 0) {
		sim_log("cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	xs_server_init();
	hv_init(dir);
	if (hv_create_domain(0, "Domain-0", "00000000-0000-0000-0000-000000000000", &dom0, err,
	                     sizeof(err)) != 0) {
		sim_log("cannot create dom0: %s", err);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/xensim.pid", dir);
	int pfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (pfd >= 0) {
		dprintf(pfd, "%ld\n", (long)getpid());
		close(pfd);
	}
	sim_log("running on %s (pid %ld)", dir, (long)getpid());
	if (ready_fd >= 0) {
		if (write(ready_fd, "", 1) != 1) {
			/* the parent is gone; carry on */
		}
		close(ready_fd);
	}
	while (!hv_stop_requested()) {
		struct epoll_event evs[64];
		int n = loop_wait(evs, 64);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sim_log("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			struct ev_item *it = evs[i].data.ptr;
			if (on_event(it, evs[i].events))
				goto stopping;
			/* A destroy frees domains (and their listeners) that may
			 * be later in this batch: take a fresh batch. */
			if (it->kind == EV_HV_CONN)
				break;
		}
		xs_reap();
		hv_reap();
	}
stopping:
	rc = 0;
out:
	hv_fini();
	xs_server_fini();
	snprintf(path, sizeof(path), "%s/xensim.pid", dir);
	unlink(path);
	sim_log("stopped");
	close(sig.fd);
	close(child.fd);
	loop_close();
	return rc;
}

/* quiet: a stop waiting for the daemon to let go says nothing each try. */
static int lock_dir(const char *dir, int *fd_out, int quiet)
{
	char path[600], pid[32] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/xensim.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "xensim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (quiet) {
			close(fd);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/xensim.pid", dir);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(pid, sizeof(pid), f))
				pid[0] = '\0';
			fclose(f);
		}
		pid[strcspn(pid, "\n")] = '\0';
		fprintf(stderr, "xensim: already running on %s (pid %s); 'xensim stop --dir %s' first\n",
		        dir, pid[0] ? pid : "unknown", dir);
		close(fd);
		return -1;
	}
	*fd_out = fd;
	return 0;
}

static int cmd_start(const char *dir, int foreground)
{
	int lockfd;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "xensim: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (strlen(dir) > 80) {
		/* sun_path is 108 bytes: dir + "/dom32752/xs.sock" must fit. */
		fprintf(stderr, "xensim: directory path too long for Unix sockets: %s\n", dir);
		return 1;
	}
	if (lock_dir(dir, &lockfd, 0) != 0)
		return 1;
	if (foreground)
		return serve(dir, -1);
	int ready;
	pid_t pid = daemonize("xensim", &ready);
	if (pid == 0) {
		char path[600];
		snprintf(path, sizeof(path), "%s/xensim.log", dir);
		/* Owner-only: it names every guest.  Never through a link. */
		int lfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		FILE *log_file = NULL;
		if (lfd >= 0 && fchmod(lfd, 0600) == 0)
			log_file = fdopen(lfd, "a");
		else if (lfd >= 0)
			close(lfd);
		if (log_file) {
			sim_log_to(log_file);
			dup2(fileno(log_file), 2);
		}
		_exit(serve(dir, ready));
	}
	close(lockfd); /* the child holds the lock through its copy */
	if (pid < 0) {
		fprintf(stderr, "xensim: failed to start (see %s/xensim.log)\n", dir);
		return 1;
	}
	printf("xensim running on %s (pid %ld)\n", dir, (long)pid);
	return 0;
}

/* ---- the control client ------------------------------------------------------------ */

static int control(const char *dir, struct sim_msg *m, const void *items, size_t len, char *out,
                   size_t outlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint8_t buf[sizeof(*m) + 64 * 1024];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dom0/hv.sock", dir);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "xensim: no xensim running on %s ('xensim start --dir %s')\n", dir, dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(buf, m, sizeof(*m));
	if (len)
		memcpy(buf + sizeof(*m), items, len);
	ssize_t n = send(fd, buf, sizeof(*m) + len, 0);
	if (n >= 0)
		n = recv(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n < (ssize_t)sizeof(*m)) {
		fprintf(stderr, "xensim: no reply from xensim on %s\n", dir);
		return -1;
	}
	memcpy(m, buf, sizeof(*m));
	if (out) {
		size_t l = (size_t)n - sizeof(*m) < outlen - 1 ? (size_t)n - sizeof(*m) : outlen - 1;
		memcpy(out, buf + sizeof(*m), l);
		out[l] = '\0';
	}
	return 0;
}

static int find_domain(const char *dir, const char *arg, uint32_t *domid)
{
	struct sim_msg m = {.op = SIM_DOM_LIST};
	static char text[64 * 1024];
	char *end;

	unsigned long v = strtoul(arg, &end, 10);
	if (*arg && !*end) {
		*domid = (uint32_t)v;
		return 0;
	}
	if (control(dir, &m, NULL, 0, text, sizeof(text)) != 0)
		return -1;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned id;
		char state[16], uuid[64];
		int pos;
		if (sscanf(line, "%u %15s %63s %*u %*d %*u %n", &id, state, uuid, &pos) >= 3 &&
		    strcmp(line + pos, arg) == 0 && strcmp(state, "running") == 0) {
			*domid = id;
			return 0;
		}
	}
	fprintf(stderr, "xensim: no running domain named '%s' ('xensim list')\n", arg);
	return -1;
}

static int cmd_stop(const char *dir)
{
	struct sim_msg m = {.op = SIM_STOP};
	if (control(dir, &m, NULL, 0, NULL, 0) != 0)
		return 1;
	/* Wait until it has cleaned up (its lock is released last). */
	for (int i = 0; i < 500; i++) {
		int fd;
		char path[600];
		snprintf(path, sizeof(path), "%s/xensim.pid", dir);
		if (access(path, F_OK) != 0 && lock_dir(dir, &fd, 1) == 0) {
			close(fd);
			snprintf(path, sizeof(path), "%s/xensim.lock", dir);
			unlink(path);
			rmdir(dir); /* only if empty */
			return 0;
		}
		usleep(10000);
	}
	fprintf(stderr, "xensim: still running after 5 s\n");
	return 1;
}

/* PROGRAM as an absolute path: xensim runs it from its own directory. */
static int resolve_program(const char *prog, char *out, size_t outlen)
{
	const char *path = getenv("PATH");
	char cand[4096];

	if (strchr(prog, '/'))
		return realpath(prog, cand) && strlen(cand) < outlen && access(cand, X_OK) == 0
		           ? (snprintf(out, outlen, "%s", cand), 0)
		           : -1;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, prog);
		if (n && access(cand, X_OK) == 0 && strlen(cand) < outlen) {
			snprintf(out, outlen, "%s", cand);
			return 0;
		}
		p += n + (p[n] == ':');
	}
	return -1;
}

/* Runs argv as domain domid: 0, or 1 said (the domain is destroyed). */
static int exec_domain(const char *dir, uint32_t domid, char **argv, const char *console)
{
	static char items[16384];
	char prog[4096], cwd[4096], cons[4096], text[512];
	size_t len = 0;

	if (resolve_program(argv[0], prog, sizeof(prog)) != 0) {
		fprintf(stderr, "xensim: --exec %s: no such program (or not executable)\n", argv[0]);
		goto fail;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	if (console)
		snprintf(cons, sizeof(cons), "%s%s%s", console[0] == '/' ? "" : cwd,
		         console[0] == '/' ? "" : "/", console);
	else
		snprintf(cons, sizeof(cons), "%s/dom%u.console", dir, domid);
	const char *parts[260] = {cwd, cons, prog};
	int nparts = 3;
	for (int i = 1; argv[i] && nparts < 259; i++)
		parts[nparts++] = argv[i];
	for (int i = 0; i < nparts; i++) {
		size_t l = strlen(parts[i]) + 1;
		if (len + l > sizeof(items)) {
			fprintf(stderr, "xensim: --exec: the command line is too long (at most %zu bytes)\n",
			        sizeof(items));
			goto fail;
		}
		memcpy(items + len, parts[i], l);
		len += l;
	}
	struct sim_msg m = {.op = SIM_DOM_EXEC, .a = {domid}, .n = (uint32_t)len};
	if (control(dir, &m, items, len, text, sizeof(text)) != 0)
		goto fail;
	if (m.err) {
		fprintf(stderr, "xensim: cannot run %s: %s\n", prog, text[0] ? text : strerror(m.err));
		goto fail;
	}
	return 0;
fail:;
	struct sim_msg d = {.op = SIM_DOM_DESTROY, .a = {domid}};
	control(dir, &d, NULL, 0, NULL, 0);
	return 1;
}

static int cmd_create(const char *dir, const char *name, const char *uuid, uint32_t domid,
                      char **exec_argv, const char *console)
{
	char items[256], text[256];
	if (!name) {
		fprintf(stderr, "xensim: create needs --name\n");
		return 2;
	}
	int len = snprintf(items, sizeof(items), "%s%c%s", name, '\0', uuid) + 1;
	struct sim_msg m = {.op = SIM_DOM_CREATE, .a = {domid}, .n = (uint32_t)len};
	if (len > (int)sizeof(items) || control(dir, &m, items, (size_t)len, text, sizeof(text)))
		return 1;
	if (m.err) {
		fprintf(stderr, "xensim: %s\n", text[0] ? text : strerror(m.err));
		return 1;
	}
	if (exec_argv && exec_domain(dir, m.a[0], exec_argv, console) != 0)
		return 1;
	printf("%u\n", m.a[0]);
	return 0;
}

static int cmd_destroy(const char *dir, const char *arg)
{
	uint32_t domid;

	if (find_domain(dir, arg, &domid) != 0)
		return 1;
	struct sim_msg m = {.op = SIM_DOM_DESTROY, .a = {domid}};
	if (control(dir, &m, NULL, 0, NULL, 0) != 0)
		return 1;
	if (m.err) {
		fprintf(stderr, "xensim: cannot destroy domain %u: %s\n", domid,
		        m.err == ESRCH ? "no such running domain"
		        : m.err == EPERM ? "dom0 stays" : strerror(m.err));
		return 1;
	}
	return 0;
}

static int cmd_list(const char *dir)
{
	static char text[64 * 1024];
	struct sim_msg m = {.op = SIM_DOM_LIST};
	if (control(dir, &m, NULL, 0, text, sizeof(text)) != 0)
		return 1;
	printf("%-6s %-8s %-36s %5s %5s %7s  %s\n", "DOMID", "STATE", "UUID", "MAPS", "PROCS",
	       "WATCHES", "NAME");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned id, maps, watches;
		int procs, pos;
		char state[16], u[64];
		if (sscanf(line, "%u %15s %63s %u %d %u %n", &id, state, u, &maps, &procs, &watches,
		           &pos) >= 6)
			printf("%-6u %-8s %-36s %5u %5d %7u  %s\n", id, state, u, maps, procs, watches,
			       line + pos);
	}
	return 0;
}

/* --domid: 1..SIM_MAX_DOMID; 0, or -1 said. */
static int domid_opt(const char *arg, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (!*arg || *end || v == 0 || v > SIM_MAX_DOMID) {
		fprintf(stderr, "xensim: --domid must be 1..%u\n", SIM_MAX_DOMID);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* What the command line says. */
struct cmdline {
	const char *cmd, *dir, *name, *uuid, *console;
	char **exec_argv;
	uint32_t domid;
	int foreground;
};

/* --exec PROGRAM ARGS...: everything after it is the program's; argc is
 * cut there.  0, or 2 (said why). */
static int take_exec(int *argc, char **argv, struct cmdline *cl)
{
	for (int i = 2; i < *argc; i++)
		if (!strcmp(argv[i], "--exec")) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "xensim: --exec needs a PROGRAM\n");
				return 2;
			}
			cl->exec_argv = argv + i + 1;
			*argc = i;
			break;
		}
	return 0;
}

/* The options after the command: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct cmdline *cl)
{
	static const struct option opts[] = {
		{"dir", required_argument, NULL, 'd'},  {"foreground", no_argument, NULL, 'f'},
		{"name", required_argument, NULL, 'n'}, {"domid", required_argument, NULL, 'i'},
		{"uuid", required_argument, NULL, 'u'}, {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},       {"version", no_argument, NULL, 'V'},
		{"console", required_argument, NULL, 'c'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 2;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': cl->dir = optarg; break;
		case 'f': cl->foreground = 1; break;
		case 'n': cl->name = optarg; break;
		case 'i':
			if (domid_opt(optarg, &cl->domid) != 0)
				return 2;
			break;
		case 'u': cl->uuid = optarg; break;
		case 'c': cl->console = optarg; break;
		case 'v': sim_verbose = 1; break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!cl->dir || !*cl->dir) {
		fprintf(stderr, "xensim: no directory: pass --dir DIR or set XENSIM_DIR\n");
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct cmdline cl = {.dir = getenv("XENSIM_DIR"), .uuid = ""};

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--version")) {
			printf("xensim (profsvc) %s\n", PACKAGE_VERSION);
			return 0;
		}
	cl.cmd = argv[1];
	int rc = take_exec(&argc, argv, &cl);
	if (rc != 0 || (rc = parse_options(argc, argv, &cl)) >= 0)
		return rc;
	if (!strcmp(cl.cmd, "start"))
		return cmd_start(cl.dir, cl.foreground);
	if (!strcmp(cl.cmd, "stop"))
		return cmd_stop(cl.dir);
	if (!strcmp(cl.cmd, "create"))
		return cmd_create(cl.dir, cl.name, cl.uuid, cl.domid, cl.exec_argv, cl.console);
	if (!strcmp(cl.cmd, "destroy")) {
		if (optind != argc - 1) {
			usage(stderr);
			return 2;
		}
		return cmd_destroy(cl.dir, argv[optind]);
	}
	if (!strcmp(cl.cmd, "list"))
		return cmd_list(cl.dir);
	fprintf(stderr, "xensim: unknown command '%s'\n", cl.cmd);
	usage(stderr);
	return 2;
}
