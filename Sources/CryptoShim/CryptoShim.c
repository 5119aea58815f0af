#include "CryptoShim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
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
#define OPENSSL_INIT_NO_ATEXIT 0x00080000L

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
    int (*init_crypto)(unsigned long long, const void *);
    int (*sign_setup)(EC_KEY *, BN_CTX *, BIGNUM **, BIGNUM **);
    ECDSA_SIG *(*do_sign_ex)(const unsigned char *, int, const BIGNUM *, const BIGNUM *, EC_KEY *);
} api;

// A key with a pool of precomputed signing values: ECDSA_sign_setup draws a
// random nonce k and computes k⁻¹ and r = (k·G).x — nearly all of a signature's
// cost — before the message is known. Each pair is taken out of the pool under
// the lock and freed after its one use: a nonce used twice would give the
// private key away.
#define POOL 64
typedef struct {
    EC_KEY *key;
    pthread_mutex_t lock;
    int count;
    BIGNUM *kinv[POOL];
    BIGNUM *r[POOL];
} P256;

static P256 *wrap(EC_KEY *key) {
    P256 *p = calloc(1, sizeof(P256));
    if (!p) {
        api.key_free(key);
        return NULL;
    }
    p->key = key;
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;

// libcrypto frees its locks and tables in an atexit handler (OPENSSL_cleanup). A
// nonce precomputed on a background thread, or a signature made on another thread,
// while the process exits would then crash it. Every call into libcrypto holds this
// lock for reading; `stop`, registered after libcrypto's handler and so run before
// it, waits for the calls under way and refuses new ones.
static pthread_rwlock_t running = PTHREAD_RWLOCK_INITIALIZER;
static int exiting = 0;

static void stop(void) {
    pthread_rwlock_wrlock(&running);
    exiting = 1;
    pthread_rwlock_unlock(&running);
}

static int enter(void) {
    pthread_rwlock_rdlock(&running);
    if (!exiting) return 1;
    pthread_rwlock_unlock(&running);
    return 0;
}

static void leave(void) { pthread_rwlock_unlock(&running); }

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
        && BIND(sig_set0, "ECDSA_SIG_set0") && BIND(sha256, "SHA256") && BIND(sign_setup, "ECDSA_sign_setup")
        && BIND(do_sign_ex, "ECDSA_do_sign_ex") && BIND(init_crypto, "OPENSSL_init_crypto");
    // Initialised now, without libcrypto's atexit cleanup (nothing needs freeing at exit, and
    // threads still in libcrypto then would crash the exit). When libcurl's TLS initialised it
    // first, that cleanup is registered already: `stop`, registered after it, runs before it.
    if (loaded) loaded = api.init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL) == 1 && atexit(stop) == 0;
}

int acrypto_load(void) {
    pthread_once(&once, load);
    return loaded;
}

static void *locked_p256_generate(void) {
    if (!acrypto_load()) return NULL;
    EC_KEY *key = api.key_new_by_curve_name(NID_X9_62_prime256v1);
    if (key && api.key_generate_key(key) == 1) return wrap(key);
    if (key) api.key_free(key);
    return NULL;
}

static void *locked_p256_from_private(const unsigned char d[32]) {
    if (!acrypto_load()) return NULL;
    EC_KEY *key = api.key_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *scalar = api.bn_bin2bn(d, 32, NULL);
    EC_POINT *point = key ? api.point_new(api.key_get0_group(key)) : NULL;
    int ok = key && scalar && point && api.key_set_private_key(key, scalar) == 1
        && api.point_mul(api.key_get0_group(key), point, scalar, NULL, NULL, NULL) == 1
        && api.key_set_public_key(key, point) == 1 && api.key_check_key(key) == 1;
    if (point) api.point_free(point);
    if (scalar) api.bn_clear_free(scalar);
    if (ok) return wrap(key);
    if (key) api.key_free(key);
    return NULL;
}

