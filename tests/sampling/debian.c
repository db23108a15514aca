/*
 * debian.c - a C program with a known profile built the Debian way (gcc
 * -O2 -g -pie -fPIE: position-independent, no frame pointers), sampled as
 * a xensim domain by tests/test_sampling_real.sh without --symbols: its
 * callers can only be found through the DWARF CFI (.eh_frame) of the
 * program and of libc, its names only from its own ELF and libc's, each
 * at the bias it was loaded at.  main -> rounds -> crunch takes about 70%
 * of its time; main -> rounds -> sort_some -> qsort (libc: qsort_r, its
 * merge sort msort_with_tmp) -> by_key, the comparison called back from
 * libc, about 27% (perf record --call-graph=dwarf: crunch 68.5%,
 * by_key 26.9%, libc's merging 4%).  Every function noinline and noclone
 * (no crunch.constprop.0), no call a tail call, so that each caller is a
 * frame of its own.  Runs for argv[1] seconds of CPU time whatever the
 * machine's speed, a round (one crunch, one sort) every 5-6 ms: few
 * clock_gettime calls for a pause to stop at.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITEMS 4000           /* the structs sorted each round */
#define CRUNCH_STEPS 5300000 /* crunch's share of a round: about 70% */

struct item {
	unsigned long key;
	unsigned long payload;
};

static struct item items[ITEMS];
static volatile unsigned long sink;
static unsigned long seed = 88172645463325252ul;

/* the comparison qsort calls back: a mixed key, so that most of the
 * sort's time is spent here rather than in libc's merging */
__attribute__((noinline, noclone)) static int by_key(const void *a, const void *b)
{
	unsigned long x = ((const struct item *)a)->key, y = ((const struct item *)b)->key;
	for (int i = 0; i < 32; i++) {
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ul;
		y = (y ^ (y >> 29)) * 0xbf58476d1ce4e5b9ul;
	}
	return (x > y) - (x < y);
}

__attribute__((noinline, noclone)) static unsigned long sort_some(void)
{
	for (int i = 0; i < ITEMS; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		items[i].key = seed;
		items[i].payload = (unsigned long)i;
	}
	qsort(items, ITEMS, sizeof items[0], by_key);
	return items[0].payload + items[ITEMS - 1].payload; /* not a tail call */
}

__attribute__((noinline, noclone)) static unsigned long crunch(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) {
		s += (i * i) ^ (s >> 3);
		__asm__ volatile("" : "+r"(s)); /* one step at a time: not vectorised away */
	}
	return s;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) static void rounds(double seconds)
{
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end) {
		sink += crunch(CRUNCH_STEPS);
		sink += sort_some();
	}
}

int main(int argc, char **argv)
{
	rounds(argc > 1 ? atof(argv[1]) : 2.0);
	printf("%lu\n", sink);
	return 0;
}
