// libcurl from Debian (libcurl4-openssl-dev for this header, libcurl4 at run
// time), loaded with dlopen the first time TaskerHTTP sends a request, so no
// other command loads it and the ~30 libraries it needs (OpenSSL's libssl,
// Kerberos, LDAP, SSH, nghttp2, ...). Swift calls only the tasker_curl_*
// functions below; the curl_* functions the header declares are not linked,
// so calling one directly fails at link time. Only TaskerHTTP imports this
// module. curl_easy_setopt and curl_easy_getinfo are variadic, which Swift
// cannot call: each argument type has its own entry here.
#ifndef TASKER_CCURL_H
#define TASKER_CCURL_H

#include <stddef.h>
#include <curl/curl.h>

/// Loads libcurl once per process and runs curl_global_init once
/// (thread-safe). Returns NULL when its functions are ready, else why it
/// could not be loaded (a static string).
const char *tasker_curl_load(void);

/// curl_easy_init; NULL when the library is not loaded.
CURL *tasker_curl_easy_init(void);
/// curl_easy_cleanup.
void tasker_curl_easy_cleanup(CURL *handle);
/// curl_easy_reset: every option back to its default; the handle's live
/// connection (and its caches) stay.
void tasker_curl_easy_reset(CURL *handle);
/// curl_easy_perform; CURLE_FAILED_INIT when the library is not loaded.
CURLcode tasker_curl_easy_perform(CURL *handle);
/// curl_easy_strerror; a fixed text when the library is not loaded.
const char *tasker_curl_easy_strerror(CURLcode code);
/// curl_slist_append; NULL when the library is not loaded.
struct curl_slist *tasker_curl_slist_append(struct curl_slist *list, const char *line);
/// curl_slist_free_all.
void tasker_curl_slist_free_all(struct curl_slist *list);

/// The signature of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
typedef size_t (*tasker_curl_data_callback)(char *bytes, size_t size, size_t count, void *context);
/// The signature of CURLOPT_DEBUGFUNCTION.
typedef int (*tasker_curl_debug_callback)(CURL *handle, curl_infotype type, char *bytes, size_t size, void *context);

/// curl_easy_setopt with a long.
CURLcode tasker_curl_set_long(CURL *handle, CURLoption option, long value);
/// curl_easy_setopt with a curl_off_t.
CURLcode tasker_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
/// curl_easy_setopt with a pointer (strings, lists, user data).
CURLcode tasker_curl_set_pointer(CURL *handle, CURLoption option, const void *value);
/// curl_easy_setopt with a write or header callback.
CURLcode tasker_curl_set_callback(CURL *handle, CURLoption option, tasker_curl_data_callback value);
/// curl_easy_setopt(CURLOPT_DEBUGFUNCTION).
CURLcode tasker_curl_set_debug_callback(CURL *handle, tasker_curl_debug_callback value);
/// curl_easy_getinfo into a long.
CURLcode tasker_curl_get_long(CURL *handle, CURLINFO info, long *value);
/// curl_easy_getinfo into a curl_off_t.
CURLcode tasker_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value);

#endif