static void *locked_p256_from_public(const unsigned char x[32], const unsigned char y[32]) {
    if (!acrypto_load()) return NULL;
    EC_KEY *key = api.key_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *bx = api.bn_bin2bn(x, 32, NULL), *by = api.bn_bin2bn(y, 32, NULL);
    // Checks that the point is on the curve.
    int ok = key && bx && by && api.key_set_public_key_affine_coordinates(key, bx, by) == 1;
    if (bx) api.bn_clear_free(bx);
    if (by) api.bn_clear_free(by);
    if (ok) return wrap(key);
    if (key) api.key_free(key);
    return NULL;
}

static int locked_p256_private(const void *handle, unsigned char d[32]) {
    const BIGNUM *scalar = api.key_get0_private_key(((const P256 *)handle)->key);
    return scalar && api.bn_bn2binpad(scalar, d, 32) == 32;
}

static int locked_p256_public(const void *handle, unsigned char x[32], unsigned char y[32]) {
    const EC_KEY *key = ((const P256 *)handle)->key;
    const EC_POINT *point = api.key_get0_public_key(key);
    BIGNUM *bx = api.bn_new(), *by = api.bn_new();
    int ok = point && bx && by && api.point_get_affine_coordinates(api.key_get0_group(key), point, bx, by, NULL) == 1
        && api.bn_bn2binpad(bx, x, 32) == 32 && api.bn_bn2binpad(by, y, 32) == 32;
    if (bx) api.bn_clear_free(bx);
    if (by) api.bn_clear_free(by);
    return ok;
}

int acrypto_p256_precompute(void *handle, int wanted) {
    P256 *p = handle;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int full = p->count >= wanted || p->count >= POOL;
        pthread_mutex_unlock(&p->lock);
        if (full) break;
        BIGNUM *kinv = NULL, *r = NULL;
        if (!enter()) return 0;
        int made = api.sign_setup(p->key, NULL, &kinv, &r) == 1;
        leave();
        if (!made) return 0;
        pthread_mutex_lock(&p->lock);
        if (p->count < POOL) {
            p->kinv[p->count] = kinv;
            p->r[p->count] = r;
            p->count++;
            kinv = r = NULL;
        }
        pthread_mutex_unlock(&p->lock);
        if ((kinv || r) && enter()) {
            if (kinv) api.bn_clear_free(kinv);
            if (r) api.bn_clear_free(r);
            leave();
        }
    }
    pthread_mutex_lock(&p->lock);
    int count = p->count;
    pthread_mutex_unlock(&p->lock);
    return count;
}

int acrypto_p256_pooled(void *handle) {
    P256 *p = handle;
    pthread_mutex_lock(&p->lock);
    int count = p->count;
    pthread_mutex_unlock(&p->lock);
    return count;
}

static int locked_es256_sign(void *handle, const unsigned char *message, size_t length, unsigned char signature[64]) {
    P256 *p = handle;
    unsigned char digest[32];
    if (!api.sha256(message, length, digest)) return 0;
    BIGNUM *kinv = NULL, *r = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->count > 0) {
        p->count--;
        kinv = p->kinv[p->count];
        r = p->r[p->count];
        p->kinv[p->count] = p->r[p->count] = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    ECDSA_SIG *sig = NULL;
    if (kinv && r) sig = api.do_sign_ex(digest, 32, kinv, r, p->key);
    if (kinv) api.bn_clear_free(kinv);
    if (r) api.bn_clear_free(r);
    // No precomputed pair, or the rare one that cannot sign this digest (s = 0): a whole signature.
    // ECDSA_do_sign only reads the key (its nonce comes from libcrypto's CSPRNG), so signing is safe from many threads.
    if (!sig) sig = api.ecdsa_do_sign(digest, 32, p->key);
    if (!sig) return 0;
    const BIGNUM *sig_r = NULL, *sig_s = NULL;
    api.sig_get0(sig, &sig_r, &sig_s);
    int ok = sig_r && sig_s && api.bn_bn2binpad(sig_r, signature, 32) == 32 && api.bn_bn2binpad(sig_s, signature + 32, 32) == 32;
    api.sig_free(sig);
    return ok;
}

