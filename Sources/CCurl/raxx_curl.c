#include "raxx_curl.h"

#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <pthread.h>

// The functions we use, resolved from libcurl.so.4 at first use.
static struct {
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
    curl_version_info_data *(*version_info)(CURLversion);
} fn;

// The multi interface (HTTP/2 multiplexing), resolved apart: a libcurl too old for it still
// serves the easy interface, and only the push engine reports it missing.
static struct {
    CURLM *(*init)(void);
    CURLMcode (*cleanup)(CURLM *);
    CURLMcode (*add_handle)(CURLM *, CURL *);
    CURLMcode (*remove_handle)(CURLM *, CURL *);
    CURLMcode (*perform)(CURLM *, int *);
    CURLMcode (*poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMcode (*wakeup)(CURLM *);
    CURLMsg *(*info_read)(CURLM *, int *);
    CURLMcode (*setopt)(CURLM *, CURLMoption, ...);
    const char *(*strerror)(CURLMcode);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
    void (*free)(void *);
} multi;
static int multi_ready = 0;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int ready = 0;
static const char *load_error = "";

#define RESOLVE(field, name)                                   \
    do {                                                       \
        *(void **)(&fn.field) = dlsym(library, name);          \
        if (fn.field == NULL) {                                \
            load_error = "libcurl.so.4 lacks " name;           \
            return;                                            \
        }                                                      \
    } while (0)

static void load_once(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        load_error = "libcurl.so.4 is not installed";
        return;
    }
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_reset, "curl_easy_reset");
    RESOLVE(easy_perform, "curl_easy_perform");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
    RESOLVE(version_info, "curl_version_info");
    if (fn.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        load_error = "curl_global_init failed";
        return;
    }
    ready = 1;
#define RESOLVE_MULTI(field, name)                              \
    do {                                                        \
        *(void **)(&multi.field) = dlsym(library, name);        \
        if (multi.field == NULL) return;                        \
    } while (0)
    RESOLVE_MULTI(init, "curl_multi_init");
    RESOLVE_MULTI(cleanup, "curl_multi_cleanup");
    RESOLVE_MULTI(add_handle, "curl_multi_add_handle");
    RESOLVE_MULTI(remove_handle, "curl_multi_remove_handle");
    RESOLVE_MULTI(perform, "curl_multi_perform");
    RESOLVE_MULTI(poll, "curl_multi_poll");
    RESOLVE_MULTI(wakeup, "curl_multi_wakeup");
    RESOLVE_MULTI(info_read, "curl_multi_info_read");
    RESOLVE_MULTI(setopt, "curl_multi_setopt");
    RESOLVE_MULTI(strerror, "curl_multi_strerror");
    RESOLVE_MULTI(url, "curl_url");
    RESOLVE_MULTI(url_cleanup, "curl_url_cleanup");
    RESOLVE_MULTI(url_set, "curl_url_set");
    RESOLVE_MULTI(url_get, "curl_url_get");
    RESOLVE_MULTI(free, "curl_free");
    multi_ready = 1;
}

// Whether a load has begun, and whether the process has settled (is about to exit): guarded by
// `state`. A load begun on a background thread (a preload) must be finished before exit() runs
// the libraries' destructors: OpenSSL torn down by exit while curl_global_init is initialising it
// on another thread crashes the process (a double free, then SIGSEGV).
static pthread_mutex_t state = PTHREAD_MUTEX_INITIALIZER;
static int begun = 0;
static int settled = 0;

int raxx_curl_load(void) {
    pthread_mutex_lock(&state);
    if (settled && !begun) {
        pthread_mutex_unlock(&state);
        load_error = "the process is ending";
        return 0;
    }
    begun = 1;
    pthread_mutex_unlock(&state);
    pthread_once(&once, load_once);
    return ready;
}

void raxx_curl_settle(void) {
    pthread_mutex_lock(&state);
    settled = 1;
    int wait = begun;
    pthread_mutex_unlock(&state);
    // pthread_once returns only once the load in progress (on whatever thread) has finished.
    if (wait) pthread_once(&once, load_once);
}

const char *raxx_curl_load_error(void) { return load_error; }

CURL *raxx_curl_easy_init(void) { return fn.easy_init(); }
void raxx_curl_easy_cleanup(CURL *h) { fn.easy_cleanup(h); }
void raxx_curl_easy_reset(CURL *h) { fn.easy_reset(h); }
CURLcode raxx_curl_easy_perform(CURL *h) { return fn.easy_perform(h); }
const char *raxx_curl_easy_strerror(CURLcode code) { return fn.easy_strerror(code); }
struct curl_slist *raxx_curl_slist_append(struct curl_slist *list, const char *text) { return fn.slist_append(list, text); }
void raxx_curl_slist_free_all(struct curl_slist *list) { fn.slist_free_all(list); }
const char *raxx_curl_version(void) { return fn.version_info(CURLVERSION_NOW)->version; }

