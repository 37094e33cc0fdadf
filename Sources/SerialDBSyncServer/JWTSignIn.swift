import Foundation
import SerialDBSyncWire

/// Sign-in with JSON Web Tokens (RFC 7519) from the app's identity provider: the
/// `"auth": {"jwt": {...}}` section of the configuration.
///
/// ```json
/// "auth": {"jwt": {"hs256_secret_file": "secret.key", "jwks_file": "jwks.json",
///                  "issuer": "https://id.example.com/", "audience": "notes-sync",
///                  "account_claim": "sub", "leeway_seconds": 60}}
/// ```
///
/// A token is accepted when its signature verifies (HS256 with the secret; RS256 or ES256
/// with the JWKS key its `kid` names), its algorithm is one the configured keys provide, it
/// has not expired (`exp`, required) and is valid already (`nbf`, when present), both give
/// or take the leeway, its `iss` is the issuer, its `aud` (a string or an array) holds the
/// audience, and the account claim is a non-empty string. Every signature operation is
/// OpenSSL's (libcrypto).
public struct JWTSignIn: Sendable {
    /// The `iss` every token must carry.
    public let issuer: String
    /// The value a token's `aud` must be or hold.
    public let audience: String
    /// The claim that names the account (`sub` by default).
    public let accountClaim: String
    /// The clock skew allowed on `exp` and `nbf`, in seconds.
    public let leewaySeconds: Int
    /// The HS256 secret, when one is configured.
    private let secret: [UInt8]?
    /// The JWKS keys by `kid`.
    private let keys: [String: JWTPublicKey]

    /// The shortest HS256 secret accepted, in bytes: as long as the hash (RFC 7518 §3.2).
    public static let minimumSecretLength = 32
    /// The longest token looked at, in bytes; a longer one is refused unread.
    public static let maximumTokenLength = 8 * 1024
    /// The default ``leewaySeconds``.
    public static let defaultLeewaySeconds = 60

    /// The algorithms the configured keys verify, in a stable order. A token with any other
    /// (`none` included) is refused.
    public var algorithms: [JWTAlgorithm] {
        JWTAlgorithm.allCases.filter { algorithm in
            algorithm == .hs256 ? secret != nil : keys.values.contains { $0.algorithm == algorithm }
        }
    }

