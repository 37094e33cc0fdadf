import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The four ways a declarative schema change used to lose rows or values while reporting
/// success (issue 17, items 1 to 4): each either keeps every value or is refused untouched.
@Suite struct SchemaDataLossTests {
    private func refusal(_ body: () throws -> Void) -> SerialDBError? {
        do {
            try body()
            return nil
        } catch let error as SerialDBError {
            return error
        } catch {
            return SerialDBError(.migrationFailed, "unexpected \(error)")
        }
    }

    private func seededUsers(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT)")
            for id in 1...1000 {
                try db.execute(
                    sql: "INSERT INTO user(id, email) VALUES (?, ?)", arguments: [id, "user\(id % 10)@example.com"])
            }
        }
        return queue
    }

    @Test(arguments: DatabaseKind.allCases, ["REPLACE", "IGNORE"])
    func aNewUniqueConflictClauseOverDuplicatesIsRefusedNotADeletion(kind: DatabaseKind, clause: String) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededUsers(kind, in: directory)
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let error = refusal {
            try queue.inDatabase { db in
                _ = try db.changeSchemaAsPlanned(
                    to: "CREATE TABLE user(id INTEGER PRIMARY KEY, email TEXT UNIQUE ON CONFLICT \(clause))")
            }
        }
        #expect(error?.code == .schemaChangeRefused)
        #expect(error?.message.contains("'user0@example.com' in 100 rows") == true, "\(String(describing: error))")
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
    }

    @Test(arguments: DatabaseKind.allCases)
    func rowsThatCollideOnlyAfterConversionAreRefused(kind: DatabaseKind) throws {
        // '1' and 1 are distinct in the untyped column; they become equal integers under the
        // new INTEGER type, and REPLACE would keep only one. The plan compares the values as
        // the new column stores them, so it refuses before the copy.
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE tag(code, label TEXT)")
            try db.execute(sql: "INSERT INTO tag VALUES ('1', 'text'), (1, 'integer'), (2, 'two')")
        }
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        for schema in [
            "CREATE TABLE tag(code INTEGER UNIQUE ON CONFLICT REPLACE, label TEXT)",
            "CREATE TABLE tag(code INTEGER, label TEXT, UNIQUE(code) ON CONFLICT IGNORE)",
            "CREATE TABLE tag(code INTEGER PRIMARY KEY ON CONFLICT REPLACE, label TEXT) WITHOUT ROWID",
        ] {
            let error = refusal { try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: schema) } }
            #expect(error?.code == .schemaChangeRefused, "\(schema)")
            #expect(try queue.read { db in try DatabaseSnapshot(db) } == before, "\(schema)")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func columnsDifferingOnlyInNonASCIICaseAreTwoColumns(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE word(\"Ä\" TEXT, \"ä\" TEXT)")
            for index in 0..<100 {
                try db.execute(sql: "INSERT INTO word VALUES (?, ?)", arguments: ["upper\(index)", "lower\(index)"])
            }
        }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE word(\"Ä\" TEXT NOT NULL, \"ä\" TEXT NOT NULL)")
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(String.self, sql: "SELECT \"Ä\" FROM word WHERE rowid = 8") == "upper7")
            #expect(try db.fetchOne(String.self, sql: "SELECT \"ä\" FROM word WHERE rowid = 8") == "lower7")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func renamingToANameThatDiffersInNonASCIICaseRenames(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE mood(id INTEGER PRIMARY KEY, \"Ärger\" INTEGER)")
            try db.execute(sql: "INSERT INTO mood VALUES (1, 10), (2, 20)")
        }
        let schema = "CREATE TABLE mood(id INTEGER PRIMARY KEY, \"ärger\" INTEGER)"
        // Without a rename, "ärger" is a new column and "Ärger" one that holds data.
        let unrenamed = try queue.inDatabase { db in try db.planSchemaChange(to: schema) }
        #expect(unrenamed.isRefused)
        #expect(unrenamed.refusals.first?.contains("mood.Ärger holds 2 non-NULL value(s)") == true)
        var options = SchemaChangeOptions()
        options.renameColumn("Ärger", to: "ärger", inTable: "mood")
        let plan = try queue.inDatabase { db in try db.changeSchemaAsPlanned(to: schema, options: options) }
        #expect(plan.rebuiltTables == ["mood"])
        try queue.read { db throws in
            #expect(try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('mood')") == ["id", "ärger"])
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(\"ärger\") FROM mood") == 30)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aNameRenamedAwayIsNoLongerASource(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in try Player.createTable(db, rows: 100) }
        var options = SchemaChangeOptions()
        options.renameColumn("name", to: "legacy_name", inTable: "player")
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(
                to: """
                    CREATE TABLE player(id INTEGER PRIMARY KEY, legacy_name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0,
                        name TEXT DEFAULT 'unknown')
                    """, options: options)
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(String.self, sql: "SELECT legacy_name FROM player WHERE id = 5") == "player-5")
            #expect(try db.fetchAll(String.self, sql: "SELECT DISTINCT name FROM player") == ["unknown"])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func theChunkedCopyKeepsTheRowWithTheSmallestPossibleRowid(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE note(body TEXT)")
            let insert = try db.makeStatement(sql: "INSERT INTO note(rowid, body) VALUES (?, ?)")
            try insert.execute(arguments: [Int64.min, "smallest"])
            for index in 1...60_000 { try insert.execute(arguments: [index, "n\(index)"]) }
            try insert.execute(arguments: [Int64.max, "largest"])
        }
        try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE note(body TEXT NOT NULL)") }
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM note") == 60_002)
            #expect(
                try db.fetchOne(String.self, sql: "SELECT body FROM note WHERE rowid = ?", arguments: [Int64.min])
                    == "smallest")
            #expect(
                try db.fetchOne(String.self, sql: "SELECT body FROM note WHERE rowid = ?", arguments: [Int64.max])
                    == "largest")
        }
    }
}
