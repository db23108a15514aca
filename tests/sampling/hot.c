/*
 * hot.c - a C program with a known profile, sampled as a xensim domain by
 * tests/test_sampling.sh (built with -O0 -fno-omit-frame-pointer: at -O1
 * gcc 12 gives a leaf function no frame even so, and the leaf's caller is
 * then lost to any frame-pointer walk, perf's as ours): main ->
 * run_for -> mid -> hot takes about 80% of its time, main -> run_for ->
 * cold about 20%.  Runs for argv[1] seconds of CPU time whatever the
 * machine's speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long hot(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += (i * i) ^ (s >> 3);
	return s;
}

__attribute__((noinline)) static unsigned long mid(unsigned long n)
{
	unsigned long r = hot(n);
	return r + 1; /* not a tail call: mid's frame stays */
}

__attribute__((noinline)) static unsigned long cold(unsigned long n)
{
	unsigned long s = 1;
	for (unsigned long i = 0; i < n; i++)
		s = s * 2654435761u + i;
	return s;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void run_for(double seconds)
{
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end) {
		sink += mid(400000);
		sink += cold(100000);
	}
}

int main(int argc, char **argv)
{
	run_for(argc > 1 ? atof(argv[1]) : 2.0);
	printf("%lu\n", sink);
	return 0;
}
