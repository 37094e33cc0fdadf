import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// BEGIN and COMMIT run through a shorter path once the connection has prepared them (from the
/// second transaction on). These tests warm the connection up first, so they check that
/// shorter path: it must refuse, fail and recover exactly as the first transaction does.
@Suite struct PreparedTransactionStatementTests {
    /// A table with three rows, and every transaction statement used once, so that each is
    /// prepared before the test proper begins.
    private func warmedUpQueue(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db in
            try db.execute(
                sql: """
                    CREATE TABLE parent(id INTEGER PRIMARY KEY);
                    CREATE TABLE item(
                        id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                        parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                    INSERT INTO item(id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three');
                    """)
        }
        try queue.write { db in try db.execute(sql: "UPDATE item SET name = name") }
        _ = try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") }
        try queue.inTransaction { _ in .rollback }
        return queue
    }

    private func names(_ queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM item ORDER BY id") }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aBlockThatSwallowsARollbackAndAsksToCommitIsToldTheTransactionWasAborted(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try warmedUpQueue(kind, in: directory)
        let error = #expect(throws: SerialDBError.self) {
            try queue.inTransaction { db in
                try db.execute(sql: "DELETE FROM item WHERE id = 3")
                _ = try? db.execute(sql: "INSERT OR ROLLBACK INTO item(id, name) VALUES (1, 'again')")
                return .commit
            }
        }
        #expect(error?.code == .transactionAborted)
        #expect(try names(queue) == ["one", "two", "three"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aReadBlockThatCommitsItsOwnTransactionAndReturnsIsToldItWasAborted(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try warmedUpQueue(kind, in: directory)
        let error = #expect(throws: SerialDBError.self) {
            try queue.read { db in try db.execute(sql: "COMMIT") }
        }
        #expect(error?.code == .transactionAborted)
        #expect(try names(queue) == ["one", "two", "three"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCommitThatFailsReportsSQLitesErrorRollsBackAndLeavesTheQueueUsable(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try warmedUpQueue(kind, in: directory)
        // The foreign key is deferred: the violation is found by COMMIT, not by the UPDATE.
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.execute(sql: "UPDATE item SET name = 'orphan', parent = 42 WHERE id = 1") }
        }
        #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY)
        #expect(error?.sql == "COMMIT TRANSACTION")
        #expect(try queue.inDatabase { db in db.isInsideTransaction } == false)
        #expect(try names(queue) == ["one", "two", "three"])
        try queue.write { db in try db.execute(sql: "UPDATE item SET name = 'uno' WHERE id = 1") }
        #expect(try names(queue) == ["uno", "two", "three"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func beginInsideAnOpenTransactionFailsWithSQLitesErrorAndChangesNothing(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try warmedUpQueue(kind, in: directory)
        let error = #expect(throws: DatabaseError.self) {
            try queue.inDatabase { db in
                try db.execute(sql: "BEGIN")
                try db.execute(sql: "DELETE FROM item WHERE id = 2")
                try db.beginTransaction()
            }
        }
        #expect(error?.sql == "BEGIN DEFERRED TRANSACTION")
        #expect(try names(queue) == ["one", "two", "three"])
    }
}
