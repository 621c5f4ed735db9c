#ifndef RAXX_CCURL_SHIM_H
#define RAXX_CCURL_SHIM_H
// libcurl, wrapped once. curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call: each argument type gets a small typed helper here.
#include <curl/curl.h>

typedef size_t (*raxx_curl_data_fn)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*raxx_curl_xferinfo_fn)(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode raxx_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode raxx_curl_set_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode raxx_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode raxx_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode raxx_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode raxx_curl_set_data_fn(CURL *h, CURLoption o, raxx_curl_data_fn v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode raxx_curl_set_xferinfo_fn(CURL *h, raxx_curl_xferinfo_fn v) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v); }

static inline CURLcode raxx_curl_get_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode raxx_curl_get_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode raxx_curl_get_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }

/// The libcurl version string, e.g. "7.88.1".
static inline const char *raxx_curl_version(void) { return curl_version_info(CURLVERSION_NOW)->version; }

#endif
