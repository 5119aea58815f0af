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

#endif
