import Foundation
import SerialDBTestSupport
import Testing

@testable import SerialDB

/// The swap renames the old table aside instead of dropping it under the gate; the queue drops
/// it in chunks once the gate is open. Meanwhile the rows set aside must answer for nothing.
@Suite struct OnlineAsideTableTests {
    private static let v1 = """
        CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE item(id INTEGER PRIMARY KEY, author INTEGER NOT NULL REFERENCES author(id), name TEXT);
        CREATE INDEX item_by_author ON item(author);
        """
    private static let v2 = v1.replacingOccurrences(of: "name TEXT);", with: "name TEXT NOT NULL);")
    private static let rows = 5_000

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: v1)
        migrator.registerMigration("v2", schema: v2)
        return migrator
    }

    private static func seed(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO author(id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        let insert = try db.makeStatement(sql: "INSERT INTO item(id, author, name) VALUES (?, ?, ?)")
        for id in 1...rows { try insert.execute(arguments: [id, id % 3 + 1, "item \(id)"]) }
    }

    private static func setAside(_ db: Database) throws -> [String] {
        try OnlineAsideTable.tables(db)
    }

    @Test func theOldTableIsSetAsideWithoutItsForeignKeysAndDroppedInChunksBetweenOtherWork() async throws {
        let directory = try TemporaryDirectory()
        let statements = Locked<[String]>([])
        var configuration = Configuration()
        configuration.trace = { sql in statements.withLock { $0.append(sql) } }
        let queue = try DatabaseQueue(path: directory.path("aside.sqlite"), configuration: configuration)
        try queue.migrate(Self.migrator, upTo: "v1")
        try await queue.write { db in try Self.seed(db) }
        try await queue.prepareMigration(Self.migrator)
        // Ordinary writes keep coming through the upgrade and the chunks that follow it.
        let writing = Task {
            var id = 100_000
            while !Task.isCancelled {
                id += 1
                let next = id
                do {
                    try await queue.write { db in
                        try db.execute(
                            sql: "INSERT INTO item(id, author, name) VALUES (?, 1, 'during the drop')",
                            arguments: [next])
                    }
                } catch is CancellationError {
                    return
                }
            }
        }
        let upgrade = queue.startMigration(Self.migrator)
        // Queued behind the upgrade, so ahead of the drop's chunks (which rest between them):
        // the old table is set aside, still holding rows of author 3, and deleting that parent
        // must not fail on them.
        let window = try await queue.write { db in
            let aside = try Self.setAside(db)
            let referring = try aside.first.map {
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \($0) WHERE author = 3") ?? 0
            }
            let references = try aside.first.map {
                try db.fetchAll(Row.self, sql: "SELECT * FROM pragma_foreign_key_list(?)", arguments: [$0]).count
            }
            try db.execute(sql: "DELETE FROM item WHERE author = 3")
            try db.execute(sql: "DELETE FROM author WHERE id = 3")
            return (aside, referring, references)
        }
        try await upgrade.wait()
        #expect(window.0 == ["serialdb_old_1"])
        #expect((window.1 ?? 0) > 0)
        #expect(window.2 == 0)
        try await OnlineLadder.waitForTablesSetAside(queue)
        writing.cancel()
        let trace = statements.withLock { $0 }
        let chunks = trace.indices.filter { trace[$0].hasPrefix("DELETE FROM \"serialdb_old_1\"") }
        #expect(chunks.count >= 3, "\(chunks.count) chunks")
        // Each chunk is a transaction of its own, so the work queued meanwhile runs between them.
        for (first, next) in zip(chunks, chunks.dropFirst()) {
            #expect(trace[first..<next].contains { $0.hasPrefix("COMMIT") }, "two chunks in one transaction")
        }
        let written = await writing.result
        #expect(throws: Never.self) { try written.get() }
        let (leftovers, integrity, violations, authors) = try await queue.read { db in
            (
                try OnlineLadder.leftovers(db), try db.fetchAll(String.self, sql: "PRAGMA integrity_check"),
                try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").count,
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM author")
            )
        }
        #expect(leftovers == [])
        #expect(integrity == ["ok"])
        #expect(violations == 0)
        #expect(authors == 2)
    }

    @Test func migratingADatabaseDirectlyDropsTheTableItSetAsideBeforeReturning() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("direct.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.migrate(Self.migrator, upTo: "v1")
        try await queue.write { db in try Self.seed(db) }
        try await queue.prepareMigration(Self.migrator)
        try await queue.close()
        let db = try Database(path: path)
        defer { db.close() }
        try Self.migrator.migrate(db)
        #expect(try Self.migrator.appliedMigrations(db) == ["v1", "v2"])
        #expect(try OnlineLadder.leftovers(db) == [])
        #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") == Self.rows)
    }

    @Test(arguments: [
        (
            "CREATE TABLE t(a INTEGER REFERENCES p(id) ON DELETE SET NULL ON UPDATE NO ACTION NOT NULL, b TEXT)",
            "CREATE TABLE t(a INTEGER  NOT NULL, b TEXT)"
        ),
        (
            "CREATE TABLE t(a, b CONSTRAINT fk REFERENCES \"p q\" MATCH SIMPLE DEFERRABLE INITIALLY DEFERRED "
                + "COLLATE NOCASE, \"references\" TEXT DEFAULT 'REFERENCES x', CONSTRAINT two FOREIGN KEY (a, b) "
                + "REFERENCES p(x, y) ON DELETE CASCADE, CHECK (a > 0), FOREIGN KEY(a) REFERENCES p NOT DEFERRABLE)",
            "CREATE TABLE t(a, b CONSTRAINT fk  COLLATE NOCASE, \"references\" TEXT DEFAULT 'REFERENCES x', "
                + "CHECK (a > 0))"
        ),
        (
            "CREATE TABLE \"é t\"(k TEXT PRIMARY KEY REFERENCES p(k) ON UPDATE CASCADE, v) WITHOUT ROWID",
            "CREATE TABLE \"é t\"(k TEXT PRIMARY KEY , v) WITHOUT ROWID"
        ),
        ("CREATE TABLE t(a INTEGER PRIMARY KEY, b)", "CREATE TABLE t(a INTEGER PRIMARY KEY, b)"),
    ])
    func aDefinitionLosesItsForeignKeysAndNothingElse(sql: String, expected: String) throws {
        let stripped = OnlineAsideTable.withoutForeignKeys(sql)
        #expect(stripped == expected)
        // SQLite takes it, with every column as it was and no foreign key.
        let described = try [sql, stripped].map { definition in
            let db = try Database(path: ":memory:")
            defer { db.close() }
            try db.execute(sql: definition)
            let table = try db.fetchOne(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") ?? ""
            let columns = try db.fetchAll(Row.self, sql: "SELECT * FROM pragma_table_xinfo(?)", arguments: [table])
            let keys = try db.fetchAll(Row.self, sql: "SELECT * FROM pragma_foreign_key_list(?)", arguments: [table])
            return (columns.map { "\($0)" }, keys.count)
        }
        #expect(described[1].0 == described[0].0)
        #expect(described[1].1 == 0)
        #expect((described[0].1 > 0) == (sql != expected))
    }

    /// A chunk deletes rows by the rowid, even when a column takes the name `_rowid_` (and holds
    /// NULLs, which `IN` never matches), and by the primary key of a WITHOUT ROWID table.
    @Test(arguments: [
        "CREATE TABLE serialdb_old_1(\"_rowid_\" TEXT, n INTEGER, v TEXT)",
        "CREATE TABLE serialdb_old_1(a TEXT, \"b é\" INTEGER, v TEXT, PRIMARY KEY (a, \"b é\")) WITHOUT ROWID",
    ])
    func aChunkDeletesItsRowsWhateverTheTableIsKeyedBy(definition: String) throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("chunks.sqlite"))
        let remaining = try queue.write { db in
            try db.execute(sql: definition)
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
                    INSERT INTO serialdb_old_1 SELECT CASE WHEN i > 0 AND ?1 THEN NULL ELSE 'k' || (i % 7) END,
                        i, 'row ' || i FROM n
                    """, arguments: [definition.contains("_rowid_")])
            return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_old_1")
        }
        #expect(remaining == 5_000)
        var counts: [Int] = []
        while try queue.inDatabase({ db in try OnlineAsideTable.dropChunk(rows: 1_000, db) }) {
            counts.append(
                try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_old_1") ?? -1 })
        }
        #expect(counts == [4_000, 3_000, 2_000, 1_000, 0])
        #expect(try queue.read { db in try OnlineAsideTable.tables(db) }.isEmpty)
    }
}
