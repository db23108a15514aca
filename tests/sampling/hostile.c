/*
 * hostile.c - a "guest" whose stacks lie, sampled by tests/test_sampling.sh
 * beside an honest one: it spins with rbp holding what a hostile guest
 * would put there, argv[1] says what:
 *   loop    a frame whose saved frame pointer is itself
 *   random  a new random 64-bit value every few microseconds
 *   deep    a chain of a million well-formed frames going up the heap
 *   wild    frame pointers into unmapped memory, misaligned ones
 * for argv[2] seconds of CPU time.  Built with -mno-red-zone: the spin
 * pushes below the stack pointer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void spin_with_rbp(uint64_t v, long n)
{
	__asm__ volatile("push %%rbp\n\t"
	                 "mov %0, %%rbp\n\t"
	                 "1: dec %1\n\t"
	                 "jnz 1b\n\t"
	                 "pop %%rbp\n\t"
	                 : "+r"(v), "+r"(n)
	                 :
	                 : "cc", "memory");
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	double end = cpu_seconds() + (argc > 2 ? atof(argv[2]) : 2.0);
	uint64_t self[2], seed = 88172645463325252ull;
	size_t deep_n = 1000000;
	uint64_t *deep = NULL;

	self[0] = (uint64_t)(uintptr_t)self;
	self[1] = 0x401000;
	if (!strcmp(mode, "deep")) {
		deep = malloc(deep_n * 2 * sizeof(*deep));
		if (!deep)
			return 1;
		for (size_t i = 0; i < deep_n; i++) {
			deep[2 * i] = i + 1 < deep_n ? (uint64_t)(uintptr_t)&deep[2 * (i + 1)] : 0;
			deep[2 * i + 1] = 0x401000 + i;
		}
	}
	while (cpu_seconds() < end) {
		uint64_t v = (uint64_t)(uintptr_t)self;
		if (!strcmp(mode, "random"))
			v = xorshift(&seed);
		else if (!strcmp(mode, "deep"))
			v = (uint64_t)(uintptr_t)deep;
		else if (!strcmp(mode, "wild"))
			v = (xorshift(&seed) & 1) ? 0x7ff0deadbee0ull : (uint64_t)(uintptr_t)self + 3;
		spin_with_rbp(v, 20000);
	}
	printf("done\n");
	free(deep);
	return 0;
}
