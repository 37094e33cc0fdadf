import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// A migration step (or a schema change) runs in a transaction SerialDB commits itself. A
/// BEGIN, COMMIT, END or ROLLBACK inside it is refused before it runs, so the failed step
/// really leaves no trace, as its error says.
@Suite struct MigrationTransactionControlTests {
    /// Steps that try to end the step's transaction: alone after other work, or as the last
    /// statement of a script whose first statements have already run.
    static let endingSteps: [(name: String, body: @Sendable (Database) throws -> Void)] = [
        ("COMMIT alone", afterWork { db in try db.execute(sql: "COMMIT") }),
        ("END alone", afterWork { db in try db.execute(sql: "END") }),
        ("ROLLBACK alone", afterWork { db in try db.execute(sql: "ROLLBACK") }),
        ("END TRANSACTION alone", afterWork { db in try db.execute(sql: "END TRANSACTION") }),
        ("script then COMMIT", { db in try db.execute(sql: "CREATE TABLE x(a); INSERT INTO x VALUES (1); COMMIT") }),
        ("script then END", { db in try db.execute(sql: "CREATE TABLE x(a); INSERT INTO x VALUES (1); end;") }),
        ("script, ROLLBACK", { db in try db.execute(sql: "CREATE TABLE x(a); INSERT INTO x VALUES (1); rollback") }),
        (
            "script then COMMIT then more",
            { db in try db.execute(sql: "CREATE TABLE x(a); COMMIT; CREATE TABLE y(b)") }
        ),
        // The step's transaction is a BEGIN, not a savepoint: RELEASE cannot end it, and a
        // RELEASE of nothing the step opened fails the step.
        ("script then RELEASE", { db in try db.execute(sql: "CREATE TABLE x(a); RELEASE serialdb_savepoint_0") }),
        (
            "own savepoint released, then COMMIT",
            { db in try db.execute(sql: "SAVEPOINT s; CREATE TABLE x(a); RELEASE s; COMMIT") }
        ),
        ("db.commit()", afterWork { db in try db.commit() }),
        ("swallowed COMMIT", afterWork { db in try? db.execute(sql: "COMMIT") }),
        (
            "db.inTransaction",
            { db in
                try db.inTransaction { db in
                    try afterWork { _ in }(db)
                    return .commit
                }
            }
        ),
    ]

    /// A step that creates table x with a row, then runs `end`.
    private static func afterWork(
        _ end: @escaping @Sendable (Database) throws -> Void
    ) -> @Sendable (Database) throws -> Void {
        { db in
            try db.execute(sql: "CREATE TABLE x(a); INSERT INTO x VALUES (1)")
            try end(db)
        }
    }

    @Test(arguments: 0..<endingSteps.count)
    func aStepThatEndsItsOwnTransactionLeavesNoTraceOnAFile(index: Int) throws {
        let (name, body) = Self.endingSteps[index]
        let directory = try TemporaryDirectory()
        let path = directory.path("app.sqlite")
        let queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("base") { db in try db.execute(sql: "CREATE TABLE base(a)") }
        try queue.migrate(migrator)
        migrator.registerMigration("sneaky", body)
        let error = #expect(throws: SerialDBError.self, "\(name)") { try queue.migrate(migrator) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("stays at step \"base\"") == true, "\(name)")

        // Seen from another connection: no table x or y, no record of the step.
        let other = try Database(path: path)
        #expect(try !other.tableExists("x"), "\(name)")
        #expect(try !other.tableExists("y"), "\(name)")
        #expect(try other.tableExists("base"))
        #expect(try migrator.appliedMigrations(other) == ["base"], "\(name)")
        #expect(!other.isInsideTransaction)
        other.close()

        // The queue is usable: the fixed step migrates, then the queue writes.
        var fixed = DatabaseMigrator()
        fixed.registerMigration("base") { db in try db.execute(sql: "CREATE TABLE base(a)") }
        fixed.registerMigration("sneaky") { db in try db.execute(sql: "CREATE TABLE x(a)") }
        try queue.migrate(fixed)
        try queue.write { db in try db.execute(sql: "INSERT INTO x VALUES (2)") }
        #expect(try queue.read { db in try db.fetchAll(Int.self, sql: "SELECT a FROM x") } == [2])
        #expect(try queue.read { db in try fixed.appliedMigrations(db) } == ["base", "sneaky"])
    }

