import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The live schema ends up spelled as asked: names that change only in case are renamed,
/// keeping the data (issue 25, item 5), and a rebuilt table keeps its CREATE statement as
/// written, even where it names itself (item 8).
@Suite struct SchemaSpellingTests {
    private static let oldSchema = """
        CREATE TABLE Authentication_List(id INTEGER PRIMARY KEY, Username TEXT NOT NULL, Token TEXT);
        CREATE INDEX Authentication_By_User ON Authentication_List(Username);
        CREATE TABLE login(id INTEGER PRIMARY KEY, account INTEGER REFERENCES Authentication_List(id));
        CREATE VIEW Active AS SELECT Username FROM Authentication_List WHERE Token IS NOT NULL;
        """

    private static let newSchema = """
        CREATE TABLE authentication_list(id INTEGER PRIMARY KEY, username TEXT NOT NULL, Token TEXT);
        CREATE INDEX authentication_by_user ON authentication_list(username);
        CREATE TABLE login(id INTEGER PRIMARY KEY, account INTEGER REFERENCES authentication_list(id));
        CREATE VIEW active AS SELECT username FROM authentication_list WHERE Token IS NOT NULL;
        """

    /// Names and statements exactly as stored.
    private func stored(_ db: Database) throws -> [String] {
        try db.fetchAll(
            String.self, sql: "SELECT type || ' ' || name || ': ' || sql FROM sqlite_master ORDER BY type, lower(name)")
    }

    private func written(_ schema: String) throws -> [String] {
        try DatabaseQueue().write { db in
            try db.execute(sql: schema)
            return try stored(db)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func namesThatChangeOnlyInCaseAreRenamedKeepingTheRows(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: Self.oldSchema)
            for id in 1...50 {
                try db.execute(
                    sql: "INSERT INTO Authentication_List VALUES (?, ?, ?)",
                    arguments: [id, "user\(id)", id % 2 == 0 ? "t\(id)" : nil])
                try db.execute(sql: "INSERT INTO login VALUES (?, ?)", arguments: [id, id])
            }
        }
        let plan = try queue.inDatabase { db in try db.changeSchemaAsPlanned(to: Self.newSchema) }
        #expect(plan.rebuiltTables.isEmpty, "a rename needs no copy: \(plan.sql)")
        try queue.read { db throws in
            #expect(try stored(db) == written(Self.newSchema))
            #expect(
                try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('authentication_list')") == [
                    "id", "username", "Token",
                ])
            #expect(
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM authentication_list WHERE username LIKE 'user%'")
                    == 50)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM active") == 25)
            #expect(try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").isEmpty)
            #expect(try db.planSchemaChange(to: Self.newSchema).isEmpty)
        }
        // And back again.
        try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: Self.oldSchema) }
        #expect(try queue.read { db in try stored(db) } == written(Self.oldSchema))
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCaseRenameTogetherWithAnAddedColumnDoesBoth(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE Player(ID INTEGER PRIMARY KEY, Nick TEXT); INSERT INTO Player VALUES (1, 'a')")
        }
        let schema = "CREATE TABLE player(id INTEGER PRIMARY KEY, nick TEXT, score INTEGER DEFAULT 0)"
        try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: schema) }
        try queue.read { db throws in
            #expect(
                try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('player')") == [
                    "id", "nick", "score",
                ])
            #expect(try db.fetchOne(String.self, sql: "SELECT name FROM sqlite_master") == "player")
            #expect(try db.fetchOne(String.self, sql: "SELECT nick || score FROM player WHERE id = 1") == "a0")
            #expect(try db.planSchemaChange(to: schema).isEmpty)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRebuiltTableKeepsItsStatementAsWritten(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(x INTEGER CHECK (t.x > 0), y TEXT); CREATE TABLE u(a INTEGER)")
            for x in 1...20 { try db.execute(sql: "INSERT INTO t VALUES (?, 'y')", arguments: [x]) }
        }
        // A CHECK naming its table, then written with odd spacing and a comment; then two
        // tables swapping names (each rebuilt one takes its name in a later step).
        let schemas = [
            "CREATE TABLE t(x INTEGER CHECK (t.x > 0), y TEXT NOT NULL);\nCREATE TABLE u(a INTEGER)",
            "CREATE TABLE t (x  INTEGER CHECK (  t.x > 0 ), y TEXT NOT NULL DEFAULT '' /* kept */);\nCREATE TABLE u(a TEXT)",
        ]
        for schema in schemas {
            try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: schema) }
            #expect(try queue.read { db in try stored(db) } == written(schema), "\(schema)")
        }
        var options = SchemaChangeOptions()
        options.renameTable("t", to: "u")
        options.renameTable("u", to: "t")
        let swapped = "CREATE TABLE u(x INTEGER CHECK (u.x > 0), y TEXT NOT NULL);\nCREATE TABLE t(a REAL)"
        try queue.inDatabase { db in _ = try db.changeSchemaAsPlanned(to: swapped, options: options) }
        try queue.write { db throws in
            #expect(try stored(db) == written(swapped))
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(x) FROM u") == 210)
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO u VALUES (0, 'y')") }
            #expect(try db.fetchOne(String.self, sql: "PRAGMA integrity_check") == "ok")
        }
    }
}
