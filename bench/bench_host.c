/*
 * bench_host.c - the host line of the C benchmarks (bench_host.h): the
 * CPU model from /proc/cpuinfo (x86's "model name", other architectures'
 * "Model" or "cpu model"), the CPUs this process may run on, the kernel.
 */
#define _GNU_SOURCE
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "bench_host.h"

void bench_cpu_model(char *out, unsigned cap)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	snprintf(out, cap, "unknown (no model name in /proc/cpuinfo)");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		size_t klen = (size_t)(colon - line);
		while (klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
			klen--;
		if (!((klen == 10 && !strncmp(line, "model name", 10)) || (klen == 5 && !strncmp(line, "Model", 5)) ||
		      (klen == 9 && !strncmp(line, "cpu model", 9))))
			continue;
		char *v = colon + 1;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (*v) {
			snprintf(out, cap, "%s", v);
			break;
		}
	}
	if (f)
		fclose(f);
}

void bench_host_print(const char *name)
{
	char model[256];
	cpu_set_t set;
	struct utsname u;
	int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : -1;
	bench_cpu_model(model, sizeof(model));
	printf("%s: host CPU: %s; %d CPUs usable; Linux %s\n", name, model, cpus, uname(&u) == 0 ? u.release : "?");
	fflush(stdout);
}
