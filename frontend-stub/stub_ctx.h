/*
 * stub_ctx.h - what the frontend-stub's modes share: the guest's context
 * (its options and its platform handles), the progress lines, the
 * generator of their randomness, and the toolstack's destroy of a crashed
 * guest (stub_ctx.c).  The modes' entry points are in stub_modes.h.
 */
#ifndef PROFSVC_STUB_CTX_H
#define PROFSVC_STUB_CTX_H

#include <stdint.h>
#include <stdio.h>

#include "platform/platform.h"

struct xs_handle;

struct stub_ctx {
	enum plat_kind kind;
	const char *sim_dir;
	uint32_t domid;
	struct plat *plat;
	struct xs_handle *xs;
	/* halvm */
	const char *prof, *hp, *reference;
	const char *eventlog; /* GHC's eventlog, written to xvdp3 as the .hp is */
	uint64_t crash_at;
	int crash_random;
	uint64_t crash_seed;
	int word_size;
	unsigned pace_ms;  /* a pause after each heap sample (GHC's -i), 0: none */
	FILE *sample_log;  /* when each sample's flush was acknowledged, or NULL */
	FILE *flush_log;   /* when each eventlog buffer's flush was acknowledged, or NULL */
	/* linux, hostile */
	const char *vdev;
	uint64_t requests;
	uint64_t seed;
	int span_mb; /* linux: the part of the disk used, in 1 MiB regions */
	/* mirage (stub_mirage.c); requests = events, crash_at = the event to
	 * die inside */
	uint32_t mirage_pages;
	unsigned mirage_rate;  /* events per second, 0: as fast as it can */
	int mirage_withdraw;
	const char *mirage_hostile; /* --hostile KIND (stub_mirage.c) */
	FILE *event_log;
};

/* -q: no progress lines. */
extern int stub_quiet;
/* A progress line on stdout ("frontend-stub: ..."), unless stub_quiet. */
void stub_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The next number of a seeded generator (splitmix64). */
uint64_t stub_rand(uint64_t *s);
/* xensim's toolstack role for a crashed guest: destroy our domain. */
void stub_destroy_self(struct stub_ctx *c);

#endif
