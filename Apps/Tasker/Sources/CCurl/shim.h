// Debian's libcurl (libcurl4-openssl-dev), for TaskerHTTP only.
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call; these wrappers give each argument type its own non-variadic entry.
#ifndef TASKER_CCURL_SHIM_H
#define TASKER_CCURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*tasker_curl_data_callback)(char *bytes, size_t size, size_t count, void *context);

static inline CURLcode tasker_curl_set_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tasker_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tasker_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tasker_curl_set_callback(CURL *handle, CURLoption option, tasker_curl_data_callback value) {
  return curl_easy_setopt(handle, option, value);
}

typedef int (*tasker_curl_debug_callback)(CURL *handle, curl_infotype type, char *bytes, size_t size, void *context);

static inline CURLcode tasker_curl_set_debug_callback(CURL *handle, tasker_curl_debug_callback value) {
  return curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, value);
}

static inline CURLcode tasker_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode tasker_curl_get_long(CURL *handle, CURLINFO info, long *value) {
  return curl_easy_getinfo(handle, info, value);
}
#endif
