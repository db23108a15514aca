/*
 * view_backend.c - asking the running profile-backend (view_backend.h),
 * and where its read service listens.
 * The backend answers every client without waiting for it (its
 * control_socket.c): a reply is read here until it closes, bounded in
 * time and size, so a wedged or foreign socket costs a caller no more.
 *
 * May call: libc (the run directory's default from profsvc_paths.h; the
 * read service's socket name from store/store_wire.h), view_err.h.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "store/store_wire.h"
#include "profsvc_paths.h"
#include "view_backend.h"

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The run directory: $PROFSVC_RUN_DIR, else the configured one. */
static const char *run_dir(void)
{
	const char *dir = getenv("PROFSVC_RUN_DIR");
	return dir && *dir ? dir : PROFSVC_DEFAULT_RUN_DIR;
}

static pthread_once_t read_socket_once = PTHREAD_ONCE_INIT;
static char read_socket[sizeof(((struct sockaddr_un *)0)->sun_path)];

static void read_socket_init(void)
{
	if ((size_t)snprintf(read_socket, sizeof(read_socket), "%s/" WIRE_SOCKET_NAME, run_dir()) >= sizeof(read_socket))
		read_socket[0] = '\0';
}

const char *view_read_socket(void)
{
	pthread_once(&read_socket_once, read_socket_init);
	return read_socket[0] ? read_socket : NULL;
}

int view_backend_ask(const char *command, int timeout_ms, size_t max, char **reply, size_t *len,
                     struct view_err *e)
{
	const char *dir = run_dir();
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	*reply = NULL;
	*len = 0;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/backend.sock", dir) >= sizeof(sa.sun_path)) {
		view_error(e, "the run directory %s is too long for a socket path", dir);
		return VIEW_BACKEND_NONE;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		view_error(e, "no backend answers on %s (%s)", sa.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return VIEW_BACKEND_NONE;
	}
	size_t cmdlen = strlen(command);
	char *buf = malloc(max + 1);
	char *req = malloc(cmdlen + 2);
	if (!buf || !req) {
		free(buf);
		free(req);
		close(fd);
		view_error(e, "out of memory");
		return VIEW_BACKEND_FAILED;
	}
	memcpy(req, command, cmdlen);
	req[cmdlen] = '\n';
	/* A failed send is read on: a client the backend turned away before
	 * it asked finds the line that says why (its control_socket.c). */
	ssize_t sent = send(fd, req, cmdlen + 1, MSG_NOSIGNAL);
	int send_errno = errno;
	free(req);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t got = 0;
	int closed = 0;
	while (got < max) {
		long left = timeout_ms - ms_since(&t0);
		struct pollfd p = {fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		ssize_t r = recv(fd, buf + got, max - got, 0);
		if (r <= 0) {
			closed = 1;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	if (!got) {
		if (sent != (ssize_t)(cmdlen + 1))
			view_error(e, "%s: %s", sa.sun_path, strerror(send_errno));
		else if (closed)
			view_error(e, "the backend on %s closed the connection without an answer", sa.sun_path);
		else
			view_error(e, "the backend on %s did not answer within %d ms", sa.sun_path, timeout_ms);
		free(buf);
		return VIEW_BACKEND_FAILED;
	}
	*reply = buf;
	*len = got;
	return 0;
}

int view_backend_turned_away(const char *reply)
{
	return strncmp(reply, "evicted: ", 9) == 0 || strncmp(reply, "refused: ", 9) == 0;
}
