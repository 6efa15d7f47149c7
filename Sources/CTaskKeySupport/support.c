#include "taskkey_support.h"

#include <sys/prctl.h>

int taskkey_disable_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int taskkey_is_dumpable(void) {
  return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}
