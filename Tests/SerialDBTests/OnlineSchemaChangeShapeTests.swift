import Dispatch
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The online copy on tables of every shape: with triggers, views and foreign keys in both
/// directions, WITHOUT ROWID, AUTOINCREMENT; and through a pool whose readers keep reading.
@Suite struct OnlineSchemaChangeShapeTests {
    private static let linkedV1 = """
        CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE item(id INTEGER PRIMARY KEY, author INTEGER REFERENCES author(id), name TEXT);
        CREATE TABLE tag(id INTEGER PRIMARY KEY, item INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE, label TEXT);
        CREATE TABLE log(id INTEGER PRIMARY KEY, what TEXT);
        CREATE INDEX item_by_author ON item(author);
        CREATE VIEW item_names AS SELECT id, name FROM item;
        CREATE TRIGGER item_logged AFTER INSERT ON item BEGIN INSERT INTO log(what) VALUES ('insert ' || NEW.id); END;
        """
    private static let linkedV2 = linkedV1.replacingOccurrences(of: "name TEXT);", with: "name TEXT NOT NULL);")

    private static func migrator(_ v1: String, _ v2: String) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: v1)
        migrator.registerMigration("v2", schema: v2)
        return migrator
    }

    private static func count(_ queue: DatabaseQueue, _ sql: String) throws -> Int {
        try queue.read { db in try db.fetchOne(Int.self, sql: sql) ?? -1 }
    }

    /// Every row of every table, every column.
    private static func contents(_ writer: some DatabaseWriter, _ tables: [String]) throws -> [[String]] {
        try writer.read { db in try tables.map { try db.contents(of: $0) } }
    }

    /// Migrates, expecting the prepared copy of `tables` to be the one swapped in.
    private static func migrateUsingTheCopy(
        _ writer: some DatabaseWriter, _ migrator: DatabaseMigrator, of tables: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reports = PreparedCopyReports()
        try writer.migrate(migrator, progress: reports.progress)
        #expect(reports.all == [PreparedCopyOutcome(tables: tables)], sourceLocation: sourceLocation)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTableWithTriggersViewsAndForeignKeysBothWaysIsSwappedWithAllOfThem(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let migrator = Self.migrator(Self.linkedV1, Self.linkedV2)
        try queue.migrate(migrator, upTo: "v1")
        try blocking {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO author(id, name) VALUES (1, 'a'), (2, 'b')")
                for id in 1...400 {
                    try db.execute(
                        sql: "INSERT INTO item(id, author, name) VALUES (?, ?, ?)",
                        arguments: [id, id % 2 + 1, "i\(id)"])
                    try db.execute(sql: "INSERT INTO tag(item, label) VALUES (?, 't')", arguments: [id])
                }
            }
        }
        let once = Locked(false)
        try await queue.prepareMigration(migrator, rowsPerChunk: 50) { _ in
            guard !once.withLock({ $0 }) else { return }
            once.withLock { $0 = true }
            try? queue.write { db in
                try db.execute(sql: "INSERT INTO item(id, author, name) VALUES (401, 1, 'during')")
                try db.execute(sql: "DELETE FROM item WHERE id IN (5, 399)")  // their tags go with them
            }
        }
        let tables = ["author", "item", "tag", "log"]
        let expected = try blocking { try Self.contents(queue, tables) }
        try blocking { try Self.migrateUsingTheCopy(queue, migrator, of: ["item"]) }
        #expect(try blocking { try Self.contents(queue, tables) } == expected)
        #expect(try Self.count(queue, "SELECT count(*) FROM item") == 399)
        #expect(try Self.count(queue, "SELECT count(*) FROM tag") == 398)
        #expect(try Self.count(queue, "SELECT count(*) FROM item_names") == 399)
        try blocking {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO item(id, author, name) VALUES (402, 2, 'after')")
                try db.execute(sql: "DELETE FROM item WHERE id = 1")
            }
        }
        // The app's trigger fired for the 400 seed rows and before, during and after the copy, the child's cascade reaches
        // the new table, and the new table's own key is enforced.
        #expect(try Self.count(queue, "SELECT count(*) FROM log") == 402)
        #expect(try Self.count(queue, "SELECT count(*) FROM tag WHERE item = 1") == 0)
        #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.execute(sql: "INSERT INTO item(author, name) VALUES (99, 'orphan')") }
        }
        let violations = try blocking {
            try queue.read { db in try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check") }
        }
        #expect(violations.isEmpty)
        try await OnlineLadder.waitForTablesSetAside(queue)
        let leftovers = try blocking { try queue.read { db in try OnlineLadder.leftovers(db) } }
        #expect(leftovers == [])
    }

    @Test func aRowBreakingANewForeignKeyDuringTheCopyIsWrittenAndTheSwapRefusesIt() async throws {
        let v1 = """
            CREATE TABLE author(id INTEGER PRIMARY KEY);
            CREATE TABLE item(id INTEGER PRIMARY KEY, author INTEGER);
            """
        let v2 = """
            CREATE TABLE author(id INTEGER PRIMARY KEY);
            CREATE TABLE item(id INTEGER PRIMARY KEY, author INTEGER REFERENCES author(id));
            """
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("fk.sqlite"))
        let migrator = Self.migrator(v1, v2)
        try queue.migrate(migrator, upTo: "v1")
        try blocking {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO author(id) VALUES (1)")
                for id in 1...200 { try db.execute(sql: "INSERT INTO item(id, author) VALUES (?, 1)", arguments: [id]) }
            }
        }
        let once = Locked(false)
        let prepared = try await queue.prepareMigration(migrator, rowsPerChunk: 50) { _ in
            guard !once.withLock({ $0 }) else { return }
            once.withLock { $0 = true }
            try? queue.write { db in try db.execute(sql: "INSERT INTO item(id, author) VALUES (300, 42)") }
        }
        #expect(prepared.refusedRows["item"] == ["300"])
        #expect(throws: SerialDBError.self) { try queue.migrate(migrator) }
        try queue.migrate(migrator, upTo: "v1")
        try blocking { try queue.write { db in try db.execute(sql: "INSERT INTO author(id) VALUES (42)") } }
        let expected = try blocking { try Self.contents(queue, ["author", "item"]) }
        try blocking { try Self.migrateUsingTheCopy(queue, migrator, of: ["item"]) }
        #expect(try blocking { try Self.contents(queue, ["author", "item"]) } == expected)
        #expect(try Self.count(queue, "SELECT count(*) FROM item") == 201)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aWithoutRowIDTableIsCopiedByItsPrimaryKey(kind: DatabaseKind) async throws {
        let v1 = "CREATE TABLE pair(a TEXT, b INTEGER, v TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;"
        let v2 =
            "CREATE TABLE pair(a TEXT, b INTEGER, v TEXT NOT NULL CHECK (v <> ''), PRIMARY KEY (a, b)) WITHOUT ROWID;"
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let migrator = Self.migrator(v1, v2)
        try queue.migrate(migrator, upTo: "v1")
        try blocking {
            try queue.write { db in
                for a in ["x", "y", "z"] {
                    for b in 1...100 {
                        try db.execute(sql: "INSERT INTO pair VALUES (?, ?, ?)", arguments: [a, b, "\(a)\(b)"])
                    }
                }
            }
        }
        let chunks = Locked(0)
        try await queue.prepareMigration(migrator, rowsPerChunk: 40) { _ in
            guard
                chunks.withLock({ count -> Int in
                    count += 1
                    return count
                }) == 3
            else { return }
            try? queue.write { db in
                try db.execute(sql: "UPDATE pair SET v = 'behind' WHERE a = 'x' AND b = 5")
                try db.execute(sql: "UPDATE pair SET v = 'ahead' WHERE a = 'z' AND b = 50")
                try db.execute(sql: "UPDATE pair SET b = 1000 WHERE a = 'y' AND b = 99")
                try db.execute(sql: "DELETE FROM pair WHERE a = 'x' AND b = 6")
                try db.execute(sql: "INSERT INTO pair VALUES ('w', 1, 'new')")
            }
        }
        let expected = try blocking {
            try queue.read { db in
                try db.fetchAll(String.self, sql: "SELECT a || b || v FROM pair ORDER BY a, b")
            }
        }
        try blocking { try Self.migrateUsingTheCopy(queue, migrator, of: ["pair"]) }
        let rows = try blocking {
            try queue.read { db in
                try db.fetchAll(String.self, sql: "SELECT a || b || v FROM pair ORDER BY a, b")
            }
        }
        #expect(rows == expected)
        #expect(rows.count == 300)
        #expect(rows.contains("x5behind") && rows.contains("z50ahead") && rows.contains("y1000y99"))
    }

    @Test(arguments: DatabaseKind.allCases)
    func anAutoincrementTableNeverReusesAnIDAfterTheSwap(kind: DatabaseKind) async throws {
        let v1 = "CREATE TABLE entry(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT);"
        let v2 = "CREATE TABLE entry(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL);"
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let migrator = Self.migrator(v1, v2)
        try queue.migrate(migrator, upTo: "v1")
        try blocking {
            try queue.write { db in
                for _ in 1...300 { try db.execute(sql: "INSERT INTO entry(v) VALUES ('x')") }
                try db.execute(sql: "DELETE FROM entry WHERE id > 290")
            }
        }
        let once = Locked(false)
        try await queue.prepareMigration(migrator, rowsPerChunk: 50) { _ in
            guard !once.withLock({ $0 }) else { return }
            once.withLock { $0 = true }
            // Takes id 301 in the live table, then frees it again.
            try? queue.write { db in
                try db.execute(sql: "INSERT INTO entry(v) VALUES ('during')")
                try db.execute(sql: "DELETE FROM entry WHERE v = 'during'")
            }
        }
        let expected = try blocking { try Self.contents(queue, ["entry"]) }
        try blocking { try Self.migrateUsingTheCopy(queue, migrator, of: ["entry"]) }
        #expect(try blocking { try Self.contents(queue, ["entry"]) } == expected)
        let id = try blocking {
            try queue.write { db -> Int64 in
                try db.execute(sql: "INSERT INTO entry(v) VALUES ('after')")
                return db.lastInsertedRowID
            }
        }
        #expect(id == 302)
        #expect(try Self.count(queue, "SELECT count(*) FROM entry") == 291)
    }

    @Test func poolReadersKeepReadingTheOldTableDuringTheCopy() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("pool.sqlite")
        let pool = try DatabasePool(path: path)
        try pool.migrate(OnlineLadder.migrator(), upTo: OnlineLadder.identifiers[0])
        try blocking { try pool.write { db in try OnlineLadder.seed(db, count: 3_000) } }
        let stop = Locked(false)
        let seen = Locked<[String]>([])
        let readers = (0..<2).map { _ in
            Thread.detachNewThreadWithSemaphore {
                while !stop.withLock({ $0 }) {
                    do {
                        let (rows, steps) = try pool.read { db in
                            (
                                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") ?? 0,
                                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations") ?? 0
                            )
                        }
                        seen.withLock { $0.append("\(steps):\(rows)") }
                    } catch {
                        seen.withLock { $0.append("error: \(error)") }
                    }
                    // Not a spin: two readers at full speed would starve the tests beside this one.
                    Thread.sleep(forTimeInterval: 0.001)
                }
            }
        }
        try await pool.prepareMigration(OnlineLadder.migrator(), rowsPerChunk: 100)
        let duringCopy = seen.withLock { $0 }
        let expected = try blocking { try Self.contents(pool, ["item"]) }
        try blocking { try Self.migrateUsingTheCopy(pool, OnlineLadder.migrator(), of: ["item"]) }
        #expect(try blocking { try Self.contents(pool, ["item"]) } == expected)
        let deadline = Date().addingTimeInterval(60)
        blocking {
            while seen.withLock({ $0.last }) != "2:3000" && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        }
        stop.withLock { $0 = true }
        for reader in readers { #expect(reader.wait(seconds: 60)) }
        #expect(!duringCopy.isEmpty)
        #expect(duringCopy.allSatisfy { $0 == "1:3000" }, "\(Set(duringCopy))")
        #expect(seen.withLock { $0 }.allSatisfy { $0 == "1:3000" || $0 == "2:3000" })
    }
}

extension Thread {
    /// Runs `body` on a new thread; the semaphore is signalled when it returns.
    fileprivate static func detachNewThreadWithSemaphore(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done
    }
}
