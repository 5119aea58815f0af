// A small C bridge to libsecret (the freedesktop Secret Service client), loaded
// with dlopen on first use, like CurlShim loads libcurl.
//
// Why: no link-time dependency — the agent starts, and the file store works,
// on machines without libsecret; most processes never touch the keyring. C
// rather than Swift because libsecret's API takes variadic arguments, GLib
// hash tables and GError out-parameters.
//
// Every call is serialised by one mutex. A call that fails because the daemon
// went away (libsecret stays bound to the daemon it first talked to) is retried
// once after secret_service_disconnect(). Secrets are returned in malloc'd
// buffers that asecret_free wipes before freeing.
#ifndef AUTH_AGENT_SECRET_SHIM_H
#define AUTH_AGENT_SECRET_SHIM_H

enum {
    ASECRET_OK = 0,
    ASECRET_NOT_FOUND = 1,   // no item matches
    ASECRET_LOCKED = 2,      // the item or the default collection is locked
    ASECRET_UNAVAILABLE = 3, // libsecret could not be loaded
    ASECRET_FAILED = 4       // the session bus or the Secret Service failed; *error says how
};

/// Loads libsecret once; returns 1 when it is available.
int asecret_load(void);

/// Whether a Secret Service answers on the session bus within `timeout_ms`
/// (a D-Bus Ping of org.freedesktop.secrets; may start an activatable daemon).
int asecret_probe(int timeout_ms, char **error);

/// `attributes` are name, value pairs ended by NULL (names from the agent's schema:
/// application, provider, account, record, store, item). Stores `secret` (UTF-8 text) in the default collection.
int asecret_store(const char *const *attributes, const char *label, const char *secret, char **error);

/// The secret of the one item matching `attributes` into *secret.
int asecret_lookup(const char *const *attributes, char **secret, char **error);

/// Deletes every item matching `attributes`; ASECRET_OK also when there was none.
int asecret_delete(const char *const *attributes, char **error);

/// The values of attribute `name` of every item matching `attributes` and without
/// attribute `unless` (when not NULL), newline-separated, into *values.
int asecret_list(const char *const *attributes, const char *name, const char *unless, char **values, char **error);

/// Wipes and frees a string returned by this shim.
void asecret_free(char *text);

#endif
