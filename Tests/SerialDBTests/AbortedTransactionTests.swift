import CSQLite
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// When SQLite ends a block's transaction by itself (ON CONFLICT ROLLBACK, an interrupt, some
/// I/O errors) and the block catches the error and goes on, nothing of the block may commit.
@Suite struct AbortedTransactionTests {
    /// A table with three committed rows, and `INSERT OR ROLLBACK` of an existing id to make
    /// SQLite roll back the transaction around it.
    private func seed(_ queue: DatabaseQueue) throws {
        try queue.inDatabase { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO item(id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        }
    }

    private static let rollbackConflict = "INSERT OR ROLLBACK INTO item(id, name) VALUES (1, 'again')"

    private func names(_ queue: DatabaseQueue) throws -> [String] {
        try queue.inDatabase { db in try db.fetchAll(String.self, sql: "SELECT name FROM item ORDER BY id") }
    }

    @Test(arguments: DatabaseKind.allCases)
    func statementsAfterSQLiteRolledBackAWriteFailAndCommitNothing(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try seed(queue)
        var later: (any Error)?
        var blockError: (any Error)?
        do {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO item(id, name) VALUES (4, 'four')")
                #expect(throws: DatabaseError.self) { try db.execute(sql: Self.rollbackConflict) }
                do {
                    try db.execute(sql: "INSERT INTO item(id, name) VALUES (5, 'five')")
                } catch {
                    later = error
                }
                try db.execute(sql: "UPDATE item SET name = 'changed'")
            }
        } catch {
            blockError = error
        }
        let refused = try #require(later as? SerialDBError)
        #expect(refused.code == .transactionAborted)
        #expect(refused.message.contains("aborted"))
        #expect(refused.message.contains("INSERT OR ROLLBACK"))
        #expect((refused.underlying as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT)
        #expect((blockError as? SerialDBError)?.code == .transactionAborted)
        #expect(try names(queue) == ["one", "two", "three"])
        #expect(try queue.inDatabase { db in db.isInsideTransaction } == false)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aBlockThatSwallowsTheErrorAndAsksToCommitIsToldTheTransactionWasAborted(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try seed(queue)
        let error = #expect(throws: SerialDBError.self) {
            try queue.inTransaction { db in
                try db.execute(sql: "DELETE FROM item WHERE id = 3")
                _ = try? db.execute(sql: Self.rollbackConflict)
                return .commit
            }
        }
        #expect(error?.code == .transactionAborted)
        #expect(try names(queue) == ["one", "two", "three"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func afterAnInterruptNoRowOfTheBlockIsLeftCommitted(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try seed(queue)
        try queue.inDatabase { db in Self.installInterruptingFunction(db) }
        var refusedCode: SerialDBError.Code?
        try? queue.write { db in
            try db.execute(sql: "INSERT INTO item(id, name) VALUES (4, 'four')")
            // An INSERT interrupted inside an explicit transaction rolls the whole transaction back.
            let interrupted = #expect(throws: DatabaseError.self) {
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
                        INSERT INTO item(id, name) SELECT i + interrupt_now(), 'x' FROM n
                        """)
            }
            #expect(interrupted?.resultCode == .SQLITE_INTERRUPT)
            do {
                try db.execute(sql: "INSERT INTO item(id, name) VALUES (5, 'five')")
            } catch let error as SerialDBError {
                refusedCode = error.code
            }
        }
        #expect(refusedCode == .transactionAborted)
        #expect(try names(queue) == ["one", "two", "three"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func returningRollbackAfterSQLiteRolledBackSucceeds(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try seed(queue)
        try queue.inTransaction { db in
            try db.execute(sql: "DELETE FROM item")
            _ = try? db.execute(sql: Self.rollbackConflict)
            return .rollback
        }
        try queue.inSavepoint { db in
            try db.execute(sql: "DELETE FROM item")
            _ = try? db.execute(sql: Self.rollbackConflict)
            return .rollback
        }
        try queue.inTransaction { db in
            try db.inSavepoint { db in
                _ = try? db.execute(sql: Self.rollbackConflict)
                return .rollback
            }
            return .rollback
        }
        #expect(try names(queue) == ["one", "two", "three"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSavepointThatOpenedTheTransactionRefusesStatementsAfterItEnded(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try seed(queue)
        let error = #expect(throws: SerialDBError.self) {
            try queue.inSavepoint { db in
                try db.execute(sql: "DELETE FROM item WHERE id = 3")
                _ = try? db.execute(sql: Self.rollbackConflict)
                try db.execute(sql: "DELETE FROM item WHERE id = 2")
                return .commit
            }
        }
        #expect(error?.code == .transactionAborted)
        #expect(try names(queue) == ["one", "two", "three"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aMigrationStepWhoseTransactionEndedEarlyLeavesNoObjectBehind(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: kind == .file ? directory.path("step.sqlite") : ":memory:")
        try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        try db.execute(sql: "INSERT INTO item(id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        var migrator = DatabaseMigrator()
        migrator.registerMigration("swallows-a-rollback") { db in
            try db.execute(sql: "CREATE TABLE before_error(x)")
            _ = try? db.execute(sql: Self.rollbackConflict)
            _ = try? db.execute(sql: "CREATE TABLE after_error(x)")
            _ = try? db.execute(sql: "DELETE FROM item")
        }
        let error = #expect(throws: SerialDBError.self) { try migrator.migrate(db) }
        #expect(error?.code == .migrationFailed)
        #expect((error?.underlying as? SerialDBError)?.code == .transactionAborted)
        let tables = try ["before_error", "after_error", DatabaseMigrator.migrationsTableName].filter {
            try db.tableExists($0)
        }
        #expect(tables.isEmpty)
        #expect(try db.fetchAll(String.self, sql: "SELECT name FROM item ORDER BY id") == ["one", "two", "three"])
    }

    @Test func aBlockThatCommitsItsOwnTransactionCannotGoOnOutsideIt() throws {
        let queue = try DatabaseQueue()
        try seed(queue)
        let error = #expect(throws: SerialDBError.self) {
            try queue.write { db in
                try db.execute(sql: "COMMIT")
                try db.execute(sql: "DELETE FROM item")
            }
        }
        #expect(error?.code == .transactionAborted)
        #expect(error?.message.contains("COMMIT") == true)
        #expect(try names(queue) == ["one", "two", "three"])
    }

    /// Registers `interrupt_now()`, which interrupts its own connection and returns 0: the
    /// statement calling it fails with SQLITE_INTERRUPT at its next step, every time.
    private static func installInterruptingFunction(_ db: Database) {
        sqlite3_create_function_v2(
            db.handle, "interrupt_now", 0, SQLITE_UTF8, nil,
            { context, _, _ in
                sqlite3_interrupt(sqlite3_context_db_handle(context))
                sqlite3_result_int(context, 0)
            }, nil, nil, nil)
    }
}
