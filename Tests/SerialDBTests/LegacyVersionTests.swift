import SerialDB
import SerialDBTestSupport
import Testing

/// Adopting a database that kept its own version: `.table` reads numbers stored as text, and
/// `.custom` expresses any other ladder.
@Suite struct LegacyVersionTests {
    /// A database at UserLadder step 2, its version kept in `t_info(version)` as `marker`.
    private func legacyDatabase(kind: DatabaseKind, in directory: TemporaryDirectory, marker: DatabaseValue) throws
        -> DatabaseQueue
    {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: UserLadder.stepSQL[0])
            try db.execute(sql: UserLadder.stepSQL[1])
            try UserLadder.insertUsers(db, count: 5)
            try db.execute(sql: "CREATE TABLE t_info(version)")
            try db.execute(sql: "INSERT INTO t_info(version) VALUES (?)", arguments: [marker])
        }
        return queue
    }

    @Test(arguments: [
        DatabaseValue.text("2"), .text("2.0"), .text(" 2.0 "), .integer(2), .real(2.0),
    ])
    func aTableMarkerReadsNumericText(marker: DatabaseValue) throws {
        let directory = try TemporaryDirectory()
        let queue = try legacyDatabase(kind: .file, in: directory, marker: marker)
        var migrator = UserLadder.migrator()
        migrator.adoptLegacyVersion(.table("t_info", column: "version"))
        try queue.migrate(migrator)
        let state = try queue.read { db in
            (
                try migrator.appliedMigrations(db),
                try db.fetchAll(String.self, sql: "SELECT DISTINCT pin FROM T_User"),
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User")
            )
        }
        #expect(state.0 == UserLadder.identifiers)
        #expect(state.1 == ["111111"])
        #expect(state.2 == 5)
    }

    @Test(arguments: [DatabaseValue.text("2.5"), .text("two"), .real(1.5)])
    func aMarkerThatIsNotAWholeNumberIsRefusedBeforeAnyStep(marker: DatabaseValue) throws {
        let directory = try TemporaryDirectory()
        let queue = try legacyDatabase(kind: .memory, in: directory, marker: marker)
        var migrator = UserLadder.migrator()
        migrator.adoptLegacyVersion(.table("t_info", column: "version"))
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(migrator) }
        let cause = (error?.underlying as? SerialDBError) ?? error
        #expect(cause?.code == .decodingFailed)
        #expect(cause?.message.contains("LegacyVersion.custom") == true)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCustomReadingSaysHowManyStepsTheDatabaseHas(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        // The original app's convention: the marker is the NEXT case to run, so '3.0' = two steps.
        let queue = try legacyDatabase(kind: kind, in: directory, marker: .text("3.0"))
        var migrator = UserLadder.migrator()
        migrator.adoptLegacyVersion(
            .custom { db in
                let marker = try db.fetchOne(String.self, sql: "SELECT version FROM t_info") ?? "1.0"
                return Int(Double(marker) ?? 1) - 1
            })
        try queue.migrate(migrator)
        let columns = try queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('T_User')")
        }
        #expect(columns == ["id", "name", "email", "pin"])
        #expect(try queue.read { db in try migrator.appliedMigrations(db) } == UserLadder.identifiers)
    }

    @Test func aCustomReadingAheadOfTheRegisteredStepsIsRefused() throws {
        let queue = try DatabaseQueue()
        var migrator = UserLadder.migrator()
        migrator.adoptLegacyVersion(.custom { _ in 7 })
        let error = #expect(throws: SerialDBError.self) { try queue.migrate(migrator) }
        let cause = (error?.underlying as? SerialDBError) ?? error
        #expect(cause?.code == .unknownMigrations)
    }
}
