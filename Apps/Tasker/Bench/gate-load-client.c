/* gate-load-client: the native load client of `make gate-load`.
 *
 * Reads one assistant key per line on standard input (never argv); starts
 * one thread per key, each its own keep-alive connection (libcurl easy
 * handle) and its own MCP session: initialize (2025-11-25), then
 * notifications/initialized, then tools/call list_tasks {"limit":20} until
 * the run's CALLS are shared out. An answer counts as an error unless it is
 * 200 with a JSON-RPC result whose isError is false. Prints one line:
 *   calls N errors E seconds S p50_ms A p99_ms B max_ms C
 * Usage: gate-load-client URL CALLS < keys
 * Exit 0 when every call was made (errors are counted, not fatal), 2 on
 * bad usage, 1 when a session could not be opened. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CLIENTS 256

struct buffer {
  char *bytes;
  size_t length, capacity;
};

struct client {
  const char *url;
  char key[256];
  char session[128];
  long calls;
  double *latencies;
  long errors;
  int failed;
  pthread_barrier_t *start;
};

static size_t collect_body(char *data, size_t size, size_t count, void *context) {
  struct buffer *buffer = context;
  size_t more = size * count;
  if (buffer->length + more + 1 > buffer->capacity) {
    size_t capacity = (buffer->length + more + 1) * 2;
    char *grown = realloc(buffer->bytes, capacity);
    if (!grown) return 0;
    buffer->bytes = grown;
    buffer->capacity = capacity;
  }
  memcpy(buffer->bytes + buffer->length, data, more);
  buffer->length += more;
  buffer->bytes[buffer->length] = 0;
  return more;
}

static size_t collect_header(char *data, size_t size, size_t count, void *context) {
  struct client *client = context;
  size_t length = size * count;
  static const char name[] = "mcp-session-id:";
  if (length > sizeof name && strncasecmp(data, name, sizeof name - 1) == 0) {
    const char *value = data + sizeof name - 1;
    while (*value == ' ') value++;
    size_t n = 0;
    while (value + n < data + length && value[n] != '\r' && value[n] != '\n' && n + 1 < sizeof client->session) n++;
    memcpy(client->session, value, n);
    client->session[n] = 0;
  }
  return length;
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Posts one message; returns the status, the body in *body. */
static long post(CURL *curl, struct curl_slist *headers, const char *message, struct buffer *body) {
  body->length = 0;
  if (body->bytes) body->bytes[0] = 0;
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, message);
  if (curl_easy_perform(curl) != CURLE_OK) return 0;
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

static int answered(long status, const struct buffer *body) {
  return status == 200 && body->bytes && strstr(body->bytes, "\"result\":") && !strstr(body->bytes, "\"error\":{") &&
         strstr(body->bytes, "\"isError\":false");
}

static void *run(void *context) {
  struct client *client = context;
  struct buffer body = {0};
  char line[512], message[256];
  CURL *curl = curl_easy_init();
  if (!curl) {
    client->failed = 1;
    pthread_barrier_wait(client->start);
    return NULL;
  }
  curl_easy_setopt(curl, CURLOPT_URL, client->url);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, client);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  struct curl_slist *headers = NULL;
  snprintf(line, sizeof line, "Authorization: Bearer %s", client->key);
  headers = curl_slist_append(headers, line);
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Accept: application/json, text/event-stream");
  headers = curl_slist_append(headers, "Expect:");
  long status = post(curl, headers,
                     "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                     "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"gate-load\",\"version\":\"1\"}}}",
                     &body);
  if (status != 200 || !client->session[0]) client->failed = 1;
  snprintf(line, sizeof line, "Mcp-Session-Id: %s", client->session);
  headers = curl_slist_append(headers, line);
  headers = curl_slist_append(headers, "MCP-Protocol-Version: 2025-11-25");
  if (!client->failed && post(curl, headers, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &body) != 202)
    client->failed = 1;
  pthread_barrier_wait(client->start);
  for (long n = 0; n < client->calls && !client->failed; n++) {
    snprintf(message, sizeof message,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"list_tasks\","
             "\"arguments\":{\"limit\":20}}}",
             n + 1);
    double started = now_seconds();
    status = post(curl, headers, message, &body);
    client->latencies[n] = now_seconds() - started;
    if (!answered(status, &body)) client->errors++;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  free(body.bytes);
  return NULL;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 3 || atol(argv[2]) <= 0) {
    fprintf(stderr, "usage: gate-load-client URL CALLS < keys (one assistant key per line)\n");
    return 2;
  }
  long calls = atol(argv[2]);
  static struct client clients[MAX_CLIENTS];
  int count = 0;
  char line[256];
  while (count < MAX_CLIENTS && fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0]) continue;
    snprintf(clients[count].key, sizeof clients[count].key, "%s", line);
    count++;
  }
  if (count == 0) {
    fprintf(stderr, "gate-load-client: give at least one key on standard input\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  double *latencies = calloc((size_t)calls, sizeof *latencies);
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)count + 1);
  pthread_t threads[MAX_CLIENTS];
  long offset = 0;
  for (int i = 0; i < count; i++) {
    clients[i].url = argv[1];
    clients[i].calls = calls / count + (i < calls % count ? 1 : 0);
    clients[i].latencies = latencies + offset;
    clients[i].start = &start;
    offset += clients[i].calls;
    pthread_create(&threads[i], NULL, run, &clients[i]);
  }
  pthread_barrier_wait(&start);
  double started = now_seconds();
  for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
  double seconds = now_seconds() - started;
  long errors = 0;
  for (int i = 0; i < count; i++) {
    if (clients[i].failed) {
      fprintf(stderr, "gate-load-client: client %d could not open its MCP session\n", i);
      return 1;
    }
    errors += clients[i].errors;
  }
  qsort(latencies, (size_t)calls, sizeof *latencies, compare);
  double p50 = latencies[calls / 2] * 1000, p99 = latencies[(calls * 99) / 100 - 1] * 1000;
  printf("calls %ld errors %ld seconds %.3f p50_ms %.3f p99_ms %.3f max_ms %.3f\n", calls, errors, seconds, p50, p99,
         latencies[calls - 1] * 1000);
  free(latencies);
  curl_global_cleanup();
  return 0;
}