CURLcode raxx_curl_set_long(CURL *h, CURLoption o, long v) { return fn.easy_setopt(h, o, v); }
CURLcode raxx_curl_set_off(CURL *h, CURLoption o, curl_off_t v) { return fn.easy_setopt(h, o, v); }
CURLcode raxx_curl_set_string(CURL *h, CURLoption o, const char *v) { return fn.easy_setopt(h, o, v); }
CURLcode raxx_curl_set_pointer(CURL *h, CURLoption o, void *v) { return fn.easy_setopt(h, o, v); }
CURLcode raxx_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return fn.easy_setopt(h, o, v); }
CURLcode raxx_curl_set_data_fn(CURL *h, CURLoption o, raxx_curl_data_fn v) { return fn.easy_setopt(h, o, v); }
CURLcode raxx_curl_set_xferinfo_fn(CURL *h, raxx_curl_xferinfo_fn v) { return fn.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v); }
CURLcode raxx_curl_get_long(CURL *h, CURLINFO i, long *v) { return fn.easy_getinfo(h, i, v); }
CURLcode raxx_curl_get_pointer(CURL *h, CURLINFO i, void **v) { return fn.easy_getinfo(h, i, v); }
CURLcode raxx_curl_set_seek_fn(CURL *h, raxx_curl_seek_fn v) { return fn.easy_setopt(h, CURLOPT_SEEKFUNCTION, v); }

int raxx_curl_multi_available(void) { return raxx_curl_load() && multi_ready; }
CURLM *raxx_curl_multi_init(void) { return multi.init(); }
CURLMcode raxx_curl_multi_cleanup(CURLM *m) { return multi.cleanup(m); }
CURLMcode raxx_curl_multi_add_handle(CURLM *m, CURL *h) { return multi.add_handle(m, h); }
CURLMcode raxx_curl_multi_remove_handle(CURLM *m, CURL *h) { return multi.remove_handle(m, h); }
CURLMcode raxx_curl_multi_perform(CURLM *m, int *running) { return multi.perform(m, running); }
CURLMcode raxx_curl_multi_poll(CURLM *m, int timeout_ms, int *numfds) { return multi.poll(m, NULL, 0, timeout_ms, numfds); }
CURLMcode raxx_curl_multi_wakeup(CURLM *m) { return multi.wakeup(m); }
const char *raxx_curl_multi_strerror(CURLMcode code) { return multi.strerror(code); }
CURLMcode raxx_curl_multi_set_long(CURLM *m, CURLMoption o, long v) { return multi.setopt(m, o, v); }
CURLU *raxx_curl_url_new(void) { return multi.url(); }
void raxx_curl_url_free(CURLU *u) { multi.url_cleanup(u); }
CURLUcode raxx_curl_url_set(CURLU *u, CURLUPart part, const char *content) { return multi.url_set(u, part, content, 0); }
char *raxx_curl_url_copy(CURLU *u, CURLUPart part) {
    char *text = NULL;
    return multi.url_get(u, part, &text, 0) == CURLUE_OK ? text : NULL;
}
void raxx_curl_free(void *text) { multi.free(text); }

int raxx_curl_multi_next_done(CURLM *m, CURL **easy, CURLcode *result) {
    int left = 0;
    CURLMsg *message;
    while ((message = multi.info_read(m, &left)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

static int track_opened(void *data, curl_socket_t fd, curlsocktype purpose) {
    raxx_curl_socket_set *set = data;
    if (purpose == CURLSOCKTYPE_IPCXN && set->count < RAXX_CURL_SOCKET_SET_SIZE) set->fds[set->count++] = fd;
    return CURL_SOCKOPT_OK;
}

static int track_closed(void *data, curl_socket_t fd) {
    raxx_curl_socket_set *set = data;
    for (int i = 0; i < set->count; i++) {
        if (set->fds[i] == fd) {
            set->fds[i] = set->fds[--set->count];
            break;
        }
    }
    return close(fd);
}

CURLcode raxx_curl_track_sockets(CURL *h, raxx_curl_socket_set *set) {
    CURLcode code;
    curl_sockopt_callback opened = track_opened;
    curl_closesocket_callback closed = track_closed;
    if ((code = fn.easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, opened)) != CURLE_OK) return code;
    if ((code = fn.easy_setopt(h, CURLOPT_SOCKOPTDATA, (void *)set)) != CURLE_OK) return code;
    if ((code = fn.easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, closed)) != CURLE_OK) return code;
    return fn.easy_setopt(h, CURLOPT_CLOSESOCKETDATA, (void *)set);
}

void raxx_curl_socket_set_cork(raxx_curl_socket_set *set, int on) {
    for (int i = 0; i < set->count; i++) (void)setsockopt(set->fds[i], IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}