static int locked_es256_verify(const void *handle, const unsigned char *message, size_t length, const unsigned char signature[64]) {
    EC_KEY *key = ((const P256 *)handle)->key;
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
    int ok = api.ecdsa_do_verify(digest, 32, sig, key) == 1;
    api.sig_free(sig);  // frees r and s too
    return ok;
}

static void locked_p256_free(void *handle) {
    P256 *p = handle;
    if (!p) return;
    for (int i = 0; i < p->count; i++) {
        api.bn_clear_free(p->kinv[i]);
        api.bn_clear_free(p->r[i]);
    }
    api.key_free(p->key);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

// The entry points: each call into libcrypto under the `running` lock.

void *acrypto_p256_generate(void) {
    if (!acrypto_load() || !enter()) return NULL;
    void *result = locked_p256_generate();
    leave();
    return result;
}

void *acrypto_p256_from_private(const unsigned char d[32]) {
    if (!acrypto_load() || !enter()) return NULL;
    void *result = locked_p256_from_private(d);
    leave();
    return result;
}

void *acrypto_p256_from_public(const unsigned char x[32], const unsigned char y[32]) {
    if (!acrypto_load() || !enter()) return NULL;
    void *result = locked_p256_from_public(x, y);
    leave();
    return result;
}

int acrypto_p256_private(const void *handle, unsigned char d[32]) {
    if (!acrypto_load() || !enter()) return 0;
    int result = locked_p256_private(handle, d);
    leave();
    return result;
}

int acrypto_p256_public(const void *handle, unsigned char x[32], unsigned char y[32]) {
    if (!acrypto_load() || !enter()) return 0;
    int result = locked_p256_public(handle, x, y);
    leave();
    return result;
}

int acrypto_es256_sign(void *handle, const unsigned char *message, size_t length, unsigned char signature[64]) {
    if (!acrypto_load() || !enter()) return 0;
    int result = locked_es256_sign(handle, message, length, signature);
    leave();
    return result;
}

int acrypto_es256_verify(const void *handle, const unsigned char *message, size_t length, const unsigned char signature[64]) {
    if (!acrypto_load() || !enter()) return 0;
    int result = locked_es256_verify(handle, message, length, signature);
    leave();
    return result;
}

void acrypto_p256_free(void *handle) {
    if (!handle || !enter()) return;  // at exit, libcrypto is gone: leave the memory to the process's end
    locked_p256_free(handle);
    leave();
}

// MARK: Signed client authentication: PEM keys, RSA, HMAC

// Bound apart from the ES256 functions above: a libcrypto without one of these still
// serves DPoP, and only a provider with a client key or client_secret_jwt needs them.
typedef void EVP_PKEY;
typedef void EVP_PKEY_CTX;
typedef void EVP_MD_CTX;
typedef void EVP_MD;
typedef void BIO;
typedef void RSA;
#define EVP_PKEY_RSA 6
#define EVP_PKEY_EC 408
#define RSA_PKCS1_PADDING 1
#define RSA_PKCS1_PSS_PADDING 6
#define RSA_PSS_SALTLEN_DIGEST (-1)
#define EVP_PKEY_CTRL_RSA_PADDING (0x1000 + 1)
#define EVP_PKEY_CTRL_RSA_PSS_SALTLEN (0x1000 + 2)

static struct {
    BIO *(*bio_new_mem_buf)(const void *, int);
    int (*bio_free)(BIO *);
    EVP_PKEY *(*pem_read_private)(BIO *, EVP_PKEY **, int (*)(char *, int, int, void *), void *);
    int (*pkey_id)(const EVP_PKEY *);
    EC_KEY *(*pkey_get1_ec)(EVP_PKEY *);
    RSA *(*pkey_get1_rsa)(EVP_PKEY *);
    EVP_PKEY *(*pkey_new)(void);
    int (*pkey_set1_rsa)(EVP_PKEY *, RSA *);
    void (*pkey_free)(EVP_PKEY *);
    int (*group_curve)(const EC_GROUP *);
    void (*rsa_get0_key)(const RSA *, const BIGNUM **, const BIGNUM **, const BIGNUM **);
    RSA *(*rsa_new)(void);
    int (*rsa_set0_key)(RSA *, BIGNUM *, BIGNUM *, BIGNUM *);
    void (*rsa_free)(RSA *);
    int (*bn_num_bits)(const BIGNUM *);
    EVP_MD_CTX *(*md_ctx_new)(void);
    void (*md_ctx_free)(EVP_MD_CTX *);
    const EVP_MD *(*sha256_md)(void);
    int (*digest_sign_init)(EVP_MD_CTX *, EVP_PKEY_CTX **, const EVP_MD *, void *, EVP_PKEY *);
    int (*digest_sign)(EVP_MD_CTX *, unsigned char *, size_t *, const unsigned char *, size_t);
    int (*digest_verify_init)(EVP_MD_CTX *, EVP_PKEY_CTX **, const EVP_MD *, void *, EVP_PKEY *);
    int (*digest_verify)(EVP_MD_CTX *, const unsigned char *, size_t, const unsigned char *, size_t);
    int (*pkey_ctx_ctrl)(EVP_PKEY_CTX *, int, int, int, int, void *);
    unsigned char *(*hmac)(const EVP_MD *, const void *, int, const unsigned char *, size_t, unsigned char *, unsigned int *);
} more;

static pthread_once_t more_once = PTHREAD_ONCE_INIT;
static int more_loaded = 0;

static void load_more(void) {
    if (!acrypto_load()) return;
    void *library = NULL;
    static const char *const names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so", "libcrypto.dylib", NULL};
    for (int i = 0; names[i] && !library; i++) library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!library) return;
    #define MORE(field, symbol) (*(void **)&more.field = dlsym(library, symbol)) != NULL
    // OpenSSL 3 renamed EVP_PKEY_id to EVP_PKEY_get_id (the old name is a macro there).
    int id = MORE(pkey_id, "EVP_PKEY_get_id") || MORE(pkey_id, "EVP_PKEY_id");
    more_loaded = id && MORE(bio_new_mem_buf, "BIO_new_mem_buf") && MORE(bio_free, "BIO_free")
        && MORE(pem_read_private, "PEM_read_bio_PrivateKey") && MORE(pkey_get1_ec, "EVP_PKEY_get1_EC_KEY")
        && MORE(pkey_get1_rsa, "EVP_PKEY_get1_RSA") && MORE(pkey_new, "EVP_PKEY_new") && MORE(pkey_set1_rsa, "EVP_PKEY_set1_RSA")
        && MORE(pkey_free, "EVP_PKEY_free") && MORE(group_curve, "EC_GROUP_get_curve_name")
        && MORE(rsa_get0_key, "RSA_get0_key") && MORE(rsa_new, "RSA_new") && MORE(rsa_set0_key, "RSA_set0_key")
        && MORE(rsa_free, "RSA_free") && MORE(bn_num_bits, "BN_num_bits") && MORE(md_ctx_new, "EVP_MD_CTX_new")
        && MORE(md_ctx_free, "EVP_MD_CTX_free") && MORE(sha256_md, "EVP_sha256") && MORE(digest_sign_init, "EVP_DigestSignInit")
        && MORE(digest_sign, "EVP_DigestSign") && MORE(digest_verify_init, "EVP_DigestVerifyInit")
        && MORE(digest_verify, "EVP_DigestVerify") && MORE(pkey_ctx_ctrl, "EVP_PKEY_CTX_ctrl") && MORE(hmac, "HMAC");
    #undef MORE
}

