// The parts of libcurl (7.88, the OpenSSL flavour) that Swift cannot import as they are.
// Only the HTTPClient module imports this.
#ifndef PACER_CCURL_SHIM_H
#define PACER_CCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt() and curl_easy_getinfo() are variadic, which Swift cannot call. One typed
// wrapper per argument type libcurl reads for the options Pacer sets.
static inline CURLcode pacer_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pacer_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pacer_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pacer_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pacer_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

// Function pointers get their own wrappers: passing one as a void * is not portable C.
// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this type.
static inline CURLcode pacer_curl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode pacer_curl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

static inline CURLcode pacer_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode pacer_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
