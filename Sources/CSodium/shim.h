#ifndef RAXX_CSODIUM_SHIM_H
#define RAXX_CSODIUM_SHIM_H
// libsodium, wrapped once: sealing (XChaCha20-Poly1305), key derivation (Argon2id), random bytes
// and memory wiping all come from here.
#include <sodium.h>
#endif
