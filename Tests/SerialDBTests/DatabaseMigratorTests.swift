import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct DatabaseMigratorTests {
    /// Builds a database "by hand" at step `step` of the ladder, with rows, as an app that
    /// already used SerialDB would have left it.
    private func databaseAtStep(_ step: Int, kind: DatabaseKind, in directory: TemporaryDirectory) throws
        -> DatabaseQueue
    {
        let queue = try kind.makeQueue(in: directory)
        if step > 0 {
            try queue.migrate(UserLadder.migrator(steps: step))
            try queue.write { db in try UserLadder.insertUsers(db, count: 50) }
        }
        return queue
    }

    @Test(arguments: DatabaseKind.allCases, 0...3)
    func theLadderUpgradesFromEveryEarlierStepKeepingRows(kind: DatabaseKind, startStep: Int) throws {
        let directory = try TemporaryDirectory()
        let queue = try databaseAtStep(startStep, kind: kind, in: directory)
        let migrator = UserLadder.migrator()
        try queue.migrate(migrator)
        try queue.read { db throws in
            #expect(try migrator.appliedMigrations(db) == UserLadder.identifiers)
            #expect(try migrator.hasCompletedMigrations(db))
            let columns = try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('T_User')")
            #expect(columns == ["id", "name", "email", "pin"])
            let rows = try db.fetchAll(Row.self, sql: "SELECT id, name, email, pin FROM T_User ORDER BY id")
            #expect(rows.count == (startStep > 0 ? 50 : 0))
            for row in rows {
                let id: Int = try row.decode(at: 0)
                #expect(try row.decode(String.self, at: 1) == "user-\(id)")
                #expect(try row.decode(String?.self, at: 2) == (startStep >= 2 ? "user\(id)@example.org" : nil))
                #expect(try row.decode(String.self, at: 3) == "111111")
            }
        }
        // Running again is a no-op.
        let before = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT * FROM serialdb_migrations") }
        try queue.migrate(migrator)
        let after = try queue.read { db in try db.fetchAll(Row.self, sql: "SELECT * FROM serialdb_migrations") }
        #expect(before.map { $0[1] } == after.map { $0[1] })
    }

    @Test func migrateUpToStopsAtTheNamedStep() throws {
        let queue = try DatabaseQueue()
        let migrator = UserLadder.migrator()
        try queue.migrate(migrator, upTo: "2-add-email")
        #expect(try queue.read { db in try migrator.appliedMigrations(db) } == ["1-create-user", "2-add-email"])
        #expect(try queue.read { db in try migrator.hasCompletedMigrations(db) } == false)
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(migrator, upTo: "9-missing") }
        #expect(error?.code == .invalidMigrator)
    }

    @Test func anAppWithItsOwnVersionTableIsAdoptedAtItsStep() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("legacy.sqlite"))
        // The app's own ladder went to version 2 and kept it in t_info(version).
        try queue.write { db throws in
            try db.execute(sql: UserLadder.stepSQL[0])
            try db.execute(sql: UserLadder.stepSQL[1])
            try db.execute(sql: "CREATE TABLE t_info(version INTEGER NOT NULL); INSERT INTO t_info VALUES (2)")
            try UserLadder.insertUsers(db, count: 20)
        }
        var migrator = UserLadder.migrator()
        migrator.adoptLegacyVersion(.table("t_info", column: "version"))
        try queue.migrate(migrator)
        try queue.read { db throws in
            #expect(try migrator.appliedMigrations(db) == UserLadder.identifiers)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User WHERE pin = '111111'") == 20)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User WHERE email IS NOT NULL") == 20)
        }
    }

    @Test func aUserVersionMarkerIsAdoptedAndAFreshDatabaseRunsEveryStep() throws {
        var migrator = UserLadder.migrator()
        migrator.adoptLegacyVersion(.userVersion)
        let legacy = try DatabaseQueue()
        try legacy.write { db throws in
            try db.execute(sql: UserLadder.stepSQL[0])
            try db.execute(sql: "PRAGMA user_version = 1")
        }
        try legacy.migrate(migrator)
        #expect(try legacy.read { db in try migrator.appliedMigrations(db) } == UserLadder.identifiers)

        let fresh = try DatabaseQueue()
        try fresh.migrate(migrator)
        #expect(
            try fresh.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM pragma_table_info('T_User')") }
                == 4)
    }

    @Test func aNewerDatabaseIsRefusedAndLeftByteIdentical() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("newer.sqlite")
        do {
            var configuration = Configuration()
            configuration.journalMode = .delete  // the whole database lives in the one file
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            var newer = UserLadder.migrator()
            newer.registerMigration("4-from-the-future") { db in try db.execute(sql: "CREATE TABLE future(x)") }
            try queue.migrate(newer)
            try queue.write { db in try UserLadder.insertUsers(db, count: 10) }
            try queue.close()
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var configuration = Configuration()
        configuration.journalMode = .delete
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(UserLadder.migrator()) }
        #expect(error?.code == .unknownMigrations)
        #expect(error?.message.contains("4-from-the-future") == true)
        // Work submitted afterwards is refused too: the app does not know this schema.
        let refused = #expect(throws: SerialDBError.self) { try queue.read { _ in } }
        #expect(refused?.code == .migrationFailed)
        try queue.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        var tolerant = UserLadder.migrator()
        tolerant.allowsUnknownMigrations = true
        let reopened = try DatabaseQueue(path: path, configuration: configuration)
        try reopened.migrate(tolerant)
        #expect(try reopened.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User") } == 10)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aThrowingStepLeavesEarlierStepsCommittedAndNothingOfItself(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try databaseAtStep(1, kind: kind, in: directory)
        struct StepFailure: Error {}
        var migrator = UserLadder.migrator(steps: 2)
        migrator.registerMigration("3-broken") { db in
            try db.execute(sql: "CREATE TABLE half_done(x)")
            try db.execute(sql: "UPDATE T_User SET name = 'overwritten'")
            throw StepFailure()
        }
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(migrator) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("\"3-broken\"") == true)
        #expect(error?.message.contains("stays at step \"2-add-email\"") == true)
        #expect(error?.underlying is StepFailure)
        let state = try queue.stateAfterFailedUpgrade()
        #expect(state.applied == ["1-create-user", "2-add-email"])
        #expect(state.tables.contains("half_done") == false)
        #expect(state.overwrittenNames == 0)
        #expect(state.foreignKeys == 1)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aStepThatBreaksAForeignKeyIsRolledBackNamingTheRow(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1-tables") { db in
            try db.execute(
                sql: """
                    CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                    CREATE TABLE book(id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES author(id) ON DELETE CASCADE);
                    INSERT INTO author VALUES (1, 'Ann'), (2, 'Bob');
                    INSERT INTO book VALUES (10, 1), (11, 2), (12, 2);
                    """)
        }
        try queue.migrate(migrator)
        migrator.registerMigration("2-drop-bob") { db in
            // Foreign keys are off during the step, so this does not cascade: the check must catch it.
            try db.execute(sql: "DELETE FROM author WHERE id = 2")
        }
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(migrator) }
        let cause = error?.underlying as? SerialDBError
        #expect(cause?.code == .foreignKeyViolation)
        #expect(cause?.message.contains("\"book\"") == true)
        #expect(cause?.message.contains("row 11") == true)
        let state = try queue.stateAfterFailedUpgrade()
        #expect(state.applied == ["1-tables"])
        #expect(state.foreignKeys == 1)
        let remaining = try queue.inDatabase { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM book") }
        #expect(remaining == 3)
    }

    @Test func duplicateIdentifiersAreReportedWhenMigrating() throws {
        var migrator = UserLadder.migrator()
        migrator.registerMigration("2-add-email") { _ in }
        let error = #expect(throws: SerialDBError.self) { try DatabaseQueue().migrate(migrator) }
        #expect(error?.code == .invalidMigrator)
        #expect(error?.message.contains("registered twice") == true)
    }

    @Test func aStepThatCommitsByItselfIsRefused() throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("sneaky") { db in try db.execute(sql: "CREATE TABLE x(a); COMMIT") }
        let error = #expect(throws: SerialDBError.self) { try DatabaseQueue().migrate(migrator) }
        #expect((error?.underlying as? SerialDBError)?.code == .invalidMigrator)
    }

    @Test func progressReportsEachStepAndStepUnits() async throws {
        let queue = try DatabaseQueue()
        var migrator = UserLadder.migrator()
        migrator.registerMigration("4-backfill") { db in
            for index in 1...4 { db.reportProgress(completed: index, total: 4) }
        }
        let upgrade = queue.startMigration(migrator)
        var reports: [MigrationProgress] = []
        for await report in upgrade.progress { reports.append(report) }
        try await upgrade.wait()
        #expect(
            reports.filter { $0.event == .stepCommitted }.map(\.migration) == UserLadder.identifiers + ["4-backfill"])
        #expect(
            reports.last
                == MigrationProgress(event: .stepCommitted, migration: "4-backfill", completedSteps: 4, totalSteps: 4))
        let units = reports.filter { $0.event == .stepProgress }
        #expect(units.map(\.completedUnits) == [1, 2, 3, 4])
        #expect(units.allSatisfy { $0.totalUnits == 4 && $0.migration == "4-backfill" })
    }

    @Test func migratingFromInsideABlockThrowsInsteadOfDeadlocking() throws {
        let queue = try DatabaseQueue()
        // Bounded: without the check, the block would wait for itself forever.
        let error = #expect(throws: SerialDBError.self) {
            try outcome { try queue.inDatabase { _ in try queue.migrate(UserLadder.migrator()) } }.get()
        }
        #expect(error?.code == .reentrantCall)
        let waitError = #expect(throws: SerialDBError.self) {
            try outcome { try queue.inDatabase { _ in try queue.startMigration(UserLadder.migrator()).wait() } }.get()
        }
        #expect(waitError?.code == .reentrantCall)
    }
}

