import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// What the data can tell before anything runs: duplicates under a new UNIQUE, orphans under
/// a new foreign key, NULLs under a new NOT NULL are refusals of the plan itself, naming the
/// rows; and a broken reference that predates the change does not block it (issue 17, item 17).
@Suite struct SchemaPlanRefusalTests {
    private func seeded(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE team(id INTEGER PRIMARY KEY, name TEXT);
                    CREATE TABLE member(id INTEGER PRIMARY KEY, team_id INTEGER, nick TEXT);
                    """)
            for id in 1...5 { try db.execute(sql: "INSERT INTO team VALUES (?, ?)", arguments: [id, "team-\(id)"]) }
            for id in 1...100 {
                try db.execute(
                    sql: "INSERT INTO member VALUES (?, ?, ?)",
                    arguments: [
                        id, id == 42 || id == 43 ? 99 : id % 5 + 1,
                        id == 7 ? nil : id == 8 ? "dup" : id == 9 ? "dup" : "m\(id)",
                    ])
            }
        }
        return queue
    }

    private static let team = "CREATE TABLE team(id INTEGER PRIMARY KEY, name TEXT);"

    @Test(arguments: DatabaseKind.allCases)
    func duplicatesUnderANewUniqueKeyAreRefusedAtPlanTimeNamingThem(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seeded(kind, in: directory)
        let plan = try queue.inDatabase { db in
            try db.planSchemaChange(
                to: Self.team + "CREATE TABLE member(id INTEGER PRIMARY KEY, team_id INTEGER, nick TEXT UNIQUE)")
        }
        #expect(plan.refusals.count == 1)
        #expect(plan.refusals.first?.contains("'dup' in 2 rows") == true, "\(plan.refusals)")
    }

    @Test(arguments: DatabaseKind.allCases)
    func orphansUnderANewForeignKeyAreRefusedAtPlanTimeNamingThem(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seeded(kind, in: directory)
        let plan = try queue.inDatabase { db in
            try db.planSchemaChange(
                to: Self.team
                    + "CREATE TABLE member(id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES team(id), nick TEXT)")
        }
        #expect(plan.refusals.count == 1)
        #expect(
            plan.refusals.first?.contains("2 row(s) refer to no row of team (rows with rowid 42, 43)") == true,
            "\(plan.refusals)")
    }

    @Test(arguments: DatabaseKind.allCases)
    func nullsUnderANewNotNullAreRefusedAtPlanTimeNamingThem(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seeded(kind, in: directory)
        let plan = try queue.inDatabase { db in
            try db.planSchemaChange(
                to: Self.team + "CREATE TABLE member(id INTEGER PRIMARY KEY, team_id INTEGER, nick TEXT NOT NULL)")
        }
        #expect(plan.refusals.count == 1)
        #expect(plan.refusals.first?.contains("1 row(s) hold NULL (rows with rowid 7)") == true, "\(plan.refusals)")
    }

    @Test(arguments: DatabaseKind.allCases)
    func anOldOrphanInAnUnrelatedTableDoesNotBlockAChange(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let queue = try kind.makeQueue(in: directory, configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE parent(id INTEGER PRIMARY KEY);
                    CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));
                    CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT);
                    INSERT INTO child VALUES (1, 42);
                    INSERT INTO note VALUES (1, 'keep');
                    """)
        }
        let schema = """
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));
            CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
            CREATE INDEX note_body ON note(body);
            """
        try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: schema) }
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'note_body'") == 1)
            #expect(try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").count == 1)
        }
    }
}
