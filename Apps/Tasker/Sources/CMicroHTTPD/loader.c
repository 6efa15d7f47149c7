// Loads libmicrohttpd by its soname on first use (see include/CMicroHTTPD.h).
// The library is found the way the dynamic linker would have found it at
// start-up; nothing else changes for the gate's HTTP binding.
#include "CMicroHTTPD.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Debian 12's libmicrohttpd12; the header above is the same release's.
#define TASKER_MHD_SONAME "libmicrohttpd.so.12"

static struct {
  int ready;
  char error[256];
  struct MHD_Daemon *(*start_daemon_va)(
    unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *, MHD_AccessHandlerCallback, void *, va_list);
  void (*stop_daemon)(struct MHD_Daemon *);
  int (*get_connection_values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
  struct MHD_Response *(*create_response_from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
  void (*destroy_response)(struct MHD_Response *);
  enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
  enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
} library;

static pthread_once_t once = PTHREAD_ONCE_INIT;

// Looks up `name` into `slot`; 0 when missing (the reason is recorded).
static int find(void *handle, const char *name, void **slot) {
  *slot = dlsym(handle, name);
  if (*slot) return 1;
  snprintf(library.error, sizeof library.error, "%s has no %s", TASKER_MHD_SONAME, name);
  return 0;
}

static void load(void) {
  void *handle = dlopen(TASKER_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    snprintf(library.error, sizeof library.error, "%s", reason ? reason : "cannot load " TASKER_MHD_SONAME);
    return;
  }
  // POSIX guarantees a data pointer from dlsym converts to a function pointer.
  if (find(handle, "MHD_start_daemon_va", (void **)&library.start_daemon_va)
      && find(handle, "MHD_stop_daemon", (void **)&library.stop_daemon)
      && find(handle, "MHD_get_connection_values", (void **)&library.get_connection_values)
      && find(handle, "MHD_create_response_from_buffer", (void **)&library.create_response_from_buffer)
      && find(handle, "MHD_destroy_response", (void **)&library.destroy_response)
      && find(handle, "MHD_add_response_header", (void **)&library.add_response_header)
      && find(handle, "MHD_queue_response", (void **)&library.queue_response)) {
    library.ready = 1;
  }
  // On failure the handle stays open: a process keeps a loaded library anyway.
}

const char *tasker_mhd_load(void) {
  pthread_once(&once, load);
  return library.ready ? NULL : library.error;
}

struct MHD_Daemon *tasker_mhd_start_daemon_va(
  unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
  MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap) {
  if (tasker_mhd_load()) return NULL;
  return library.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
}

void tasker_mhd_stop_daemon(struct MHD_Daemon *daemon) {
  if (library.ready) library.stop_daemon(daemon);
}

int tasker_mhd_get_connection_values(
  struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIterator iterator, void *iterator_cls) {
  return library.ready ? library.get_connection_values(connection, kind, iterator, iterator_cls) : 0;
}

struct MHD_Response *tasker_mhd_create_response_from_buffer(
  size_t size, void *buffer, enum MHD_ResponseMemoryMode mode) {
  return library.ready ? library.create_response_from_buffer(size, buffer, mode) : NULL;
}

void tasker_mhd_destroy_response(struct MHD_Response *response) {
  if (library.ready) library.destroy_response(response);
}

enum MHD_Result tasker_mhd_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
  return library.ready ? library.add_response_header(response, header, content) : MHD_NO;
}

enum MHD_Result tasker_mhd_queue_response(
  struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response) {
  return library.ready ? library.queue_response(connection, status_code, response) : MHD_NO;
}
