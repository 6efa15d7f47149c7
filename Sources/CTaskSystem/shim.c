#include "task_system.h"

#include <sys/prctl.h>
#include <sys/xattr.h>

int task_system_disable_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int task_system_is_dumpable(void) {
  return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

int task_system_set_xattr(const char *path, const char *name, const void *value, unsigned long size) {
  return lsetxattr(path, name, value, size, 0);
}

long task_system_get_xattr(const char *path, const char *name, void *value, unsigned long size) {
  return (long)lgetxattr(path, name, value, size);
}
