#ifndef TASK_SYSTEM_RANDOM_H
#define TASK_SYSTEM_RANDOM_H

#include <stddef.h>
#include <stdint.h>

/// Fills `out` with `count` random bytes for nonces, from a per-thread
/// buffer refilled from the kernel (getrandom(2), blocking until the pool
/// is initialised) one page at a time.
///
/// Guarantees: every byte handed out comes from getrandom and is handed out
/// once: it is wiped from the buffer as it is taken. A forked child never
/// sees its parent's buffered bytes: the buffer page is marked
/// MADV_WIPEONFORK (the kernel gives the child a zeroed page, which reads
/// as empty) and a pthread_atfork child handler wipes it as well, for
/// kernels without MADV_WIPEONFORK. The page is excluded from core dumps,
/// locked when the system allows it, and wiped and unmapped when its
/// thread exits. Requests above 256 bytes go straight to getrandom.
/// Returns 0, or -1 with errno set when getrandom or mmap fails.
int task_system_random_nonce_bytes(uint8_t *out, size_t count);

/// Test seam: how many unused bytes the calling thread's buffer holds.
size_t task_system_random_buffered(void);

/// Test seam: 1 when every byte of the calling thread's buffer that is not
/// available (already handed out) is zero, else 0.
int task_system_random_consumed_bytes_are_wiped(void);

/// Test seam for fork safety, with a real fork(2): the parent fills its
/// buffer, forks; the child draws `count` bytes (at most 4000) through
/// task_system_random_nonce_bytes and sends them back over a pipe, then exits;
/// the parent draws `count` bytes as well. Returns 0 with both outputs
/// filled, or -1 when fork, pipe or the child failed.
int task_system_random_fork_probe(uint8_t *parent_out, uint8_t *child_out, size_t count);

#endif
