// Loads libcurl by its soname on first use (see include/CCurl.h). The
// library is found the way the dynamic linker would have found it at
// start-up; TaskerHTTP's calls go through the pointers kept here.
#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Debian 12's libcurl4 (the OpenSSL flavour); the header above is the same release's.
#define TASKER_CURL_SONAME "libcurl.so.4"

static struct {
  int ready;
  char error[256];
  CURLcode (*global_init)(long);
  CURL *(*easy_init)(void);
  void (*easy_cleanup)(CURL *);
  void (*easy_reset)(CURL *);
  CURLcode (*easy_perform)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
} library;

static pthread_once_t once = PTHREAD_ONCE_INIT;

// Looks up `name` into `slot`; 0 when missing (the reason is recorded).
static int find(void *handle, const char *name, void **slot) {
  *slot = dlsym(handle, name);
  if (*slot) return 1;
  snprintf(library.error, sizeof library.error, "%s has no %s", TASKER_CURL_SONAME, name);
  return 0;
}

static void load(void) {
  void *handle = dlopen(TASKER_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    snprintf(library.error, sizeof library.error, "%s", reason ? reason : "cannot load " TASKER_CURL_SONAME);
    return;
  }
  // POSIX guarantees a data pointer from dlsym converts to a function pointer.
  if (!(find(handle, "curl_global_init", (void **)&library.global_init)
        && find(handle, "curl_easy_init", (void **)&library.easy_init)
        && find(handle, "curl_easy_cleanup", (void **)&library.easy_cleanup)
        && find(handle, "curl_easy_reset", (void **)&library.easy_reset)
        && find(handle, "curl_easy_perform", (void **)&library.easy_perform)
        && find(handle, "curl_easy_strerror", (void **)&library.easy_strerror)
        && find(handle, "curl_easy_setopt", (void **)&library.easy_setopt)
        && find(handle, "curl_easy_getinfo", (void **)&library.easy_getinfo)
        && find(handle, "curl_slist_append", (void **)&library.slist_append)
        && find(handle, "curl_slist_free_all", (void **)&library.slist_free_all))) {
    return;  // the handle stays open: a process keeps a loaded library anyway
  }
  CURLcode code = library.global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    snprintf(library.error, sizeof library.error, "curl_global_init failed (%d)", (int)code);
    return;
  }
  library.ready = 1;
}

const char *tasker_curl_load(void) {
  pthread_once(&once, load);
  return library.ready ? NULL : library.error;
}

CURL *tasker_curl_easy_init(void) { return tasker_curl_load() ? NULL : library.easy_init(); }

void tasker_curl_easy_cleanup(CURL *handle) {
  if (library.ready) library.easy_cleanup(handle);
}

void tasker_curl_easy_reset(CURL *handle) {
  if (library.ready) library.easy_reset(handle);
}

CURLcode tasker_curl_easy_perform(CURL *handle) {
  return library.ready ? library.easy_perform(handle) : CURLE_FAILED_INIT;
}

const char *tasker_curl_easy_strerror(CURLcode code) {
  return library.ready ? library.easy_strerror(code) : "libcurl is not loaded";
}

struct curl_slist *tasker_curl_slist_append(struct curl_slist *list, const char *line) {
  return library.ready ? library.slist_append(list, line) : NULL;
}

void tasker_curl_slist_free_all(struct curl_slist *list) {
  if (library.ready) library.slist_free_all(list);
}

CURLcode tasker_curl_set_long(CURL *handle, CURLoption option, long value) {
  return library.ready ? library.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode tasker_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
  return library.ready ? library.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode tasker_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
  return library.ready ? library.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode tasker_curl_set_callback(CURL *handle, CURLoption option, tasker_curl_data_callback value) {
  return library.ready ? library.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode tasker_curl_set_debug_callback(CURL *handle, tasker_curl_debug_callback value) {
  return library.ready ? library.easy_setopt(handle, CURLOPT_DEBUGFUNCTION, value) : CURLE_FAILED_INIT;
}

CURLcode tasker_curl_get_long(CURL *handle, CURLINFO info, long *value) {
  return library.ready ? library.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

CURLcode tasker_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
  return library.ready ? library.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}
