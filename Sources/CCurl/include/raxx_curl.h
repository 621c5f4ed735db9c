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
/// Before the process exits: waits for a load begun on any thread to finish, and makes later
/// loads fail (exit() must not tear libcurl's TLS library down while another thread initialises
/// it). Loading never begun is not begun now.
void raxx_curl_settle(void);

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
CURLcode raxx_curl_get_pointer(CURL *h, CURLINFO i, void **v);
typedef int (*raxx_curl_seek_fn)(void *userdata, curl_off_t offset, int origin);
CURLcode raxx_curl_set_seek_fn(CURL *h, raxx_curl_seek_fn v);

// The multi interface, for many transfers on one thread (HTTP/2 streams multiplexed on a few
// connections). Loads libcurl if needed; answers 1 when libcurl has all of it (7.68 or later).
int raxx_curl_multi_available(void);
// Only after raxx_curl_multi_available() answered 1:
CURLM *raxx_curl_multi_init(void);
CURLMcode raxx_curl_multi_cleanup(CURLM *m);
CURLMcode raxx_curl_multi_add_handle(CURLM *m, CURL *h);
CURLMcode raxx_curl_multi_remove_handle(CURLM *m, CURL *h);
CURLMcode raxx_curl_multi_perform(CURLM *m, int *running);
/// curl_multi_poll without extra descriptors: waits for activity, the timeout, or a wakeup.
CURLMcode raxx_curl_multi_poll(CURLM *m, int timeout_ms, int *numfds);
CURLMcode raxx_curl_multi_wakeup(CURLM *m);
const char *raxx_curl_multi_strerror(CURLMcode code);
CURLMcode raxx_curl_multi_set_long(CURLM *m, CURLMoption o, long v);
/// libcurl's URL handles (curl_url, curl_url_cleanup, curl_url_set without flags), only after
/// raxx_curl_multi_available() answered 1.
CURLU *raxx_curl_url_new(void);
void raxx_curl_url_free(CURLU *u);
CURLUcode raxx_curl_url_set(CURLU *u, CURLUPart part, const char *content);
/// A part of the URL as curl_url_get gives it (to be freed with raxx_curl_free), or NULL.
char *raxx_curl_url_copy(CURLU *u, CURLUPart part);
void raxx_curl_free(void *text);
/// The next finished transfer from curl_multi_info_read: answers 1 and fills `easy` and
/// `result`, or 0 when none is waiting.
int raxx_curl_multi_next_done(CURLM *m, CURL **easy, CURLcode *result);

// The TCP connections of one push engine (used on its one thread): libcurl writes each HTTP/2
// frame with a send of its own, so a turn of curl_multi_perform that starts fifty streams sends a
// hundred small segments, each a wakeup, a read and a TLS record for the server. Corked for the
// turn (TCP_CORK), they leave together, in full segments, when the turn ends.
#define RAXX_CURL_SOCKET_SET_SIZE 64
typedef struct raxx_curl_socket_set {
    int fds[RAXX_CURL_SOCKET_SET_SIZE];
    int count;
} raxx_curl_socket_set;
/// Has libcurl record in `set` every socket it opens for `h`, and forget it when it closes it.
/// A socket beyond the set's size is used as usual, only never corked.
CURLcode raxx_curl_track_sockets(CURL *h, raxx_curl_socket_set *set);
/// Corks (on = 1) or uncorks (on = 0, which sends what was held) every socket in `set`.
void raxx_curl_socket_set_cork(raxx_curl_socket_set *set, int on);

#endif
