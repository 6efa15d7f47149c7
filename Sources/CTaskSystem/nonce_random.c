// Per-thread nonce randomness, refilled from getrandom(2), fork-safe and wiped.
#define _GNU_SOURCE
#include "task_system_random.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

enum { page_size = 4096, direct_threshold = 256 };

// One page: a count of unused bytes, then the bytes. Unused bytes sit at
// the start of `bytes`; they are taken from the end of the unused run.
struct pool {
  size_t available;
  uint8_t bytes[page_size - sizeof(size_t)];
};

static __thread struct pool *thread_pool __attribute__((tls_model("initial-exec")));
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_key_ready;

static void release_pool(void *pointer) {
  explicit_bzero(pointer, page_size);
  munlock(pointer, page_size);
  munmap(pointer, page_size);
}

// In the child of fork(): nothing the parent buffered may be handed out.
static void wipe_in_child(void) {
  if (thread_pool != NULL) explicit_bzero(thread_pool, page_size);
}

static void set_up_once(void) {
  pool_key_ready = pthread_key_create(&pool_key, release_pool) == 0;
  pthread_atfork(NULL, NULL, wipe_in_child);
}

static int fill_from_kernel(uint8_t *out, size_t count) {
  size_t done = 0;
  while (done < count) {
    ssize_t got = getrandom(out + done, count - done, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    done += (size_t)got;
  }
  return 0;
}

static struct pool *current_pool(void) {
  if (thread_pool != NULL) return thread_pool;
  pthread_once(&pool_once, set_up_once);
  if (!pool_key_ready) return NULL;
  void *page = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return NULL;
  // Best effort: older kernels lack WIPEONFORK (the atfork handler covers
  // fork(3)); mlock may exceed RLIMIT_MEMLOCK (the bytes are future public
  // nonces, not keys).
  (void)madvise(page, page_size, MADV_WIPEONFORK);
  (void)madvise(page, page_size, MADV_DONTDUMP);
  (void)mlock(page, page_size);
  if (pthread_setspecific(pool_key, page) != 0) {
    munmap(page, page_size);
    return NULL;
  }
  thread_pool = page;
  return thread_pool;
}

int task_system_random_nonce_bytes(uint8_t *out, size_t count) {
  if (count > direct_threshold) return fill_from_kernel(out, count);
  struct pool *pool = current_pool();
  if (pool == NULL) return fill_from_kernel(out, count);
  // A zeroed page (new, or wiped in a forked child) reads as empty.
  if (pool->available < count) {
    if (fill_from_kernel(pool->bytes, sizeof pool->bytes) != 0) {
      explicit_bzero(pool, page_size);
      return -1;
    }
    pool->available = sizeof pool->bytes;
  }
  pool->available -= count;
  uint8_t *taken = pool->bytes + pool->available;
  memcpy(out, taken, count);
  explicit_bzero(taken, count);
  return 0;
}

size_t task_system_random_buffered(void) {
  return thread_pool == NULL ? 0 : thread_pool->available;
}

int task_system_random_consumed_bytes_are_wiped(void) {
  if (thread_pool == NULL) return 1;
  uint8_t seen = 0;
  for (size_t index = thread_pool->available; index < sizeof thread_pool->bytes; index++) {
    seen |= thread_pool->bytes[index];
  }
  return seen == 0;
}

static int read_exactly(int fd, uint8_t *out, size_t count) {
  size_t done = 0;
  while (done < count) {
    ssize_t got = read(fd, out + done, count - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    done += (size_t)got;
  }
  return 0;
}

int task_system_random_fork_probe(uint8_t *parent_out, uint8_t *child_out, size_t count) {
  uint8_t first[1];
  int fds[2];
  if (count > 4000 || task_system_random_nonce_bytes(first, 1) != 0 || pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    uint8_t drawn[4000];
    close(fds[0]);
    int status = task_system_random_nonce_bytes(drawn, count) == 0 ? 0 : 1;
    size_t done = 0;
    while (status == 0 && done < count) {
      ssize_t wrote = write(fds[1], drawn + done, count - done);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) status = 1;
      else done += (size_t)wrote;
    }
    _exit(status);
  }
  close(fds[1]);
  int result = task_system_random_nonce_bytes(parent_out, count) == 0 && read_exactly(fds[0], child_out, count) == 0
                 ? 0
                 : -1;
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = -1;
  return result;
}
