// The benchmark's floor: raw OpenSSL AES-256-GCM with one reused context per
// key and direction, and the spawn helper that times whole processes.
// Times are CPU time (this thread's, or the child's user + system), so that
// other work on a shared machine does not count as ours.
#define _GNU_SOURCE
#include "bench_baseline.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { nonce_size = 12, tag_size = 16, marker_size = 13 };

struct taskkey_floor {
  EVP_CIPHER_CTX *seal;
  EVP_CIPHER_CTX *open;
  uint8_t *aad;
  size_t aad_size;
  size_t maximum;
  uint8_t *plaintext;  // maximum
  uint8_t *payload;    // nonce || ciphertext || tag, maximum + 28
  uint8_t *text;       // marker || base64(payload) || NUL
  uint8_t *opened;     // maximum + 3 (EVP_DecodeBlock writes whole groups)
  uint64_t counter;
};

uint64_t taskkey_bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t encoded_size(size_t size) { return (size + 2) / 3 * 4; }

void taskkey_floor_free(taskkey_floor *floor) {
  if (floor == NULL) return;
  EVP_CIPHER_CTX_free(floor->seal);
  EVP_CIPHER_CTX_free(floor->open);
  free(floor->aad);
  free(floor->plaintext);
  free(floor->payload);
  free(floor->text);
  free(floor->opened);
  free(floor);
}

taskkey_floor *taskkey_floor_new(
  const uint8_t *key, size_t maximum_size, const uint8_t *aad, size_t aad_size) {
  taskkey_floor *floor = calloc(1, sizeof *floor);
  if (floor == NULL) return NULL;
  size_t payload = maximum_size + nonce_size + tag_size;
  floor->maximum = maximum_size;
  floor->aad_size = aad_size;
  floor->aad = malloc(aad_size + 1);
  floor->plaintext = calloc(maximum_size + 1, 1);
  floor->payload = calloc(payload + 3, 1);
  floor->text = calloc(marker_size + encoded_size(payload) + 1, 1);
  floor->opened = calloc(payload + 3, 1);
  floor->seal = EVP_CIPHER_CTX_new();
  floor->open = EVP_CIPHER_CTX_new();
  EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
  int ok = floor->aad && floor->plaintext && floor->payload && floor->text && floor->opened && floor->seal &&
           floor->open && cipher &&
           EVP_EncryptInit_ex(floor->seal, cipher, NULL, key, NULL) == 1 &&
           EVP_DecryptInit_ex(floor->open, cipher, NULL, key, NULL) == 1;
  EVP_CIPHER_free(cipher);
  if (!ok) {
    taskkey_floor_free(floor);
    return NULL;
  }
  memcpy(floor->aad, aad, aad_size);
  memcpy(floor->text, aad, aad_size < marker_size ? aad_size : marker_size);
  return floor;
}

// One seal with the reused context: new nonce, AAD, data, final, tag.
static int seal_into(taskkey_floor *floor, size_t size, uint8_t *out) {
  int len = 0;
  floor->counter++;
  memcpy(out, &floor->counter, sizeof floor->counter);
  memset(out + sizeof floor->counter, 0, nonce_size - sizeof floor->counter);
  uint8_t *ciphertext = out + nonce_size;
  return EVP_EncryptInit_ex(floor->seal, NULL, NULL, NULL, out) == 1 &&
         EVP_EncryptUpdate(floor->seal, NULL, &len, floor->aad, (int)floor->aad_size) == 1 &&
         EVP_EncryptUpdate(floor->seal, ciphertext, &len, floor->plaintext, (int)size) == 1 &&
         EVP_EncryptFinal_ex(floor->seal, ciphertext + len, &len) == 1 &&
         EVP_CIPHER_CTX_ctrl(floor->seal, EVP_CTRL_GCM_GET_TAG, tag_size, ciphertext + size) == 1;
}

static int open_from(taskkey_floor *floor, size_t size, uint8_t *payload) {
  int len = 0;
  uint8_t *ciphertext = payload + nonce_size;
  return EVP_DecryptInit_ex(floor->open, NULL, NULL, NULL, payload) == 1 &&
         EVP_DecryptUpdate(floor->open, NULL, &len, floor->aad, (int)floor->aad_size) == 1 &&
         EVP_DecryptUpdate(floor->open, floor->opened, &len, ciphertext, (int)size) == 1 &&
         EVP_CIPHER_CTX_ctrl(floor->open, EVP_CTRL_GCM_SET_TAG, tag_size, ciphertext + size) == 1 &&
         EVP_DecryptFinal_ex(floor->open, floor->opened + len, &len) > 0;
}

