#ifndef TASKKEY_ATTACHMENT_FLOOR_H
#define TASKKEY_ATTACHMENT_FLOOR_H

#include <stddef.h>
#include <stdint.h>

/// The floor for the attachment benchmark: raw OpenSSL AES-256-GCM over
/// `total` bytes as messages of `piece` bytes, with ONE EVP_CIPHER_CTX whose
/// key is set once; each message only sets its nonce, encrypts (or
/// decrypts) and finishes with its 16-byte tag. No allocation inside the
/// timed loop. Returns the calling thread's CPU nanoseconds, or 0 on any
/// OpenSSL failure (for open: also a tag that does not verify).
uint64_t taskkey_attachment_floor_seal(size_t total, size_t piece);

/// See `taskkey_attachment_floor_seal`: decrypts and verifies one sealed
/// message of `piece` bytes `total / piece` times.
uint64_t taskkey_attachment_floor_open(size_t total, size_t piece);

/// The open floor over `total` bytes that are not in cache: decrypts
/// `buffer` (the same sealed bytes the Swift opener reads) as messages of
/// `piece` bytes with one reused context, each with its full tag check
/// (which fails, as those bytes were sealed as 16 KiB chunks; the verdict
/// is ignored, the work is the same). CPU nanoseconds, or 0 on failure.
uint64_t taskkey_attachment_floor_open_from(const uint8_t *buffer, size_t total, size_t piece);

/// The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID),
/// so the Swift side is measured on the same clock.
uint64_t taskkey_attachment_cpu_ns(void);

#endif
