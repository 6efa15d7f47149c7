#include "cpace_floor.h"

#include <sodium.h>
#include <string.h>
#include <time.h>

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const unsigned char prs[] = "Password";
static const unsigned char ci[] = "\x0b" "A_initiator" "\x0b" "B_responder";
static const unsigned char sid[16] = {0x7e, 0x4b, 0x47, 0x91, 0xd6, 0xa8, 0xef, 0x01,
                                      0x9b, 0x93, 0x6c, 0x79, 0xfb, 0x7f, 0x2c, 0x57};

/// g from PRS, CI and sid: SHA-512 of lv_cat(DSI, PRS, zpad, CI, sid), mapped.
static int generator(unsigned char g[32]) {
  static const unsigned char dsi[] = "CPaceRistretto255";
  unsigned char zeros[100] = {0}, hash[64], len;
  crypto_hash_sha512_state st;
  crypto_hash_sha512_init(&st);
  len = 17; crypto_hash_sha512_update(&st, &len, 1); crypto_hash_sha512_update(&st, dsi, 17);
  len = 8; crypto_hash_sha512_update(&st, &len, 1); crypto_hash_sha512_update(&st, prs, 8);
  len = 100; crypto_hash_sha512_update(&st, &len, 1); crypto_hash_sha512_update(&st, zeros, 100);
  len = 24; crypto_hash_sha512_update(&st, &len, 1); crypto_hash_sha512_update(&st, ci, 24);
  len = 16; crypto_hash_sha512_update(&st, &len, 1); crypto_hash_sha512_update(&st, sid, 16);
  crypto_hash_sha512_final(&st, hash);
  return crypto_core_ristretto255_from_hash(g, hash);
}

/// One side after it received the peer's message: K, ISK over transcript_ir,
/// mac_key, the two tags, sid_output.
static int finish(const unsigned char y[32], const unsigned char *peer, const unsigned char *tr,
                  const unsigned char *own_lv, const unsigned char *peer_lv, unsigned char isk[64],
                  unsigned char tags[2][64]) {
  static const unsigned char label[] = "CPaceRistretto255_ISK";
  unsigned char k[32], prefix[1 + 21 + 1 + 16 + 1], mac_key[64], sid_out[64];
  crypto_hash_sha512_state st;
  if ((peer[31] & 0x80) || !crypto_core_ristretto255_is_valid_point(peer) || sodium_is_zero(peer, 32)) return -1;
  if (crypto_scalarmult_ristretto255(k, y, peer) != 0) return -1;
  prefix[0] = 21; memcpy(prefix + 1, label, 21); prefix[22] = 16; memcpy(prefix + 23, sid, 16); prefix[39] = 32;
  crypto_hash_sha512_init(&st);
  crypto_hash_sha512_update(&st, prefix, sizeof prefix);
  crypto_hash_sha512_update(&st, k, 32);
  crypto_hash_sha512_update(&st, tr, 74);
  crypto_hash_sha512_final(&st, isk);
  crypto_hash_sha512_init(&st);
  crypto_hash_sha512_update(&st, (const unsigned char *)"CPaceMac", 8);
  crypto_hash_sha512_update(&st, sid, 16);
  crypto_hash_sha512_update(&st, isk, 64);
  crypto_hash_sha512_final(&st, mac_key);
  crypto_auth_hmacsha512_state mac;
  crypto_auth_hmacsha512_init(&mac, mac_key, 64);
  crypto_auth_hmacsha512_update(&mac, own_lv, 37);
  crypto_auth_hmacsha512_final(&mac, tags[0]);
  crypto_auth_hmacsha512_init(&mac, mac_key, 64);
  crypto_auth_hmacsha512_update(&mac, peer_lv, 37);
  crypto_auth_hmacsha512_final(&mac, tags[1]);
  crypto_hash_sha512_init(&st);
  crypto_hash_sha512_update(&st, (const unsigned char *)"CPaceSidOutput", 14);
  crypto_hash_sha512_update(&st, tr, 74);
  crypto_hash_sha512_final(&st, sid_out);
  sodium_memzero(k, 32);
  sodium_memzero(mac_key, 64);
  return 0;
}

uint64_t taskkey_cpace_floor(size_t count) {
  if (sodium_init() < 0) return 0;
  unsigned char ga[32], gb[32], ya[32], yb[32], Ya[32], Yb[32], tr[74], isk_a[64], isk_b[64];
  unsigned char tags_a[2][64], tags_b[2][64];
  uint64_t start = cpu_ns();
  for (size_t i = 0; i < count; i++) {
    if (generator(ga) != 0 || generator(gb) != 0) return 0;
    randombytes_buf(ya, 32); ya[31] &= 0x0f;
    randombytes_buf(yb, 32); yb[31] &= 0x0f;
    if (crypto_scalarmult_ristretto255(Ya, ya, ga) != 0 || crypto_scalarmult_ristretto255(Yb, yb, gb) != 0) return 0;
    // transcript_ir = lv(Ya) lv("ADa") lv(Yb) lv("ADb"); lv_cat(Y, AD) is its half.
    tr[0] = 32; memcpy(tr + 1, Ya, 32); tr[33] = 3; memcpy(tr + 34, "ADa", 3);
    tr[37] = 32; memcpy(tr + 38, Yb, 32); tr[70] = 3; memcpy(tr + 71, "ADb", 3);
    if (finish(ya, Yb, tr, tr, tr + 37, isk_a, tags_a) != 0) return 0;
    if (finish(yb, Ya, tr, tr + 37, tr, isk_b, tags_b) != 0) return 0;
    if (sodium_memcmp(isk_a, isk_b, 64) != 0 || sodium_memcmp(tags_a[1], tags_b[0], 64) != 0) return 0;
  }
  return cpu_ns() - start;
}
