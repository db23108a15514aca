/*
 * restless.c - a program that keeps its tracer busy, for test_sampling.sh:
 * sampled from dom0 (whose sampler is its tracer on xensim), it makes and
 * ends threads all the time (new threads seized, threads gone mid-pause),
 * sends itself signals and waits for each to be handled (a signal its
 * tracer swallowed would be lost: it says so), and has a child stop it
 * with SIGSTOP, look that every thread of it stays stopped, and SIGCONT
 * it (a group-stop its tracer resumed would run on).  Prints what it saw
 * and exits 0 when all was as untraced, 1 otherwise.
 *
 * usage: restless ROUNDS      (it starts once traced, or after 30 s)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long churn(unsigned long x, double secs)
{
	double end = now() + secs;
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void *worker(void *arg)
{
	static __thread unsigned long x;
	x = churn((unsigned long)arg, 0.002);
	return (void *)x;
}

/* Every thread of pid in a stop ('T' or 't'), as its /proc says. */
static int all_stopped(pid_t pid)
{
	char path[320], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0, stopped = 0;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, e->d_name);
		FILE *f = fopen(path, "r");
		size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[len] = '\0';
		const char *end = strrchr(buf, ')');
		n++;
		stopped += end && (end[2] == 'T' || end[2] == 't');
	}
	if (d)
		closedir(d);
	return n > 0 && stopped == n;
}

/* A child stops us, looks, resumes us; 1 when every thread of ours was
 * seen stopped. */
static int stop_and_go(void)
{
	pid_t self = getpid(), c = fork();
	if (c == 0) {
		kill(self, SIGSTOP);
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
		int ok = all_stopped(self);
		kill(self, SIGCONT);
		_exit(ok ? 0 : 1);
	}
	int st;
	while (c > 0 && waitpid(c, &st, 0) < 0)
		;
	return c > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Until its tracer (the sampler) has seized it, for up to secs: what it
 * does is for a tracer to see, and on a slow host (sanitizers, a loaded
 * VM) fifty rounds were over before the sampler came. */
static void wait_for_tracer(double secs)
{
	double give_up = now() + secs;
	while (now() < give_up) {
		char line[256];
		int tracer = 0;
		FILE *f = fopen("/proc/self/status", "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "TracerPid: %d", &tracer) == 1)
				break;
		if (f)
			fclose(f);
		if (tracer)
			return;
		usleep(2000);
	}
	printf("restless: not traced within %.0f s\n", secs);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50, lost = 0, threads = 0, stops = 0;
	wait_for_tracer(30);
	signal(SIGUSR1, on_usr1);
	for (int r = 0; r < rounds; r++) {
		pthread_t t[3];
		for (int k = 0; k < 3; k++)
			if (pthread_create(&t[k], NULL, worker, (void *)(unsigned long)(r * 3 + k + 1)) == 0)
				threads++;
			else
				t[k] = 0;
		/* one signal, handled before the next: none may be lost (once
		 * one is, the rest are not sent: each would wait its 10 s) */
		int before = handled;
		if (!lost) {
			kill(getpid(), SIGUSR1);
			double give_up = now() + 10;
			while (handled == before && now() < give_up)
				churn(1, 0.0005);
		}
		lost += handled == before;
		for (int k = 0; k < 3; k++)
			if (t[k])
				pthread_join(t[k], NULL);
		if (r % 10 == 5)
			stops += stop_and_go();
	}
	int want_stops = (rounds + 4) / 10;
	printf("restless: %d signals lost of %d, %d threads, %d of %d stops held\n", lost, rounds, threads,
	       stops, want_stops);
	return lost == 0 && threads == rounds * 3 && stops == want_stops ? 0 : 1;
}
