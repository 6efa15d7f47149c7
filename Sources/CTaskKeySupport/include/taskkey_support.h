#ifndef TASKKEY_SUPPORT_H
#define TASKKEY_SUPPORT_H

/// Marks the calling process as not dumpable (prctl PR_SET_DUMPABLE 0):
/// no core file is written and other processes of the same user cannot
/// ptrace it. Returns 0 on success, -1 with errno set on failure.
int taskkey_disable_dumpable(void);

/// Returns 1 when the process is dumpable, 0 when not, -1 on error.
int taskkey_is_dumpable(void);

#endif
