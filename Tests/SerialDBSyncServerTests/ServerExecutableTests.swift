import Foundation
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// The `serialdb-sync-server` executable: its command line, crash recovery and clean stop.
@Suite(.timeLimit(.minutes(5))) struct ServerExecutableTests {
    private func files() throws -> (TemporaryDirectory, config: String, db: String) {
        let directory = try TemporaryDirectory()
        let config = directory.path("sync.json")
        try Data(SyncFixtures.configurationJSON.utf8).write(to: URL(fileURLWithPath: config))
        return (directory, config, directory.path("server.sqlite"))
    }

    @Test(arguments: SyncStoreKind.persistent)
    func retriedUploadsAcrossASigkillAndRestartReturnTheirFirstResults(_ kind: SyncStoreKind) async throws {
        let (directory, config, _) = try files()
        let store = try kind.makeLocation(in: directory).serverArguments
        let mutations = [
            upsert(1, "note", #"{"id": "a", "title": "first"}"#),
            upsert(2, "note", #"{"id": "b"}"#),
            upsert(3, "note", #"{"id": "c", "title": "third"}"#, base: 5),
            upsert(4, "note", #"{"id": "d", "title": "fourth"}"#),
        ]
        let first = try ServerProcess(arguments: ["--config", config, "--port", "0"] + store)
        let firstURL = try await first.listeningURL()
        let before = try await SyncHTTPClient(baseURL: firstURL, token: "t-alice").postData(client: "phone", mutations)
        #expect(before.status == 200)
        first.signal(SIGKILL)
        #expect(try await first.exitStatus() == SIGKILL)

        let second = try ServerProcess(arguments: ["--config", config, "--port", "0"] + store)
        let client = SyncHTTPClient(baseURL: try await second.listeningURL(), token: "t-alice")
        let retry = try await client.postData(client: "phone", mutations)
        #expect(retry.json == before.json)
        let rows = try await client.fetchAll("note").changes
        #expect(rows.map { $0["row"]?["id"] } == [.string("a"), .string("d")])
        #expect(rows.map { $0["version"] } == [.integer(1), .integer(2)])
        let next = try await client.postData(client: "phone", [upsert(5, "note", #"{"id": "e", "title": "t"}"#)])
        #expect(next["results"]?[0]?["version"] == .integer(3), "the counter survived the crash")
        second.signal(SIGTERM)
        #expect(try await second.exitStatus() == 0)
    }

    @Test func sigtermStopsCleanlyAfterLoggingEachRequestOnStandardError() async throws {
        let (directory, config, db) = try files()
        _ = directory
        let server = try ServerProcess(arguments: [
            "--config", config, "--db", db, "--host", "127.0.0.1", "--port", "0",
        ])
        let url = try await server.listeningURL()
        #expect(url.absoluteString.hasPrefix("http://127.0.0.1:"))
        let client = SyncHTTPClient(baseURL: url, token: "t-bob")
        #expect(
            try await client.postData(client: "d", [upsert(1, "note", #"{"id": "x", "title": "hidden"}"#)]).status
                == 200)
        #expect(try await client.fetchData("note", since: 0).status == 200)
        server.signal(SIGTERM)
        #expect(try await server.exitStatus() == 0)
        let log = server.standardError
        #expect(log.contains("POST /v1/post-data account=bob status=200"))
        #expect(log.contains("POST /v1/fetch-data account=bob status=200"))
        #expect(!log.contains("t-bob") && !log.contains("hidden"))
        let store = try SQLiteSyncStore(path: db)
        #expect(try store.latestVersions(of: [("note", "bob")]) == [1])
        try store.close()
    }

    #if canImport(Glibc)
        @Test func sigtermFinishesTheRequestInFlightBeforeExiting() async throws {
            let (directory, config, db) = try files()
            _ = directory
            let server = try ServerProcess(arguments: [
                "--config", config, "--db", db, "--port", "0", "--max-connections-per-address", "5",
                "--request-timeout", "120",
            ])
            let url = try await server.listeningURL()
            let connection = try RawConnection(port: UInt16(url.port ?? 0))
            let body = #"{"client_id": "d", "mutations": [\#(upsert(1, "note", #"{"id": "a", "title": "t"}"#))]}"#
            // "100 Continue" says the server has the headers: the request is in flight.
            connection.send(
                "POST /v1/post-data HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                    + "Expect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
            #expect(connection.answer()?.hasPrefix("HTTP/1.1 100") == true)
            server.signal(SIGTERM)
            connection.send(body)
            let answer = try #require(connection.answer())
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(80))")
            #expect(answer.contains(#""status":"applied""#))
            #expect(try await server.exitStatus() == 0)
            let store = try SQLiteSyncStore(path: db)
            #expect(try store.latestVersions(of: [("note", "alice")]) == [1])
            try store.close()
        }
    #endif

    @Test func sigintStopsCleanlyToo() async throws {
        let (directory, config, db) = try files()
        _ = directory
        let server = try ServerProcess(arguments: ["--config", config, "--db", db, "--port", "0"])
        _ = try await server.listeningURL()
        server.signal(SIGINT)
        #expect(try await server.exitStatus() == 0)
    }

    @Test(arguments: SyncStoreKind.persistent)
    func purgeTombstonesRaisesTheFloorOfTheStore(_ kind: SyncStoreKind) async throws {
        let (directory, config, _) = try files()
        let location = try kind.makeLocation(in: directory)
        let store = try location.open()
        let service = try SyncService(configuration: try SyncFixtures.configuration(), store: store)
        _ = try service.load(
            rows: [.object(["id": .string("a"), "title": .string("t")])], into: "note", account: "alice")
        let key = #"["a"]"#
        _ = try store.apply(
            account: "alice", clientID: nil,
            mutations: [
                SyncStoreMutation(
                    seq: 1, table: "note", owner: "alice", action: .delete(key: key, keyJSON: #"{"id":"a"}"#),
                    baseVersion: 1)
            ])
        try store.close()

        let purge = try ServerProcess(
            arguments: ["purge-tombstones", "--config", config, "--through", "2"] + location.serverArguments)
        #expect(try await purge.exitStatus() == 0)
        #expect(
            purge.standardOutput == "purged 1 tombstone(s); the purge floor is 2; dropped 0 expired upload result(s)\n")
        let reopened = try location.open()
        #expect(
            try reopened.changes(table: "note", owner: "alice", since: 1, limit: 10).mustResync(
                since: 1, resyncing: false))
        try reopened.close()
    }

    @Test func aPostgreSQLThatCannotBeReachedIsOneClearLineAndExitStatus1() async throws {
        let (directory, config, _) = try files()
        _ = directory
        // Port 1 on loopback: nothing listens there, the connection is refused at once.
        let url = "postgresql://sync@127.0.0.1:1/sync"
        for arguments in [
            ["--config", config, "--postgres", url, "--port", "0"],
            ["purge-tombstones", "--config", config, "--postgres", url, "--through", "1"],
        ] {
            let process = try ServerProcess(arguments: arguments)
            #expect(try await process.exitStatus() == 1, "\(arguments)")
            let lines = process.standardError.split(separator: "\n")
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.hasPrefix("serialdb-sync-server: PostgreSQL: cannot connect: ") == true)
            #expect(lines.first?.contains("127.0.0.1") == true)
        }
    }

    @Test func badCommandLinesFailClearly() async throws {
        let (directory, config, db) = try files()
        _ = directory
        for arguments in [
            ["--db", db], ["--config", config], ["--config", config, "--db", db, "--port", "99999"],
            ["--config", config, "--db", db, "--postgres", "x"], ["purge-tombstones", "--config", config, "--db", db],
            ["--config", config, "--db", db, "--verbose"],
            ["--config", config, "--db", db, "--postgres-connections", "2"],
            ["--config", config, "--postgres", "postgresql://x", "--postgres-connections", "0"],
            ["--config", config, "--db", db, "--max-connections-per-address", "0"],
            ["--config", config, "--db", db, "--max-connections-per-address", "many"],
            ["--config", config, "--db", db, "--request-timeout", "-1"],
            ["--config", config, "--db", db, "--request-timeout"],
            ["purge-tombstones", "--config", config, "--db", db, "--through", "1", "--request-timeout", "5"],
        ] {
            let process = try ServerProcess(arguments: arguments)
            #expect(try await process.exitStatus() == 2, "\(arguments)")
            #expect(process.standardError.contains("Run `serialdb-sync-server --help` for the usage."))
        }
        let badConfig = directory.path("bad.json")
        try Data(
            #"{"tables": [{"name": "t", "scope": "account", "struct_version": 1, "schema": "CREATE TABLE t(x)"}], "tokens": []}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: badConfig))
        let noKey = try ServerProcess(arguments: ["--config", badConfig, "--db", db, "--port", "0"])
        #expect(try await noKey.exitStatus() == 1)
        #expect(noKey.standardError.contains("has no PRIMARY KEY"))
    }
}
