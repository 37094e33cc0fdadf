import Foundation
import PostgresHarness
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// What only the PostgreSQL store has to prove: several server processes on one database,
/// sessions lost under it, and a schema created once and versioned. (Everything the stores
/// share is proved by the suites parameterised by ``SyncStoreKind``.)
@Suite(.timeLimit(.minutes(5))) struct PostgresSyncStoreTests {
    @Test func twoServerProcessesOnOneDatabaseNeverLetAFetcherFollowingItsCursorMissARow() async throws {
        let url = try TestPostgres.makeDatabase()
        let directory = try TemporaryDirectory()
        let config = directory.path("sync.json")
        try Data(SyncFixtures.configurationJSON.utf8).write(to: URL(fileURLWithPath: config))
        let servers = try (0..<2).map { _ in
            try ServerProcess(arguments: [
                "--config", config, "--postgres", url, "--postgres-connections", "4", "--port", "0",
            ])
        }
        var listening: [URL] = []
        for server in servers { listening.append(try await server.listeningURL()) }
        let addresses = listening
        let writers = 8
        let requestsPerWriter = 12
        let rowsPerRequest = 10
        let everyKey = Set(
            (0..<writers).flatMap { writer in (0..<requestsPerWriter * rowsPerRequest).map { "w\(writer)-\($0)" } })
        let writersDone = Locked(false)

        try await withThrowingTaskGroup(of: Set<String>?.self) { group in
            // The writers, half on each process; when all are done, the fetchers' last pass begins.
            group.addTask {
                try await withThrowingTaskGroup(of: Void.self) { writing in
                    for writer in 0..<writers {
                        writing.addTask {
                            let client = SyncHTTPClient(baseURL: addresses[writer % 2], token: "t-alice")
                            var seq = 0
                            for _ in 0..<requestsPerWriter {
                                let mutations = (0..<rowsPerRequest).map { _ -> String in
                                    defer { seq += 1 }
                                    return upsert(seq + 1, "note", #"{"id": "w\#(writer)-\#(seq)", "title": "t"}"#)
                                }
                                let answer = try await client.postData(client: "writer-\(writer)", mutations)
                                guard answer.status == 200 else { throw UnexpectedAnswer(answer: answer) }
                            }
                        }
                    }
                    try await writing.waitForAll()
                }
                writersDone.withLock { $0 = true }
                return nil
            }
            for fetcher in 0..<4 {
                group.addTask {
                    let client = SyncHTTPClient(baseURL: addresses[fetcher % 2], token: "t-alice")
                    var seen = Set<String>()
                    var cursor: Int64 = 0
                    let deadline = ContinuousClock.now + .seconds(120)
                    while ContinuousClock.now < deadline {
                        // Read before the fetch: a page asked for after every write was
                        // acknowledged, with nothing more, means the fetcher has it all.
                        let lastPass = writersDone.withLock { $0 }
                        let page = try await client.fetchData("note", since: cursor, limit: 4 + fetcher * 5)
                        guard page.status == 200, let changes = page["changes"]?.arrayValue,
                            let next = page["version"]?.integerValue
                        else { throw UnexpectedAnswer(answer: page) }
                        let versions = changes.compactMap { $0["version"]?.integerValue }
                        #expect(versions == versions.sorted() && versions.allSatisfy { $0 > cursor })
                        for change in changes {
                            if let id = change["row"]?["id"]?.stringValue { seen.insert(id) }
                        }
                        cursor = next
                        if lastPass && page["has_more"] == .bool(false) { break }
                        if changes.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
                    }
                    return seen
                }
            }
            var fetchersDone = 0
            for try await seen in group {
                guard let seen else { continue }
                let missed = everyKey.subtracting(seen)
                #expect(
                    missed.isEmpty,
                    "a fetcher following its cursor missed \(missed.count) rows: \(missed.sorted().prefix(5))...")
                #expect(seen.count == everyKey.count)
                fetchersDone += 1
            }
            #expect(fetchersDone == 4)
        }
        let check = try PostgresSyncStore(url: url)
        #expect(try check.latestVersions(of: [("note", "alice")]) == [Int64(everyKey.count)], "no version skipped")
        try check.close()
        for server in servers {
            server.signal(SIGTERM)
            #expect(try await server.exitStatus() == 0)
        }
    }

    @Test func aTerminatedSessionIsReplacedAndTheNextRequestSucceeds() async throws {
        let running = try RunningSyncServer(.postgres)
        defer { try? running.stop() }
        let alice = running.alice
        #expect(try await alice.postData(client: "d", [upsert(1, "note", #"{"id": "a", "title": "x"}"#)]).status == 200)
        let admin = try ScratchPostgresSession(url: running.location.address)
        let terminated = try admin.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """)
        #expect(!terminated.isEmpty, "the store's sessions were terminated")

        let page = try await alice.fetchData("note", since: 0)
        #expect(page.status == 200)
        #expect(page["changes"]?.arrayValue?.count == 1)
        let next = try await alice.postData(client: "d", [upsert(2, "note", #"{"id": "b", "title": "y"}"#)])
        #expect(next.status == 200)
        #expect(next["results"]?[0]?["version"] == .integer(2))
    }

    @Test func anUploadWhoseSessionIsKilledBeforeCommitIsAppliedOnce() async throws {
        let running = try RunningSyncServer(.postgres)
        defer { try? running.stop() }
        let alice = running.alice
        let blocker = try ScratchPostgresSession(url: running.location.address)
        // Holding the counter's row lock keeps the upload waiting inside its transaction.
        try blocker.query("BEGIN")
        try blocker.query("SELECT version FROM serialdb_sync_state FOR UPDATE")
        let mutations = [
            upsert(1, "note", #"{"id": "a", "title": "first"}"#), upsert(2, "note", #"{"id": "b", "title": "second"}"#),
        ]
        let upload = Task { try await alice.postData(client: "phone", mutations) }
        let waiting = Locked<[[String?]]>([])
        try await waitUntil(timeout: .seconds(60)) {
            let found = try? blocker.query(
                """
                SELECT pid FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
                """)
            waiting.withLock { $0 = found ?? [] }
            return !(found ?? []).isEmpty
        }
        for pid in waiting.withLock({ $0 }).compactMap({ $0[0] }) {
            try blocker.query("SELECT pg_terminate_backend(\(Int(pid)!))")
        }
        try blocker.query("COMMIT")

        let answer = try await result(of: upload).get()
        #expect(answer.status == 200, "the store retried on a new session: the first one committed nothing")
        #expect(answer["results"]?.arrayValue?.map { $0["version"] } == [.integer(1), .integer(2)])
        // The client did not hear back in time and sends the upload again: applied once.
        let retry = try await alice.postData(client: "phone", mutations)
        #expect(retry.json == answer.json)
        let rows = try await alice.fetchAll("note").changes
        #expect(rows.map { $0["version"] } == [.integer(1), .integer(2)])
    }

    @Test func serversStartingTogetherOnANewDatabaseCreateTheSchemaOnceAndRecordItsVersion() async throws {
        let url = try TestPostgres.makeDatabase()
        let opened = Locked<[any SyncStore]>([])
        let failures = Locked<[String]>([])
        let threads = 4
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<threads {
            Thread.detachNewThread {
                do {
                    let store = try PostgresSyncStore(url: url, connections: 1)
                    opened.withLock { $0.append(store) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                done.signal()
            }
        }
        #expect(done.wait(signals: threads), "every store opened in time")
        #expect(failures.withLock { $0 } == [])
        for store in opened.withLock({ $0 }) { try store.close() }

        let session = try ScratchPostgresSession(url: url)
        #expect(try session.query("SELECT version FROM serialdb_sync_schema") == [["4"]])
        #expect(try session.query("SELECT version, purge_floor FROM serialdb_sync_state") == [["0", "0"]])
    }

    @Test func aSchemaWrittenByANewerReleaseIsRefusedWithWhatToDo() async throws {
        let url = try TestPostgres.makeDatabase()
        let store = try PostgresSyncStore(url: url)
        _ = try store.apply(
            account: "alice", clientID: "d",
            mutations: [
                SyncStoreMutation(
                    seq: 1, table: "note", owner: "alice",
                    action: .upsert(key: #"["a"]"#, keyJSON: #"{"id":"a"}"#, rowJSON: #"{"id":"a","title":"t"}"#),
                    baseVersion: 0)
            ])
        try store.close()
        let reopened = try PostgresSyncStore(url: url)
        #expect(try reopened.latestVersions(of: [("note", "alice")]) == [1], "opening again keeps the rows")
        try reopened.close()

        try ScratchPostgres.execute("UPDATE serialdb_sync_schema SET version = 99", at: url)
        #expect {
            try PostgresSyncStore(url: url)
        } throws: { error in
            let error = error as? SyncServerError
            return error?.code == .invalidStore && error?.message.contains("written by a newer release") == true
        }
    }

    @Test func aClosedStoreRefusesCalls() async throws {
        let store = try PostgresSyncStore(url: try TestPostgres.makeDatabase())
        try store.close()
        #expect(throws: SyncServerError.self) { try store.latestVersions(of: [("note", "alice")]) }
    }
}
