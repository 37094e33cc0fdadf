import CSQLite
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Definitions that used to fail half-way, give wrong results or refuse wrongly (issue 17,
/// items 6, 8 to 12, 15, 16 and 18), each with real rows.
@Suite struct SchemaChangeEdgeCaseTests {
    private func seededPlayers(_ kind: DatabaseKind, in directory: TemporaryDirectory, rows: Int = 100) throws
        -> DatabaseQueue
    {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in try Player.createTable(db, rows: rows) }
        return queue
    }

    private static let player =
        "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0"

    @Test(arguments: DatabaseKind.allCases)
    func anAppendedColumnWithAnExpressionDefaultTakesTheRebuildPath(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededPlayers(kind, in: directory)
        let plan = try queue.inDatabase { db in
            try db.changeSchemaAsPlanned(
                to: Self.player + ", twice INTEGER DEFAULT (1+1), added TEXT DEFAULT (datetime('now')))")
        }
        #expect(plan.rebuiltTables == ["player"])
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player WHERE twice = 2") == 100)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player WHERE added LIKE '2%'") == 100)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aFillValueIsWrittenEvenWhereAlterTableCouldAddTheColumn(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededPlayers(kind, in: directory)
        var options = SchemaChangeOptions()
        options.fill(column: "team", inTable: "player", with: "red")
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: Self.player + ", team TEXT)", options: options)
        }
        #expect(
            try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player WHERE team = 'red'") }
                == 100)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCheckThatExistingRowsFailOnAnAddedColumnIsARefusal(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededPlayers(kind, in: directory)
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        var code: SerialDBError.Code?
        do {
            try queue.inDatabase { db in
                _ = try db.changeSchemaAsPlanned(to: Self.player + ", level INTEGER DEFAULT 0 CHECK (level > 0))")
            }
        } catch let error as SerialDBError {
            code = error.code
        }
        #expect(code == .schemaChangeRefused)
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aStoredGeneratedColumnTurnedPlainKeepsItsValues(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE line(qty INTEGER, price INTEGER, total INTEGER AS (qty * price) STORED)")
            for index in 1...100 {
                try db.execute(sql: "INSERT INTO line(qty, price) VALUES (?, ?)", arguments: [index, 3])
            }
        }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE line(qty INTEGER, price INTEGER, total INTEGER)")
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM line WHERE total IS NULL") == 0)
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(total) FROM line") == 15_150)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aUserColumnNamedRowidDoesNotRenumberTheRows(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE legacy(rowid TEXT, body TEXT)")
            for index in 1...100 {
                try db.execute(
                    sql: "INSERT INTO legacy(_rowid_, rowid, body) VALUES (?, ?, ?)",
                    arguments: [index * 10, "user-\(index)", "b\(index)"])
            }
        }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE legacy(rowid TEXT, body TEXT NOT NULL)")
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(String.self, sql: "SELECT body FROM legacy WHERE _rowid_ = 70") == "b7")
            #expect(try db.fetchOne(String.self, sql: "SELECT rowid FROM legacy WHERE _rowid_ = 70") == "user-7")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func integerPrimaryKeyDescIsNotARowidAliasAndKeepsTheRowids(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE ranked(id INTEGER PRIMARY KEY DESC, name TEXT)")
            for index in 1...100 {
                try db.execute(
                    sql: "INSERT INTO ranked(rowid, id, name) VALUES (?, ?, ?)",
                    arguments: [index * 3, 1000 - index, "r\(index)"])
            }
        }
        #expect(try queue.read { db in try db.schema().table(named: "ranked")?.rowIDAlias } == nil)
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE ranked(id INTEGER PRIMARY KEY DESC, name TEXT NOT NULL)")
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(String.self, sql: "SELECT name FROM ranked WHERE rowid = 21") == "r7")
            #expect(try db.fetchOne(Int.self, sql: "SELECT id FROM ranked WHERE rowid = 21") == 993)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anUnquotedNameWithANonLetterCharacterCanBeRebuilt(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE items☕(id INTEGER PRIMARY KEY, cups☕ INTEGER)")
            for id in 1...100 { try db.execute(sql: "INSERT INTO items☕ VALUES (?, ?)", arguments: [id, id]) }
        }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE items☕(id INTEGER PRIMARY KEY, cups☕ INTEGER NOT NULL)")
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(cups☕) FROM items☕") == 5050)
            #expect(
                try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'items☕'")?.hasSuffix(
                    "(id INTEGER PRIMARY KEY, cups☕ INTEGER NOT NULL)") == true)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCheckNamingItsOwnTableCanBeRebuilt(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(x INTEGER CHECK (t.x > 0), y TEXT)")
            for x in 1...100 { try db.execute(sql: "INSERT INTO t VALUES (?, 'y')", arguments: [x]) }
        }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(to: "CREATE TABLE t(x INTEGER CHECK (t.x > 0), y TEXT NOT NULL)")
        }
        try queue.write { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT sum(x) FROM t") == 5050)
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO t VALUES (0, 'y')") }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func theNewSchemaIsParsedWithTheApplicationsCollations(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            // A collation the application registers on every connection: byte order, reversed.
            let code = sqlite3_create_collation_v2(
                db.handle, "reversed", SQLITE_UTF8, nil,
                { _, leftCount, left, rightCount, right in
                    let count = Int(min(leftCount, rightCount))
                    let order = count == 0 ? 0 : memcmp(left!, right!, count)
                    return order != 0 ? -order : rightCount - leftCount
                }, nil)
            guard code == SQLITE_OK else { throw SerialDBError(.invalidArguments, "collation not registered") }
        }
        let queue = try kind.makeQueue(in: directory, configuration: configuration)
        try queue.write { db in try Player.createTable(db, rows: 10) }
        try queue.inDatabase { db in
            _ = try db.changeSchemaAsPlanned(
                to: """
                    CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE reversed,
                        score INTEGER NOT NULL DEFAULT 0);
                    """)
        }
        #expect(
            try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM player ORDER BY name LIMIT 2") }
                == ["player-9", "player-8"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSingleQuotedColumnNameMatchesTheSameNameDoubleQuoted(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, 'my col' TEXT)")
            try db.execute(sql: "INSERT INTO t VALUES (1, 'a')")
        }
        let plan = try queue.inDatabase { db in
            try db.planSchemaChange(to: "CREATE TABLE t(id INTEGER PRIMARY KEY, \"my col\" TEXT)")
        }
        #expect(plan.isEmpty, "\(plan.sql)")
    }

    @Test(arguments: DatabaseKind.allCases)
    func applicationNamesInSerialDBsNamespaceAreRefused(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededPlayers(kind, in: directory)
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        var error: SerialDBError?
        do {
            try queue.inDatabase { db in
                _ = try db.changeSchemaAsPlanned(
                    to: Self.player + "); CREATE TABLE serialdb_settings(key TEXT PRIMARY KEY, value)")
            }
        } catch let caught as SerialDBError {
            error = caught
        }
        #expect(error?.code == .schemaChangeRefused)
        #expect(error?.message.contains("\"serialdb_settings\"") == true)
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
    }
}
