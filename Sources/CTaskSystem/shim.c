#define _GNU_SOURCE
#include "task_system.h"

#include <sys/socket.h>

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

int task_system_disable_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int task_system_is_dumpable(void) {
  return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

int task_system_is_tmpfs(const char *path) {
  struct statfs info;
  if (statfs(path, &info) != 0) return -1;
  return info.f_type == TMPFS_MAGIC ? 1 : 0;
}

int task_system_set_xattr(const char *path, const char *name, const void *value, unsigned long size) {
  return lsetxattr(path, name, value, size, 0);
}

long task_system_get_xattr(const char *path, const char *name, void *value, unsigned long size) {
  return (long)lgetxattr(path, name, value, size);
}

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT,
                                    SIGQUIT, SIGSYS, SIGXCPU, SIGXFSZ};

/// Async-signal-safe: restore the default action, unblock, re-raise. Core
/// dumps are off (RLIMIT_CORE 0, not dumpable), so nothing is written.
static void end_on_fatal_signal(int signo) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signo, &action, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(signo);
  _exit(128 + signo);  // not reached: the default action ends the process
}

int task_system_end_on_fatal_signals(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = end_on_fatal_signal;
  sigfillset(&action.sa_mask);
  sigset_t blocked;
  sigemptyset(&blocked);
  for (unsigned i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
    if (sigaction(fatal_signals[i], &action, NULL) != 0) return -1;
    sigaddset(&blocked, fatal_signals[i]);
  }
  // A parent may have blocked some of them (the mask survives exec); a
  // blocked SIGQUIT or SIGABRT would be held pending and never end us.
  return sigprocmask(SIG_UNBLOCK, &blocked, NULL);
}

int task_system_ends_on_signal(int signo) {
  struct sigaction current;
  if (sigaction(signo, NULL, &current) != 0) return -1;
  return current.sa_handler == end_on_fatal_signal ? 1 : 0;
}

int task_system_spawn_and_wait(const char *path, char *const argv[], char *const envp[], int *status) {
  // As git and pass do while an editor runs: the terminal's Ctrl-C and
  // Ctrl-\ go to the editor, and this process stays to clean up after it.
  struct sigaction ignore, old_int, old_quit;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  if (sigaction(SIGINT, &ignore, &old_int) != 0) return errno;
  if (sigaction(SIGQUIT, &ignore, &old_quit) != 0) {
    int code = errno;
    sigaction(SIGINT, &old_int, NULL);
    return code;
  }
  posix_spawnattr_t attributes;
  int result = posix_spawnattr_init(&attributes);
  if (result == 0) {
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGQUIT);
    sigset_t none;
    sigemptyset(&none);
    // The child starts with the default actions, not our ignored ones, and
    // with no signal blocked, whatever the calling thread blocks.
    result = posix_spawnattr_setsigdefault(&attributes, &defaults);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    if (result == 0) result = posix_spawn(&pid, path, NULL, &attributes, argv, envp);
    if (result == 0) {
      while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) {
          result = errno;
          break;
        }
      }
    }
    posix_spawnattr_destroy(&attributes);
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  return result;
}

int task_system_accept_nonblocking(int listener) {
  return accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}
