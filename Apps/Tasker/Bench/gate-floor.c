/* gate-floor: the floor of `make gate-load`. libmicrohttpd answering every
 * request with a fixed 200: the body read from the file named on the command
 * line (a real list_tasks answer, so the same size), Content-Type
 * application/json and a fixed Mcp-Session-Id. Started with the flags and
 * limits of Apps/Tasker/Sources/TaskerGate/MicroHTTPServer.swift
 * (MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD, 64 connections, 5 s idle
 * timeout, 32 KiB per connection, 4 worker threads), on 127.0.0.1:PORT.
 * Notifications are answered 202 as the gate does. Runs until SIGTERM.
 * Usage: gate-floor PORT BODY-FILE */
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *answer, *accepted;

static enum MHD_Result respond(void *context, struct MHD_Connection *connection, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **state) {
  (void)context, (void)url, (void)method, (void)version;
  if (*state == NULL) {
    *state = calloc(1, sizeof(int));
    return *state ? MHD_YES : MHD_NO;
  }
  int *notification = *state;
  if (*upload_size > 0) {
    /* A notification carries no id: the gate answers it 202. */
    static const char notifying[] = "\"method\":\"notifications/";
    if (memmem(upload, *upload_size, notifying, sizeof notifying - 1)) *notification = 1;
    *upload_size = 0;
    return MHD_YES;
  }
  return MHD_queue_response(connection, *notification ? 202 : 200, *notification ? accepted : answer);
}

static void completed(void *context, struct MHD_Connection *connection, void **state,
                      enum MHD_RequestTerminationCode code) {
  (void)context, (void)connection, (void)code;
  free(*state);
  *state = NULL;
}

static volatile sig_atomic_t stopping;
static void stop(int signal) { (void)signal, stopping = 1; }

int main(int argc, char **argv) {
  if (argc != 3 || atoi(argv[1]) <= 0 || atoi(argv[1]) > 65535) {
    fprintf(stderr, "usage: gate-floor PORT BODY-FILE\n");
    return 2;
  }
  FILE *file = fopen(argv[2], "rb");
  if (!file) {
    fprintf(stderr, "gate-floor: cannot open %s\n", argv[2]);
    return 2;
  }
  static char body[1 << 20];
  size_t length = fread(body, 1, sizeof body, file);
  fclose(file);
  answer = MHD_create_response_from_buffer(length, body, MHD_RESPMEM_PERSISTENT);
  accepted = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(answer, "Content-Type", "application/json");
  MHD_add_response_header(answer, "Mcp-Session-Id", "00000000-0000-4000-8000-000000000000");
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct MHD_Daemon *daemon = MHD_start_daemon(
      MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)atoi(argv[1]), NULL, NULL, respond, NULL,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)5,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024), MHD_OPTION_THREAD_POOL_SIZE, (unsigned)4,
      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
      MHD_OPTION_END);
  if (!daemon) {
    fprintf(stderr, "gate-floor: cannot listen on 127.0.0.1:%s\n", argv[1]);
    return 1;
  }
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  while (!stopping) pause();
  MHD_stop_daemon(daemon);
  MHD_destroy_response(answer);
  MHD_destroy_response(accepted);
  return 0;
}
