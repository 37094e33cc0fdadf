import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Synchronization
import Testing

/// SIGHUP makes the real `serialdb-sync-server` read its configuration again: tokens, JWT keys
/// and table definitions change without a restart, a broken file is refused in one line while
/// the running configuration stays, and a request already started keeps the configuration it
/// started with. Every check goes over HTTP.
@Suite(.timeLimit(.minutes(5))) struct ConfigurationReloadTests {
    /// A running executable and the configuration file it reads.
    struct Reloading {
        let directory: TemporaryDirectory
        let configPath: String
        let process: ServerProcess
        let url: URL

        init(_ json: String, kind: SyncStoreKind = .sqliteFile, directory: TemporaryDirectory? = nil) async throws {
            let directory = try directory ?? TemporaryDirectory()
            self.directory = directory
            configPath = directory.path("sync.json")
            try Data(json.utf8).write(to: URL(fileURLWithPath: configPath))
            let store = try kind.makeLocation(in: directory).serverArguments
            process = try ServerProcess(arguments: ["--config", configPath, "--port", "0"] + store)
            url = try await process.listeningURL()
        }

        func client(_ token: String) -> SyncHTTPClient { SyncHTTPClient(baseURL: url, token: token) }

        /// Writes `json` as the configuration, sends SIGHUP and returns the line the server
        /// logged about it (`reloaded ...` or `reload refused ...`), waiting at most a minute.
        @discardableResult
        func reload(_ json: String) async throws -> String {
            try Data(json.utf8).write(to: URL(fileURLWithPath: configPath))
            let before = Self.reloadLines(process.standardError).count
            process.signal(SIGHUP)
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let lines = Self.reloadLines(process.standardError)
                if lines.count > before { return lines[before] }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw UnexpectedReload(message: "no reload line within a minute: \(process.standardError.suffix(2000))")
        }

        static func reloadLines(_ log: String) -> [String] {
            log.split(separator: "\n").map(String.init).filter { $0.hasPrefix("serialdb-sync-server: reload") }
        }

        /// Stops the server with SIGTERM; it must exit 0.
        func stop() async throws {
            process.signal(SIGTERM)
            #expect(try await process.exitStatus() == 0)
        }
    }

    struct UnexpectedReload: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static let note =
        #"{"name": "note", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT)"}"#

    static func config(tables: [String] = [note], tokens: [(String, String)], auth: String = "") -> String {
        let list = tokens.map { #"{"token": "\#($0.0)", "account": "\#($0.1)"}"# }.joined(separator: ", ")
        return #"{"tables": [\#(tables.joined(separator: ", "))], "tokens": [\#(list)]\#(auth)}"#
    }

    private func status(_ server: Reloading, _ token: String) async throws -> Int {
        try await server.client(token).post("/v1/check-update", #"{"tables": []}"#).status
    }

    @Test func tokensAreAddedAndRemovedAndABrokenFileKeepsTheRunningOnes() async throws {
        let server = try await Reloading(Self.config(tokens: [("t-alice", "alice")]))
        #expect(try await status(server, "t-alice") == 200)
        #expect(try await status(server, "t-bob") == 401)
        let line = try await server.reload(Self.config(tokens: [("t-bob", "bob")]))
        #expect(line.hasPrefix("serialdb-sync-server: reloaded \(server.configPath): 1 table(s)"), "\(line)")
        #expect(try await status(server, "t-alice") == 401, "a removed token signs in no more")
        #expect(try await status(server, "t-bob") == 200, "an added token signs in")

        let broken = [
            ("{\"tables\": [", "malformed JSON"),
            (
                Self.config(
                    tables: [#"{"name": "t", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE t(x)"}"#],
                    tokens: []), "has no PRIMARY KEY"
            ),
            (
                Self.config(
                    tokens: [("t-carol", "carol")],
                    auth: #", "auth": {"jwt": {"issuer": "i", "audience": "a", "jwks_file": "none.json"}}"#),
                "cannot read"
            ),
        ]
        for (json, reason) in broken {
            let before = server.process.standardError.split(separator: "\n").count
            let refused = try await server.reload(json)
            #expect(
                refused.hasPrefix("serialdb-sync-server: reload refused, still serving the previous configuration: "))
            #expect(refused.contains(reason), "\(refused)")
            #expect(server.process.standardError.split(separator: "\n").count == before + 1, "one line")
            #expect(try await status(server, "t-bob") == 200, "the running configuration stays")
            #expect(try await status(server, "t-carol") == 401)
        }
        try await server.stop()
    }

    @Test func aRotatedJWKSKeySignsInAndTheOldOneNoMore() async throws {
        let directory = try TemporaryDirectory()
        let minter = JWTMinter(directory: directory.path(""))
        let jwks = directory.path("jwks.json")
        try await minter.run(jwks: ["rsa-old"], to: jwks)
        let tokens = try await minter.run([
            .key("rsa-old", "RS256", claims: JWTMinter.claims()), .key("rsa-new", "RS256", claims: JWTMinter.claims()),
            .key("ec-new", "ES256", claims: JWTMinter.claims(#""sub": "dave""#)),
        ])
        let auth =
            #", "auth": {"jwt": {"issuer": "https://id.test/", "audience": "serialdb", "jwks_file": "jwks.json"}}"#
        let json = Self.config(tokens: [], auth: auth)
        let server = try await Reloading(json, directory: directory)
        #expect(try await status(server, tokens[0]) == 200)
        #expect(try await status(server, tokens[1]) == 401)

        try await minter.run(jwks: ["rsa-new", "ec-new"], to: jwks)
        #expect(try await status(server, tokens[0]) == 200, "the keys are read again on SIGHUP only")
        let line = try await server.reload(json)
        #expect(line.hasSuffix("JWT sign-in with RS256, ES256"), "\(line)")
        let old = try await server.client(tokens[0]).post("/v1/check-update", #"{"tables": []}"#)
        #expect(old.status == 401)
        #expect(old.errorMessage?.contains("not in the JWKS") == true)
        #expect(
            try await server.client(tokens[1]).post("/v1/check-update", #"{"tables": []}"#)["account"]
                == .string("carol"))
        #expect(
            try await server.client(tokens[2]).post("/v1/check-update", #"{"tables": []}"#)["account"]
                == .string("dave"))
        try await server.stop()
    }

    static let tag =
        #"{"name": "tag", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE tag(id TEXT PRIMARY KEY NOT NULL, label TEXT)"}"#

    @Test(arguments: SyncStoreKind.persistent)
    func aHigherStructVersionIsServedAfterSighupAndOneTheRowsRefuseChangesNoTable(_ kind: SyncStoreKind)
        async throws
    {
        let tokens = [("t-alice", "alice")]
        let server = try await Reloading(Self.config(tables: [Self.note, Self.tag], tokens: tokens), kind: kind)
        let alice = server.client("t-alice")
        let uploaded = try await alice.postData(
            client: "d", [upsert(1, "note", #"{"id": "a", "title": "kept"}"#), upsert(2, "tag", #"{"id": "t"}"#)])
        #expect(uploaded.status == 200)

        // note v2 drops its title and the tag table gains a NOT NULL column the stored tag has no
        // value for: refused as a whole, so note keeps its title too.
        let droppedTitle =
            #"{"name": "note", "scope": "account", "struct_version": 2, "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL)"}"#
        let strictTag =
            #"{"name": "tag", "scope": "account", "struct_version": 2, "schema": "CREATE TABLE tag(id TEXT PRIMARY KEY NOT NULL, label TEXT, color TEXT NOT NULL)"}"#
        let refused = try await server.reload(Self.config(tables: [droppedTitle, strictTag], tokens: tokens))
        #expect(refused.contains("reload refused") && refused.contains("\"tag\""), "\(refused)")
        #expect(try await alice.fetchAll("note").changes.first?["row"]?["title"] == .string("kept"))
        let versions = try await alice.post("/v1/check-update", #"{"tables": []}"#)["tables"]?.arrayValue ?? []
        #expect(versions.map { $0["struct_version"] } == [.integer(1), .integer(1)])

        let pinned =
            #"{"name": "note", "scope": "account", "struct_version": 2, "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT, pinned INTEGER NOT NULL DEFAULT 0)"}"#
        let line = try await server.reload(Self.config(tables: [pinned, Self.tag], tokens: tokens))
        #expect(line.contains("reloaded"), "\(line)")
        let check = try await alice.post(
            "/v1/check-update", #"{"tables": [{"table": "note", "struct_version": 1, "version": 2}]}"#)
        #expect(check["tables"]?[0]?["struct_version"] == .integer(2))
        #expect(check["tables"]?[0]?["schema_changed"] == .bool(true))
        let schema = try await alice.post("/v1/fetch-schema", #"{"table": "note"}"#)
        #expect(schema["schema"]?.stringValue?.contains("pinned") == true)
        let rows = try await alice.fetchAll("note").changes
        #expect(rows.first?["row"] == .object(["id": .string("a"), "title": .string("kept"), "pinned": .integer(0)]))
        let next = try await alice.postData(client: "d", [upsert(3, "note", #"{"id": "b", "pinned": "yes"}"#)])
        #expect(next["results"]?[0]?["status"] == .string("rejected"), "uploads are checked against the new definition")
        try await server.stop()
    }

    /// Reloads, one after another, while four clients keep uploading and signing in: every
    /// answer is one whole configuration's (the rotating token's account and the table's
    /// struct_version name the same generation), every upload is applied, and the last
    /// reload's struct_version is served. CI runs it under ThreadSanitizer.
    @Test func reloadsWhileRequestsRunAnswerEachUnderOneWholeConfiguration() async throws {
        let configuration: @Sendable (Int) throws -> SyncServerConfiguration = { generation in
            let note = try SyncTable(
                name: "note", scope: .account, structVersion: Int64(generation),
                schema: "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT)")
            return try SyncServerConfiguration(
                tables: [note], tokens: ["t-alice": "alice", "t-rotating": "account-\(generation)"])
        }
        let running = try RunningSyncServer(.sqliteFile, configuration: try configuration(1))
        defer { try? running.stop() }
        // A reload after every eight answers, so that reloads overlap the whole run however
        // slowly it goes and never outnumber the requests (reloading flat out, each one
        // rewriting the table, would starve the tests running beside it). On a thread of its
        // own, told of the answers by relaxed atomics: through a lock, or on a thread the
        // clients' tasks also run on, ThreadSanitizer would see each reload ordered before
        // the clients' next requests, whatever the server's own locking.
        let progress = ReloadProgress()
        let reloaded = Locked<Result<Int, any Error>?>(nil)
        Thread.detachNewThread {
            var generation = 1
            var reloadedAt = 0
            let result = Result { () throws -> Int in
                while !progress.done.load(ordering: .relaxed) || generation < 3 {
                    let answered = progress.answered.load(ordering: .relaxed)
                    guard answered >= reloadedAt + 8 || progress.done.load(ordering: .relaxed) else {
                        usleep(1_000)
                        continue
                    }
                    reloadedAt = answered
                    generation += 1
                    try running.server.service.reload(try configuration(generation))
                }
                return generation
            }
            reloaded.withLock { $0 = result }
        }
        let perClient = 20
        let answers = try await withThrowingTaskGroup(of: [String].self) { group in
            for client in 0..<4 {
                group.addTask {
                    var seen: [String] = []
                    for request in 0..<perClient {
                        let row = #"{"id": "c\#(client)-\#(request)", "title": "t"}"#
                        let upload = try await running.alice.postData(
                            client: "client-\(client)", [upsert(request + 1, "note", row)])
                        seen.append("upload \(upload.status) \(upload["results"]?[0]?["status"]?.stringValue ?? "-")")
                        let check = try await running.client("t-rotating").post("/v1/check-update", #"{"tables": []}"#)
                        let generation = check["tables"]?[0]?["struct_version"]?.integerValue ?? 0
                        let account = check["account"]?.stringValue ?? "none"
                        seen.append(account == "account-\(generation)" ? "whole" : "torn: \(account), \(generation)")
                        progress.answered.wrappingAdd(2, ordering: .relaxed)
                    }
                    return seen
                }
            }
            defer { progress.done.store(true, ordering: .relaxed) }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        try await waitUntil(timeout: .seconds(60)) { reloaded.withLock { $0 != nil } }
        let generations = try #require(reloaded.withLock { $0 }).get()
        #expect(answers.filter { $0 == "upload 200 applied" }.count == 4 * perClient, "\(Set(answers))")
        #expect(answers.filter { $0 == "whole" }.count == 4 * perClient, "\(Set(answers))")
        #expect(try running.store.latestVersions(of: [("note", "alice")]) == [Int64(4 * perClient)])
        let check = try await running.client("t-rotating").post("/v1/check-update", #"{"tables": []}"#)
        #expect(check["account"] == .string("account-\(generations)"))
        #expect(check["tables"]?[0]?["struct_version"] == .integer(Int64(generations)))
    }

    #if canImport(Glibc)
        @Test func aRequestWhoseHeadersCameBeforeTheReloadFinishesWithItsConfiguration() async throws {
            let server = try await Reloading(Self.config(tokens: [("t-alice", "alice")]))
            let connection = try RawConnection(port: UInt16(server.url.port ?? 0))
            let body = #"{"client_id": "d", "mutations": [\#(upsert(1, "note", #"{"id": "a", "title": "t"}"#))]}"#
            // "100 Continue" says the server has the headers: the request has started.
            connection.send(
                "POST /v1/post-data HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                    + "Expect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
            #expect(connection.answer()?.hasPrefix("HTTP/1.1 100") == true)
            #expect(try await server.reload(Self.config(tokens: [("t-bob", "bob")])).contains("reloaded"))
            connection.send(body)
            let answer = try #require(connection.answer())
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            #expect(answer.contains(#""status":"applied""#))
            #expect(try await status(server, "t-alice") == 401, "a request started after it has the new tokens")
            try await server.stop()
        }

        @Test func aRequestStartedBeforeADefinitionChangeIsHandledUnderTheNewDefinition() async throws {
            let running = try RunningSyncServer(.sqliteMemory)
            defer { try? running.stop() }
            let connection = try RawConnection(port: running.server.port)
            let body =
                #"{"client_id": "d", "mutations": [\#(upsert(1, "note", #"{"id": "a", "title": "t", "body": "b"}"#))]}"#
            connection.send(
                "POST /v1/post-data HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                    + "Expect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
            #expect(connection.answer()?.hasPrefix("HTTP/1.1 100") == true)
            // note loses its body column: the store now keeps note rows without one, so an
            // upload validated against the old definition must not be stored with it.
            let old = try SyncFixtures.configuration()
            let note = try SyncTable(
                name: "note", scope: .account, structVersion: 2,
                schema: "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)")
            let changed = try SyncServerConfiguration(
                tables: [note] + old.tables.dropFirst(), tokens: ["t-alice": "alice", "t-bob": "bob"])
            #expect(changed.table(named: "note")?.structVersion == 2)
            try running.server.service.reload(changed)
            connection.send(body)
            let answer = try #require(connection.answer())
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            #expect(answer.contains(#""status":"rejected""#), "\(answer)")
            #expect(try running.store.latestVersions(of: [("note", "alice")]) == [0])
        }
    #endif
}

/// What the clients of ``ConfigurationReloadTests/reloadsWhileRequestsRunAnswerEachUnderOneWholeConfiguration()``
/// tell the thread that reloads: how many answers they had, and whether they are done.
private final class ReloadProgress: Sendable {
    let answered = Atomic(0)
    let done = Atomic(false)
}