static int enter_more(void) {
    pthread_once(&more_once, load_more);
    return more_loaded && enter();
}

// Never asks for a passphrase (libcrypto would read the terminal): an encrypted key is refused.
static int no_passphrase(char *buffer, int size, int rwflag, void *u) {
    (void)buffer; (void)size; (void)rwflag; (void)u;
    return -1;
}

static EVP_PKEY *read_pem(const char *pem, size_t length) {
    if (length > 1 << 20) return NULL;
    BIO *bio = more.bio_new_mem_buf(pem, (int)length);
    if (!bio) return NULL;
    EVP_PKEY *pkey = more.pem_read_private(bio, NULL, no_passphrase, NULL);
    more.bio_free(bio);
    return pkey;
}

/// The P-256 EC_KEY inside `pkey` (a reference of its own), or NULL.
static EC_KEY *p256_of(EVP_PKEY *pkey) {
    if (more.pkey_id(pkey) != EVP_PKEY_EC) return NULL;
    EC_KEY *key = more.pkey_get1_ec(pkey);
    if (key && more.group_curve(api.key_get0_group(key)) == NID_X9_62_prime256v1) return key;
    if (key) api.key_free(key);
    return NULL;
}

int acrypto_pem_kind(const char *pem, size_t length) {
    if (!enter_more()) return 0;
    EVP_PKEY *pkey = read_pem(pem, length);
    int kind = 0;
    if (pkey) {
        EC_KEY *ec = p256_of(pkey);
        if (ec) {
            kind = 1;
            api.key_free(ec);
        } else if (more.pkey_id(pkey) == EVP_PKEY_RSA) {
            kind = 2;
        }
        more.pkey_free(pkey);
    }
    leave();
    return kind;
}

