#ifndef BEACONBRIDGE_CURL_H
#define BEACONBRIDGE_CURL_H
// libcurl for the webhook sink, loaded with dlopen when a webhook is configured: a gateway without one never
// maps libcurl and its 28 libraries (GnuTLS, Kerberos, LDAP, SASL, ...; about 4 MB of RSS). The header is only
// for libcurl's types and constants; every call goes through the functions below, which the loader resolves.
#include <curl/curl.h>

/// Loads libcurl (libcurl.so.4, else libcurl-gnutls.so.4) and calls `curl_global_init` once per process.
/// Returns NULL when libcurl is usable, else a message naming what failed (the same one on every later call).
const char *beaconbridge_curl_load(void);

/// The name of the library that was loaded (after a successful `beaconbridge_curl_load`), else NULL.
const char *beaconbridge_curl_library(void);

// Each forwards to the libcurl function of the same name; call only after `beaconbridge_curl_load` succeeded.
CURL *beaconbridge_curl_easy_init(void);
void beaconbridge_curl_easy_cleanup(CURL *handle);
void beaconbridge_curl_easy_reset(CURL *handle);
CURLcode beaconbridge_curl_easy_perform(CURL *handle);
const char *beaconbridge_curl_easy_strerror(CURLcode code);
struct curl_slist *beaconbridge_curl_slist_append(struct curl_slist *list, const char *line);
void beaconbridge_curl_slist_free_all(struct curl_slist *list);

// `curl_easy_setopt` is variadic, which Swift cannot call: one typed wrapper per argument type.
CURLcode beaconbridge_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode beaconbridge_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode beaconbridge_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode beaconbridge_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
typedef size_t (*beaconbridge_curl_write_callback)(char *data, size_t size, size_t count, void *context);
CURLcode beaconbridge_curl_setopt_write(CURL *handle, CURLoption option, beaconbridge_curl_write_callback callback);

/// `curl_easy_getinfo` is variadic too: the response code.
CURLcode beaconbridge_curl_response_code(CURL *handle, long *code);
/// The `Retry-After` header as seconds (-1 when absent); libcurl 7.66 and later.
CURLcode beaconbridge_curl_retry_after(CURL *handle, long long *seconds);
#endif
