#include "CryptoShim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

// The libcrypto functions used, declared here with their stable ABI so that
// building needs no development headers. The EC_KEY functions are deprecated
// in OpenSSL 3 but exported and supported; they are the shortest path to raw
// scalars and coordinates, which JWK and JWS want.
typedef void EC_KEY;
typedef void EC_GROUP;
typedef void EC_POINT;
typedef void BIGNUM;
typedef void BN_CTX;
typedef void ECDSA_SIG;
#define NID_X9_62_prime256v1 415

static struct {
    EC_KEY *(*key_new_by_curve_name)(int);
    void (*key_free)(EC_KEY *);
    int (*key_generate_key)(EC_KEY *);
    int (*key_check_key)(const EC_KEY *);
    const EC_GROUP *(*key_get0_group)(const EC_KEY *);
    const BIGNUM *(*key_get0_private_key)(const EC_KEY *);
    const EC_POINT *(*key_get0_public_key)(const EC_KEY *);
    int (*key_set_private_key)(EC_KEY *, const BIGNUM *);
    int (*key_set_public_key)(EC_KEY *, const EC_POINT *);
    int (*key_set_public_key_affine_coordinates)(EC_KEY *, BIGNUM *, BIGNUM *);
    EC_POINT *(*point_new)(const EC_GROUP *);
    void (*point_free)(EC_POINT *);
    int (*point_mul)(const EC_GROUP *, EC_POINT *, const BIGNUM *, const EC_POINT *, const BIGNUM *, BN_CTX *);
    int (*point_get_affine_coordinates)(const EC_GROUP *, const EC_POINT *, BIGNUM *, BIGNUM *, BN_CTX *);
    BIGNUM *(*bn_new)(void);
    void (*bn_clear_free)(BIGNUM *);
    BIGNUM *(*bn_bin2bn)(const unsigned char *, int, BIGNUM *);
    int (*bn_bn2binpad)(const BIGNUM *, unsigned char *, int);
    ECDSA_SIG *(*ecdsa_do_sign)(const unsigned char *, int, EC_KEY *);
    int (*ecdsa_do_verify)(const unsigned char *, int, const ECDSA_SIG *, EC_KEY *);
    ECDSA_SIG *(*sig_new)(void);
    void (*sig_free)(ECDSA_SIG *);
    void (*sig_get0)(const ECDSA_SIG *, const BIGNUM **, const BIGNUM **);
    int (*sig_set0)(ECDSA_SIG *, BIGNUM *, BIGNUM *);
    unsigned char *(*sha256)(const unsigned char *, size_t, unsigned char *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;

#define BIND(field, symbol) (*(void **)&api.field = dlsym(library, symbol)) != NULL

static void load(void) {
    static const char *const names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so", "libcrypto.dylib", NULL};
    void *library = NULL;
    for (int i = 0; names[i] && !library; i++) library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    loaded = BIND(key_new_by_curve_name, "EC_KEY_new_by_curve_name") && BIND(key_free, "EC_KEY_free")
        && BIND(key_generate_key, "EC_KEY_generate_key") && BIND(key_check_key, "EC_KEY_check_key")
        && BIND(key_get0_group, "EC_KEY_get0_group") && BIND(key_get0_private_key, "EC_KEY_get0_private_key")
        && BIND(key_get0_public_key, "EC_KEY_get0_public_key") && BIND(key_set_private_key, "EC_KEY_set_private_key")
        && BIND(key_set_public_key, "EC_KEY_set_public_key")
        && BIND(key_set_public_key_affine_coordinates, "EC_KEY_set_public_key_affine_coordinates")
        && BIND(point_new, "EC_POINT_new") && BIND(point_free, "EC_POINT_free") && BIND(point_mul, "EC_POINT_mul")
        && BIND(point_get_affine_coordinates, "EC_POINT_get_affine_coordinates_GFp")
        && BIND(bn_new, "BN_new") && BIND(bn_clear_free, "BN_clear_free") && BIND(bn_bin2bn, "BN_bin2bn")
        && BIND(bn_bn2binpad, "BN_bn2binpad") && BIND(ecdsa_do_sign, "ECDSA_do_sign") && BIND(ecdsa_do_verify, "ECDSA_do_verify")
        && BIND(sig_new, "ECDSA_SIG_new") && BIND(sig_free, "ECDSA_SIG_free") && BIND(sig_get0, "ECDSA_SIG_get0")
        && BIND(sig_set0, "ECDSA_SIG_set0") && BIND(sha256, "SHA256");
}

int acrypto_load(void) {
    pthread_once(&once, load);
    return loaded;
}

void *acrypto_p256_generate(void) {
    if (!acrypto_load()) return NULL;
    EC_KEY *key = api.key_new_by_curve_name(NID_X9_62_prime256v1);
    if (key && api.key_generate_key(key) == 1) return key;
    if (key) api.key_free(key);
    return NULL;
}

void *acrypto_p256_from_private(const unsigned char d[32]) {
    if (!acrypto_load()) return NULL;
    EC_KEY *key = api.key_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *scalar = api.bn_bin2bn(d, 32, NULL);
    EC_POINT *point = key ? api.point_new(api.key_get0_group(key)) : NULL;
    int ok = key && scalar && point && api.key_set_private_key(key, scalar) == 1
        && api.point_mul(api.key_get0_group(key), point, scalar, NULL, NULL, NULL) == 1
        && api.key_set_public_key(key, point) == 1 && api.key_check_key(key) == 1;
    if (point) api.point_free(point);
    if (scalar) api.bn_clear_free(scalar);
    if (ok) return key;
    if (key) api.key_free(key);
    return NULL;
}

void *acrypto_p256_from_public(const unsigned char x[32], const unsigned char y[32]) {
    if (!acrypto_load()) return NULL;
    EC_KEY *key = api.key_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *bx = api.bn_bin2bn(x, 32, NULL), *by = api.bn_bin2bn(y, 32, NULL);
    // Checks that the point is on the curve.
    int ok = key && bx && by && api.key_set_public_key_affine_coordinates(key, bx, by) == 1;
    if (bx) api.bn_clear_free(bx);
    if (by) api.bn_clear_free(by);
    if (ok) return key;
    if (key) api.key_free(key);
    return NULL;
}

int acrypto_p256_private(const void *key, unsigned char d[32]) {
    const BIGNUM *scalar = api.key_get0_private_key(key);
    return scalar && api.bn_bn2binpad(scalar, d, 32) == 32;
}

int acrypto_p256_public(const void *key, unsigned char x[32], unsigned char y[32]) {
    const EC_POINT *point = api.key_get0_public_key(key);
    BIGNUM *bx = api.bn_new(), *by = api.bn_new();
    int ok = point && bx && by && api.point_get_affine_coordinates(api.key_get0_group(key), point, bx, by, NULL) == 1
        && api.bn_bn2binpad(bx, x, 32) == 32 && api.bn_bn2binpad(by, y, 32) == 32;
    if (bx) api.bn_clear_free(bx);
    if (by) api.bn_clear_free(by);
    return ok;
}

int acrypto_es256_sign(const void *key, const unsigned char *message, size_t length, unsigned char signature[64]) {
    unsigned char digest[32];
    if (!api.sha256(message, length, digest)) return 0;
    // ECDSA_do_sign only reads the key (its nonce comes from libcrypto's CSPRNG), so signing is safe from many threads.
    ECDSA_SIG *sig = api.ecdsa_do_sign(digest, 32, (EC_KEY *)key);
    if (!sig) return 0;
    const BIGNUM *r = NULL, *s = NULL;
    api.sig_get0(sig, &r, &s);
    int ok = r && s && api.bn_bn2binpad(r, signature, 32) == 32 && api.bn_bn2binpad(s, signature + 32, 32) == 32;
    api.sig_free(sig);
    return ok;
}

int acrypto_es256_verify(const void *key, const unsigned char *message, size_t length, const unsigned char signature[64]) {
    unsigned char digest[32];
    if (!api.sha256(message, length, digest)) return 0;
    ECDSA_SIG *sig = api.sig_new();
    BIGNUM *r = api.bn_bin2bn(signature, 32, NULL), *s = api.bn_bin2bn(signature + 32, 32, NULL);
    if (!sig || !r || !s || api.sig_set0(sig, r, s) != 1) {
        if (r) api.bn_clear_free(r);
        if (s) api.bn_clear_free(s);
        if (sig) api.sig_free(sig);
        return 0;
    }
    int ok = api.ecdsa_do_verify(digest, 32, sig, (EC_KEY *)key) == 1;
    api.sig_free(sig);  // frees r and s too
    return ok;
}

void acrypto_p256_free(void *key) {
    if (key) api.key_free(key);
}
