/*
 * bench_host.h - what the C benchmarks of `make bench` (store_bench,
 * capture_bench, sample_bench) say about the host they ran on, as the
 * Python ones do (bench/benchlib.py): one line, printed first, naming the
 * CPU model (/proc/cpuinfo), the CPUs the bench may use and the kernel,
 * so that a reader of two runs' figures can tell host from code.
 */
#ifndef PROFSVC_BENCH_HOST_H
#define PROFSVC_BENCH_HOST_H

/* The CPU's model name into out (cap bytes); "unknown ..." when
 * /proc/cpuinfo names none. */
void bench_cpu_model(char *out, unsigned cap);
/* Prints "NAME: host CPU: MODEL; N CPUs usable; Linux RELEASE" on stdout. */
void bench_host_print(const char *name);

#endif
