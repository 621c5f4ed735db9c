#ifndef RAXX_CURL_H
#define RAXX_CURL_H
// libcurl, wrapped once, and loaded only when first needed: the tools link no libcurl, so a
// command that never touches the network (raxx-auth status, raxx-cache show) never pays for
// loading it and its thirty-odd dependencies. The first network call dlopens libcurl.so.4.
//
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: each argument type
// gets a small typed helper. Every helper answers libcurl's own result code.
#include <curl/curl.h>
#include <stddef.h>

typedef size_t (*raxx_curl_data_fn)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*raxx_curl_xferinfo_fn)(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

/// Loads libcurl and runs curl_global_init, once per process (thread-safe). Answers 1 when libcurl
/// is ready, 0 when it could not be loaded or initialised (then `raxx_curl_load_error` says why).
int raxx_curl_load(void);
/// Why loading failed (a static string; empty when it did not).
const char *raxx_curl_load_error(void);

// Only after raxx_curl_load() answered 1:
CURL *raxx_curl_easy_init(void);
void raxx_curl_easy_cleanup(CURL *h);
void raxx_curl_easy_reset(CURL *h);
CURLcode raxx_curl_easy_perform(CURL *h);
const char *raxx_curl_easy_strerror(CURLcode code);
struct curl_slist *raxx_curl_slist_append(struct curl_slist *list, const char *text);
void raxx_curl_slist_free_all(struct curl_slist *list);
/// The libcurl version string, e.g. "7.88.1".
const char *raxx_curl_version(void);

CURLcode raxx_curl_set_long(CURL *h, CURLoption o, long v);
CURLcode raxx_curl_set_off(CURL *h, CURLoption o, curl_off_t v);
CURLcode raxx_curl_set_string(CURL *h, CURLoption o, const char *v);
CURLcode raxx_curl_set_pointer(CURL *h, CURLoption o, void *v);
CURLcode raxx_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v);
CURLcode raxx_curl_set_data_fn(CURL *h, CURLoption o, raxx_curl_data_fn v);
CURLcode raxx_curl_set_xferinfo_fn(CURL *h, raxx_curl_xferinfo_fn v);
CURLcode raxx_curl_get_long(CURL *h, CURLINFO i, long *v);

#endif
