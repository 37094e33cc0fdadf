import SerialDB
import SerialDBTestSupport
import Testing

/// `read` runs its block in a deferred transaction with writes refused and the transaction
/// guarded, and leaves none of that behind: whether the block returns or throws, the next
/// block may write, runs outside any transaction, and is not guarded.
@Suite struct ReadBlockTests {
    struct Refused: Error {}

    @Test(arguments: DatabaseKind.allCases)
    func aReadBlockThatThrowsEndsItsTransactionAndLeavesWritesAllowed(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in try Player.createTable(db, rows: 2) }
        #expect(throws: Refused.self) {
            try queue.read { db in
                _ = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
                throw Refused()
            }
        }
        let (insideTransaction, count) = try queue.inDatabase { db in
            let insideTransaction = db.isInsideTransaction
            try db.execute(sql: "DELETE FROM player WHERE id = 1")
            return (insideTransaction, try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player"))
        }
        #expect(!insideTransaction)
        #expect(count == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aReadBlockThatReturnsLeavesWritesAllowedAndTheNextBlockUnguarded(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in try Player.createTable(db, rows: 2) }
        let count = try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
        #expect(count == 2)
        // Outside a transaction SerialDB opened, a block may run statements in autocommit and
        // end a transaction it began itself: a guard left on would refuse them.
        let after = try queue.inDatabase { db in
            try db.execute(sql: "DELETE FROM player WHERE id = 1")
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "DELETE FROM player WHERE id = 2")
            try db.execute(sql: "COMMIT")
            return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
        }
        #expect(after == 0)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aReadBlockThatEndsItsOwnTransactionIsToldItWasAborted(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in try Player.createTable(db, rows: 2) }
        let error = #expect(throws: SerialDBError.self) {
            try queue.read { db in
                try db.execute(sql: "COMMIT")
                return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
            }
        }
        #expect(error?.code == .transactionAborted)
        #expect(try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } == 2)
    }
}
