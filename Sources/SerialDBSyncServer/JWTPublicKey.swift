import CLibCrypto

/// A public key of a JWKS, as OpenSSL holds it, and the one algorithm it verifies: RS256 for
/// an RSA key, ES256 for a P-256 key. Every operation is OpenSSL's (libcrypto 3); nothing here
/// computes a signature itself.
final class JWTPublicKey: @unchecked Sendable {
    // Safe to share: the EVP_PKEY is built in init and never modified afterwards; OpenSSL 3
    // allows concurrent verifications with one key, each on its own EVP_MD_CTX.
    /// The algorithm this key verifies.
    let algorithm: JWTAlgorithm
    private let key: OpaquePointer

    /// The smallest RSA modulus accepted, in bits (RFC 7518 §3.3).
    static let minimumRSABits = 2048

    /// An RSA public key from its modulus and public exponent (big-endian bytes).
    ///
    /// - Throws: ``JWTKeyError`` when OpenSSL refuses them or the modulus is too short.
    init(rsaModulus modulus: [UInt8], exponent: [UInt8]) throws(JWTKeyError) {
        guard let builder = OSSL_PARAM_BLD_new() else { throw JWTKeyError("OpenSSL is out of memory") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = modulus.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let e = exponent.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer {
            BN_free(n)
            BN_free(e)
        }
        // The builder keeps pointers, not copies, until it makes the parameters: the names are
        // C literals, and the numbers live until the end of this scope.
        guard let n, let e, OSSL_PARAM_BLD_push_BN(builder, serialdb_param_rsa_n(), n) == 1,
            OSSL_PARAM_BLD_push_BN(builder, serialdb_param_rsa_e(), e) == 1
        else { throw JWTKeyError("OpenSSL does not take its \"n\" and \"e\"") }
        // Checked before the key is stored: once it is, a throw would free it in deinit.
        let made = try Self.fromParameters(builder, type: "RSA")
        let bits = EVP_PKEY_get_bits(made)
        guard bits >= Self.minimumRSABits else {
            EVP_PKEY_free(made)
            throw JWTKeyError("its modulus has \(bits) bits; RS256 needs at least \(Self.minimumRSABits)")
        }
        // OpenSSL builds a key of any numbers, and verifies with it: with an exponent of 1
        // every signature is its own message, so anyone could sign. Its check of the key
        // (SP 800-56B) refuses that, an even exponent, and a modulus with small factors.
        if let reason = Self.failedPublicCheck(made) {
            EVP_PKEY_free(made)
            throw JWTKeyError(
                "OpenSSL's check of the key fails (\(reason)): an RSA public key needs an odd exponent above 1 "
                    + "and an odd modulus without small factors")
        }
        key = made
        algorithm = .rs256
    }

    /// A P-256 public key from its affine coordinates (32 big-endian bytes each).
    ///
    /// - Throws: ``JWTKeyError`` when the coordinates are not 32 bytes or not a point of the curve.
    init(p256X x: [UInt8], y: [UInt8]) throws(JWTKeyError) {
        guard x.count == 32, y.count == 32 else {
            throw JWTKeyError("\"x\" and \"y\" of a P-256 key must be 32 bytes each")
        }
        guard let builder = OSSL_PARAM_BLD_new() else { throw JWTKeyError("OpenSSL is out of memory") }
        defer { OSSL_PARAM_BLD_free(builder) }
        // The uncompressed point encoding (SEC 1 §2.3.3): 0x04, then x, then y.
        let point: [UInt8] = [0x04] + x + y
        // The builder keeps pointers until it makes the parameters, so it makes them while the
        // point's bytes are still there.
        let made = point.withUnsafeBytes { bytes -> Result<OpaquePointer, JWTKeyError> in
            guard OSSL_PARAM_BLD_push_utf8_string(builder, serialdb_param_group_name(), serialdb_group_p256(), 0) == 1,
                OSSL_PARAM_BLD_push_octet_string(builder, serialdb_param_public_key(), bytes.baseAddress, bytes.count)
                    == 1
            else { return .failure(JWTKeyError("OpenSSL does not take its \"x\" and \"y\"")) }
            // OpenSSL may refuse a point off the curve here already: the same reason either way.
            return Result { () throws(JWTKeyError) in try Self.fromParameters(builder, type: "EC") }
                .mapError { _ in JWTKeyError("\"x\" and \"y\" are not a point of the P-256 curve") }
        }
        let candidate = try made.get()
        // fromdata does not promise the point is on the curve: a point off it is refused here,
        // before the key is stored (once it is, a throw would free it in deinit).
        if Self.failedPublicCheck(candidate) != nil {
            EVP_PKEY_free(candidate)
            throw JWTKeyError("\"x\" and \"y\" are not a point of the P-256 curve")
        }
        key = candidate
        algorithm = .es256
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Why OpenSSL's check of the public key `key` fails (`EVP_PKEY_public_check`), in its
    /// words; `nil` when it passes. The thread's OpenSSL error queue is left empty.
    private static func failedPublicCheck(_ key: OpaquePointer) -> String? {
        defer { ERR_clear_error() }
        let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil)
        defer { EVP_PKEY_CTX_free(context) }
        guard let context else { return "OpenSSL is out of memory" }
        guard EVP_PKEY_public_check(context) != 1 else { return nil }
        let code = ERR_peek_last_error()
        return ERR_reason_error_string(code).map { String(cString: $0) } ?? "no reason given"
    }

    private static func fromParameters(_ builder: OpaquePointer, type: String) throws(JWTKeyError) -> OpaquePointer {
        guard let parameters = OSSL_PARAM_BLD_to_param(builder) else { throw JWTKeyError("OpenSSL is out of memory") }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw JWTKeyError("this OpenSSL has no \(type) keys")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, serialdb_evp_pkey_public_key_selection(), parameters) == 1, let key
        else { throw JWTKeyError("OpenSSL refuses its parameters as an \(type) public key") }
        return key
    }

