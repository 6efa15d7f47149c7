#ifndef TASKKEY_BENCH_BASELINE_H
#define TASKKEY_BENCH_BASELINE_H

#include <stddef.h>
#include <stdint.h>

/// Raw OpenSSL AES-256-GCM, the baseline TaskKey's benchmark compares
/// against: per message a fresh EVP_CIPHER_CTX, a random 12-byte nonce
/// (RAND_bytes), 13 bytes of AAD, encrypt, final, get the 16-byte tag.
/// Seals `iterations` messages of `size` bytes; returns the elapsed
/// monotonic nanoseconds, or 0 on any OpenSSL failure.
uint64_t taskkey_bench_raw_gcm_seal(size_t size, size_t iterations);

/// The same for opening: decrypt and verify `iterations` times one message
/// of `size` bytes sealed up front. Returns nanoseconds, or 0 on failure
/// (including a tag that does not verify).
uint64_t taskkey_bench_raw_gcm_open(size_t size, size_t iterations);

/// Raw OpenSSL SHA-256 (EVP_Digest) over `size` bytes, `iterations` times.
uint64_t taskkey_bench_raw_sha256(size_t size, size_t iterations);

#endif

#ifndef TASKKEY_BENCH_BASELINE_SEALED_H
#define TASKKEY_BENCH_BASELINE_SEALED_H
/// Raw OpenSSL doing a sealed value's whole job: AES-256-GCM seal as above,
/// then base64 of nonce || ciphertext || tag with EVP_EncodeBlock.
uint64_t taskkey_bench_raw_sealed_seal(size_t size, size_t iterations);

/// Raw OpenSSL opening a sealed value: EVP_DecodeBlock, then AES-256-GCM open.
uint64_t taskkey_bench_raw_sealed_open(size_t size, size_t iterations);
#endif
