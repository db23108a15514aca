/*
 * hp_mem.c - peak memory of parsing a heap profile (make bench, via
 * view_bench.py): reads FILE in 64 KiB pieces through the incremental
 * parser and prints, as one JSON object, the process's peak RSS before
 * and after, the largest sample in bytes, and the bands' content at its
 * plain size (12 bytes a point: a sample index and a 64-bit value, however
 * the parser stores it), so the parse can be held against "4x the largest
 * sample plus the bands".  stored_bytes is what the encoded points take.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/heap/heap_profile.h"

static long hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			v = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	if (argc != 2) {
		fprintf(stderr, "usage: hp_mem FILE.hp\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	long before = hwm_kib();
	struct hp_profile p;
	hp_init(&p);
	size_t n, largest = 0, in_sample = 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		/* the largest sample, in bytes of the file, from BEGIN to END */
		for (size_t i = 0; i < n; i++) {
			in_sample++;
			if (buf[i] == 'B' && i + 12 < n && !memcmp(buf + i, "BEGIN_SAMPLE", 12))
				in_sample = 0;
			if (buf[i] == 'E' && i + 10 < n && !memcmp(buf + i, "END_SAMPLE", 10) && in_sample > largest)
				largest = in_sample;
		}
		if (hp_feed(&p, buf, n) != 0) {
			fprintf(stderr, "hp_mem: %s\n", hp_error(&p));
			return 1;
		}
	}
	fclose(f);
	hp_finish(&p, NULL);
	size_t points = 0, stored = 0;
	for (size_t i = 0; i < p.nbands; i++) {
		points += p.bands[i].npts;
		stored += hp_band_stored_bytes(&p.bands[i]);
	}
	long after = hwm_kib();
	printf("{\"rss_before_kib\":%ld,\"rss_after_kib\":%ld,\"largest_sample_bytes\":%zu,"
	       "\"points\":%zu,\"point_bytes\":%zu,\"stored_bytes\":%zu,\"samples\":%zu,\"bands\":%zu}\n",
	       before, after, largest, points, points * (size_t)12, stored, p.nsamples, p.nbands);
	hp_free(&p);
	return 0;
}
