// A small C bridge to libcrypto (OpenSSL 3, or 1.1), loaded with dlopen on first
// use, like CurlShim loads libcurl and SecretShim libsecret.
//
// Why: DPoP (RFC 9449) needs ES256 — ECDSA over P-256 with SHA-256 — and
// elliptic-curve code must come from a vetted library, never be hand-written.
// Loading on first use keeps libcrypto out of every process that never meets
// a DPoP provider, and the agent starts on machines without it (a DPoP login
// then fails with a message saying libcrypto is missing).
//
// Keys are opaque handles (an EC_KEY with its public point computed once, and a
// pool of precomputed signing nonces), so a signature costs one ECDSA operation
// at most — and with a precomputed nonce, much less.
// Private scalars cross this boundary only as 32 big-endian bytes.
#ifndef AUTH_AGENT_CRYPTO_SHIM_H
#define AUTH_AGENT_CRYPTO_SHIM_H

#include <stddef.h>

/// Loads libcrypto once; returns 1 when it is available with every function used.
int acrypto_load(void);

/// A new random P-256 key; NULL when libcrypto is missing or failed.
void *acrypto_p256_generate(void);

/// The P-256 key whose private scalar is `d` (32 bytes, big-endian); NULL when `d` is not a valid scalar.
void *acrypto_p256_from_private(const unsigned char d[32]);

/// The public key (x, y) for verification only; NULL when the point is not on the curve.
void *acrypto_p256_from_public(const unsigned char x[32], const unsigned char y[32]);

/// The key's private scalar (1 when written; 0 for a public-only key).
int acrypto_p256_private(const void *key, unsigned char d[32]);

/// The key's public point as affine coordinates (1 when written).
int acrypto_p256_public(const void *key, unsigned char x[32], unsigned char y[32]);

/// Precomputes signing values (a fresh random nonce each, used once) until the key holds `wanted`
/// (at most 64); returns how many it holds. Slow (one scalar multiplication each): call it off the
/// request path, so that a signature then costs a hash and a few modular multiplications.
int acrypto_p256_precompute(void *key, int wanted);

/// How many precomputed nonces the key holds.
int acrypto_p256_pooled(void *key);

/// ES256 (RFC 7518 §3.4): SHA-256 of `message`, ECDSA, the signature as r || s (64 bytes). 1 when signed.
/// Takes a precomputed nonce when the key holds one, else computes a whole signature. Thread-safe.
int acrypto_es256_sign(void *key, const unsigned char *message, size_t length, unsigned char signature[64]);

/// 1 when `signature` (r || s) is a valid ES256 signature of `message` by `key`.
int acrypto_es256_verify(const void *key, const unsigned char *message, size_t length, const unsigned char signature[64]);

/// Frees a key made by this shim (the private scalar is cleared by libcrypto).
void acrypto_p256_free(void *key);

// Signed client authentication (RFC 7523 §2.2): a client's own key read from a PEM
// file (P-256 for ES256, RSA for RS256 and PS256), and HMAC-SHA256 for
// client_secret_jwt. The PEM text crosses this boundary once, into libcrypto; the
// private key never comes back out.

/// The kind of private key a PEM text holds: 1 a P-256 key, 2 an RSA key, 0 neither
/// (unreadable, encrypted, another curve) or libcrypto missing.
int acrypto_pem_kind(const char *pem, size_t length);

/// The P-256 key in a PEM text (SEC 1 or PKCS #8), as a handle of `acrypto_p256_*`; NULL when it holds none.
void *acrypto_pem_p256(const char *pem, size_t length);

/// The RSA private key in a PEM text (PKCS #1 or PKCS #8); NULL when it holds none.
void *acrypto_pem_rsa(const char *pem, size_t length);

/// The RSA public key (n, e big-endian, no leading zeros) for verification; NULL when unusable.
void *acrypto_rsa_from_public(const unsigned char *n, size_t n_length, const unsigned char *e, size_t e_length);

/// The key's modulus length in bytes (the signature's length); 0 on failure.
int acrypto_rsa_size(const void *key);

/// Writes the modulus (`acrypto_rsa_size` bytes) and the exponent (at most 8 bytes; its length
/// in `*e_length`). 1 when written.
int acrypto_rsa_public(const void *key, unsigned char *n, unsigned char *e, size_t *e_length);

/// RS256 (`pss` 0: RSASSA-PKCS1-v1_5) or PS256 (`pss` 1: RSASSA-PSS, MGF1, salt of 32 bytes) over
/// SHA-256 of `message`; `signature` holds `acrypto_rsa_size` bytes. 1 when signed.
int acrypto_rsa_sign(void *key, int pss, const unsigned char *message, size_t length, unsigned char *signature);

/// 1 when `signature` is a valid RS256 / PS256 signature of `message` by `key`.
int acrypto_rsa_verify(void *key, int pss, const unsigned char *message, size_t length, const unsigned char *signature, size_t signature_length);

/// Frees an RSA key made by this shim.
void acrypto_rsa_free(void *key);

/// HMAC-SHA256 of `message` under `key` (32 bytes out). 1 when computed.
int acrypto_hmac_sha256(const unsigned char *key, size_t key_length, const unsigned char *message, size_t length, unsigned char mac[32]);

#endif
