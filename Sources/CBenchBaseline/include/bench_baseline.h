#ifndef TASKKEY_BENCH_BASELINE_H
#define TASKKEY_BENCH_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "attachment_floor.h"
#include "cpace_floor.h"

/// The floor TaskKey's benchmark compares against: raw OpenSSL in C, doing
/// the least any AES-256-GCM program can do per message. One EVP_CIPHER_CTX
/// per direction is made once and the key is set once; each message only
/// sets a new nonce (a 96-bit counter, no random draw), feeds the
/// associated data and the plaintext, and finishes. No allocation happens
/// inside a timed loop.
typedef struct taskkey_floor taskkey_floor;

/// Makes a floor for `key` (32 bytes), for messages up to `maximum_size`
/// bytes, with associated data `aad` (copied). Returns NULL on failure.
taskkey_floor *taskkey_floor_new(
  const uint8_t *key, size_t maximum_size, const uint8_t *aad, size_t aad_size);

/// Frees the floor's contexts (which wipes their key schedules) and buffers.
void taskkey_floor_free(taskkey_floor *floor);

/// Seals `iterations` messages of `size` bytes into nonce || ciphertext ||
/// tag. Returns the calling thread's elapsed CPU nanoseconds, or 0 on any
/// OpenSSL failure. (Every time below is CPU time, so that other work on a
/// shared machine is not counted.)
uint64_t taskkey_floor_gcm_seal(taskkey_floor *floor, size_t size, size_t iterations);

/// Opens one message of `size` bytes, sealed up front, `iterations` times
/// (the tag is checked each time). Nanoseconds, or 0 on failure.
uint64_t taskkey_floor_gcm_open(taskkey_floor *floor, size_t size, size_t iterations);

/// The sealed-text job: writes the 13-byte marker, seals as above, and
/// base64-encodes nonce || ciphertext || tag after the marker with
/// EVP_EncodeBlock. Nanoseconds, or 0 on failure.
uint64_t taskkey_floor_text_seal(taskkey_floor *floor, size_t size, size_t iterations);

/// The open-text job: EVP_DecodeBlock of the text after the marker, then
/// open as above. Nanoseconds, or 0 on failure.
uint64_t taskkey_floor_text_open(taskkey_floor *floor, size_t size, size_t iterations);

/// Runs `argv[0]` (a path) with standard input from `input_path` and
/// standard output to `output_path` (NULL: /dev/null), standard error to
/// /dev/null, and waits. Returns the child's CPU time (user + system) in
/// nanoseconds (at least 1), or 0 when the process could not start or did
/// not exit 0. `peak_rss_kib`, when not
/// NULL, receives the child's peak resident set size in KiB.
uint64_t taskkey_bench_run(
  char *const argv[], const char *input_path, const char *output_path, long *peak_rss_kib);

/// Like taskkey_bench_run, with standard input a pipe this process fills from
/// `input_path` 64 KiB at a time: the child's CPU time in nanoseconds, or 0.
uint64_t taskkey_bench_run_piped(char *const argv[], const char *input_path, const char *output_path);

/// The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
uint64_t taskkey_bench_now(void);

#endif
