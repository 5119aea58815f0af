#include "SecretShim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The GLib, GIO and libsecret types used, declared here with their stable ABI
// so that building needs no development headers.
typedef int gboolean;
typedef unsigned int guint;
typedef struct { unsigned int domain; int code; char *message; } GError;
typedef struct GList { void *data; struct GList *next; struct GList *prev; } GList;
typedef void GHashTable;
typedef void GObject;
typedef enum { SECRET_SCHEMA_ATTRIBUTE_STRING = 0 } SecretSchemaAttributeType;
typedef struct { const char *name; SecretSchemaAttributeType type; } SecretSchemaAttribute;
typedef struct {
    const char *name;
    int flags;
    SecretSchemaAttribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} SecretSchema;
#define SECRET_SERVICE_OPEN_SESSION (1 << 1)
#define SECRET_SEARCH_ALL (1 << 1)
#define SECRET_COLLECTION_NONE 0
#define G_BUS_TYPE_SESSION 2

static const SecretSchema schema = {
    "io.github.auth-agent.Session", 0,
    {{"application", SECRET_SCHEMA_ATTRIBUTE_STRING}, {"provider", SECRET_SCHEMA_ATTRIBUTE_STRING},
     {"account", SECRET_SCHEMA_ATTRIBUTE_STRING}, {"record", SECRET_SCHEMA_ATTRIBUTE_STRING},
     {"store", SECRET_SCHEMA_ATTRIBUTE_STRING}, {"item", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}},
    0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

static struct {
    void *(*service_get_sync)(int, void *, GError **);
    void (*service_disconnect)(void);
    GList *(*service_search_sync)(void *, const SecretSchema *, GHashTable *, int, void *, GError **);
    gboolean (*service_store_sync)(void *, const SecretSchema *, GHashTable *, const char *, const char *, void *, void *, GError **);
    void *(*collection_for_alias_sync)(void *, const char *, int, void *, GError **);
    gboolean (*collection_get_locked)(void *);
    gboolean (*item_get_locked)(void *);
    gboolean (*item_load_secret_sync)(void *, void *, GError **);
    void *(*item_get_secret)(void *);
    gboolean (*item_delete_sync)(void *, void *, GError **);
    GHashTable *(*item_get_attributes)(void *);
    void *(*value_new)(const char *, long, const char *);
    const char *(*value_get_text)(void *);
    void (*value_unref)(void *);
    GHashTable *(*hash_table_new)(guint (*)(const void *), gboolean (*)(const void *, const void *));
    gboolean (*hash_table_insert)(GHashTable *, void *, void *);
    void *(*hash_table_lookup)(GHashTable *, const void *);
    void (*hash_table_unref)(GHashTable *);
    guint (*str_hash)(const void *);
    gboolean (*str_equal)(const void *, const void *);
    void (*list_free_full)(GList *, void (*)(void *));
    void (*object_unref)(void *);
    void (*error_free)(GError *);
    void *(*bus_get_sync)(int, void *, GError **);
    void *(*connection_call_sync)(void *, const char *, const char *, const char *, const char *, void *, void *, int, int, void *, GError **);
    void (*variant_unref)(void *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int loaded = 0;

#define BIND(field, symbol) (*(void **)&api.field = dlsym(library, symbol)) != NULL

static void load(void) {
    static const char *const names[] = {"libsecret-1.so.0", "libsecret-1.so", NULL};
    void *library = NULL;
    for (int i = 0; names[i] && !library; i++) library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    // dlsym on libsecret's handle also finds the GLib, GObject and GIO symbols it depends on.
    loaded = BIND(service_get_sync, "secret_service_get_sync") && BIND(service_disconnect, "secret_service_disconnect")
        && BIND(service_search_sync, "secret_service_search_sync") && BIND(service_store_sync, "secret_service_store_sync")
        && BIND(collection_for_alias_sync, "secret_collection_for_alias_sync")
        && BIND(collection_get_locked, "secret_collection_get_locked") && BIND(item_get_locked, "secret_item_get_locked")
        && BIND(item_load_secret_sync, "secret_item_load_secret_sync") && BIND(item_get_secret, "secret_item_get_secret")
        && BIND(item_delete_sync, "secret_item_delete_sync") && BIND(item_get_attributes, "secret_item_get_attributes")
        && BIND(value_new, "secret_value_new") && BIND(value_get_text, "secret_value_get_text")
        && BIND(value_unref, "secret_value_unref") && BIND(hash_table_new, "g_hash_table_new")
        && BIND(hash_table_insert, "g_hash_table_insert") && BIND(hash_table_lookup, "g_hash_table_lookup")
        && BIND(hash_table_unref, "g_hash_table_unref") && BIND(str_hash, "g_str_hash") && BIND(str_equal, "g_str_equal")
        && BIND(list_free_full, "g_list_free_full") && BIND(object_unref, "g_object_unref")
        && BIND(error_free, "g_error_free") && BIND(bus_get_sync, "g_bus_get_sync")
        && BIND(connection_call_sync, "g_dbus_connection_call_sync") && BIND(variant_unref, "g_variant_unref");
}

int asecret_load(void) {
    pthread_once(&once, load);
    return loaded;
}

void asecret_free(char *text) {
    if (!text) return;
    volatile char *p = text;
    while (*p) *p++ = 0;
    free(text);
}

/// Moves a GError's message into *error and frees it; returns ASECRET_FAILED.
static int failed(GError *e, const char *fallback, char **error) {
    if (error) *error = strdup(e && e->message ? e->message : fallback);
    if (e) api.error_free(e);
    return ASECRET_FAILED;
}

static int unavailable(char **error) {
    if (error) *error = strdup("libsecret-1.so.0 could not be loaded");
    return ASECRET_UNAVAILABLE;
}

static GHashTable *table(const char *const *attributes) {
    GHashTable *t = api.hash_table_new(api.str_hash, api.str_equal);
    for (int i = 0; attributes[i] && attributes[i + 1]; i += 2) api.hash_table_insert(t, (void *)attributes[i], (void *)attributes[i + 1]);
    return t;
}

int asecret_probe(int timeout_ms, char **error) {
    if (!asecret_load()) return unavailable(error);
    GError *e = NULL;
    void *bus = api.bus_get_sync(G_BUS_TYPE_SESSION, NULL, &e);
    if (!bus) return failed(e, "no session bus", error);
    void *reply = api.connection_call_sync(bus, "org.freedesktop.secrets", "/org/freedesktop/secrets",
                                           "org.freedesktop.DBus.Peer", "Ping", NULL, NULL, 0, timeout_ms, NULL, &e);
    api.object_unref(bus);
    if (!reply) return failed(e, "no answer", error);
    api.variant_unref(reply);
    return ASECRET_OK;
}

/// The items matching `attributes` (locked ones included), or NULL with *status set.
static GList *search(const char *const *attributes, int *status, char **error) {
    GError *e = NULL;
    void *service = api.service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &e);
    if (!service) {
        *status = failed(e, "the Secret Service is not available", error);
        return NULL;
    }
    GHashTable *t = table(attributes);
    GList *items = api.service_search_sync(service, &schema, t, SECRET_SEARCH_ALL, NULL, &e);
    api.hash_table_unref(t);
    api.object_unref(service);
    *status = e ? failed(e, "search failed", error) : (items ? ASECRET_OK : ASECRET_NOT_FOUND);
    return items;
}

static int locked(char **error) {
    if (error) *error = strdup("the keyring is locked");
    return ASECRET_LOCKED;
}

static int default_collection_state(char **error);

static int lookup_once(const char *const *attributes, char **secret, char **error) {
    int status;
    GList *items = search(attributes, &status, error);
    if (!items) {
        if (status != ASECRET_NOT_FOUND) return status;
        int state = default_collection_state(error);
        return state == ASECRET_OK ? ASECRET_NOT_FOUND : state;
    }
    void *item = items->data;
    if (api.item_get_locked(item)) status = locked(error);
    else {
        GError *e = NULL;
        void *value = api.item_load_secret_sync(item, NULL, &e) ? api.item_get_secret(item) : NULL;
        const char *text = value ? api.value_get_text(value) : NULL;
        if (text) *secret = strdup(text);
        else status = e ? failed(e, "", error) : locked(error);
        if (value) api.value_unref(value);
    }
    api.list_free_full(items, api.object_unref);
    return status;
}

/// A lookup finding nothing in a locked collection looks like "no item": tell them apart.
static int default_collection_state(char **error) {
    GError *e = NULL;
    void *service = api.service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &e);
    if (!service) return failed(e, "the Secret Service is not available", error);
    void *collection = api.collection_for_alias_sync(service, "default", SECRET_COLLECTION_NONE, NULL, &e);
    api.object_unref(service);
    if (!collection) return e ? failed(e, "", error) : ASECRET_OK;
    int status = api.collection_get_locked(collection) ? locked(error) : ASECRET_OK;
    api.object_unref(collection);
    return status;
}

static int store_once(const char *const *attributes, const char *label, const char *secret, char **error) {
    int status = default_collection_state(error);
    if (status != ASECRET_OK) return status;
    GError *e = NULL;
    void *service = api.service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &e);
    if (!service) return failed(e, "the Secret Service is not available", error);
    GHashTable *t = table(attributes);
    void *value = api.value_new(secret, -1, "text/plain");
    gboolean ok = api.service_store_sync(service, &schema, t, "default", label, value, NULL, &e);
    api.value_unref(value);
    api.hash_table_unref(t);
    api.object_unref(service);
    return ok ? ASECRET_OK : failed(e, "storing failed", error);
}

