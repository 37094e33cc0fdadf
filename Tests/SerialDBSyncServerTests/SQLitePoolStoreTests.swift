import Foundation
import SerialDB
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// The SQLite store on a `DatabasePool`: what the pool adds over a queue. (Everything the store
/// promises is checked on a pool too, as ``SyncStoreKind/sqlitePool`` in the conformance suites.)
@Suite(.timeLimit(.minutes(5))) struct SQLitePoolStoreTests {
    /// An insert of the note `id` (plain ASCII), as a client uploads it.
    private func upsert(_ seq: Int64, _ id: String) -> SyncStoreMutation {
        SyncStoreMutation(
            seq: seq, table: "note", owner: "alice",
            action: .upsert(
                key: #"["\#(id)"]"#, keyJSON: #"{"id":"\#(id)"}"#,
                rowJSON: #"{"id":"\#(id)","title":"t\#(seq)","body":null}"#),
            baseVersion: 0)
    }

    /// A write holds the pool's writer: the store's reads (a page of changes, the latest
    /// versions, the counter, the purge floor, the summary) answer from the readers meanwhile,
    /// with the rows committed before it.
    @Test func theStoresReadsRunBesideAWriteThatHoldsTheWriter() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("server.sqlite")
        let store = try SQLiteSyncStore(database: try DatabasePool(path: path))
        defer { try? store.close() }
        #expect(
            try store.apply(account: "alice", clientID: "d", mutations: [upsert(1, "a"), upsert(2, "b")]).count == 2)

        let gate = Gate()
        let database = store.database
        Thread.detachNewThread {
            try? database.write { db in
                try db.execute(sql: "UPDATE serialdb_sync_state SET version = version")
                gate.enter()
                gate.waitUntilOpen()
            }
        }
        defer { gate.open() }
        try await waitUntil(timeout: .seconds(30)) { gate.entered }

        let answers = Locked<[String]>([])
        Thread.detachNewThread {
            do {
                let page = try store.changes(table: "note", owner: "alice", since: 0, limit: 10)
                answers.withLock { $0.append("changes \(page.changes.map(\.version))") }
                let latest = try store.latestVersions(of: [("note", "alice")])
                answers.withLock { $0.append("latest \(latest)") }
                answers.withLock { $0.append("version \((try? store.currentVersion()) ?? -1)") }
                answers.withLock { $0.append("floor \((try? store.purgeFloor()) ?? -1)") }
                let rows = try store.summary().tables["note"]?.rows ?? -1
                answers.withLock { $0.append("rows \(rows)") }
            } catch {
                answers.withLock { $0.append("error \(error)") }
            }
        }
        // Bounded below the gate's own 60 s: on a queue these reads would wait for the write.
        try await waitUntil(timeout: .seconds(30)) {
            answers.withLock { $0.count == 5 || $0.last?.hasPrefix("error") == true }
        }
        #expect(answers.withLock { $0 } == ["changes [1, 2]", "latest [2]", "version 2", "floor 0", "rows 2"])

        gate.open()
        // The writer is free again: an upload goes through and is read back.
        #expect(try store.apply(account: "alice", clientID: "d", mutations: [upsert(3, "c")]) == [.applied(version: 3)])
        #expect(try store.changes(table: "note", owner: "alice", since: 2, limit: 10).changes.map(\.version) == [3])
    }

    /// The store's tables go into a pool's file beside the app's own, and a store opened on
    /// that file again (as a queue) finds its rows.
    @Test func aStoreGivenAPoolKeepsItsRowsInThatFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE app(x INTEGER); INSERT INTO app VALUES (7)") }
        let store = try SQLiteSyncStore(database: pool)
        #expect(try store.apply(account: "alice", clientID: "d", mutations: [upsert(1, "a")]) == [.applied(version: 1)])
        try store.close()
        #expect(throws: SerialDBError.self) { try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT 1") } }

        let reopened = try SQLiteSyncStore(path: path)
        defer { try? reopened.close() }
        #expect(try reopened.currentVersion() == 1)
        #expect(try reopened.changes(table: "note", owner: "alice", since: 0, limit: 10).changes.map(\.version) == [1])
        #expect(try reopened.database.read { db in try db.fetchOne(Int.self, sql: "SELECT x FROM app") } == 7)
    }
}
