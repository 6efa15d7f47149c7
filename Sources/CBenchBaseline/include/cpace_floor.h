#ifndef TASKKEY_CPACE_FLOOR_H
#define TASKKEY_CPACE_FLOOR_H

#include <stddef.h>
#include <stdint.h>

/// The floor for the CPace benchmark: `count` whole CPACE-RISTR255-SHA512
/// exchanges, both sides (docs/formats/cpace.md), in plain C with the same
/// libsodium calls TaskCrypto makes and nothing else: per side the
/// generator (SHA-512 of the generator string, crypto_core_ristretto255_from_hash),
/// a random scalar, the message (crypto_scalarmult_ristretto255), the
/// receiving checks (is_valid_point, then the scalar multiplication), the
/// ISK, mac_key, both HMAC-SHA-512 tags and sid_output; fixed 8-byte PRS,
/// 24-byte CI, 16-byte sid, 3-byte ADs. No allocation in the loop. Returns
/// the calling thread's CPU nanoseconds, or 0 on any failure (a K or a tag
/// that does not agree included).
uint64_t taskkey_cpace_floor(size_t count);

#endif
