// OpenSSL's libcrypto (Debian: libssl-dev, found through pkg-config `libcrypto`), for the sync
// server's JWT sign-in only: HMAC-SHA256, RSA and ECDSA signature verification, and keys built
// from a JWK's parameters. The client and the core never import it.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>

// EVP_PKEY_PUBLIC_KEY is an expression macro, which Swift does not import.
static inline int serialdb_evp_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }

// OSSL_PARAM_BLD keeps the pointers it is given until OSSL_PARAM_BLD_to_param: parameter names
// must outlive the call that pushes them, which a Swift string passed as `const char *` does not.
static inline const char *serialdb_param_rsa_n(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *serialdb_param_rsa_e(void) { return OSSL_PKEY_PARAM_RSA_E; }
static inline const char *serialdb_param_group_name(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *serialdb_param_public_key(void) { return OSSL_PKEY_PARAM_PUB_KEY; }
static inline const char *serialdb_group_p256(void) { return "prime256v1"; }
