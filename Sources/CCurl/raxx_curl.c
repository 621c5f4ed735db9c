#include "raxx_curl.h"

#include <dlfcn.h>
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
}

int raxx_curl_load(void) {
    pthread_once(&once, load_once);
    return ready;
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
