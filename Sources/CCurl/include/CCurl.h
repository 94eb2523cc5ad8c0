// libcurl (7.88, the OpenSSL flavour), loaded on first use. Only the HTTPClient module imports this.
//
// Why not linked: libcurl brings about 28 libraries (OpenSSL, GnuTLS through librtmp, Kerberos,
// LDAP, libssh2, ...) whose load-time relocations alone cost pacerd about 9 MB of RSS, measured,
// for a path that is idle almost always (an alert, an upload). dlopen() at the first request
// pays that only then. The header is still libcurl's own: types and constants are checked at
// compile time.
#ifndef PACER_CCURL_H
#define PACER_CCURL_H

#include <curl/curl.h>
#include <stddef.h>

// Loads libcurl.so.4 and its functions once (thread-safe). 0 on success; otherwise -1 with the
// reason in `error` (NUL-terminated, at most `length` bytes).
int pacer_curl_load(char *error, size_t length);

// Each forwards to libcurl's function of the same name; call pacer_curl_load() first.
CURLcode pacer_curl_global_init(long flags);
CURL *pacer_curl_easy_init(void);
void pacer_curl_easy_cleanup(CURL *handle);
void pacer_curl_easy_reset(CURL *handle);
CURLcode pacer_curl_easy_perform(CURL *handle);
const char *pacer_curl_easy_strerror(CURLcode code);
void pacer_curl_free(void *pointer);
struct curl_slist *pacer_curl_slist_append(struct curl_slist *list, const char *string);
void pacer_curl_slist_free_all(struct curl_slist *list);
CURLU *pacer_curl_url(void);
void pacer_curl_url_cleanup(CURLU *handle);
CURLUcode pacer_curl_url_get(CURLU *handle, CURLUPart what, char **part, unsigned int flags);
CURLUcode pacer_curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags);

// curl_easy_setopt() and curl_easy_getinfo() are variadic, which Swift cannot call: one typed
// wrapper per argument type libcurl reads for the options Pacer sets. Function pointers get
// their own (passing one as a void * is not portable C); CURLOPT_WRITEFUNCTION and
// CURLOPT_HEADERFUNCTION share a type.
CURLcode pacer_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode pacer_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode pacer_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode pacer_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode pacer_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode pacer_curl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value);
CURLcode pacer_curl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value);
CURLcode pacer_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode pacer_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

#endif
