import Foundation
import SerialDB
import SerialDBSync
import SerialDBTestSupport
import Synchronization
import Testing

/// A transport to the real server whose address can change (the server restarted on a new
/// port), with a hook that runs once after the next upload reached the server, and the
/// fetch-data pages it returned.
final class RestartableTransport: SyncTransport {
    let base: Mutex<HTTPSyncTransport>
    let afterUpload = Mutex<(@Sendable () async throws -> Void)?>(nil)
    let pages = Mutex<[FetchDataResponse]>([])

    init(_ transport: HTTPSyncTransport) {
        base = Mutex(transport)
    }

    private var current: HTTPSyncTransport { base.withLock { $0 } }

    func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse {
        try await current.checkUpdate(request)
    }

    func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse {
        try await current.fetchSchema(request)
    }

    func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse {
        let page = try await current.fetchData(request)
        pages.withLock { $0.append(page) }
        return page
    }

    func postData(_ request: PostDataRequest) async throws -> PostDataResponse {
        let response = try await current.postData(request)
        if let hook = afterUpload.withLock({ hook in
            defer { hook = nil }
            return hook
        }) {
            try await hook()
        }
        return response
    }
}

@Suite("SyncClient against serialdb-sync-server", .serialized, .timeLimit(.minutes(5)))
struct RealServerSyncTests {
    func device(_ directory: TemporaryDirectory, _ name: String, _ transport: any SyncTransport) throws -> (
        DatabaseQueue, SyncClient
    ) {
        let queue = try DatabaseQueue(path: directory.path(name + ".sqlite"))
        return (queue, try SyncClient(queue: queue, transport: transport))
    }

