#ifndef TASK_SYSTEM_H
#define TASK_SYSTEM_H

/// Non-variadic wrappers for the system calls Swift cannot import
/// (variadic prctl) or that Glibc's Swift module leaves out (<sys/xattr.h>).
/// Only the TaskSystem module uses them.

/// Marks the calling process as not dumpable (prctl PR_SET_DUMPABLE 0):
/// no core file is written and other processes of the same user cannot
/// ptrace it. Returns 0 on success, -1 with errno set on failure.
int task_system_disable_dumpable(void);

/// Returns 1 when the process is dumpable, 0 when not, -1 on error.
int task_system_is_dumpable(void);

/// lsetxattr(2) on `path` (follows no symlink). Returns 0 or -1 with errno set.
int task_system_set_xattr(const char *path, const char *name, const void *value, unsigned long size);

/// lgetxattr(2) on `path`. Returns the value's size, or -1 with errno set.
long task_system_get_xattr(const char *path, const char *name, void *value, unsigned long size);

/// statfs(2) on `path`: returns 1 when its file system is a tmpfs
/// (TMPFS_MAGIC), 0 when it is another, -1 with errno set on failure.
/// (<sys/vfs.h> is not in Glibc's Swift module.)
int task_system_is_tmpfs(const char *path);

/// Installs, for every signal whose default action is to dump core
/// (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGQUIT, SIGSYS, and
/// SIGXCPU, SIGXFSZ), a handler that prints nothing and ends the process at
/// once by the same signal, and unblocks them all. It replaces the Swift
/// runtime's backtracer, which would print registers and the memory they
/// point to. Returns 0, or -1 with errno set.
int task_system_end_on_fatal_signals(void);

/// Returns 1 when the handler of `signo` is the one
/// `task_system_end_on_fatal_signals` installs, 0 when not, -1 on error.
int task_system_ends_on_signal(int signo);

/// Runs `path` with `argv` and `envp` through posix_spawn, sharing this
/// process's standard streams, and waits for it, storing its wait status
/// in `status`. While it runs, this process ignores SIGINT and SIGQUIT (the
/// terminal's keys reach the child, which starts with their default
/// actions and no signal blocked) and restores its own actions afterwards. Returns 0, or the
/// errno value of the call that failed.
int task_system_spawn_and_wait(const char *path, char *const argv[], char *const envp[], int *status);

/// accept4(2) on `listener` with SOCK_CLOEXEC and SOCK_NONBLOCK, so the
/// new descriptor is never inherited by a child, not even for a moment
/// (accept4 is not in Glibc's Swift module). Returns the descriptor, or
/// -1 with errno set.
int task_system_accept_nonblocking(int listener);

#endif
