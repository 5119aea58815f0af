#include "CurlShim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The few libcurl entry points used, with the option numbers of curl.h (stable ABI).
typedef void CURL;
typedef void CURLM;
struct curl_slist;
// curl.h's CURLMsg: what `curl_multi_info_read` reports about a finished transfer.
struct curl_msg {
    int msg;
    CURL *easy_handle;
    union { void *whatever; int result; } data;
};
#define CURLMSG_DONE 1
#define CURLE_ABORTED_BY_CALLBACK 42
#define CURLE_FAILED_INIT 2
#define CURLOPT_WRITEDATA 10001
#define CURLOPT_URL 10002
#define CURLOPT_PROXY 10004
#define CURLOPT_WRITEFUNCTION 20011
#define CURLOPT_POSTFIELDS 10015
#define CURLOPT_HTTPHEADER 10023
#define CURLOPT_HEADERDATA 10029
#define CURLOPT_CUSTOMREQUEST 10036
#define CURLOPT_NOPROGRESS 43
#define CURLOPT_FOLLOWLOCATION 52
#define CURLOPT_XFERINFODATA 10057
#define CURLOPT_HEADERFUNCTION 20079
#define CURLOPT_HTTPGET 80
#define CURLOPT_NOSIGNAL 99
#define CURLOPT_POSTFIELDSIZE_LARGE 30120
#define CURLOPT_TIMEOUT_MS 155
#define CURLOPT_PROTOCOLS 181
#define CURLOPT_XFERINFOFUNCTION 20219
#define CURLINFO_RESPONSE_CODE 0x200002
#define CURLPROTO_HTTP 1L
#define CURLPROTO_HTTPS 2L
#define CURL_GLOBAL_ALL 3L

