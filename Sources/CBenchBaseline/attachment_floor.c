#include "attachment_floor.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t taskkey_attachment_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/// One message with the reused context: nonce, data, final, tag.
static int one(EVP_CIPHER_CTX *ctx, int encrypt, const unsigned char *nonce, const unsigned char *in,
               unsigned char *out, size_t size, unsigned char *tag) {
  int len = 0;
  if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, encrypt) != 1) return 0;
  if (EVP_CipherUpdate(ctx, out, &len, in, (int)size) != 1) return 0;
  if (!encrypt && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) != 1) return 0;
  if (EVP_CipherFinal_ex(ctx, out + len, &len) != 1) return 0;
  if (encrypt && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) != 1) return 0;
  return 1;
}

static uint64_t run(size_t total, size_t piece, int encrypt) {
  unsigned char key[32], nonce[12] = {0}, tag[16];
  unsigned char *in = calloc(piece + 16, 1), *out = calloc(piece + 16, 1);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  uint64_t elapsed = 0;
  if (in == NULL || out == NULL || ctx == NULL || RAND_bytes(key, sizeof key) != 1) goto done;
  if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL, encrypt) != 1) goto done;
  if (!encrypt) {
    // Seal one message up front with an encrypting context, then open it.
    EVP_CIPHER_CTX *sealer = EVP_CIPHER_CTX_new();
    int ok = sealer != NULL && EVP_CipherInit_ex(sealer, EVP_aes_256_gcm(), NULL, key, NULL, 1) == 1 &&
             one(sealer, 1, nonce, out, in, piece, tag);
    EVP_CIPHER_CTX_free(sealer);
    if (!ok) goto done;
  }
  uint64_t start = taskkey_attachment_cpu_ns();
  for (size_t done = 0; done < total; done += piece) {
    if (encrypt) nonce[11]++;
    if (!one(ctx, encrypt, nonce, in, out, piece, tag)) goto done;
  }
  elapsed = taskkey_attachment_cpu_ns() - start;
  if (elapsed == 0) elapsed = 1;
done:
  EVP_CIPHER_CTX_free(ctx);
  free(in);
  free(out);
  return elapsed;
}

uint64_t taskkey_attachment_floor_seal(size_t total, size_t piece) { return run(total, piece, 1); }

uint64_t taskkey_attachment_floor_open(size_t total, size_t piece) { return run(total, piece, 0); }

uint64_t taskkey_attachment_floor_open_from(const uint8_t *buffer, size_t total, size_t piece) {
  unsigned char key[32], nonce[12] = {0}, tag[16] = {0};
  unsigned char *out = calloc(piece + 16, 1);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  uint64_t elapsed = 0;
  if (out == NULL || ctx == NULL || RAND_bytes(key, sizeof key) != 1) goto done;
  if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL, 0) != 1) goto done;
  uint64_t start = taskkey_attachment_cpu_ns();
  for (size_t done = 0; done + piece <= total; done += piece) {
    int len = 0;
    nonce[11]++;
    if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, 0) != 1) goto done;
    if (EVP_CipherUpdate(ctx, out, &len, buffer + done, (int)piece) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) != 1) goto done;
    (void)EVP_CipherFinal_ex(ctx, out + len, &len);  // the tag check runs; its verdict is ignored
  }
  elapsed = taskkey_attachment_cpu_ns() - start;
  if (elapsed == 0) elapsed = 1;
done:
  ERR_clear_error();
  EVP_CIPHER_CTX_free(ctx);
  free(out);
  return elapsed;
}