    @Test func theErrorNamesTheStatementAndWhatToDo() throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("sneaky") { db in try db.execute(sql: "CREATE TABLE x(a); COMMIT") }
        let error = #expect(throws: SerialDBError.self) { try DatabaseQueue().migrate(migrator) }
        let cause = error?.underlying as? SerialDBError
        #expect(cause?.code == .invalidMigrator)
        #expect(cause?.message.contains("Migration \"sneaky\"") == true)
        #expect(cause?.message.contains("runs COMMIT or END (in `CREATE TABLE x(a); COMMIT`)") == true)
        #expect(cause?.message.contains("db.inSavepoint") == true)

        var beginning = DatabaseMigrator()
        beginning.registerMigration("nested") { db in try db.inTransaction { _ in .commit } }
        let nested = #expect(throws: SerialDBError.self) { try DatabaseQueue().migrate(beginning) }
        #expect((nested?.underlying as? SerialDBError)?.message.contains("runs BEGIN") == true)
    }

    /// A COMMIT statement cached by the connection before the migration is compiled again
    /// when the step runs it, and refused then too.
    @Test func aCommitCachedBeforeTheStepIsRefusedToo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.inDatabase { db in
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "COMMIT")
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("sneaky") { db in
            try db.execute(sql: "CREATE TABLE x(a)")
            try db.execute(sql: "COMMIT")
        }
        #expect(throws: SerialDBError.self) { try queue.migrate(migrator) }
        let other = try Database(path: path)
        #expect(try !other.tableExists("x"))
        // Outside a step the cached statement works again.
        var fixed = DatabaseMigrator()
        fixed.registerMigration("sneaky") { db in try db.execute(sql: "CREATE TABLE x(a)") }
        try queue.migrate(fixed)
        try queue.inDatabase { db in
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "COMMIT")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func savepointsInsideAStepKeepWorking(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("savepoints") { db in
            try db.execute(sql: "CREATE TABLE t(a)")
            try db.inSavepoint { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                return .commit
            }
            try db.inSavepoint { db in
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                return .rollback
            }
            struct Undo: Error {}
            #expect(throws: Undo.self) {
                try db.inSavepoint { db in
                    try db.execute(sql: "INSERT INTO t VALUES (3)")
                    throw Undo()
                }
            }
            try db.execute(sql: "SAVEPOINT mine; INSERT INTO t VALUES (4); ROLLBACK TO mine; RELEASE mine")
            try db.execute(sql: "SAVEPOINT kept; INSERT INTO t VALUES (5); RELEASE kept")
        }
        try queue.migrate(migrator)
        #expect(try queue.read { db in try db.fetchAll(Int.self, sql: "SELECT a FROM t ORDER BY a") } == [1, 5])
        #expect(try queue.read { db in try migrator.appliedMigrations(db) } == ["savepoints"])
    }

    @Test func aSchemaChangeTransactionThatCommitsLeavesNoTrace() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.sqlite")
        let queue = try DatabaseQueue(path: path)
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db in
                try db.inSchemaChangeTransaction { db in try db.execute(sql: "CREATE TABLE y(a); COMMIT") }
            }
        }
        #expect(error?.code == .invalidMigrator)
        #expect(error?.message.contains("The schema change") == true)
        let other = try Database(path: path)
        #expect(try !other.tableExists("y"))
        // The connection is out of the transaction and works.
        try queue.inDatabase { db in
            #expect(!db.isInsideTransaction)
            try db.execute(sql: "CREATE TABLE y(a)")
        }
        #expect(try other.tableExists("y"))
    }
}
