#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// libcurl's functions, resolved once by pacer_curl_load().
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*free)(void *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];
static int loaded = -1;

static void load(void) {
    // RTLD_LOCAL: libcurl's dependencies stay out of the global namespace.
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "cannot load libcurl (Debian package libcurl4): %s", dlerror());
        return;
    }
#define RESOLVE(field, name)                                                                    \
    do {                                                                                        \
        *(void **)(&api.field) = dlsym(library, name);                                          \
        if (!api.field) {                                                                       \
            snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s: too old?", name); \
            return;                                                                             \
        }                                                                                       \
    } while (0)
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_reset, "curl_easy_reset");
    RESOLVE(easy_perform, "curl_easy_perform");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(free, "curl_free");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
    RESOLVE(url, "curl_url");
    RESOLVE(url_cleanup, "curl_url_cleanup");
    RESOLVE(url_get, "curl_url_get");
    RESOLVE(url_set, "curl_url_set");
#undef RESOLVE
    loaded = 0;
}

int pacer_curl_load(char *error, size_t length) {
    pthread_once(&once, load);
    if (loaded != 0 && error && length > 0) snprintf(error, length, "%s", load_error);
    return loaded;
}

CURLcode pacer_curl_global_init(long flags) { return api.global_init(flags); }
CURL *pacer_curl_easy_init(void) { return api.easy_init(); }
void pacer_curl_easy_cleanup(CURL *handle) { api.easy_cleanup(handle); }
void pacer_curl_easy_reset(CURL *handle) { api.easy_reset(handle); }
CURLcode pacer_curl_easy_perform(CURL *handle) { return api.easy_perform(handle); }
const char *pacer_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
void pacer_curl_free(void *pointer) { api.free(pointer); }
struct curl_slist *pacer_curl_slist_append(struct curl_slist *list, const char *string) { return api.slist_append(list, string); }
void pacer_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }
CURLU *pacer_curl_url(void) { return api.url(); }
void pacer_curl_url_cleanup(CURLU *handle) { api.url_cleanup(handle); }
CURLUcode pacer_curl_url_get(CURLU *handle, CURLUPart what, char **part, unsigned int flags) { return api.url_get(handle, what, part, flags); }
CURLUcode pacer_curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags) { return api.url_set(handle, what, part, flags); }

CURLcode pacer_curl_setopt_long(CURL *handle, CURLoption option, long value) { return api.easy_setopt(handle, option, value); }
CURLcode pacer_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) { return api.easy_setopt(handle, option, value); }
CURLcode pacer_curl_setopt_string(CURL *handle, CURLoption option, const char *value) { return api.easy_setopt(handle, option, value); }
CURLcode pacer_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) { return api.easy_setopt(handle, option, value); }
CURLcode pacer_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) { return api.easy_setopt(handle, option, value); }
CURLcode pacer_curl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) { return api.easy_setopt(handle, option, value); }
CURLcode pacer_curl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value) { return api.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value); }
CURLcode pacer_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) { return api.easy_getinfo(handle, info, value); }
CURLcode pacer_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) { return api.easy_getinfo(handle, info, value); }
