/*
 * platform_xen_inspect.h - the `xen` implementation's entries for looking
 * into a domain (platform.h, "looking into a domain"), defined in
 * platform_xen_inspect.c and put in plat_xen_ops by platform_xen.c.
 * Nothing else calls them: everyone else goes through plat_inspect_*.
 */
#ifndef PROFSVC_PLATFORM_XEN_INSPECT_H
#define PROFSVC_PLATFORM_XEN_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"

struct plat_inspect *xen_inspect_open(struct plat *p, uint32_t domid, char *err, size_t errlen);
void xen_inspect_close(struct plat_inspect *in);
int xen_inspect_pause(struct plat_inspect *in);
int xen_inspect_unpause(struct plat_inspect *in);
int xen_inspect_vcpus(struct plat_inspect *in);
int xen_inspect_idle(struct plat_inspect *in);
int xen_inspect_regs(struct plat_inspect *in, uint32_t vcpu, struct plat_vcpu_regs *out);
long xen_inspect_read(struct plat_inspect *in, uint64_t cr3, uint64_t va, void *buf, size_t len);

#endif
