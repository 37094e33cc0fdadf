import SerialDB
import SerialDBTestSupport
import Testing

/// `migrate(upTo:)` goes forward to its target and never silently stays past it.
@Suite struct MigrateUpToTests {
    private func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("a") { db in try db.execute(sql: "CREATE TABLE a(x)") }
        migrator.registerMigration("b") { db in try db.execute(sql: "CREATE TABLE b(x)") }
        migrator.registerMigration("c") { db in try db.execute(sql: "CREATE TABLE c(x)") }
        return migrator
    }

    @Test(arguments: DatabaseKind.allCases)
    func migratingUpToAStepTheDatabaseIsPastThrowsNamingTheStepItIsAt(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let db = try Database(path: kind == .file ? directory.path("upto.sqlite") : ":memory:")
        try migrator().migrate(db)
        try db.execute(sql: "INSERT INTO c(x) VALUES (1)")
        let error = #expect(throws: SerialDBError.self) { try migrator().migrate(db, upTo: "b") }
        #expect(error?.code == .invalidMigrator)
        #expect(error?.message.contains("already at step \"c\"") == true)
        #expect(error?.message.contains("\"b\"") == true)
        #expect(try migrator().appliedMigrations(db) == ["a", "b", "c"])
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM c") == 1)
    }

    @Test func aQueueMigratingUpToAStepItIsPastThrowsTheSameWay() throws {
        let queue = try DatabaseQueue()
        try queue.migrate(migrator())
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(migrator(), upTo: "a") }
        let cause = (error?.underlying as? SerialDBError) ?? error
        #expect(cause?.code == .invalidMigrator)
        #expect(cause?.message.contains("already at step \"c\"") == true)
    }

    @Test func migratingUpToTheStepTheDatabaseIsAtOrBeforeItStillWorks() throws {
        let db = try Database(path: ":memory:")
        try migrator().migrate(db, upTo: "a")
        try migrator().migrate(db, upTo: "a")
        #expect(try migrator().appliedMigrations(db) == ["a"])
        try migrator().migrate(db, upTo: "b")
        #expect(try migrator().appliedMigrations(db) == ["a", "b"])
    }
}