void *acrypto_pem_p256(const char *pem, size_t length) {
    if (!enter_more()) return NULL;
    EVP_PKEY *pkey = read_pem(pem, length);
    EC_KEY *key = pkey ? p256_of(pkey) : NULL;
    if (pkey) more.pkey_free(pkey);
    void *result = key && api.key_check_key(key) == 1 ? wrap(key) : NULL;
    if (key && !result) api.key_free(key);
    leave();
    return result;
}

void *acrypto_pem_rsa(const char *pem, size_t length) {
    if (!enter_more()) return NULL;
    EVP_PKEY *pkey = read_pem(pem, length);
    if (pkey && more.pkey_id(pkey) != EVP_PKEY_RSA) {
        more.pkey_free(pkey);
        pkey = NULL;
    }
    leave();
    return pkey;
}

void *acrypto_rsa_from_public(const unsigned char *n, size_t n_length, const unsigned char *e, size_t e_length) {
    if (n_length > 2048 || e_length > 8 || !enter_more()) return NULL;
    RSA *rsa = more.rsa_new();
    BIGNUM *bn = api.bn_bin2bn(n, (int)n_length, NULL), *be = api.bn_bin2bn(e, (int)e_length, NULL);
    EVP_PKEY *pkey = NULL;
    if (rsa && bn && be && more.rsa_set0_key(rsa, bn, be, NULL) == 1) {
        bn = be = NULL;  // owned by rsa now
        pkey = more.pkey_new();
        if (pkey && more.pkey_set1_rsa(pkey, rsa) != 1) {
            more.pkey_free(pkey);
            pkey = NULL;
        }
    }
    if (bn) api.bn_clear_free(bn);
    if (be) api.bn_clear_free(be);
    if (rsa) more.rsa_free(rsa);
    leave();
    return pkey;
}