static struct {
    CURL *(*easy_init)(void);
    int (*easy_setopt)(CURL *, int, ...);
    int (*easy_perform)(CURL *);
    int (*easy_getinfo)(CURL *, int, ...);
    void (*easy_cleanup)(CURL *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    int (*global_init)(long);
    // The multi interface (libcurl ≥ 7.66 for `multi_poll`), so a cancelled transfer ends within
    // a poll interval; without it `easy_perform` is used, which looks at the flag about once a second.
    CURLM *(*multi_init)(void);
    int (*multi_add_handle)(CURLM *, CURL *);
    int (*multi_remove_handle)(CURLM *, CURL *);
    int (*multi_perform)(CURLM *, int *);
    int (*multi_poll)(CURLM *, void *, unsigned int, int, int *);
    struct curl_msg *(*multi_info_read)(CURLM *, int *);
    int (*multi_cleanup)(CURLM *);
    int has_multi;
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;

static void load(void) {
    static const char *const names[] = {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4", "libcurl.4.dylib", NULL};
    void *library = NULL;
    for (int i = 0; names[i] && !library; i++) library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    *(void **)&api.easy_init = dlsym(library, "curl_easy_init");
    *(void **)&api.easy_setopt = dlsym(library, "curl_easy_setopt");
    *(void **)&api.easy_perform = dlsym(library, "curl_easy_perform");
    *(void **)&api.easy_getinfo = dlsym(library, "curl_easy_getinfo");
    *(void **)&api.easy_cleanup = dlsym(library, "curl_easy_cleanup");
    *(void **)&api.slist_append = dlsym(library, "curl_slist_append");
    *(void **)&api.slist_free_all = dlsym(library, "curl_slist_free_all");
    *(void **)&api.global_init = dlsym(library, "curl_global_init");
    if (!api.easy_init || !api.easy_setopt || !api.easy_perform || !api.easy_getinfo || !api.easy_cleanup ||
        !api.slist_append || !api.slist_free_all || !api.global_init) return;
    if (api.global_init(CURL_GLOBAL_ALL) != 0) return;
    *(void **)&api.multi_init = dlsym(library, "curl_multi_init");
    *(void **)&api.multi_add_handle = dlsym(library, "curl_multi_add_handle");
    *(void **)&api.multi_remove_handle = dlsym(library, "curl_multi_remove_handle");
    *(void **)&api.multi_perform = dlsym(library, "curl_multi_perform");
    *(void **)&api.multi_poll = dlsym(library, "curl_multi_poll");
    *(void **)&api.multi_info_read = dlsym(library, "curl_multi_info_read");
    *(void **)&api.multi_cleanup = dlsym(library, "curl_multi_cleanup");
    api.has_multi = api.multi_init && api.multi_add_handle && api.multi_remove_handle && api.multi_perform &&
        api.multi_poll && api.multi_info_read && api.multi_cleanup;
    loaded = 1;
}

int acurl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

typedef struct {
    acurl_response *out;
    size_t max;
    int too_large;
    int headers_too_large;
    const volatile int *cancel;
    acurl_chunk_fn on_chunk;  // streaming: each body piece goes here instead of into `out->body`
    void *chunk_context;
    int stopped;              // `on_chunk` asked to end the transfer
} exchange;

static int append(unsigned char **buffer, size_t *length, const char *data, size_t n) {
    unsigned char *grown = realloc(*buffer, *length + n + 1);
    if (!grown) return 0;
    memcpy(grown + *length, data, n);
    *length += n;
    grown[*length] = 0;
    *buffer = grown;
    return 1;
}

static size_t on_body(char *data, size_t size, size_t count, void *context) {
    exchange *x = context;
    size_t n = size * count;
    if (x->on_chunk) {
        if (x->on_chunk(x->chunk_context, x->out->headers, x->out->headers_len, (const unsigned char *)data, n)) return n;
        x->stopped = 1;
        return 0;
    }
    if (x->out->body_len + n > x->max) {
        x->too_large = 1;
        return 0;
    }
    return append(&x->out->body, &x->out->body_len, data, n) ? n : 0;
}

static size_t on_header(char *data, size_t size, size_t count, void *context) {
    exchange *x = context;
    size_t n = size * count;
    if (x->out->headers_len + n > ACURL_MAX_HEADER_BYTES) {
        x->headers_too_large = 1;
        return 0;
    }
    return append((unsigned char **)&x->out->headers, &x->out->headers_len, data, n) ? n : 0;
}

static int on_progress(void *context, long long a, long long b, long long c, long long d) {
    (void)a; (void)b; (void)c; (void)d;
    exchange *x = context;
    return (x->cancel && *x->cancel) ? 1 : 0;
}

/// Milliseconds between looks at the cancel flag while a transfer waits on the network.
#define CANCEL_POLL_MS 20

/// Runs the transfer, ending it within CANCEL_POLL_MS of `*cancel` becoming non-zero:
/// `easy_perform` calls the progress callback only about once a second while nothing
/// arrives, so a cancelled request to a slow server would hold its thread (and, in the
/// agent, the provider's later requests) for up to a second.
static int run(CURL *handle, const volatile int *cancel) {
    CURLM *multi = api.has_multi ? api.multi_init() : NULL;
    if (!multi) return api.easy_perform(handle);
    if (api.multi_add_handle(multi, handle) != 0) {
        api.multi_cleanup(multi);
        return api.easy_perform(handle);
    }
    int running = 1, code = -1;
    while (code < 0) {
        if (api.multi_perform(multi, &running) != 0) code = CURLE_FAILED_INIT;
        else if (!running) break;
        else if (cancel && *cancel) code = CURLE_ABORTED_BY_CALLBACK;
        else {
            int ready = 0;
            if (api.multi_poll(multi, NULL, 0, CANCEL_POLL_MS, &ready) != 0) code = CURLE_FAILED_INIT;
        }
    }
    if (code < 0) {
        code = CURLE_FAILED_INIT;
        int left = 0;
        struct curl_msg *message;
        while ((message = api.multi_info_read(multi, &left)))
            if (message->msg == CURLMSG_DONE && message->easy_handle == handle) code = message->data.result;
    }
    api.multi_remove_handle(multi, handle);
    api.multi_cleanup(multi);
    return code;
}

static int perform(const char *method, const char *url,
                   const char *const *headers, size_t header_count,
                   const unsigned char *body, size_t body_len, int has_body,
                   long timeout_ms, size_t max_response, int no_proxy,
                   const volatile int *cancel, acurl_response *out,
                   acurl_chunk_fn on_chunk, void *chunk_context) {
    memset(out, 0, sizeof *out);
    if (!acurl_load()) return ACURL_UNAVAILABLE;
    CURL *handle = api.easy_init();
    if (!handle) return ACURL_FAILED;
    exchange x = {out, max_response, 0, 0, cancel, on_chunk, chunk_context, 0};
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < header_count; i++) list = api.slist_append(list, headers[i]);
    // No "Expect: 100-continue" round trip before a body.
    list = api.slist_append(list, "Expect:");

    api.easy_setopt(handle, CURLOPT_URL, url);
    api.easy_setopt(handle, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
    api.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    api.easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    api.easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body);
    api.easy_setopt(handle, CURLOPT_WRITEDATA, &x);
    api.easy_setopt(handle, CURLOPT_HEADERFUNCTION, on_header);
    api.easy_setopt(handle, CURLOPT_HEADERDATA, &x);
    api.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
    api.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
    api.easy_setopt(handle, CURLOPT_XFERINFODATA, &x);
    api.easy_setopt(handle, CURLOPT_HTTPHEADER, list);
    // An empty proxy disables the environment's proxy variables for this transfer (curl's documented way).
    if (no_proxy) api.easy_setopt(handle, CURLOPT_PROXY, "");
    if (has_body) {
        api.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (long long)body_len);
        api.easy_setopt(handle, CURLOPT_POSTFIELDS, body_len ? (const char *)body : "");
    } else {
        api.easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    }
    if (strcmp(method, has_body ? "POST" : "GET") != 0) api.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, method);

