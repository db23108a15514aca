/*
 * toolstack.h - writing device nodes as libxl does: create, attach,
 * detach.  toolstack.c calls xlcfg.c, vdev.c, xenstore and xl.
 */
#ifndef PROFSVC_BE_TOOLSTACK_H
#define PROFSVC_BE_TOOLSTACK_H

struct be_options;

int be_toolstack_create(const struct be_options *o, const char *cfg, int argc, char **argv);
int be_toolstack_attach(const struct be_options *o, const char *domain, int nvdev, char **vdevs);
int be_toolstack_detach(const struct be_options *o, const char *domain, const char *vdev);

#endif
