// libmicrohttpd from Debian (libmicrohttpd-dev for this header, libmicrohttpd12
// at run time), loaded with dlopen the first time `tasker mcp --http` starts a
// server, so no other command loads it and its TLS chain (gnutls, nettle,
// p11-kit, idn2, ...). Swift calls only the tasker_mhd_* functions below; the
// MHD_* functions the header declares are not linked, so calling one directly
// fails at link time. Only the gate's HTTP binding imports this module.
#ifndef TASKER_CMICROHTTPD_H
#define TASKER_CMICROHTTPD_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Loads libmicrohttpd once per process (thread-safe). Returns NULL when its
/// functions are ready, else why it could not be loaded (a static string).
const char *tasker_mhd_load(void);

/// MHD_start_daemon_va; NULL when the library is not loaded.
struct MHD_Daemon *tasker_mhd_start_daemon_va(
  unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
  MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap);
/// MHD_stop_daemon.
void tasker_mhd_stop_daemon(struct MHD_Daemon *daemon);
/// MHD_get_connection_values.
int tasker_mhd_get_connection_values(
  struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIterator iterator, void *iterator_cls);
/// MHD_create_response_from_buffer; NULL when the library is not loaded.
struct MHD_Response *tasker_mhd_create_response_from_buffer(
  size_t size, void *buffer, enum MHD_ResponseMemoryMode mode);
/// MHD_destroy_response.
void tasker_mhd_destroy_response(struct MHD_Response *response);
/// MHD_add_response_header; MHD_NO when the library is not loaded.
enum MHD_Result tasker_mhd_add_response_header(struct MHD_Response *response, const char *header, const char *content);
/// MHD_queue_response; MHD_NO when the library is not loaded.
enum MHD_Result tasker_mhd_queue_response(
  struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response);

#endif