uint64_t taskkey_floor_gcm_seal(taskkey_floor *floor, size_t size, size_t iterations) {
  if (size > floor->maximum) return 0;
  uint64_t start = taskkey_bench_now();
  for (size_t i = 0; i < iterations; i++) {
    if (!seal_into(floor, size, floor->payload)) return 0;
  }
  return taskkey_bench_now() - start;
}

uint64_t taskkey_floor_gcm_open(taskkey_floor *floor, size_t size, size_t iterations) {
  if (size > floor->maximum || !seal_into(floor, size, floor->payload)) return 0;
  uint64_t start = taskkey_bench_now();
  for (size_t i = 0; i < iterations; i++) {
    if (!open_from(floor, size, floor->payload)) return 0;
  }
  return taskkey_bench_now() - start;
}

uint64_t taskkey_floor_text_seal(taskkey_floor *floor, size_t size, size_t iterations) {
  if (size > floor->maximum) return 0;
  int payload = (int)(size + nonce_size + tag_size);
  uint64_t start = taskkey_bench_now();
  for (size_t i = 0; i < iterations; i++) {
    memcpy(floor->text, floor->aad, marker_size);
    if (!seal_into(floor, size, floor->payload)) return 0;
    EVP_EncodeBlock(floor->text + marker_size, floor->payload, payload);
  }
  return taskkey_bench_now() - start;
}

uint64_t taskkey_floor_text_open(taskkey_floor *floor, size_t size, size_t iterations) {
  if (size > floor->maximum || !seal_into(floor, size, floor->payload)) return 0;
  size_t payload = size + nonce_size + tag_size;
  int text_size = (int)encoded_size(payload);
  EVP_EncodeBlock(floor->text + marker_size, floor->payload, (int)payload);
  uint64_t start = taskkey_bench_now();
  for (size_t i = 0; i < iterations; i++) {
    if (memcmp(floor->text, floor->aad, marker_size) != 0) return 0;
    if (EVP_DecodeBlock(floor->payload, floor->text + marker_size, text_size) < (int)payload) return 0;
    if (!open_from(floor, size, floor->payload)) return 0;
  }
  return taskkey_bench_now() - start;
}

// Waits for `pid`; returns its CPU time (user + system) in nanoseconds
// when it exits 0 (at least 1), else 0. The peak RSS goes to
// `peak_rss_kib` when given.
static uint64_t wait_for_child(pid_t pid, long *peak_rss_kib) {
  int status = 0;
  struct rusage usage;
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) return 0;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
  uint64_t elapsed = (uint64_t)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000u +
                     (uint64_t)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000u;
  if (peak_rss_kib) *peak_rss_kib = usage.ru_maxrss;
  return elapsed == 0 ? 1 : elapsed;
}

uint64_t taskkey_bench_run(
  char *const argv[], const char *input_path, const char *output_path, long *peak_rss_kib) {
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return 0;
  int ok = posix_spawn_file_actions_addopen(&actions, 0, input_path ? input_path : "/dev/null", O_RDONLY, 0) == 0 &&
           posix_spawn_file_actions_addopen(
             &actions, 1, output_path ? output_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600) == 0 &&
           posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) == 0;
  uint64_t elapsed = 0;
  pid_t pid;
  if (ok && posix_spawn(&pid, argv[0], &actions, NULL, argv, environ) == 0) elapsed = wait_for_child(pid, peak_rss_kib);
  posix_spawn_file_actions_destroy(&actions);
  return elapsed;
}

// Like taskkey_bench_run, with standard input a pipe that this process
// fills from input_path in 64 KiB writes (as a shell pipeline would), so
// the child reads at most a pipe buffer at a time. Returns the child's CPU
// time (user + system) in nanoseconds, or 0 on failure.
uint64_t taskkey_bench_run_piped(char *const argv[], const char *input_path, const char *output_path) {
  int input = open(input_path, O_RDONLY | O_CLOEXEC);
  if (input < 0) return 0;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    close(input);
    return 0;
  }
  posix_spawn_file_actions_t actions;
  uint64_t elapsed = 0;
  pid_t pid = -1;
  if (posix_spawn_file_actions_init(&actions) == 0) {
    int ok = posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], 0) == 0 &&
             posix_spawn_file_actions_addopen(
               &actions, 1, output_path ? output_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600) == 0 &&
             posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) == 0;
    if (!ok || posix_spawn(&pid, argv[0], &actions, NULL, argv, environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  close(pipe_fds[0]);
  static uint8_t chunk[64 << 10];
  ssize_t count;
  while (pid > 0 && (count = read(input, chunk, sizeof chunk)) > 0) {
    ssize_t done = 0;
    while (done < count) {
      ssize_t written = write(pipe_fds[1], chunk + done, (size_t)(count - done));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) break;
      done += written;
    }
    if (done < count) break;
  }
  close(pipe_fds[1]);
  close(input);
  if (pid > 0) elapsed = wait_for_child(pid, NULL);
  return elapsed;
}
