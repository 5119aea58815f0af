// A small C bridge to libcurl, loaded with dlopen on first use.
//
// Why: linking libcurl (directly or through FoundationNetworking) makes the
// dynamic loader map it and some thirty libraries it needs (TLS, Kerberos,
// LDAP, ...) at every start — measured 7.4 ms of a 13.5 ms start here. Most
// agent processes (a script asking for a cached token) never touch the
// network, so the network stack is loaded only when a request is made.
// C rather than Swift because curl_easy_setopt is variadic.
#ifndef AUTH_AGENT_CURL_SHIM_H
#define AUTH_AGENT_CURL_SHIM_H

#include <stddef.h>

enum {
    ACURL_OK = 0,
    ACURL_UNAVAILABLE = 1,   // libcurl could not be loaded
    ACURL_TIMEOUT = 2,
    ACURL_TOO_LARGE = 3,     // the response exceeded max_response bytes
    ACURL_CANCELLED = 4,
    ACURL_CONNECT_FAILED = 5,
    ACURL_RESOLVE_FAILED = 6,
    ACURL_TLS_FAILED = 7,
    ACURL_FAILED = 8,        // anything else (reset, empty reply, ...)
    ACURL_HEADERS_TOO_LARGE = 9  // the response's headers exceeded ACURL_MAX_HEADER_BYTES
};

/// The most header bytes accepted, over every response of an exchange (a 100 Continue's too).
#define ACURL_MAX_HEADER_BYTES 65536

typedef struct {
    long status;
    unsigned char *body;
    size_t body_len;
    char *headers;           // the raw header lines of every response received, CRLF-separated
    size_t headers_len;
} acurl_response;

/// Loads libcurl once; returns 1 when it is available.
int acurl_load(void);

/// Performs one HTTP exchange, blocking. Redirects are never followed; only
/// http and https are allowed. `cancel` is polled during the transfer.
/// `no_proxy`: connect directly whatever proxy the environment names.
int acurl_perform(const char *method, const char *url,
                  const char *const *headers, size_t header_count,
                  const unsigned char *body, size_t body_len, int has_body,
                  long timeout_ms, size_t max_response, int no_proxy,
                  const volatile int *cancel, acurl_response *out);

/// Receives each piece of a streamed body as it arrives, with the header bytes received
/// so far (complete by then: curl hands over the body after the headers); 0 ends the transfer.
typedef int (*acurl_chunk_fn)(void *context, const char *headers, size_t headers_len,
                              const unsigned char *data, size_t length);

/// `acurl_perform` for a body read as it arrives (an SSE stream): pieces go to `on_chunk`,
/// none is kept, so there is no size cap here (the reader bounds what it gathers).
/// `out` gets the status and headers.
int acurl_stream(const char *method, const char *url,
                 const char *const *headers, size_t header_count,
                 const unsigned char *body, size_t body_len, int has_body,
                 long timeout_ms, int no_proxy, const volatile int *cancel, acurl_response *out,
                 acurl_chunk_fn on_chunk, void *context);

void acurl_response_free(acurl_response *response);

#endif
