import CLibCrypto
import Foundation
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// JWT sign-in checked claim by claim, with tokens minted here (HS256 through libcrypto, at an
/// explicit time) and by PyJWT (RS256, ES256), against adversarial tokens: each refusal says
/// which check failed and never repeats the token.
@Suite(.timeLimit(.minutes(5))) struct JWTSignInTests {
    static let secret = Array("a secret of at least thirty-two bytes, for HS256".utf8)
    /// The time the HS256 tokens are checked at.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func signIn(leeway: Int = 30, jwks: Data? = nil, secret: [UInt8]? = JWTSignInTests.secret) throws
        -> JWTSignIn
    {
        try JWTSignIn(
            hs256Secret: secret, jwks: jwks, issuer: "https://id.test/", audience: "serialdb", accountClaim: "sub",
            leewaySeconds: leeway)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// An HS256 token of `header` and `payload` (JSON text), signed through OpenSSL's HMAC().
    static func hs256(_ payload: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#, key: [UInt8] = secret)
        -> String
    {
        let signed = base64URL(Array(header.utf8)) + "." + base64URL(Array(payload.utf8))
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let message = Array(signed.utf8)
        _ = HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &digest, &length)
        return signed + "." + base64URL(Array(digest.prefix(Int(length))))
    }

    /// Claims at ``now``: valid for `expiresIn` seconds, with `extra` members.
    static func claims(expiresIn: Int = 300, _ extra: String = "") -> String {
        let at = Int(now.timeIntervalSince1970)
        return #"{"iss":"https://id.test/","aud":"serialdb","sub":"carol","exp":\#(at + expiresIn)\#(extra)}"#
    }

    /// The refusal of `token` at `time`, or `nil` when it is accepted.
    static func refusal(_ token: String, _ signIn: JWTSignIn, at time: Date = now) -> String? {
        do {
            _ = try signIn.account(forToken: token, now: time)
            return nil
        } catch {
            #expect(!error.message.contains(token), "the message repeats the token")
            return error.message
        }
    }

    @Test func aValidHS256TokenSignsInTheAccountOfItsClaim() throws {
        let signIn = try Self.signIn()
        #expect(try signIn.account(forToken: Self.hs256(Self.claims()), now: Self.now) == "carol")
        #expect(signIn.algorithms == [.hs256])
        let array = Self.hs256(Self.claims(#","aud":["other","serialdb"]"#))
        #expect(try signIn.account(forToken: array, now: Self.now) == "carol", "aud may be an array")
        let named = try JWTSignIn(
            hs256Secret: Self.secret, jwks: nil, issuer: "https://id.test/", audience: "serialdb",
            accountClaim: "user_id")
        let token = Self.hs256(Self.claims(#","user_id":"dave""#))
        #expect(try named.account(forToken: token, now: Self.now) == "dave")
    }

    @Test func eachFailedCheckIsNamed() throws {
        let signIn = try Self.signIn()
        let valid = Self.hs256(Self.claims())
        let parts = valid.split(separator: ".").map(String.init)
        let tampered = Self.base64URL(Array(Self.claims(#","sub":"mallory""#).utf8))
        let cases: [(String, String)] = [
            (Self.hs256(Self.claims(), key: Array("another secret of thirty-two bytes or more!".utf8)), "signature"),
            ([parts[0], tampered, parts[2]].joined(separator: "."), "signature"),
            (Self.hs256(Self.claims(expiresIn: -31)), "expired"),
            (Self.hs256(Self.claims(#","nbf":\#(Int(Self.now.timeIntervalSince1970) + 31)"#)), "not valid yet"),
            (Self.hs256(#"{"iss":"https://id.test/","aud":"serialdb","sub":"carol"}"#), "no expiry"),
            (Self.hs256(Self.claims(#","exp":"soon""#)), "\"exp\" is not a number"),
            // A number of seconds written as a string is still not a number.
            (Self.hs256(Self.claims(#","exp":"1800000300""#)), "\"exp\" is not a number"),
            (Self.hs256(Self.claims(#","nbf":"1799999000""#)), "\"nbf\" is not a number"),
            (Self.hs256(Self.claims(#","exp":true"#)), "\"exp\" is not a number"),
            (Self.hs256(Self.claims(#","iss":"https://evil.test/""#)), "issuer"),
            (Self.hs256(Self.claims(#","iss":null"#)), "issuer"),
            (Self.hs256(Self.claims(#","aud":"other""#)), "audience"),
            (Self.hs256(Self.claims(#","aud":["other"]"#)), "audience"),
            (Self.hs256(#"{"iss":"https://id.test/","sub":"carol","exp":1800000300}"#), "audience"),
            (Self.hs256(#"{"iss":"https://id.test/","aud":"serialdb","exp":1800000300}"#), "claim \"sub\""),
            (Self.hs256(Self.claims(#","sub":42"#)), "claim \"sub\""),
            (Self.hs256(Self.claims(#","sub":["carol"]"#)), "claim \"sub\""),
            (Self.hs256(Self.claims(#","sub":"""#)), "claim \"sub\""),
            (Self.hs256(Self.claims(#","sub":"car\u0000ol""#)), "claim \"sub\""),
            (Self.hs256(Self.claims(), header: #"{"alg":"none"}"#), "algorithm \"none\" is refused"),
            (parts[0...1].joined(separator: ".") + ".", "signature"),
            (Self.hs256(Self.claims(), header: #"{"alg":"RS256","kid":"x"}"#), "algorithm \"RS256\" is refused"),
            (Self.hs256(Self.claims(), header: #"{"alg":"HS512"}"#), "its algorithm is refused"),
            (Self.hs256(Self.claims(), header: #"{"typ":"JWT"}"#), "names no \"alg\""),
            (Self.hs256(Self.claims(), header: #"{"alg":"HS256","crit":["exp"]}"#), "\"crit\""),
            (Self.hs256(Self.claims(), header: #"["HS256"]"#), "header"),
            (Self.hs256("[1]"), "payload"),
            (Self.hs256("not json"), "payload"),
            ("a.b", "three parts"),
            ("a.b.c.d", "three parts"),
            ("..", "header"),
            (parts[0] + "=." + parts[1] + "." + parts[2], "header"),
            (parts[0] + "." + parts[1] + "+." + parts[2], "payload"),
            (parts[0] + "." + parts[1] + "." + parts[2] + "*", "signature is not base64url"),
            (parts[0] + "." + parts[1] + "\u{0}." + parts[2], "payload"),
            ("." + valid, "three parts"),
            (valid + ".", "three parts"),
            // A header of 6 KiB is read (a token is refused unread only beyond 8 KiB).
            (
                Self.hs256(Self.claims(), header: #"{"alg":"HS256","x":"\#(String(repeating: "h", count: 6000))"}"#)
                    + "x", "signature"
            ),
            (Self.hs256(Self.claims(), header: #"{"alg":"HS256","alg":"none"}"#), "algorithm \"none\" is refused"),
            (Self.hs256(Self.claims(), header: #"{"alg":"hs256"}"#), "its algorithm is refused"),
            (Self.hs256(Self.claims(), header: #"{"alg":["HS256"]}"#), "names no \"alg\""),
            (valid + String(repeating: "A", count: JWTSignIn.maximumTokenLength), "longer than"),
        ]
        for (token, expected) in cases {
            let message = Self.refusal(token, signIn)
            #expect(message?.contains(expected) == true, "\(expected): \(message ?? "accepted")")
        }
    }

    @Test func theLeewayAllowsThatMuchSkewAndNoMore() throws {
        let signIn = try Self.signIn(leeway: 30)
        let at = Self.now.timeIntervalSince1970
        let expiring = Self.hs256(Self.claims(expiresIn: 0))
        #expect(Self.refusal(expiring, signIn, at: Date(timeIntervalSince1970: at + 29.999)) == nil)
        #expect(Self.refusal(expiring, signIn, at: Date(timeIntervalSince1970: at + 30))?.contains("expired") == true)
        let early = Self.hs256(Self.claims(#","nbf":\#(Int(at) + 30)"#))
        #expect(Self.refusal(early, signIn, at: Self.now) == nil, "nbf exactly the leeway ahead")
        #expect(
            Self.refusal(early, signIn, at: Date(timeIntervalSince1970: at - 0.001))?.contains("not valid yet") == true)
        let strict = try Self.signIn(leeway: 0)
        #expect(Self.refusal(expiring, strict, at: Self.now)?.contains("expired") == true)
    }

    @Test func badSignInSettingsAreRefusedWithAReason() throws {
        func refusal(_ body: () throws -> JWTSignIn) -> String? { SyncFixtures.refusal { _ = try body() } }
        #expect(refusal { try Self.signIn(secret: Array("short".utf8)) }?.contains("at least 32") == true)
        #expect(refusal { try Self.signIn(secret: nil) }?.contains("without a key") == true)
        #expect(refusal { try Self.signIn(leeway: -1) }?.contains("leeway_seconds") == true)
        #expect(refusal { try Self.signIn(jwks: Data("{}".utf8)) }?.contains("\"keys\"") == true)
        #expect(refusal { try Self.signIn(jwks: Data("nope".utf8)) }?.contains("not JSON") == true)
        let noKid = #"{"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB"}]}"#
        #expect(refusal { try Self.signIn(jwks: Data(noKid.utf8)) }?.contains("needs a \"kid\"") == true)
        let small =
            #"{"keys": [{"kty": "RSA", "kid": "r", "n": "\#(Self.base64URL([UInt8](repeating: 0xC5, count: 128)))", "e": "AQAB"}]}"#
        let m1 = refusal { try Self.signIn(jwks: Data(small.utf8)) }
        #expect(m1?.contains("1024 bits") == true, "\(m1 ?? "")")
        let offCurve =
            #"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "e", "x": "\#(Self.base64URL([UInt8](repeating: 1, count: 32)))", "y": "\#(Self.base64URL([UInt8](repeating: 2, count: 32)))"}]}"#
        let m2 = refusal { try Self.signIn(jwks: Data(offCurve.utf8)) }
        #expect(m2?.contains("not a point") == true, "\(m2 ?? "")")
        let p384 = #"{"keys": [{"kty": "EC", "crv": "P-384", "kid": "e", "x": "AA", "y": "AA"}]}"#
        #expect(refusal { try Self.signIn(jwks: Data(p384.utf8)) }?.contains("P-256") == true)
        let octet = #"{"keys": [{"kty": "oct", "kid": "k", "k": "AAAA"}]}"#
        #expect(refusal { try Self.signIn(jwks: Data(octet.utf8)) }?.contains("\"kty\"") == true)
    }

    /// The P-256 generator: a point of the curve, so a valid (if useless) public key.
    static let p256X = "axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY"
    static let p256Y = "T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"

    @Test func aJWKSWithTwoKeysOfOneKidIsRefused() throws {
        let key = #"{"kty": "EC", "crv": "P-256", "kid": "k", "x": "\#(Self.p256X)", "y": "\#(Self.p256Y)"}"#
        let one = try Self.signIn(jwks: Data(#"{"keys": [\#(key)]}"#.utf8))
        #expect(one.algorithms == [.hs256, .es256], "the generator is a point of the curve")
        let twice = SyncFixtures.refusal { _ = try Self.signIn(jwks: Data(#"{"keys": [\#(key), \#(key)]}"#.utf8)) }
        #expect(twice?.contains(#"holds kid "k" twice"#) == true, "\(twice ?? "accepted")")
    }

    /// An RSA key whose public exponent is 1 makes every signature its own message: anyone
    /// can sign. OpenSSL's public key check refuses it (and an even exponent), so the JWKS is
    /// refused; were it taken, the token forged here would sign in.
    @Test func anRSAKeyThatAnyoneCouldSignForIsRefused() throws {
        let modulus = [UInt8](repeating: 0xC5, count: 256)
        func jwks(exponent: [UInt8]) -> Data {
            Data(
                #"{"keys": [{"kty": "RSA", "kid": "weak", "n": "\#(Self.base64URL(modulus))", "e": "\#(Self.base64URL(exponent))"}]}"#
                    .utf8)
        }
        // RSASSA-PKCS1-v1_5 (RFC 8017 §9.2) of the token's SHA-256: with e = 1, the signature.
        let signed =
            Self.base64URL(Array(#"{"alg":"RS256","kid":"weak"}"#.utf8)) + "."
            + Self.base64URL(Array(Self.claims(#","sub":"mallory""#).utf8))
        var digest = [UInt8](repeating: 0, count: 32)
        let message = Array(signed.utf8)
        #expect(EVP_Digest(message, message.count, &digest, nil, EVP_sha256(), nil) == 1)
        let digestInfo: [UInt8] = [
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
            0x20,
        ]
        let padding = [UInt8](repeating: 0xFF, count: 256 - 3 - digestInfo.count - 32)
        let forged = signed + "." + Self.base64URL([0x00, 0x01] + padding + [0x00] + digestInfo + digest)
        for exponent: [UInt8] in [[1], [2], [0x01, 0x00, 0x00]] {
            do {
                let signIn = try Self.signIn(jwks: jwks(exponent: exponent), secret: nil)
                let account = Self.refusal(forged, signIn) == nil ? "signs in" : "is refused"
                Issue.record("the key of exponent \(exponent) was taken; the forged token \(account)")
            } catch let error as SyncServerError {
                #expect(
                    error.message.contains("kid \"weak\"") && error.message.contains("exponent"), "\(error.message)")
            }
        }
    }

    @Test func base64URLIsDecodedStrictly() {
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("AQAB") == [1, 0, 1])
        #expect(Base64URL.decode("_-8") == [0xFF, 0xEF])
        #expect(Base64URL.decode("AQ") == [1])
        #expect(Base64URL.decode("AR") == nil, "leftover bits set: another spelling of AQ")
        #expect(Base64URL.decode("AQ==") == nil, "no padding")
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("A+/B") == nil)
        #expect(Base64URL.decode("AQ\u{0}B") == nil)
    }
}
