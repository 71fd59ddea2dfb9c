// The libcurl loader: see include/beaconbridge_curl.h.
#include "beaconbridge_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure;
static char failure_text[512];
static const char *loaded_name;

/// Resolves `name` into `*slot`; false (with `failure` set) when the library lacks it.
static int resolve(void *library, const char *name, void **slot) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(failure_text, sizeof failure_text, "%s has no %s", loaded_name, name);
        failure = failure_text;
        return 0;
    }
    return 1;
}

static void load(void) {
    // Debian's libcurl4 (OpenSSL) first, then libcurl3-gnutls: the same ABI under another name.
    static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (library != NULL) loaded_name = names[i];
    }
    if (library == NULL) {
        snprintf(failure_text, sizeof failure_text,
                 "libcurl is not installed (neither libcurl.so.4 nor libcurl-gnutls.so.4 could be loaded; "
                 "install the package libcurl4, libcurl4t64 or libcurl3-gnutls)");
        failure = failure_text;
        return;
    }
    int ok = resolve(library, "curl_global_init", (void **)&api.global_init)
        && resolve(library, "curl_easy_init", (void **)&api.easy_init)
        && resolve(library, "curl_easy_cleanup", (void **)&api.easy_cleanup)
        && resolve(library, "curl_easy_reset", (void **)&api.easy_reset)
        && resolve(library, "curl_easy_perform", (void **)&api.easy_perform)
        && resolve(library, "curl_easy_strerror", (void **)&api.easy_strerror)
        && resolve(library, "curl_easy_setopt", (void **)&api.easy_setopt)
        && resolve(library, "curl_easy_getinfo", (void **)&api.easy_getinfo)
        && resolve(library, "curl_slist_append", (void **)&api.slist_append)
        && resolve(library, "curl_slist_free_all", (void **)&api.slist_free_all);
    if (!ok) return;
    CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(failure_text, sizeof failure_text, "curl_global_init failed: %s", api.easy_strerror(code));
        failure = failure_text;
    }
}

const char *beaconbridge_curl_load(void) {
    pthread_once(&once, load);
    return failure;
}

const char *beaconbridge_curl_library(void) {
    return beaconbridge_curl_load() == NULL ? loaded_name : NULL;
}

CURL *beaconbridge_curl_easy_init(void) { return api.easy_init(); }
void beaconbridge_curl_easy_cleanup(CURL *handle) { api.easy_cleanup(handle); }
void beaconbridge_curl_easy_reset(CURL *handle) { api.easy_reset(handle); }
CURLcode beaconbridge_curl_easy_perform(CURL *handle) { return api.easy_perform(handle); }
const char *beaconbridge_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }

struct curl_slist *beaconbridge_curl_slist_append(struct curl_slist *list, const char *line) {
    return api.slist_append(list, line);
}

void beaconbridge_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }

CURLcode beaconbridge_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode beaconbridge_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode beaconbridge_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode beaconbridge_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return api.easy_setopt(handle, option, value);
}

CURLcode beaconbridge_curl_setopt_write(CURL *handle, CURLoption option, beaconbridge_curl_write_callback callback) {
    return api.easy_setopt(handle, option, callback);
}

CURLcode beaconbridge_curl_response_code(CURL *handle, long *code) {
    return api.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

CURLcode beaconbridge_curl_retry_after(CURL *handle, long long *seconds) {
    curl_off_t value = -1;
    CURLcode result = api.easy_getinfo(handle, CURLINFO_RETRY_AFTER, &value);
    *seconds = (long long)value;
    return result;
}