static int delete_once(const char *const *attributes, char **error) {
    int status;
    GList *items = search(attributes, &status, error);
    if (!items) return status == ASECRET_NOT_FOUND ? ASECRET_OK : status;
    for (GList *i = items; i && status == ASECRET_OK; i = i->next) {
        GError *e = NULL;
        if (api.item_get_locked(i->data)) status = locked(error);
        else if (!api.item_delete_sync(i->data, NULL, &e)) status = failed(e, "deleting failed", error);
    }
    api.list_free_full(items, api.object_unref);
    return status;
}

static int list_once(const char *const *attributes, const char *name, const char *unless, char **values, char **error) {
    int status;
    GList *items = search(attributes, &status, error);
    size_t length = 0;
    char *out = calloc(1, 1);
    for (GList *i = items; i && out; i = i->next) {
        GHashTable *found = api.item_get_attributes(i->data);
        const char *value = found ? api.hash_table_lookup(found, name) : NULL;
        if (value && unless && api.hash_table_lookup(found, unless)) value = NULL;
        if (value) {
            size_t n = strlen(value);
            char *grown = realloc(out, length + n + 2);
            if (!grown) { free(out); out = NULL; break; }
            out = grown;
            memcpy(out + length, value, n);
            length += n;
            out[length++] = '\n';
            out[length] = 0;
        }
        if (found) api.hash_table_unref(found);
    }
    if (items) api.list_free_full(items, api.object_unref);
    if (status == ASECRET_NOT_FOUND) status = ASECRET_OK;
    if (status == ASECRET_OK) *values = out; else free(out);
    return status;
}

/// Runs one operation under the mutex; after a failure (not "locked", not "missing")
/// drops libsecret's cached service — it may be bound to a daemon that died — and tries once more.
#define RUN(call) do { \
    if (!asecret_load()) return unavailable(error); \
    pthread_mutex_lock(&mutex); \
    int status = call; \
    if (status == ASECRET_FAILED) { \
        if (error) { free(*error); *error = NULL; } \
        api.service_disconnect(); \
        status = call; \
    } \
    pthread_mutex_unlock(&mutex); \
    return status; \
} while (0)

int asecret_store(const char *const *attributes, const char *label, const char *secret, char **error) {
    RUN(store_once(attributes, label, secret, error));
}

int asecret_lookup(const char *const *attributes, char **secret, char **error) {
    RUN(lookup_once(attributes, secret, error));
}

int asecret_delete(const char *const *attributes, char **error) {
    RUN(delete_once(attributes, error));
}

int asecret_list(const char *const *attributes, const char *name, const char *unless, char **values, char **error) {
    RUN(list_once(attributes, name, unless, values, error));
}
