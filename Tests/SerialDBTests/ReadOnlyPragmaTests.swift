import SerialDB
import SerialDBTestSupport
import Testing

/// Inside `read`, a pragma may be queried but not assigned.
@Suite struct ReadOnlyPragmaTests {
    @Test(arguments: DatabaseKind.allCases)
    func pragmaQueriesWithoutAValueRunInARead(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT)") }
        let (mode, schemaMode, foreignKeys, columns) = try queue.read { db in
            (
                try db.fetchOne(String.self, sql: "PRAGMA journal_mode"),
                try db.fetchOne(String.self, sql: "  pragma main.journal_mode;"),
                try db.fetchOne(Bool.self, sql: "PRAGMA foreign_keys"),
                try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('player')")
                    + db.fetchAll(Row.self, sql: "PRAGMA table_info(player)").map { try $0.decode(column: "name") }
            )
        }
        #expect(mode == (kind == .file ? "wal" : "memory"))
        #expect(schemaMode == mode)
        #expect(foreignKeys == true)
        #expect(columns == ["id", "name", "id", "name"])
    }

    @Test(arguments: [
        "PRAGMA journal_mode = DELETE", "PRAGMA journal_mode(DELETE)", "PRAGMA foreign_keys = OFF",
        "PRAGMA main.cache_size = 10", "/* setting */ PRAGMA user_version = 7", "PRAGMA query_only(1)",
        "PRAGMA wal_checkpoint", "PRAGMA incremental_vacuum",
    ])
    func pragmasThatAssignOrActStayRefusedInARead(sql: String) throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseKind.file.makeQueue(in: directory)
        let error = #expect(throws: SerialDBError.self) { try queue.read { db in try db.execute(sql: sql) } }
        #expect(error?.code == .writeInReadOnlyBlock)
        #expect(error?.message.contains("pragma") == true)
        #expect(error?.message.contains("writes") == false)
        let state = try queue.inDatabase { db in
            (
                try db.fetchOne(String.self, sql: "PRAGMA journal_mode"),
                try db.fetchOne(Bool.self, sql: "PRAGMA foreign_keys"),
                try db.fetchOne(Int.self, sql: "PRAGMA user_version")
            )
        }
        #expect(state.0 == "wal")
        #expect(state.1 == true)
        #expect(state.2 == 0)
    }

    @Test func otherWritesInAReadAreStillRefusedAsWrites() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY)") }
        let error = #expect(throws: SerialDBError.self) {
            try queue.read { db in try db.execute(sql: "INSERT INTO player(id) VALUES (1)") }
        }
        #expect(error?.code == .writeInReadOnlyBlock)
        #expect(error?.message.contains("writes") == true)
    }
}
