import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The connection keeps BEGIN, COMMIT and ROLLBACK prepared, and lets them go when it closes:
/// a statement left unfinalized would keep SQLite's connection open as a zombie, which shows
/// as a write-ahead log left beside the file after the last connection is gone.
@Suite struct TransactionStatementLifetimeTests {
    struct Refused: Error {}

    /// Runs every transaction statement the connection keeps: each BEGIN kind, COMMIT, ROLLBACK.
    static func useEveryTransactionStatement(_ queue: DatabaseQueue) throws {
        try queue.write { db in try Player.createTable(db, rows: 2) }
        _ = try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        try queue.inTransaction(.exclusive) { db in
            try db.execute(sql: "DELETE FROM player WHERE id = 1")
            return .commit
        }
        #expect(throws: Refused.self) {
            try queue.write { db in
                try db.execute(sql: "DELETE FROM player")
                throw Refused()
            }
        }
    }

    @Test func closingTheQueueFinalizesTheTransactionStatements() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("test.sqlite")
        let queue = try DatabaseQueue(path: path)
        try Self.useEveryTransactionStatement(queue)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try queue.close()
        // The last connection to close checkpoints and deletes the log; a zombie keeps it.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let count = try DatabaseQueue(path: path).read { db in
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
        }
        #expect(count == 1)
    }

    @Test func releasingTheQueueWithoutClosingItFinalizesThemToo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("test.sqlite")
        try {
            let queue = try DatabaseQueue(path: path)
            try Self.useEveryTransactionStatement(queue)
        }()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }
}
