#include "taskkey_support.h"

#include <sys/prctl.h>
#include <sys/xattr.h>

int taskkey_disable_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int taskkey_is_dumpable(void) {
  return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

int taskkey_set_xattr(const char *path, const char *name, const void *value, unsigned long size) {
  return lsetxattr(path, name, value, size, 0);
}

long taskkey_get_xattr(const char *path, const char *name, void *value, unsigned long size) {
  return (long)lgetxattr(path, name, value, size);
}
