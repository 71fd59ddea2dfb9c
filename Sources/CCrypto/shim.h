#ifndef BEACONBRIDGE_CCRYPTO_SHIM_H
#define BEACONBRIDGE_CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian libssl-dev): X25519, ChaCha20-Poly1305, SHA-256 and HMAC through EVP, for the
// ESPHome API's Noise encryption.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#endif
