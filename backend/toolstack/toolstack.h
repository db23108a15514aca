/*
 * toolstack.h - writing device nodes as libxl does: create, attach,
 * detach.  toolstack.c calls xlcfg.c, vdev.c, xenstore and xl.
 */
#ifndef PROFSVC_BE_TOOLSTACK_H
#define PROFSVC_BE_TOOLSTACK_H

struct options;

int toolstack_create(const struct options *o, const char *cfg, int argc, char **argv);
int toolstack_attach(const struct options *o, const char *domain, int nvdev, char **vdevs);
int toolstack_detach(const struct options *o, const char *domain, const char *vdev);

#endif
