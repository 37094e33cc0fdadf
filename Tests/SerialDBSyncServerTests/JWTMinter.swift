import Foundation
import SerialDBSyncWire
import SerialDBTestSupport

/// Mints JWTs with a real JWT library, PyJWT (Debian's python3-jwt, with python3-cryptography
/// for RS256 and ES256), run as a child process: `Scripts/mint-jwt.py`. Its keys are generated
/// at test time in a directory of its own and never leave it, but for the JWKS it writes.
struct JWTMinter {
    /// One token to mint; the claims and headers are JSON object text.
    struct Spec {
        var json: String

        /// Signed with the private key `key` (a name starting with `rsa` or `ec`; its kid).
        static func key(_ key: String, _ algorithm: String, claims: String, headers: String = "{}") -> Spec {
            Spec(
                json:
                    #"{"key": \#(JSONWriter.quoted(key)), "alg": "\#(algorithm)", "claims": \#(claims), "headers": \#(headers)}"#
            )
        }

        /// HS256 with the bytes of the file at `path`.
        static func secret(_ path: String, claims: String, headers: String = "{}") -> Spec {
            Spec(
                json:
                    #"{"secret_file": \#(JSONWriter.quoted(path)), "alg": "HS256", "claims": \#(claims), "headers": \#(headers)}"#
            )
        }

        /// HS256 with the PEM of `key`'s public half as the secret: the algorithm-confusion attack.
        static func hmacWithPublicKey(_ key: String, claims: String) -> Spec {
            Spec(json: #"{"hmac_with_public_key": \#(JSONWriter.quoted(key)), "claims": \#(claims)}"#)
        }
    }

    /// Where the private keys are kept.
    let directory: String

    /// The interpreter Debian's python3-jwt belongs to.
    static let python = "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Scripts/mint-jwt.py").path

    /// Writes a JWKS of the public halves of `keys` to `jwksPath` (when given) and mints `tokens`.
    @discardableResult
    func run(jwks keys: [String] = [], to jwksPath: String? = nil, _ tokens: [Spec] = []) async throws -> [String] {
        var request =
            #"{"dir": \#(JSONWriter.quoted(directory)), "tokens": [\#(tokens.map(\.json).joined(separator: ","))]"#
        if let jwksPath {
            let names = keys.map(JSONWriter.quoted).joined(separator: ",")
            request += #", "jwks": {"path": \#(JSONWriter.quoted(jwksPath)), "keys": [\#(names)]}"#
        }
        request += "}"
        let run = try await ToolRun(
            executable: URL(fileURLWithPath: Self.python), [Self.script, request], seconds: 120)
        guard run.status == 0, let minted = try JSONValue.parse(Data(run.output.utf8)).arrayValue else {
            throw MintFailure(message: "mint-jwt.py failed (status \(run.status)): \(run.errors)")
        }
        return minted.compactMap(\.stringValue)
    }

    /// Mints one token.
    func mint(_ spec: Spec) async throws -> String {
        try await run([spec])[0]
    }

    struct MintFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Claims that pass every check of the tests' sign-in, overridden or added by `extra`
    /// (JSON members without the braces), valid from a minute ago for ten minutes.
    static func claims(_ extra: String = "", now: Date = Date()) -> String {
        let seconds = Int(now.timeIntervalSince1970)
        let base =
            #""iss": "https://id.test/", "aud": "serialdb", "sub": "carol", "exp": \#(seconds + 600), "nbf": \#(seconds - 60)"#
        return "{" + base + (extra.isEmpty ? "" : ", " + extra) + "}"
    }
}
