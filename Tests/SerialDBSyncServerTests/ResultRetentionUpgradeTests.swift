import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// A store written before results expired keeps answering its clients' retries
/// after the upgrade: the results count as recorded at the upgrade, and their seqs set the marks.
@Suite(.timeLimit(.minutes(5))) struct ResultRetentionUpgradeTests {
    @Test func resultsStoredBeforeTheUpgradeSetTheMarksAndExpireAWindowLater() throws {
        let url = try TestPostgres.makeDatabase()
        let connection = try PostgresConnection(url: url)
        let before = PostgresSyncSchema.steps.count - 1
        try connection.execute(
            "CREATE TABLE serialdb_sync_schema(id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)")
        for step in PostgresSyncSchema.steps.prefix(before) { try connection.execute(step) }
        try connection.execute(
            """
            INSERT INTO serialdb_sync_schema(id, version) VALUES (1, \(before));
            INSERT INTO serialdb_sync_applied(account, client_id, seq, status, message)
            SELECT 'alice', 'd', g, 'rejected', 'old ' || g FROM generate_series(1, 3) AS g
            """)
        let clock = TestClock(start: Date())
        let store = try PostgresSyncStore(url: url, clock: { clock.now })
        defer { try? store.close() }
        func retry(_ seqs: [Int64]) throws -> [SyncUploadOutcome] {
            try store.apply(
                account: "alice", clientID: "d",
                mutations: seqs.map {
                    SyncStoreMutation(
                        seq: $0, table: "note", owner: "alice", action: .reject(message: "new"), baseVersion: nil)
                })
        }
        #expect(try retry([2]) == [.rejected(message: "old 2")])
        #expect(try store.purgeResults(olderThan: 7 * 86_400) == 0)
        clock.advance(by: 8 * 86_400)
        #expect(try store.purgeResults(olderThan: 7 * 86_400) == 3)
        #expect(try retry([2, 3, 4]) == [.duplicate, .duplicate, .rejected(message: "new")])
    }

    @Test func anSQLiteStoreUpgradedKeepsItsClientsMarksToo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("server.sqlite")
        let clock = TestClock(start: Date())
        do {
            let old = try DatabaseQueue(path: path)
            try old.migrate(SQLiteSyncStore.migrator(clock: { clock.now }), upTo: "sync-store-2")
            try old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO serialdb_sync_applied(account, client_id, seq, status, message)
                        VALUES ('alice', 'd', 1, 'rejected', 'old 1'), ('alice', 'd', 2, 'rejected', 'old 2')
                        """)
            }
            try old.close()
        }
        let store = try SQLiteSyncStore(path: path, clock: { clock.now })
        defer { try? store.close() }
        let again = (1...3).map {
            SyncStoreMutation(
                seq: Int64($0), table: "note", owner: "alice", action: .reject(message: "new"), baseVersion: nil)
        }
        #expect(
            try store.apply(account: "alice", clientID: "d", mutations: Array(again.prefix(1))) == [
                .rejected(message: "old 1")
            ])
        clock.advance(by: 8 * 86_400)
        #expect(try store.purgeResults(olderThan: 7 * 86_400) == 2)
        #expect(
            try store.apply(account: "alice", clientID: "d", mutations: again) == [
                .duplicate, .duplicate, .rejected(message: "new"),
            ])
    }
}
