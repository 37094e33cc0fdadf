import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// JWT sign-in over real HTTP, with tokens PyJWT mints from keys generated for the test:
/// RS256, ES256 and HS256 accepted beside the static tokens; forged, confused and malformed
/// tokens answered 401 with the check that failed, and never repeated in the answer or the log.
@Suite(.timeLimit(.minutes(5))) struct JWTSignInHTTPTests {
    /// A directory with a secret, a JWKS of `rsa-1` and `ec-1`, and a configuration file that
    /// names them by relative paths.
    struct Setup {
        let directory: TemporaryDirectory
        let minter: JWTMinter
        let configPath: String

        init(secret: Bool = true, jwks: Bool = true, tokens: Bool = true) async throws {
            directory = try TemporaryDirectory()
            minter = JWTMinter(directory: directory.path(""))
            try Data("a shared secret that is long enough for HS256 signing\n".utf8)
                .write(to: URL(fileURLWithPath: directory.path("secret.key")))
            try await minter.run(jwks: ["rsa-1", "ec-1"], to: directory.path("jwks.json"))
            var auth: [String] = [#""issuer": "https://id.test/", "audience": "serialdb""#]
            if secret { auth.append(#""hs256_secret_file": "secret.key""#) }
            if jwks { auth.append(#""jwks_file": "jwks.json""#) }
            let tables =
                #"[{"name": "note", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT)"}]"#
            let tokenList = tokens ? #", "tokens": [{"token": "t-alice", "account": "alice"}]"# : ""
            let json = #"{"tables": \#(tables)\#(tokenList), "auth": {"jwt": {\#(auth.joined(separator: ", "))}}}"#
            configPath = directory.path("sync.json")
            try Data(json.utf8).write(to: URL(fileURLWithPath: configPath))
        }

        func mint(_ specs: [JWTMinter.Spec]) async throws -> [String] {
            try await minter.run(specs)
        }

        func server() throws -> RunningSyncServer {
            try RunningSyncServer(.sqliteMemory, configuration: try SyncServerConfiguration(contentsOfFile: configPath))
        }
    }

    private func account(_ running: RunningSyncServer, _ token: String) async throws -> SyncHTTPClient.Answer {
        try await running.client(token).post("/v1/check-update", #"{"tables": []}"#)
    }

    @Test func pyJWTTokensOfEveryAlgorithmSignInBesideTheStaticTokens() async throws {
        let setup = try await Setup()
        let claims = { (sub: String) in JWTMinter.claims(#""sub": "\#(sub)""#) }
        let tokens = try await setup.mint([
            .key("rsa-1", "RS256", claims: claims("carol")), .key("ec-1", "ES256", claims: claims("dave")),
            .secret(setup.directory.path("secret.key"), claims: claims("erin")),
        ])
        let running = try setup.server()
        defer { try? running.stop() }
        #expect(running.server.service.configuration.jwt?.algorithms == [.hs256, .rs256, .es256])
        for (token, expected) in zip(tokens + ["t-alice"], ["carol", "dave", "erin", "alice"]) {
            let answer = try await account(running, token)
            #expect(answer.status == 200, "\(expected): \(answer.errorMessage ?? "")")
            #expect(answer["account"] == .string(expected))
        }
        // The account a JWT names writes its own rows, as a static token's does.
        let upload = try await running.client(tokens[0]).postData(client: "d", [upsert(1, "note", #"{"id": "a"}"#)])
        #expect(upload["results"]?[0]?["status"] == .string("applied"))
        #expect(try running.store.latestVersions(of: [("note", "carol"), ("note", "alice")]) == [1, 0])
    }

    @Test func forgedConfusedAndMalformedTokensAre401WithTheCheckThatFailed() async throws {
        let setup = try await Setup()
        let valid = JWTMinter.claims()
        let past = Int(Date().timeIntervalSince1970) - 3600
        let minted = try await setup.mint([
            .key("rsa-1", "RS256", claims: valid),
            .key("rsa-2", "RS256", claims: valid),
            .key("rsa-1", "RS256", claims: valid, headers: #"{"kid": "ec-1"}"#),
            .hmacWithPublicKey("rsa-1", claims: valid),
            .key("ec-1", "ES256", claims: JWTMinter.claims(#""exp": \#(past)"#)),
            .key("ec-1", "ES256", claims: JWTMinter.claims(#""aud": ["other"]"#)),
            .key("ec-1", "ES256", claims: JWTMinter.claims(#""iss": "https://evil.test/""#)),
            .key("ec-1", "ES256", claims: JWTMinter.claims(#""sub": 7"#)),
            .key("rsa-1", "RS256", claims: JWTMinter.claims(#""nbf": \#(past + 7200)"#)),
            .key("ec-1", "ES256", claims: valid),
            .key("rsa-1", "RS256", claims: valid, headers: #"{"kid": null}"#),
            .key("ec-1", "ES256", claims: JWTMinter.claims(#""exp": "\#(past + 7200)""#)),
            .key("rsa-1", "RS256", claims: valid, headers: #"{"x": "\#(String(repeating: "h", count: 9000))"}"#),
        ])
        let parts = minted[0].split(separator: ".").map(String.init)
        let otherPayload = minted[5].split(separator: ".")[1]
        let es256 = minted[9].split(separator: ".").map(String.init)
        let cases: [(String, String)] = [
            (minted[1], "not in the JWKS"),
            (minted[2], "verifies ES256, not RS256"),
            (minted[3], "signature does not verify with the configured HS256 secret"),
            (minted[4], "expired"),
            (minted[5], "audience"),
            (minted[6], "issuer"),
            (minted[7], "claim \"sub\""),
            (minted[8], "not valid yet"),
            ([parts[0], String(otherPayload), parts[2]].joined(separator: "."), "signature does not verify"),
            ([es256[0], es256[1], Self.flipped(es256[2])].joined(separator: "."), "signature does not verify"),
            ([Self.noneHeader, parts[1], ""].joined(separator: "."), "algorithm \"none\" is refused"),
            (minted[0] + String(repeating: "A", count: 20_000), "longer than"),
            ("x.y.z", "header"),
            (minted[10], "names no key (\"kid\")"),
            (minted[11], "\"exp\" is not a number"),
            (minted[12], "longer than"),
            // ES256's r || s re-encoded as DER, the form OpenSSL verifies but a JWT never carries.
            ([es256[0], es256[1], Self.der(es256[2])].joined(separator: "."), "signature does not verify"),
            // Four parts: not a JWT, and not a configured token either.
            (minted[0] + ".e30", "a valid token is required"),
        ]
        let running = try setup.server()
        defer { try? running.stop() }
        for (token, expected) in cases {
            let answer = try await account(running, token)
            #expect(answer.status == 401, "\(expected)")
            #expect(answer.errorCode == "unauthorized")
            #expect(answer.errorMessage?.contains(expected) == true, "\(expected): \(answer.errorMessage ?? "")")
            #expect(answer.errorMessage?.contains(token) == false)
        }
        // Not a JWT and not a configured token: the usual answer.
        #expect(try await account(running, "t-nobody").errorMessage?.contains("a valid token is required") == true)
        // The log line is written after the answer is queued: wait for the last one.
        let refused = cases.count + 1
        let entries = running.log
        try await waitUntil(timeout: .seconds(30)) {
            entries.withLock { $0.filter { $0.status == 401 }.count } >= refused
        }
        let log = running.log.withLock { $0 }
        #expect(log.filter { $0.status == 401 }.count == refused)
        #expect(log.allSatisfy { entry in !minted.contains { entry.description.contains($0) } })
        // A NUL in the header refuses it before any check (curl cannot send one; the service is asked directly).
        let nul = running.server.service.handle(
            SyncRequest(
                method: "POST", path: "/v1/check-update", authorization: "Bearer \(minted[0])\u{0}",
                body: Data("{}".utf8)))
        #expect(nul.status == 401)
    }

    /// An ES256 signature (base64url of r || s) in base64url of its DER encoding.
    static func der(_ signature: String) -> String {
        let raw = Base64URL.decode(signature) ?? []
        return JWTSignInTests.base64URL(JWTPublicKey.derSignature(rawP256: raw) ?? [])
    }

    /// `text` with its tenth character changed.
    static func flipped(_ text: String) -> String {
        var characters = Array(text)
        characters[10] = characters[10] == "A" ? "B" : "A"
        return String(characters)
    }

    /// `{"alg":"none"}`.
    static let noneHeader = "eyJhbGciOiJub25lIn0"

    @Test func withoutASecretAnHS256TokenSignedWithTheRSAPublicKeyIsRefusedByAlgorithm() async throws {
        let setup = try await Setup(secret: false, tokens: false)
        let tokens = try await setup.mint([
            .hmacWithPublicKey("rsa-1", claims: JWTMinter.claims()), .key("rsa-1", "RS256", claims: JWTMinter.claims()),
        ])
        let running = try setup.server()
        defer { try? running.stop() }
        let confused = try await account(running, tokens[0])
        #expect(confused.status == 401)
        #expect(
            confused.errorMessage?.contains("algorithm \"HS256\" is refused: the configured keys verify RS256, ES256")
                == true)
        #expect(try await account(running, tokens[1])["account"] == .string("carol"), "no \"tokens\" is fine with JWTs")
    }

    /// A token with a 5 KiB header signs in: only a token over 8 KiB is refused unread.
    @Test func aTokenWithALargeHeaderSignsIn() async throws {
        let setup = try await Setup()
        let token = try await setup.minter.mint(
            .key(
                "ec-1", "ES256", claims: JWTMinter.claims(),
                headers: #"{"x": "\#(String(repeating: "h", count: 5000))"}"#))
        let running = try setup.server()
        defer { try? running.stop() }
        #expect(try await account(running, token)["account"] == .string("carol"))
    }

    /// JWKS an identity provider could publish by mistake: a 1024-bit RSA key, one key listed
    /// twice under its kid. Either is refused with the key's kid, and a reload would keep the
    /// running configuration.
    @Test func aJWKSWithAShortRSAKeyOrAKidListedTwiceIsRefused() async throws {
        let setup = try await Setup()
        let path = setup.directory.path("jwks.json")
        func refusal() -> String? {
            SyncFixtures.refusal { _ = try SyncServerConfiguration(contentsOfFile: setup.configPath) }
        }
        try await setup.minter.run(jwks: ["rsa1024-weak"], to: path)
        let short = refusal()
        #expect(
            short?.contains(#"kid "rsa1024-weak""#) == true && short?.contains("1024 bits") == true, "\(short ?? "")")
        try await setup.minter.run(jwks: ["rsa-1", "ec-1", "rsa-1"], to: path)
        let twice = refusal()
        #expect(twice?.contains(#"holds kid "rsa-1" twice"#) == true, "\(twice ?? "")")
    }

    @Test func keyFilesAreFoundBesideTheConfigurationAndTheirFaultsNamed() async throws {
        let setup = try await Setup()
        // From another working directory, the relative paths still name the files beside it.
        #expect(try SyncServerConfiguration(contentsOfFile: setup.configPath).jwt?.algorithms.count == 3)
        func refusal(_ auth: String) -> String? {
            SyncFixtures.refusal {
                _ = try SyncServerConfiguration(
                    json: Data(#"{"tables": [], "auth": {"jwt": {\#(auth)}}}"#.utf8),
                    relativeTo: URL(fileURLWithPath: setup.directory.path("")))
            }
        }
        let names = #""issuer": "i", "audience": "a""#
        #expect(
            refusal(#"\#(names), "jwks_file": "missing.json""#)?.contains(setup.directory.path("missing.json")) == true)
        #expect(
            refusal(#"\#(names), "hs256_secret_file": "jwks.json", "leeway_seconds": 1.5"#)?.contains("leeway") == true)
        #expect(refusal(#""issuer": "i", "jwks_file": "jwks.json""#)?.contains("\"audience\" is required") == true)
        #expect(refusal(#"\#(names), "jwks_file": "jwks.json", "issuer_url": "x""#)?.contains("unknown member") == true)
        #expect(refusal(names)?.contains("without a key") == true)
        #expect(
            SyncFixtures.refusal {
                _ = try SyncServerConfiguration(json: Data(#"{"tables": [], "auth": {"oauth": 1}}"#.utf8))
            }?.contains("\"jwt\"") == true)
        #expect(
            SyncFixtures.refusal { _ = try SyncServerConfiguration(json: Data(#"{"tables": []}"#.utf8)) }?.contains(
                "\"tokens\"") == true)
    }
}
