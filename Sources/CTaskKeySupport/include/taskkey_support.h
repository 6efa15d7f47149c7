#ifndef TASKKEY_SUPPORT_H
#define TASKKEY_SUPPORT_H

/// Marks the calling process as not dumpable (prctl PR_SET_DUMPABLE 0):
/// no core file is written and other processes of the same user cannot
/// ptrace it. Returns 0 on success, -1 with errno set on failure.
int taskkey_disable_dumpable(void);

/// Returns 1 when the process is dumpable, 0 when not, -1 on error.
int taskkey_is_dumpable(void);

/// setxattr(2) on `path` (follows no symlink: lsetxattr). Returns 0 or -1
/// with errno set. Swift's Glibc module does not import <sys/xattr.h>.
int taskkey_set_xattr(const char *path, const char *name, const void *value, unsigned long size);

/// lgetxattr(2) on `path`. Returns the value's size, or -1 with errno set.
long taskkey_get_xattr(const char *path, const char *name, void *value, unsigned long size);

/// Installs, for every signal whose default action is to dump core
/// (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGQUIT, SIGSYS, and
/// SIGXCPU, SIGXFSZ), a handler that prints nothing and ends the process at
/// once by the same signal, and unblocks them all. It replaces the Swift
/// runtime's backtracer, which would print registers and the memory they
/// point to. Returns 0, or -1 with errno set.
int taskkey_end_on_fatal_signals(void);

/// Returns 1 when the handler of `signo` is the one
/// `taskkey_end_on_fatal_signals` installs, 0 when not, -1 on error.
int taskkey_ends_on_signal(int signo);

#endif
