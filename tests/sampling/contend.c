/*
 * contend.c - a program whose time the host takes away in one phase only,
 * sampled as a xensim domain by tests/test_sampling_cpu.sh: it pins
 * itself to the CPU it runs on and forks a rival pinned to the same CPU,
 * which spins only while the program is in phase_b (a word they share
 * says so) and sleeps otherwise.  Both phases do the same work, so each
 * holds half of the program's CPU time, as perf's cpu-clock counts it;
 * but phase_b takes about twice the wall time (the host runs the rival
 * half of it), so a sampler that counts wall-clock ticks puts about two
 * thirds of the samples there.  Runs for argv[1] seconds of its own CPU
 * time; the rival ends with it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noipa)) static unsigned long work(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += (i * i) ^ (s >> 3);
	return s;
}

/* noipa: gcc -O2 would fold the two identical phases into one */
__attribute__((noipa)) static void phase_a(void)
{
	sink += work(150000000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void phase_b(void)
{
	sink += work(150000001);
	__asm__ volatile("" ::: "memory");
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	int cpu = sched_getcpu();
	pin(cpu < 0 ? 0 : cpu);
	volatile int *phase = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (phase == MAP_FAILED)
		return 1;
	pid_t rival = fork();
	if (rival == 0) {
		/* the rival: spins while phase_b runs, else sleeps */
		while (*phase != 2) {
			if (*phase == 1)
				sink += work(20000);
			else
				usleep(100);
		}
		_exit(0);
	}
	double end = cpu_seconds() + secs;
	while (cpu_seconds() < end) {
		*phase = 0;
		phase_a();
		*phase = 1;
		phase_b();
	}
	*phase = 2;
	if (rival > 0)
		waitpid(rival, NULL, 0);
	printf("%lu\n", sink);
	return 0;
}
