/*
 * platform_sim_int.h - between the parts of the sim platform:
 * platform_sim.c (the connection to xensim, event channels, grants,
 * domains) and platform_sim_inspect.c (looking into a domain that is a
 * program), whose ops platform_sim.c's table holds.
 *
 * May call: platform.h's types, sim_proto.h.
 */
#ifndef PROFSVC_PLATFORM_SIM_INT_H
#define PROFSVC_PLATFORM_SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"
#include "sim_proto.h"

/* One call on p's connection (platform_sim.c): m's reply in m, its items
 * at *reply (valid until the next call), *reply_len bytes; at most one
 * descriptor in *fd_out (when not NULL).  0, or -1 and errno. */
int sim_call(struct plat *p, struct sim_msg *m, const void *items, size_t len, int *fd_out,
             const void **reply, size_t *reply_len);

/* A one-way message (no reply): 0, or -1 and errno. */
int sim_send(struct plat *p, struct sim_msg *m);

/* platform_sim_inspect.c: plat_inspect_* on xensim */
struct plat_inspect *sim_inspect_open(struct plat *p, uint32_t domid, char *err, size_t errlen);
void sim_inspect_close(struct plat_inspect *in);
int sim_inspect_pause(struct plat_inspect *in);
int sim_inspect_unpause(struct plat_inspect *in);
int sim_inspect_vcpus(struct plat_inspect *in);
int sim_inspect_idle(struct plat_inspect *in);
int sim_inspect_wait(struct plat *p, int64_t until_us, int wake_fd);
int sim_inspect_ended(struct plat_inspect *in);
int sim_inspect_ready(struct plat *p, uint32_t domid, char *err, size_t errlen);
int sim_inspect_regs(struct plat_inspect *in, uint32_t vcpu, struct plat_vcpu_regs *out);
long sim_inspect_read(struct plat_inspect *in, uint64_t cr3, uint64_t va, void *buf, size_t len);
/* The domain's program: its pid and a pidfd (platform_sim_inspect.c) */
int sim_program_of(struct plat *p, uint32_t domid, int rounds, pid_t *pid, int *fd, char *err, size_t errlen);

/* platform_sim_maps.c: plat_domain_maps on xensim */
char *sim_domain_maps(struct plat *p, uint32_t domid, size_t *len, char *err, size_t errlen);

#endif
