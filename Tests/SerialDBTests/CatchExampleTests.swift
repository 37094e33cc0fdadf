import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The `catch` clauses shown in the README and in the doc comments, compiled and run as written.
@Suite struct CatchExampleTests {
    /// Which clause caught the error.
    enum Caught: Equatable {
        case first, second, other
    }

    private func failingMigration() throws {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("broken") { db in try db.execute(sql: "CREATE TABLE t(") }
        try queue.migrate(migrator)
    }

    @Test func serialDBErrorDocCatchesMigrationFailedByCode() throws {
        var caught = Caught.other
        do {
            try failingMigration()
        } catch SerialDBError.Code.migrationFailed {
            caught = .first
        } catch let error as SerialDBError where error.code == .reentrantCall {
            caught = .second
        } catch {
            caught = .other
        }
        #expect(caught == .first)
    }

    @Test func serialDBErrorDocCatchesReentrantCallsWithAWhereClause() throws {
        let queue = try DatabaseQueue()
        var caught = Caught.other
        try queue.inDatabase { _ in
            do {
                try queue.inDatabase { _ in }
            } catch SerialDBError.Code.migrationFailed {
                caught = .first
            } catch let error as SerialDBError where error.code == .reentrantCall {
                caught = .second
            } catch {
                caught = .other
            }
        }
        #expect(caught == .second)
    }

    @Test func aCodeDoesNotCatchAnotherCodeOrAnotherErrorType() {
        let closed = SerialDBError(.closed, "closed")
        #expect(!(SerialDBError.Code.migrationFailed ~= closed))
        #expect(SerialDBError.Code.closed ~= closed)
        #expect(!(SerialDBError.Code.closed ~= DatabaseError(extendedResultCode: .SQLITE_BUSY, message: "busy")))
    }

    @Test func resultCodeDocCatchesAnyConstraintViolationByItsPrimaryCode() throws {
        let db = try Database(path: ":memory:")
        try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY)")
        try db.execute(sql: "INSERT INTO player(id) VALUES (1)")
        var caught = false
        do {
            try db.execute(sql: "INSERT INTO player(id) VALUES (1)")
        } catch ResultCode.SQLITE_CONSTRAINT {
            // any constraint violation, whatever its extended code
            caught = true
        }
        #expect(caught)
    }

    @Test func databaseErrorDocCatchesBusyAndUniqueViolations() throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: directory.path("catch.sqlite"))
        try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
        try db.execute(sql: "INSERT INTO player(name) VALUES ('Ann')")
        var config = Configuration()
        config.busyTimeout = .zero
        let other = try Database(path: directory.path("catch.sqlite"), configuration: config)
        try db.execute(sql: "BEGIN IMMEDIATE")
        func attempt(_ db: Database, _ sql: String) -> Caught {
            do {
                try db.execute(sql: sql)
                return .other
            } catch ResultCode.SQLITE_BUSY {
                return .first
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                return .second
            } catch {
                return .other
            }
        }
        #expect(attempt(other, "INSERT INTO player(name) VALUES ('Bob')") == .first)
        #expect(attempt(db, "INSERT INTO player(name) VALUES ('Ann')") == .second)
        try db.execute(sql: "ROLLBACK")
    }
}