/// What the failure tests read back after a failed migration.
struct MigrationState {
    var applied: [String]
    var tables: [String]
    var overwrittenNames: Int
    var foreignKeys: Int
}

extension DatabaseQueue {
    /// After a failed upgrade the queue refuses work; this checks that it does, then reopens
    /// it with a migration that has nothing to do (a later successful migrate reopens the
    /// queue), and reads.
    fileprivate func readAfterFailedUpgrade<T>(_ block: (Database) throws -> T) throws -> T {
        let refused = #expect(throws: SerialDBError.self) { try inDatabase { _ in } }
        #expect(refused?.code == .migrationFailed)
        var nothingToDo = DatabaseMigrator()
        nothingToDo.allowsUnknownMigrations = true
        try migrate(nothingToDo)
        return try inDatabase(block)
    }

    fileprivate func stateAfterFailedUpgrade() throws -> MigrationState {
        try readAfterFailedUpgrade { db in
            let tables = try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            return MigrationState(
                applied: try DatabaseMigrator().appliedMigrations(db),
                tables: tables,
                overwrittenNames: tables.contains("T_User")
                    ? try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User WHERE name = 'overwritten'") ?? 0 : 0,
                foreignKeys: try db.fetchOne(Int.self, sql: "PRAGMA foreign_keys") ?? -1)
        }
    }
}
