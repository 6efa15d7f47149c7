// The SSSE3 block encoder and decoder of TaskCrypto's canonical base64
// (see ctaskcrypto.h). The technique is Wojciech Mula's. Encoding: a
// shuffle spreads each 3 bytes over a 32-bit lane, two multiplies move
// the four 6-bit fields into bytes, and a 16-entry lookup adds the offset
// of each value's range of the alphabet. Decoding: two 16-entry
// lookups on the high and low nibble of each character classify it (a
// non-zero AND of the two marks a byte outside the alphabet), a third
// lookup gives the offset that maps it to its 6-bit value, and two
// multiply-add steps and a shuffle pack 16 values into 12 bytes.
#include "ctaskcrypto.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <tmmintrin.h>

__attribute__((target("ssse3"))) static size_t decode_ssse3(const uint8_t *input, size_t length, uint8_t *output) {
  // Indexed by the low nibble: the classes of characters with that nibble.
  const __m128i lut_lo = _mm_setr_epi8(
    0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1a, 0x1b, 0x1b, 0x1b, 0x1a);
  // Indexed by the high nibble: the class bit of that row of ASCII.
  const __m128i lut_hi = _mm_setr_epi8(
    0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10);
  // Indexed by the high nibble (1 for '/'): what to add to get the value.
  const __m128i lut_roll = _mm_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m128i mask_2f = _mm_set1_epi8(0x2f);
  const __m128i pack_pairs = _mm_set1_epi32(0x01400140);
  const __m128i pack_groups = _mm_set1_epi32(0x00011000);
  const __m128i order = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
  size_t done = 0;
  while (length - done >= 16) {
    __m128i text = _mm_loadu_si128((const __m128i *)(input + done));
    const __m128i hi_nibbles = _mm_and_si128(_mm_srli_epi32(text, 4), mask_2f);
    const __m128i lo_nibbles = _mm_and_si128(text, mask_2f);
    const __m128i hi = _mm_shuffle_epi8(lut_hi, hi_nibbles);
    const __m128i lo = _mm_shuffle_epi8(lut_lo, lo_nibbles);
    if (_mm_movemask_epi8(_mm_cmpgt_epi8(_mm_and_si128(lo, hi), _mm_setzero_si128())) != 0) break;
    const __m128i is_slash = _mm_cmpeq_epi8(text, mask_2f);
    const __m128i roll = _mm_shuffle_epi8(lut_roll, _mm_add_epi8(is_slash, hi_nibbles));
    const __m128i values = _mm_add_epi8(text, roll);
    const __m128i pairs = _mm_maddubs_epi16(values, pack_pairs);
    const __m128i groups = _mm_madd_epi16(pairs, pack_groups);
    _mm_storeu_si128((__m128i *)(output + done / 4 * 3), _mm_shuffle_epi8(groups, order));
    done += 16;
  }
  return done;
}

__attribute__((target("ssse3"))) static size_t encode_ssse3(const uint8_t *input, size_t length, uint8_t *output) {
  // Bytes a b c of each group to b a c b in a lane (16-bit halves ab, bc).
  const __m128i spread = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
  const __m128i high_fields = _mm_set1_epi32(0x0fc0fc00);
  const __m128i high_shifts = _mm_set1_epi32(0x04000040);
  const __m128i low_fields = _mm_set1_epi32(0x003f03f0);
  const __m128i low_shifts = _mm_set1_epi32(0x01000010);
  // Offsets from a value to its character: A-Z, a-z, 0-9 (x10), '+', '/'.
  const __m128i offsets = _mm_setr_epi8(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0);
  const __m128i fifty_one = _mm_set1_epi8(51);
  const __m128i twenty_five = _mm_set1_epi8(25);
  size_t done = 0;
  size_t written = 0;
  while (length - done >= 16) {
    const __m128i bytes = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(input + done)), spread);
    const __m128i high = _mm_mulhi_epu16(_mm_and_si128(bytes, high_fields), high_shifts);
    const __m128i low = _mm_mullo_epi16(_mm_and_si128(bytes, low_fields), low_shifts);
    const __m128i values = _mm_or_si128(high, low);
    // Range index: 0 for A-Z, then 1 + (value - 51, saturating) above 25.
    const __m128i ranges = _mm_sub_epi8(_mm_subs_epu8(values, fifty_one), _mm_cmpgt_epi8(values, twenty_five));
    _mm_storeu_si128((__m128i *)(output + written), _mm_add_epi8(values, _mm_shuffle_epi8(offsets, ranges)));
    done += 12;
    written += 16;
  }
  return done;
}

// Asked of the processor once; threads that race here store the same answer.
static int has_ssse3(void) {
  static int known = -1;
  int answer = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (answer < 0) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    answer = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSSE3) != 0;
    __atomic_store_n(&known, answer, __ATOMIC_RELAXED);
  }
  return answer;
}

size_t taskkey_base64_decode_blocks(const uint8_t *input, size_t length, uint8_t *output) {
  return has_ssse3() ? decode_ssse3(input, length, output) : 0;
}

size_t taskkey_base64_encode_blocks(const uint8_t *input, size_t length, uint8_t *output) {
  return has_ssse3() ? encode_ssse3(input, length, output) : 0;
}

#else

size_t taskkey_base64_decode_blocks(const uint8_t *input, size_t length, uint8_t *output) {
  (void)input;
  (void)length;
  (void)output;
  return 0;
}

size_t taskkey_base64_encode_blocks(const uint8_t *input, size_t length, uint8_t *output) {
  (void)input;
  (void)length;
  (void)output;
  return 0;
}

#endif
