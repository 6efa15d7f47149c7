#include "bench_baseline.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const unsigned char aad[13] = "tc1.0a0b0c0d:";

static int seal_one(const unsigned char *key, const unsigned char *in, size_t size,
                    unsigned char *nonce, unsigned char *out, unsigned char *tag) {
  int ok = 0, len = 0;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL) return 0;
  if (RAND_bytes(nonce, 12) != 1) goto done;
  if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce) != 1) goto done;
  if (EVP_EncryptUpdate(ctx, NULL, &len, aad, sizeof aad) != 1) goto done;
  if (EVP_EncryptUpdate(ctx, out, &len, in, (int)size) != 1) goto done;
  if (EVP_EncryptFinal_ex(ctx, out + len, &len) != 1) goto done;
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) != 1) goto done;
  ok = 1;
done:
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

static int open_one(const unsigned char *key, const unsigned char *nonce, const unsigned char *in,
                    size_t size, unsigned char *tag, unsigned char *out) {
  int ok = 0, len = 0;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == NULL) return 0;
  if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce) != 1) goto done;
  if (EVP_DecryptUpdate(ctx, NULL, &len, aad, sizeof aad) != 1) goto done;
  if (EVP_DecryptUpdate(ctx, out, &len, in, (int)size) != 1) goto done;
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) != 1) goto done;
  if (EVP_DecryptFinal_ex(ctx, out + len, &len) <= 0) goto done;
  ok = 1;
done:
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

uint64_t taskkey_bench_raw_gcm_seal(size_t size, size_t iterations) {
  unsigned char key[32], nonce[12], tag[16];
  unsigned char *in = calloc(size + 1, 1), *out = malloc(size + 16);
  uint64_t elapsed = 0;
  if (in == NULL || out == NULL || RAND_bytes(key, sizeof key) != 1) goto done;
  uint64_t start = now_ns();
  for (size_t i = 0; i < iterations; i++) {
    if (!seal_one(key, in, size, nonce, out, tag)) goto done;
  }
  elapsed = now_ns() - start;
done:
  free(in);
  free(out);
  return elapsed;
}

uint64_t taskkey_bench_raw_gcm_open(size_t size, size_t iterations) {
  unsigned char key[32], nonce[12], tag[16];
  unsigned char *in = calloc(size + 1, 1), *sealed = malloc(size + 16), *out = malloc(size + 16);
  uint64_t elapsed = 0;
  if (in == NULL || sealed == NULL || out == NULL || RAND_bytes(key, sizeof key) != 1) goto done;
  if (!seal_one(key, in, size, nonce, sealed, tag)) goto done;
  uint64_t start = now_ns();
  for (size_t i = 0; i < iterations; i++) {
    if (!open_one(key, nonce, sealed, size, tag, out)) goto done;
  }
  elapsed = now_ns() - start;
done:
  free(in);
  free(sealed);
  free(out);
  return elapsed;
}

uint64_t taskkey_bench_raw_sha256(size_t size, size_t iterations) {
  unsigned char digest[32];
  unsigned int length = 0;
  unsigned char *in = calloc(size + 1, 1);
  uint64_t elapsed = 0;
  if (in == NULL) return 0;
  uint64_t start = now_ns();
  for (size_t i = 0; i < iterations; i++) {
    if (EVP_Digest(in, size, digest, &length, EVP_sha256(), NULL) != 1) goto done;
  }
  elapsed = now_ns() - start;
done:
  free(in);
  return elapsed;
}

uint64_t taskkey_bench_raw_sealed_seal(size_t size, size_t iterations) {
  unsigned char key[32];
  size_t payload = 12 + size + 16;
  unsigned char *in = calloc(size + 1, 1), *combined = malloc(payload);
  unsigned char *text = malloc((payload + 2) / 3 * 4 + 1);
  uint64_t elapsed = 0;
  if (in == NULL || combined == NULL || text == NULL || RAND_bytes(key, sizeof key) != 1) goto done;
  uint64_t start = now_ns();
  for (size_t i = 0; i < iterations; i++) {
    if (!seal_one(key, in, size, combined, combined + 12, combined + 12 + size)) goto done;
    EVP_EncodeBlock(text, combined, (int)payload);
  }
  elapsed = now_ns() - start;
done:
  free(in);
  free(combined);
  free(text);
  return elapsed;
}

uint64_t taskkey_bench_raw_sealed_open(size_t size, size_t iterations) {
  unsigned char key[32];
  size_t payload = 12 + size + 16;
  int text_length = (int)((payload + 2) / 3 * 4);
  unsigned char *in = calloc(size + 1, 1), *combined = malloc(payload + 3), *out = malloc(size + 16);
  unsigned char *text = malloc((size_t)text_length + 1);
  uint64_t elapsed = 0;
  if (in == NULL || combined == NULL || out == NULL || text == NULL || RAND_bytes(key, sizeof key) != 1) goto done;
  if (!seal_one(key, in, size, combined, combined + 12, combined + 12 + size)) goto done;
  EVP_EncodeBlock(text, combined, (int)payload);
  uint64_t start = now_ns();
  for (size_t i = 0; i < iterations; i++) {
    if (EVP_DecodeBlock(combined, text, text_length) < 0) goto done;
    if (!open_one(key, combined, combined + 12, size, combined + 12 + size, out)) goto done;
  }
  elapsed = now_ns() - start;
done:
  free(in);
  free(combined);
  free(out);
  free(text);
  return elapsed;
}