    int code = run(handle, cancel);
    long status = 0;
    api.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    out->status = status;
    api.easy_cleanup(handle);
    api.slist_free_all(list);

    if (code == 0) return ACURL_OK;
    if (x.too_large) return ACURL_TOO_LARGE;
    if (x.headers_too_large) return ACURL_HEADERS_TOO_LARGE;
    if ((cancel && *cancel) || x.stopped) return ACURL_CANCELLED;
    switch (code) {
    case 28: return ACURL_TIMEOUT;                  // CURLE_OPERATION_TIMEDOUT
    case 7: return ACURL_CONNECT_FAILED;            // CURLE_COULDNT_CONNECT
    case 6: case 5: return ACURL_RESOLVE_FAILED;    // CURLE_COULDNT_RESOLVE_HOST / _PROXY
    case 35: case 51: case 58: case 59: case 60: case 77: case 83: case 90: case 91:
        return ACURL_TLS_FAILED;                    // handshake, peer verification, CA problems
    default: return ACURL_FAILED;
    }
}

int acurl_perform(const char *method, const char *url,
                  const char *const *headers, size_t header_count,
                  const unsigned char *body, size_t body_len, int has_body,
                  long timeout_ms, size_t max_response, int no_proxy,
                  const volatile int *cancel, acurl_response *out) {
    return perform(method, url, headers, header_count, body, body_len, has_body, timeout_ms, max_response, no_proxy,
                   cancel, out, NULL, NULL);
}

int acurl_stream(const char *method, const char *url,
                 const char *const *headers, size_t header_count,
                 const unsigned char *body, size_t body_len, int has_body,
                 long timeout_ms, int no_proxy, const volatile int *cancel, acurl_response *out,
                 acurl_chunk_fn on_chunk, void *context) {
    return perform(method, url, headers, header_count, body, body_len, has_body, timeout_ms, (size_t)-1, no_proxy,
                   cancel, out, on_chunk, context);
}

void acurl_response_free(acurl_response *response) {
    free(response->body);
    free(response->headers);
    response->body = NULL;
    response->headers = NULL;
}
