/*
 * fpu-probe.c - runs in the dom0 of the real-Xen round (tests/xen/): checks
 * that a process's SSE registers survive being switched out and back in.
 *
 * Why it exists: under QEMU's TCG the dom0's programs crashed now and then
 * on wild pointers, spun, or printed bytes they never computed, mostly
 * while guests came and went (docs/xen-in-qemu.md).  glibc's string and
 * memory functions keep pointers and data in XMM registers, so a register
 * file swapped with another context's would do exactly that.  This probe
 * fills XMM0-XMM15 with a pattern of its own, gives up the CPU, and checks
 * every register afterwards, again and again, in several processes at
 * once.  A mismatch is a register file that the host (Xen's FPU context
 * switch on the emulated CPU) did not give back.
 *
 *   fpu-probe SECONDS [PROCS]      (default 2 processes)
 * Prints "fpu-probe: N checks, M corrupted" and exits 1 if M > 0.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NREG 16

/* Load 16 registers from in[], yield (the kernel and Xen may run anything
 * else meanwhile), store them to out[].  All in one asm statement so that
 * the compiler cannot keep its own values in the registers between. */
static void load_yield_store(const uint8_t in[NREG][16], uint8_t out[NREG][16])
{
#define L(n) "movdqu " #n "*16(%[in]), %%xmm" #n "\n\t"
#define S(n) "movdqu %%xmm" #n ", " #n "*16(%[out])\n\t"
	__asm__ volatile(
		L(0) L(1) L(2) L(3) L(4) L(5) L(6) L(7)
		L(8) L(9) L(10) L(11) L(12) L(13) L(14) L(15)
		"mov %[nr], %%eax\n\t"
		"syscall\n\t" /* sched_yield(): no libc call can touch XMM */
		S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)
		S(8) S(9) S(10) S(11) S(12) S(13) S(14) S(15)
		:
		: [in] "r"(in), [out] "r"(out), [nr] "i"(24 /* __NR_sched_yield */)
		: "rax", "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
		  "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
		  "xmm13", "xmm14", "xmm15");
#undef L
#undef S
}

static int probe(int id, double seconds)
{
	uint8_t in[NREG][16], out[NREG][16];
	unsigned long checks = 0, bad = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t round = 0;; round++) {
		for (int r = 0; r < NREG; r++)
			for (int b = 0; b < 16; b++)
				in[r][b] = (uint8_t)(id * 131 + round * 7 + r * 17 + b);
		load_yield_store((const uint8_t(*)[16])in, out);
		checks++;
		if (memcmp(in, out, sizeof in) != 0) {
			bad++;
			if (bad <= 5) {
				int r = 0;
				while (memcmp(in[r], out[r], 16) == 0)
					r++;
				printf("fpu-probe: process %d check %lu: xmm%d came back "
				       "%02x%02x%02x%02x..., was %02x%02x%02x%02x...\n",
				       id, checks, r, out[r][0], out[r][1], out[r][2], out[r][3],
				       in[r][0], in[r][1], in[r][2], in[r][3]);
				fflush(stdout);
			}
		}
		if ((round & 1023) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
				break;
		}
	}
	printf("fpu-probe: process %d: %lu checks, %lu corrupted\n", id, checks, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fpu-probe SECONDS [PROCS]\n");
		return 2;
	}
	double seconds = atof(argv[1]);
	int procs = argc > 2 ? atoi(argv[2]) : 2;
	if (procs < 1 || procs > 64 || !(seconds > 0)) {
		fprintf(stderr, "fpu-probe: SECONDS > 0 and 1 <= PROCS <= 64\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < procs; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("fpu-probe: fork");
			return 2;
		}
		if (p == 0)
			_exit(probe(i, seconds));
	}
	int failed = 0, st;
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed++;
	printf("fpu-probe: %d of %d processes saw corrupted registers\n", failed, procs);
	return failed ? 1 : 0;
}
