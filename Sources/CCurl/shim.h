#ifndef BEACONBRIDGE_CCURL_SHIM_H
#define BEACONBRIDGE_CCURL_SHIM_H
#include <curl/curl.h>

/// `curl_easy_setopt` is variadic, which Swift cannot call: one typed wrapper per argument type.
static inline CURLcode beaconbridge_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode beaconbridge_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode beaconbridge_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode beaconbridge_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*beaconbridge_curl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode beaconbridge_curl_setopt_write(CURL *handle, CURLoption option,
                                                      beaconbridge_curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

/// `curl_global_init(CURL_GLOBAL_DEFAULT)` (the flags are a macro expression Swift may not import).
static inline CURLcode beaconbridge_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

/// `curl_easy_getinfo` is variadic too: the response code.
static inline CURLcode beaconbridge_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

/// The `Retry-After` header as seconds (-1 when absent); libcurl 7.66 and later.
static inline CURLcode beaconbridge_curl_retry_after(CURL *handle, long long *seconds) {
    curl_off_t value = -1;
    CURLcode result = curl_easy_getinfo(handle, CURLINFO_RETRY_AFTER, &value);
    *seconds = (long long)value;
    return result;
}
#endif