    func titles(_ queue: DatabaseQueue) async throws -> [String: String] {
        let rows = try await queue.read { db in
            try db.fetchAll(Row.self, sql: "SELECT id, title FROM note").map {
                (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1))
            }
        }
        return Dictionary(uniqueKeysWithValues: rows)
    }

    @Test("two devices of one account converge through inserts, updates and deletes")
    func twoDevicesConverge() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let (phone, phoneClient) = try device(directory, "phone", server.transport())
        let (laptop, laptopClient) = try device(directory, "laptop", server.transport())
        _ = try await phoneClient.sync()
        _ = try await laptopClient.sync()
        try await phone.write { db in
            for index in 0..<600 {
                try db.execute(
                    sql: "INSERT INTO note(id, title) VALUES (?, ?)", arguments: ["p\(index)", "phone \(index)"])
            }
        }
        try await laptop.write { db in
            try db.execute(sql: "INSERT INTO note(id, title, body) VALUES ('l1', 'laptop', 'body')")
        }
        #expect(try await phoneClient.sync().uploaded == 600)
        let laptopReport = try await laptopClient.sync()
        #expect(laptopReport.uploaded == 1)
        #expect(laptopReport.downloaded == 600)
        try await laptop.write { db in
            try db.execute(sql: "UPDATE note SET title = 'edited' WHERE id = 'p1'")
            try db.execute(sql: "DELETE FROM note WHERE id = 'p2'")
        }
        _ = try await laptopClient.sync()
        let phoneReport = try await phoneClient.sync()
        #expect(phoneReport.downloaded == 3)
        #expect(phoneReport.conflicts.isEmpty)
        let phoneTitles = try await titles(phone)
        #expect(phoneTitles == (try await titles(laptop)))
        #expect(phoneTitles.count == 600)
        #expect(phoneTitles["p1"] == "edited")
        let body = try await phone.read { db in
            try db.fetchOne(String.self, sql: "SELECT body FROM note WHERE id = 'l1'")
        }
        #expect(body == "body")
        try await server.stop()
    }

    @Test("rows too large for one 4 MiB page arrive whole, in pages of a few rows that say more follow")
    func largeRowsArriveInShortPages() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        // Uploads of two rows at a time stay under the server's 4 MiB body limit.
        let phone = try DatabaseQueue(path: directory.path("phone.sqlite"))
        let phoneClient = try SyncClient(queue: phone, transport: server.transport(), pageSize: 2)
        _ = try await phoneClient.sync()
        let values = (0..<10).map { String(repeating: "\($0)", count: 1_000_000) }
        try await phone.write { db in
            for (index, title) in values.enumerated() {
                try db.execute(sql: "INSERT INTO note(id, title) VALUES (?, ?)", arguments: ["n\(index)", title])
            }
        }
        #expect(try await phoneClient.sync().uploaded == 10)

        let pages = RestartableTransport(server.transport())
        let (laptop, laptopClient) = try device(directory, "laptop", pages)
        #expect(try await laptopClient.sync().downloaded == 10)
        #expect(
            try await titles(laptop) == Dictionary(uniqueKeysWithValues: values.enumerated().map { ("n\($0)", $1) }))
        let notes = pages.pages.withLock { $0.filter { $0.table == "note" } }
        #expect(notes.count >= 3, "pages of at most 4 MiB: \(notes.map(\.changes.count))")
        #expect(notes.dropLast().allSatisfy { $0.hasMore && !$0.changes.isEmpty && $0.changes.count < 500 })
        #expect(notes.last?.hasMore == false)
        try await server.stop()
    }

    @Test("an outbox larger than one request goes up in batches under 4 MiB; a row too large alone is rejected")
    func largeRowsUploadInBatchesTheServerAccepts() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        // 500 mutations a request by count, but 12 MB of rows: one request would be a 413 every
        // time, and the outbox would never empty.
        let phone = try DatabaseQueue(path: directory.path("phone.sqlite"))
        let phoneClient = try SyncClient(queue: phone, transport: server.transport())
        _ = try await phoneClient.sync()
        let values = (0..<12).map { String(repeating: "\($0 % 10)", count: 1_000_000) }
        try await phone.write { db in
            for (index, title) in values.enumerated() {
                try db.execute(sql: "INSERT INTO note(id, title) VALUES (?, ?)", arguments: ["n\(index)", title])
            }
            try db.execute(
                sql: "INSERT INTO note(id, title) VALUES ('huge', ?)",
                arguments: [String(repeating: "h", count: 4_500_000)])
        }
        let report = try await phoneClient.sync()
        #expect(report.uploaded == 12)
        #expect(report.rejected.map(\.key) == [["id": .text("huge")]])
        #expect(report.rejected.first?.message.hasPrefix("not sent: the row is ") == true)
        #expect(try await phone.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") } == 13)
        #expect(try await phoneClient.sync().uploaded == 0, "the outbox is empty")

        let (laptop, laptopClient) = try device(directory, "laptop", server.transport())
        #expect(try await laptopClient.sync().downloaded == 12)
        #expect(
            try await titles(laptop) == Dictionary(uniqueKeysWithValues: values.enumerated().map { ("n\($0)", $1) }))
        try await server.stop()
    }

    @Test("two accounts never see each other's rows")
    func accountsNeverMeet() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let accounts = try AccountDatabases(directory: directory.url.appendingPathComponent("accounts"))
        let alice = try accounts.open(account: "alice")
        let bob = try accounts.open(account: "bob")
        let aliceClient = try SyncClient(queue: alice, transport: server.transport(token: "t-alice"))
        let bobClient = try SyncClient(queue: bob, transport: server.transport(token: "t-bob"))
        _ = try await aliceClient.sync()
        _ = try await bobClient.sync()
        try await alice.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('k', 'alice')") }
        try await bob.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('k', 'bob'), ('b', 'bob')")
        }
        _ = try await aliceClient.sync()
        let bobReport = try await bobClient.sync()
        #expect(bobReport.conflicts.isEmpty && bobReport.uploaded == 2)
        _ = try await aliceClient.sync()
        #expect(try await titles(alice) == ["k": "alice"])
        #expect(try await titles(bob) == ["k": "bob", "b": "bob"])
        // A token of the other account on alice's file is refused before anything moves.
        try await alice.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('secret', 'alice')") }
        let intruder = try SyncClient(queue: alice, transport: server.transport(token: "t-bob"))
        await #expect(throws: SyncError.self) { _ = try await intruder.sync() }
        _ = try await bobClient.sync()
        #expect(try await titles(bob) == ["k": "bob", "b": "bob"])
        try await accounts.close(account: "alice")
        try await accounts.close(account: "bob")
        try await server.stop()
    }

    @Test("concurrent edits of one row come back as a conflict, never a silent loss")
    func concurrentEditsConflict() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let (phone, phoneClient) = try device(directory, "phone", server.transport())
        let (laptop, laptopClient) = try device(directory, "laptop", server.transport())
        _ = try await phoneClient.sync()
        try await phone.write { db in try db.execute(sql: "INSERT INTO note(id, title) VALUES ('a', 'original')") }
        _ = try await phoneClient.sync()
        _ = try await laptopClient.sync()
        try await phone.write { db in try db.execute(sql: "UPDATE note SET title = 'phone' WHERE id = 'a'") }
        try await laptop.write { db in try db.execute(sql: "DELETE FROM note WHERE id = 'a'") }
        _ = try await phoneClient.sync()
        let report = try await laptopClient.sync()
        let conflict = try #require(report.conflicts.first)
        #expect(conflict.localRow == nil)
        #expect(conflict.serverRow?["title"] == .text("phone"))
        #expect(conflict.serverVersion > conflict.localBaseVersion)
        #expect(try await titles(laptop) == ["a": "phone"])
        try await server.stop()
    }

    @Test("a row the server refuses comes back in rejected with the server's message, and leaves the outbox")
    func refusedRowIsReported() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let (phone, phoneClient) = try device(directory, "phone", server.transport())
        _ = try await phoneClient.sync()
        try await phone.write { db in
            // The local table takes a BLOB in a TEXT column; the server's validation does not.
            try db.execute(sql: "INSERT INTO note(id, title, body) VALUES ('a', 'ok', x'00ff'), ('b', 'ok', 'text')")
        }
        let report = try await phoneClient.sync()
        #expect(report.uploaded == 1)
        let rejection = try #require(report.rejected.first)
        #expect(rejection.key == ["id": .text("a")] && rejection.operation == .upsert)
        #expect(!rejection.message.isEmpty)
        let outbox = try await phone.read { db in
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_sync_outbox")
        }
        #expect(outbox == 0)
        try await server.stop()
    }

    @Test("keys that differ after a NUL byte stay two rows through the server, and an edit of one changes that one")
    func nulKeysThroughTheServer() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let (phone, phoneClient) = try device(directory, "phone", server.transport())
        let (laptop, laptopClient) = try device(directory, "laptop", server.transport())
        _ = try await phoneClient.sync()
        _ = try await laptopClient.sync()
        try await phone.write { db in
            try db.execute(
                sql: "INSERT INTO note(id, title) VALUES (?, 'plain'), (?, 'with a NUL')", arguments: ["k", "k\u{0}z"])
        }
        #expect(try await phoneClient.sync().uploaded == 2)
        _ = try await laptopClient.sync()
        #expect(try await titles(laptop) == ["k": "plain", "k\u{0}z": "with a NUL"])
        try await laptop.write { db in
            try db.execute(sql: "UPDATE note SET title = 'edited' WHERE id = ?", arguments: ["k\u{0}z"])
        }
        let edit = try await laptopClient.sync()
        #expect(edit.uploaded == 1 && edit.conflicts.isEmpty)
        #expect(edit.rejected.isEmpty)
        _ = try await phoneClient.sync()
        #expect(try await titles(phone) == ["k": "plain", "k\u{0}z": "edited"])
        try await server.stop()
    }

    @Test("a table the server renamed and one it removed: rows and unsent edits follow the rename, the other stops")
    func renamedAndRemovedTablesThroughTheServer() async throws {
        let directory = try TemporaryDirectory()
        let first = try await SyncServerProcess(in: directory)
        let transport = RestartableTransport(first.transport())
        let (phone, phoneClient) = try device(directory, "phone", transport)
        _ = try await phoneClient.sync()
        try await phone.write { db in
            try db.execute(
                sql: "INSERT INTO note(id, title, body) VALUES ('a', 'first', 'dropped later'), ('b', 'second', NULL)")
        }
        _ = try await phoneClient.sync()
        try await phone.write { db in
            try db.execute(sql: "UPDATE note SET title = 'unsent edit', body = 'never sent' WHERE id = 'b'")
        }
        try await first.stop()
        let renamed = """
            {"tables": [
               {"name": "memo", "scope": "account", "struct_version": 2, "renamed_from": "note",
                "renamed_columns": {"heading": "title"},
                "schema": "CREATE TABLE memo(id TEXT PRIMARY KEY NOT NULL, heading TEXT NOT NULL)"}],
             "tokens": [{"token": "t-alice", "account": "alice"}]}
            """
        let second = try await SyncServerProcess(in: directory, config: renamed)
        transport.base.withLock { $0 = second.transport() }
        let report = try await phoneClient.sync()
        let change = try #require(report.schemaChanges.first)
        #expect(change.table == "memo" && change.isApplied)
        #expect(change.droppedValues.map(\.value) == [.text("never sent")])
        #expect(report.unsyncedTables == ["country"])
        #expect(report.uploaded == 1 && report.conflicts.isEmpty && report.rejected.isEmpty)
        let headings = try await phone.read { db in
            try db.fetchAll(String.self, sql: "SELECT heading FROM memo ORDER BY id")
        }
        #expect(headings == ["first", "unsent edit"])
        let page = try await second.transport().fetchData(FetchDataRequest(table: "memo", since: 0, limit: 10))
        #expect(page.changes.map { $0.row["heading"] } == [.text("first"), .text("unsent edit")])
        try await second.stop()
    }

    @Test("a client SIGKILLed in the middle of FetchData pages resumes with no gap and no duplicate")
    func killedClientResumes() async throws {
        let directory = try TemporaryDirectory()
        let server = try await SyncServerProcess(in: directory)
        let (phone, phoneClient) = try device(directory, "phone", server.transport())
        _ = try await phoneClient.sync()
        let total = 1500
        try await phone.write { db in
            for index in 0..<total {
                try db.execute(
                    sql: "INSERT INTO note(id, title) VALUES (?, ?)", arguments: [String(format: "n%05d", index), "t"])
            }
        }
        _ = try await phoneClient.sync()
        let laptopPath = directory.path("laptop.sqlite")
        let observer = try DatabaseQueue(path: laptopPath)
        let child = try RunningProcess(
            product: "serialdb",
            arguments: [
                "sync", laptopPath, "--server", server.url.absoluteString, "--token", "t-alice", "--page-size", "10",
            ]
        )
        try await waitUntil(timeout: .seconds(120)) {
            let cursor = try? observer.read { db in
                try db.fetchOne(Int.self, sql: "SELECT Version FROM TableVersion WHERE TableName = 'note'")
            }
            return (cursor ?? 0) >= 200 || !child.isRunning
        }
        try await child.stop(SIGKILL)
        let (count, cursor) = try await observer.read { db in
            (
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") ?? -1,
                try db.fetchOne(Int.self, sql: "SELECT Version FROM TableVersion WHERE TableName = 'note'") ?? -1
            )
        }
        try await observer.close()
        // Killed between pages: the rows are exactly those the cursor covers (versions 1...total).
        #expect(cursor < total)
        #expect(count == cursor)
        let (laptop, laptopClient) = try device(directory, "laptop", server.transport())
        let report = try await laptopClient.sync()
        #expect(report.downloaded == total - count)
        let ids = try await laptop.read { db in try db.fetchAll(String.self, sql: "SELECT id FROM note ORDER BY id") }
        #expect(ids == (0..<total).map { String(format: "n%05d", $0) })
        try await server.stop()
    }

    @Test("an upload retried after a server restart is applied once")
    func uploadRetriedAfterRestartIsAppliedOnce() async throws {
        let directory = try TemporaryDirectory()
        let first = try await SyncServerProcess(in: directory)
        let transport = RestartableTransport(first.transport())
        let (phone, phoneClient) = try device(directory, "phone", transport)
        _ = try await phoneClient.sync()
        try await phone.write { db in
            try db.execute(sql: "INSERT INTO note(id, title) VALUES ('a', 'x'), ('b', 'y'), ('c', 'z')")
        }
        let restarted = Mutex<SyncServerProcess?>(nil)
        transport.afterUpload.withLock {
            $0 = {
                // The answer is lost: the server restarts before the client reads it.
                try await first.stop()
                let second = try await SyncServerProcess(in: directory)
                restarted.withLock { $0 = second }
                transport.base.withLock { $0 = second.transport() }
                throw SyncError(.network, "simulated: the connection broke before the answer arrived")
            }
        }
        await #expect(throws: SyncError.self) { _ = try await phoneClient.sync() }
        let retry = try await phoneClient.sync()
        #expect(retry.uploaded == 3)
        #expect(retry.conflicts.isEmpty)
        let server = try #require(restarted.withLock { $0 })
        let page = try await server.transport().fetchData(FetchDataRequest(table: "note", since: 0, limit: 100))
        #expect(page.changes.map(\.version) == [1, 2, 3])
        #expect(page.version == 3)
        try await server.stop()
    }

    @Test("a schema change on the server arrives as a declarative step and keeps the rows")
    func schemaChangeArrives() async throws {
        let directory = try TemporaryDirectory()
        let first = try await SyncServerProcess(in: directory)
        let transport = RestartableTransport(first.transport())
        let (phone, phoneClient) = try device(directory, "phone", transport)
        _ = try await phoneClient.sync()
        try await phone.write { db in
            for index in 0..<50 {
                try db.execute(sql: "INSERT INTO note(id, title) VALUES (?, 't')", arguments: ["n\(index)"])
            }
        }
        _ = try await phoneClient.sync()
        try await first.stop()
        let configV2 = """
            {"tables": [
               {"name": "note", "scope": "account", "struct_version": 2,
                "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL CHECK (title <> ''), body TEXT, pinned INTEGER NOT NULL DEFAULT 0); CREATE INDEX note_pinned ON note(pinned)"}],
             "tokens": [{"token": "t-alice", "account": "alice"}]}
            """
        let second = try await SyncServerProcess(in: directory, config: configV2)
        transport.base.withLock { $0 = second.transport() }
        let report = try await phoneClient.sync()
        let change = try #require(report.schemaChanges.first)
        #expect(change.table == "note" && change.fromStructVersion == 1 && change.toStructVersion == 2)
        #expect(change.isApplied)
        let (count, pinned) = try await phone.read { db in
            (
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") ?? -1,
                try db.fetchOne(Int.self, sql: "SELECT sum(pinned) FROM note") ?? -1
            )
        }
        #expect(count == 50 && pinned == 0)
        try await phone.write { db in try db.execute(sql: "UPDATE note SET pinned = 1 WHERE id = 'n7'") }
        let upload = try await phoneClient.sync()
        #expect(upload.uploaded == 1 && upload.rejected.isEmpty)
        try await second.stop()
    }
}
