/*
 * store_watch.c - the store's change notifier (store_watch.h).
 *
 * Why the directory and not the WAL file: the WAL is created and removed
 * by SQLite, and a store replaced by rename gets a new inode; a watch on
 * the directory sees all of that.  Why a stat poll as well: inotify does
 * not work on every filesystem (NFS, some FUSE), and a poll every 500 ms
 * bounds the delay there without costing anything measurable.
 *
 * What is not a change: the -shm file (the WAL index, where every reader
 * writes its read mark) and a file closed after an open for writing (a
 * reader opens the WAL read-write).  Counted, each reader's look woke
 * every other reader, whose looks woke the first again: a catalogue
 * stream re-read the store four times a second on an idle store.
 *
 * Apart from the layers (store_internal.h): uses store.h alone, and no
 * other file of the store calls it.  May call: store.h's types,
 * util/deadline (timed waits), inotify, libc.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/deadline.h"
#include "store.h"
#include "store_watch.h"

struct store_watch {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	pthread_t thread;
	uint64_t gen;
	int stop;
	int ifd, wakefd[2];
	char *path, *dir;
	const char *base;
	size_t baselen;
	uint64_t sig; /* of the files' sizes, times and inodes at the last look */
};

static uint64_t files_signature(const char *path)
{
	uint64_t h = 1469598103934665603ull;
	char p[PATH_MAX];
	for (const char *const *sfx = store_file_suffixes; *sfx; sfx++) {
		struct stat st;
		if (strcmp(*sfx, "-shm") == 0)
			continue; /* readers write it: no change of the store */
		snprintf(p, sizeof(p), "%s%s", path, *sfx);
		uint64_t v[4] = {0, 0, 0, 0};
		if (stat(p, &st) == 0) {
			v[0] = (uint64_t)st.st_ino;
			v[1] = (uint64_t)st.st_size;
			v[2] = (uint64_t)st.st_mtim.tv_sec;
			v[3] = (uint64_t)st.st_mtim.tv_nsec;
		}
		for (int i = 0; i < 4; i++)
			h = (h ^ v[i]) * 1099511628211ull;
	}
	return h;
}

static void bump(struct store_watch *l)
{
	pthread_mutex_lock(&l->lock);
	l->gen++;
	pthread_cond_broadcast(&l->changed);
	pthread_mutex_unlock(&l->lock);
}

/* Whether an inotify buffer names one of the store's files. */
static int names_store(struct store_watch *l, const char *buf, ssize_t n)
{
	for (const char *p = buf; p < buf + n;) {
		const struct inotify_event *ev = (const struct inotify_event *)(const void *)p;
		if (ev->mask & IN_Q_OVERFLOW)
			return 1;
		if (ev->len && strncmp(ev->name, l->base, l->baselen) == 0 &&
		    strcmp(ev->name + l->baselen, "-shm") != 0)
			return 1;
		p += sizeof(*ev) + ev->len;
	}
	return 0;
}

static void *watch(void *arg)
{
	struct store_watch *l = arg;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (!store_watch_stopping(l)) {
		struct pollfd pf[2] = {{l->wakefd[0], POLLIN, 0}, {l->ifd, POLLIN, 0}};
		int r = poll(pf, l->ifd >= 0 ? 2 : 1, 500);
		if (r < 0 && errno != EINTR)
			break;
		int changed = 0;
		if (r > 0 && (pf[1].revents & POLLIN)) {
			ssize_t n;
			while ((n = read(l->ifd, buf, sizeof(buf))) > 0)
				changed |= names_store(l, buf, n);
		}
		if (r == 0) { /* quiet for 500 ms: what inotify may not see */
			uint64_t sig = files_signature(l->path);
			changed |= sig != l->sig;
			l->sig = sig;
		}
		if (changed) {
			bump(l);
			/* Busy guests write the WAL thousands of times a second;
			 * the events of the next 20 ms are taken in one go (what a
			 * page shows is then at most that much later; the target
			 * is 50 ms at the median). */
			nanosleep(&(struct timespec){0, 20000000}, NULL);
		}
	}
	return NULL;
}

struct store_watch *store_watch_start(const char *db_path)
{
	struct store_watch *l = calloc(1, sizeof(*l));
	if (!l || !(l->path = strdup(db_path)) || !(l->dir = strdup(db_path))) {
		if (l)
			free(l->path);
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	char *slash = strrchr(l->dir, '/');
	if (!slash)
		strcpy(l->dir, ".");
	else if (slash == l->dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	l->base = strrchr(l->path, '/') ? strrchr(l->path, '/') + 1 : l->path;
	l->baselen = strlen(l->base);
	pthread_mutex_init(&l->lock, NULL);
	deadline_cond_init(&l->changed);
	l->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (l->ifd >= 0 && inotify_add_watch(l->ifd, l->dir, IN_MODIFY | IN_CREATE |
	                                                       IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM) < 0) {
		close(l->ifd);
		l->ifd = -1; /* the poll alone, then */
	}
	l->sig = files_signature(l->path);
	if (pipe(l->wakefd) != 0 || pthread_create(&l->thread, NULL, watch, l) != 0) {
		int e = errno;
		if (l->ifd >= 0)
			close(l->ifd);
		free(l->path);
		free(l->dir);
		free(l);
		errno = e;
		return NULL;
	}
	return l;
}

int store_watch_stopping(const struct store_watch *l)
{
	return __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
}

void store_watch_stop(struct store_watch *l)
{
	pthread_mutex_lock(&l->lock);
	if (l->stop) {
		pthread_mutex_unlock(&l->lock);
		return;
	}
	__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&l->changed);
	pthread_mutex_unlock(&l->lock);
	if (write(l->wakefd[1], "x", 1) < 0) {
		/* the thread also sees stop within 500 ms */
	}
	pthread_join(l->thread, NULL);
}

void store_watch_free(struct store_watch *l)
{
	if (!l)
		return;
	store_watch_stop(l);
	close(l->wakefd[0]);
	close(l->wakefd[1]);
	if (l->ifd >= 0)
		close(l->ifd);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->changed);
	free(l->path);
	free(l->dir);
	free(l);
}

uint64_t store_watch_generation(struct store_watch *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t g = l->gen;
	pthread_mutex_unlock(&l->lock);
	return g;
}

uint64_t store_watch_wait(struct store_watch *l, uint64_t seen, int timeout_ms)
{
	struct timespec until = deadline_after_ms(timeout_ms);
	pthread_mutex_lock(&l->lock);
	while (l->gen == seen && !l->stop)
		if (pthread_cond_timedwait(&l->changed, &l->lock, &until) == ETIMEDOUT)
			break;
	uint64_t g = l->gen;
	pthread_mutex_unlock(&l->lock);
	return g;
}
