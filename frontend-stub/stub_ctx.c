/*
 * stub_ctx.c - what the frontend-stub's modes share: the progress lines
 * (stub_say, silenced by -q), the seeded generator of every mode's
 * randomness (stub_rand), and xensim's toolstack role for a crashed guest,
 * destroying its own domain (stub_destroy_self).
 *
 * May call: the platform seam (platform/), xensim's control socket
 * (platform/sim_proto.h).  Nothing else
 * of the frontend-stub: its modes (stub.c, stub_hostile.c, stub_mirage.c)
 * call it.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "platform/sim_proto.h"
#include "stub_ctx.h"

int stub_quiet;

void stub_say(const char *fmt, ...)
{
	va_list ap;
	if (stub_quiet)
		return;
	va_start(ap, fmt);
	fputs("frontend-stub: ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

uint64_t stub_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* xensim's toolstack role for a crashed guest: destroy the domain. */
static void destroy_self(const char *sim_dir, uint32_t domid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct sim_msg m = {.op = SIM_DOM_DESTROY, .id = 1, .a = {domid}};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dom0/hv.sock", sim_dir);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    send(fd, &m, sizeof(m), 0) == sizeof(m))
		recv(fd, &m, sizeof(m), 0); /* it kills us before or after this */
	if (fd >= 0)
		close(fd);
}

void stub_destroy_self(struct stub_ctx *c)
{
	destroy_self(c->sim_dir, c->domid);
}