    /// Whether `signature` (as the JWT carries it) signs `message` under this key with SHA-256.
    func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        let checked: [UInt8]
        switch algorithm {
        case .es256:
            // A JWT carries r and s side by side (RFC 7518 §3.4); OpenSSL verifies DER.
            guard let der = Self.derSignature(rawP256: signature) else { return false }
            checked = der
        case .rs256, .hs256:
            checked = signature
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, key, nil) == 1 else { return false }
        return checked.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { message in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, message.baseAddress, message.count)
                    == 1
            }
        }
    }

    /// An ES256 signature (r and s, 32 bytes each) in the DER encoding OpenSSL verifies, built
    /// by OpenSSL; `nil` when it is not 64 bytes.
    static func derSignature(rawP256 raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }

    /// HMAC-SHA256 of `message` under `secret`, computed by OpenSSL.
    static func hmacSHA256(secret: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = secret.withUnsafeBytes { key in
            message.withUnsafeBufferPointer { data in
                digest.withUnsafeMutableBufferPointer { out in
                    HMAC(
                        EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress, data.count,
                        out.baseAddress, &length)
                }
            }
        }
        return done == nil ? [] : Array(digest.prefix(Int(length)))
    }

    /// Whether two byte strings are equal, in a time that depends only on their lengths
    /// (OpenSSL's CRYPTO_memcmp).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 }
        }
    }
}

/// The JWT signature algorithms the server verifies (RFC 7518 §3.1).
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    /// HMAC with SHA-256, with the configured shared secret.
    case hs256 = "HS256"
    /// RSASSA-PKCS1-v1_5 with SHA-256, with an RSA key of the JWKS.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256, with an EC key of the JWKS.
    case es256 = "ES256"
}

/// Why a JWK cannot be used.
struct JWTKeyError: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
