// TaskCrypto's own C: the hot loops of the canonical base64 encoder and
// decoder in SSSE3, for x86-64 machines that have it. Pure computation:
// no libc, no allocation, no secrets (base64 here carries only public
// bytes).
#ifndef CTASKCRYPTO_H
#define CTASKCRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// Decodes whole 16-character blocks of standard base64 (no padding, no
/// other byte) from `input` into `output`, 12 bytes per block, while at
/// least 16 of `length` characters remain. Each block stores 16 bytes (the
/// 4 past its 12 are overwritten by what follows), so `output` must hold
/// 4 bytes more than the blocks decode to.
///
/// Returns the number of characters decoded: a multiple of 16, smaller
/// than `length` rounds down to when a block holds a byte outside the
/// alphabet (the caller's scalar loop then decodes from there and finds
/// it), and 0 on a machine without SSSE3.
size_t taskkey_base64_decode_blocks(const uint8_t *input, size_t length, uint8_t *output);

/// Encodes whole 12-byte blocks of `input` as 16 base64 characters each
/// into `output`, while at least 16 of `length` bytes remain (each block
/// loads 16 bytes for its 12). The regions may overlap as the sealed-value
/// writer lays them out (input at the end of the output, which it trails
/// by at least a third of its length): each block is loaded before its
/// characters are stored, and a store never reaches input not yet loaded.
///
/// Returns the number of bytes encoded, a multiple of 12; 0 on a machine
/// without SSSE3.
size_t taskkey_base64_encode_blocks(const uint8_t *input, size_t length, uint8_t *output);

#endif