static int rsa_parts(const void *key, const BIGNUM **n, const BIGNUM **e) {
    RSA *rsa = more.pkey_get1_rsa((EVP_PKEY *)key);
    if (!rsa) return 0;
    more.rsa_get0_key(rsa, n, e, NULL);
    more.rsa_free(rsa);  // the key still holds its reference: n and e stay valid
    return *n && *e;
}

int acrypto_rsa_size(const void *key) {
    if (!key || !enter_more()) return 0;
    const BIGNUM *n = NULL, *e = NULL;
    int size = rsa_parts(key, &n, &e) ? (more.bn_num_bits(n) + 7) / 8 : 0;
    leave();
    return size;
}

int acrypto_rsa_public(const void *key, unsigned char *n_out, unsigned char *e_out, size_t *e_length) {
    if (!key || !enter_more()) return 0;
    const BIGNUM *n = NULL, *e = NULL;
    int ok = 0;
    if (rsa_parts(key, &n, &e)) {
        int n_size = (more.bn_num_bits(n) + 7) / 8, e_size = (more.bn_num_bits(e) + 7) / 8;
        ok = e_size <= 8 && api.bn_bn2binpad(n, n_out, n_size) == n_size && api.bn_bn2binpad(e, e_out, e_size) == e_size;
        if (ok) *e_length = (size_t)e_size;
    }
    leave();
    return ok;
}

static int set_padding(EVP_PKEY_CTX *pctx, int pss) {
    if (more.pkey_ctx_ctrl(pctx, EVP_PKEY_RSA, -1, EVP_PKEY_CTRL_RSA_PADDING, pss ? RSA_PKCS1_PSS_PADDING : RSA_PKCS1_PADDING, NULL) <= 0) return 0;
    return !pss || more.pkey_ctx_ctrl(pctx, EVP_PKEY_RSA, -1, EVP_PKEY_CTRL_RSA_PSS_SALTLEN, RSA_PSS_SALTLEN_DIGEST, NULL) > 0;
}

int acrypto_rsa_sign(void *key, int pss, const unsigned char *message, size_t length, unsigned char *signature) {
    if (!key || !enter_more()) return 0;
    const BIGNUM *n = NULL, *e = NULL;
    size_t size = rsa_parts(key, &n, &e) ? (size_t)(more.bn_num_bits(n) + 7) / 8 : 0;
    EVP_MD_CTX *ctx = size ? more.md_ctx_new() : NULL;
    EVP_PKEY_CTX *pctx = NULL;
    size_t written = size;
    int ok = ctx && more.digest_sign_init(ctx, &pctx, more.sha256_md(), NULL, key) == 1 && set_padding(pctx, pss)
        && more.digest_sign(ctx, signature, &written, message, length) == 1 && written == size;
    if (ctx) more.md_ctx_free(ctx);
    leave();
    return ok;
}

int acrypto_rsa_verify(void *key, int pss, const unsigned char *message, size_t length, const unsigned char *signature, size_t signature_length) {
    if (!key || !enter_more()) return 0;
    EVP_MD_CTX *ctx = more.md_ctx_new();
    EVP_PKEY_CTX *pctx = NULL;
    int ok = ctx && more.digest_verify_init(ctx, &pctx, more.sha256_md(), NULL, key) == 1 && set_padding(pctx, pss)
        && more.digest_verify(ctx, signature, signature_length, message, length) == 1;
    if (ctx) more.md_ctx_free(ctx);
    leave();
    return ok;
}

void acrypto_rsa_free(void *key) {
    if (!key || !enter_more()) return;
    more.pkey_free(key);
    leave();
}

int acrypto_hmac_sha256(const unsigned char *key, size_t key_length, const unsigned char *message, size_t length, unsigned char mac[32]) {
    if (key_length > 1 << 16 || !enter_more()) return 0;
    unsigned int written = 0;
    int ok = more.hmac(more.sha256_md(), key, (int)key_length, message, length, mac, &written) != NULL && written == 32;
    leave();
    return ok;
}