    /// Sign-in with a secret, a JWKS, or both.
    ///
    /// - Parameters:
    ///   - hs256Secret: the shared secret of HS256 tokens, at least ``minimumSecretLength`` bytes.
    ///   - jwks: a JSON Web Key Set (`{"keys": [...]}`) of RSA (2048 bits or more) and P-256
    ///     EC public keys that pass OpenSSL's public key check, each with a distinct `kid`.
    ///   - issuer: the required `iss`.
    ///   - audience: the required `aud`.
    ///   - accountClaim: the claim holding the account id.
    ///   - leewaySeconds: the clock skew allowed, 0 to 3600.
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` saying what is wrong.
    public init(
        hs256Secret: [UInt8]?, jwks: Data?, issuer: String, audience: String, accountClaim: String = "sub",
        leewaySeconds: Int = JWTSignIn.defaultLeewaySeconds
    ) throws {
        func invalid(_ message: String) -> SyncServerError {
            SyncServerError(.invalidConfiguration, "\"auth\".\"jwt\": \(message)")
        }
        guard hs256Secret != nil || jwks != nil else {
            throw invalid("give \"hs256_secret_file\", \"jwks_file\" or both: without a key no token can be verified")
        }
        if let hs256Secret, hs256Secret.count < Self.minimumSecretLength {
            throw invalid(
                "the HS256 secret is \(hs256Secret.count) bytes; it must be at least \(Self.minimumSecretLength) "
                    + "(generate one with `openssl rand -base64 48`)")
        }
        guard !issuer.isEmpty, !audience.isEmpty, !accountClaim.isEmpty else {
            throw invalid("\"issuer\", \"audience\" and \"account_claim\" must be non-empty strings")
        }
        guard (0...3600).contains(leewaySeconds) else {
            throw invalid("\"leeway_seconds\" must be a whole number from 0 to 3600")
        }
        self.issuer = issuer
        self.audience = audience
        self.accountClaim = accountClaim
        self.leewaySeconds = leewaySeconds
        secret = hs256Secret
        keys = try jwks.map { try Self.parseKeySet($0) } ?? [:]
    }

    /// Reads the section `"auth": {"jwt": {...}}`; the key files' relative paths are taken from
    /// `directory` (the configuration file's own).
    init(json section: JSONValue, relativeTo directory: URL) throws {
        func invalid(_ message: String) -> SyncServerError {
            SyncServerError(.invalidConfiguration, "\"auth\".\"jwt\": \(message)")
        }
        guard let fields = section.objectValue else { throw invalid("must be an object") }
        let known: Set = [
            "hs256_secret_file", "jwks_file", "issuer", "audience", "account_claim", "leeway_seconds",
        ]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw invalid("unknown member \(JSONWriter.quoted(unknown)); the members are \(known.sorted())")
        }
        func string(_ name: String, default value: String? = nil) throws -> String {
            guard let member = fields[name] else {
                if let value { return value }
                throw invalid("\(JSONWriter.quoted(name)) is required")
            }
            guard let text = member.stringValue else { throw invalid("\(JSONWriter.quoted(name)) must be a string") }
            return text
        }
        func file(_ name: String) throws -> Data? {
            guard fields[name] != nil else { return nil }
            let path = try string(name)
            let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
            do {
                return try Data(contentsOf: url)
            } catch {
                throw invalid("cannot read \(JSONWriter.quoted(name)) \(url.path): \(error.localizedDescription)")
            }
        }
        var leeway = Self.defaultLeewaySeconds
        if let member = fields["leeway_seconds"] {
            guard let value = member.integerValue, let seconds = Int(exactly: value) else {
                throw invalid("\"leeway_seconds\" must be a whole number from 0 to 3600")
            }
            leeway = seconds
        }
        try self.init(
            hs256Secret: try file("hs256_secret_file").map { Self.withoutFinalLineBreak(Array($0)) },
            jwks: try file("jwks_file"), issuer: try string("issuer"), audience: try string("audience"),
            accountClaim: try string("account_claim", default: "sub"), leewaySeconds: leeway)
    }

    /// A secret file written by `echo` ends in a line break that is not part of the secret.
    private static func withoutFinalLineBreak(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return bytes
    }

    /// The keys of a JWKS by `kid`.
    private static func parseKeySet(_ data: Data) throws -> [String: JWTPublicKey] {
        func invalid(_ message: String) -> SyncServerError {
            SyncServerError(.invalidConfiguration, "\"auth\".\"jwt\": the JWKS \(message)")
        }
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch let error as JSONParseError {
            throw invalid("is not JSON: \(error.message)")
        }
        guard let entries = root.objectValue?["keys"]?.arrayValue, !entries.isEmpty else {
            throw invalid("must be an object whose \"keys\" is a non-empty array")
        }
        var keys: [String: JWTPublicKey] = [:]
        for (position, entry) in entries.enumerated() {
            let label = "key \(position + 1)"
            guard let fields = entry.objectValue, let kid = fields["kid"]?.stringValue, !kid.isEmpty else {
                throw invalid("\(label) needs a \"kid\": tokens name their key by it")
            }
            let named = "\(label) (kid \(JSONWriter.quoted(kid)))"
            func parameter(_ name: String) throws -> [UInt8] {
                guard let text = fields[name]?.stringValue, let bytes = Base64URL.decode(text), !bytes.isEmpty else {
                    throw invalid("\(named) needs \(JSONWriter.quoted(name)) in base64url")
                }
                return bytes
            }
            if let use = fields["use"], use != .string("sig") { continue }
            let key: JWTPublicKey
            do {
                switch fields["kty"]?.stringValue {
                case "RSA":
                    key = try JWTPublicKey(rsaModulus: try parameter("n"), exponent: try parameter("e"))
                case "EC":
                    guard fields["crv"] == .string("P-256") else {
                        throw invalid("\(named) is on a curve other than P-256, which ES256 needs")
                    }
                    key = try JWTPublicKey(p256X: try parameter("x"), y: try parameter("y"))
                default:
                    throw invalid("\(named) has a \"kty\" other than \"RSA\" or \"EC\"")
                }
            } catch let error as JWTKeyError {
                throw invalid("\(named): \(error.message)")
            }
            if let alg = fields["alg"], alg != .string(key.algorithm.rawValue) {
                throw invalid(
                    "\(named) says \"alg\" \(alg.stringValue.map(JSONWriter.quoted) ?? alg.kindName), "
                        + "but its key verifies \(key.algorithm.rawValue) only")
            }
            guard keys.updateValue(key, forKey: kid) == nil else {
                throw invalid("holds kid \(JSONWriter.quoted(kid)) twice")
            }
        }
        guard !keys.isEmpty else { throw invalid("holds no signing key (\"use\": \"sig\")") }
        return keys
    }

    /// Whether `token` has the shape of a JWT (three base64url parts joined by dots), the
    /// tokens this sign-in answers for.
    static func looksLikeJWT(_ token: some StringProtocol) -> Bool {
        token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2
    }

    /// The account `token` signs in, checked at `now`.
    ///
    /// - Throws: ``JWTRejection`` saying which check failed; it never repeats the token.
    public func account(forToken token: String, now: Date = Date()) throws(JWTRejection) -> String {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumTokenLength else {
            throw JWTRejection("the token is longer than \(Self.maximumTokenLength) bytes")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw JWTRejection("the token is not a JWT: it needs three parts joined by dots")
        }
        guard let headerBytes = Base64URL.decode(String(decoding: parts[0], as: UTF8.self)),
            let header = try? JSONValue.parse(headerBytes).objectValue
        else { throw JWTRejection("the token's header is not base64url-encoded JSON object") }
        guard let payloadBytes = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
            let claims = try? JSONValue.parse(payloadBytes).objectValue
        else { throw JWTRejection("the token's payload is not a base64url-encoded JSON object") }
        guard let signature = Base64URL.decode(String(decoding: parts[2], as: UTF8.self)) else {
            throw JWTRejection("the token's signature is not base64url")
        }
        try verifySignature(header: header, signature: signature, signed: Array(bytes[..<parts[1].endIndex]))
        try checkTimes(claims, now: now.timeIntervalSince1970)
        guard claims["iss"] == .string(issuer) else {
            throw JWTRejection("the token's issuer (\"iss\") is not the configured one")
        }
        let audiences: [JSONValue] = claims["aud"].map { $0.arrayValue ?? [$0] } ?? []
        guard audiences.contains(.string(audience)) else {
            throw JWTRejection("the token's audience (\"aud\") does not include the configured one")
        }
        guard let account = claims[accountClaim]?.stringValue, !account.isEmpty, !account.utf8.contains(0) else {
            throw JWTRejection(
                "the token's claim \(JSONWriter.quoted(accountClaim)), which names the account, is missing or "
                    + "not a non-empty string without NUL")
        }
        return account
    }

    private func verifySignature(header: [String: JSONValue], signature: [UInt8], signed: [UInt8])
        throws(JWTRejection)
    {
        guard let name = header["alg"]?.stringValue else { throw JWTRejection("the token's header names no \"alg\"") }
        let configured = algorithms.map(\.rawValue).joined(separator: ", ")
        guard let algorithm = JWTAlgorithm(rawValue: name), algorithms.contains(algorithm) else {
            // Only a known name is repeated: the rest of the header is the client's text.
            let shown =
                name == "none" || JWTAlgorithm(rawValue: name) != nil ? JSONWriter.quoted(name) : "its algorithm"
            throw JWTRejection("the token's algorithm \(shown) is refused: the configured keys verify \(configured)")
        }
        // An extension the server does not know must not be ignored (RFC 7515 §4.1.11).
        guard header["crit"] == nil else { throw JWTRejection("the token's header has \"crit\" extensions") }
        switch algorithm {
        case .hs256:
            // Only the configured secret: a JWKS key is never taken as an HMAC secret.
            let expected = JWTPublicKey.hmacSHA256(secret: secret ?? [], message: signed)
            guard JWTPublicKey.constantTimeEqual(expected, signature) else {
                throw JWTRejection("the token's signature does not verify with the configured HS256 secret")
            }
        case .rs256, .es256:
            guard let kid = header["kid"]?.stringValue else {
                throw JWTRejection("the token's header names no key (\"kid\") of the JWKS")
            }
            guard let key = keys[kid] else { throw JWTRejection("the token's key (\"kid\") is not in the JWKS") }
            guard key.algorithm == algorithm else {
                throw JWTRejection("the token's key (\"kid\") verifies \(key.algorithm.rawValue), not \(name)")
            }
            guard key.verifies(signature, of: signed) else {
                throw JWTRejection("the token's signature does not verify with its JWKS key")
            }
        }
    }

    private func checkTimes(_ claims: [String: JSONValue], now: Double) throws(JWTRejection) {
        func seconds(_ name: String) throws(JWTRejection) -> Double? {
            switch claims[name] {
            case nil: return nil
            case .integer(let value): return Double(value)
            case .number(let value) where value.isFinite: return value
            default: throw JWTRejection("the token's \(JSONWriter.quoted(name)) is not a number of seconds")
            }
        }
        let leeway = Double(leewaySeconds)
        guard let expires = try seconds("exp") else { throw JWTRejection("the token has no expiry (\"exp\")") }
        guard now < expires + leeway else { throw JWTRejection("the token has expired (\"exp\")") }
        if let notBefore = try seconds("nbf"), now + leeway < notBefore {
            throw JWTRejection("the token is not valid yet (\"nbf\")")
        }
    }
}

/// Why a JWT was refused: which check failed, in words that never repeat the token.
public struct JWTRejection: Error, Sendable, CustomStringConvertible {
    /// The check that failed.
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
