import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// `prepareMigration` copies the tables a declarative step rebuilds while the queue keeps
/// serving; `migrate` then only swaps the copy in.
@Suite struct OnlineSchemaChangeTests {
    /// A queue at step 1 with `rows` rows.
    private func seededQueue(_ kind: DatabaseKind, _ directory: TemporaryDirectory, rows: Int) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(OnlineLadder.migrator(), upTo: OnlineLadder.identifiers[0])
        try queue.write { db in try OnlineLadder.seed(db, count: rows) }
        return queue
    }

    @Test(arguments: DatabaseKind.allCases)
    func rowsChangedBeforeDuringAndAfterTheirChunkEndInTheNewTableWithTheirLatestValues(kind: DatabaseKind)
        async throws
    {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(kind, directory, rows: 1_000)
        // Before the copy starts.
        try await queue.write { db in
            try db.execute(sql: "UPDATE item SET name = 'before' WHERE id = 500")
            try db.execute(sql: "DELETE FROM item WHERE id = 501")
        }
        let chunks = Locked(0)
        let prepared = try await queue.prepareMigration(OnlineLadder.migrator(), rowsPerChunk: 100) { _ in
            let chunk = chunks.withLock { count -> Int in
                count += 1
                return count
            }
            guard chunk == 3 else { return }
            // Between chunks 3 and 4: rows 1...300 are copied, 301... are not.
            try? queue.write { db in
                try db.execute(sql: "UPDATE item SET name = 'behind', score = 7 WHERE id = 10")
                try db.execute(sql: "DELETE FROM item WHERE id = 11")
                try db.execute(sql: "UPDATE item SET name = 'ahead' WHERE id = 900")
                try db.execute(sql: "DELETE FROM item WHERE id = 901")
                try db.execute(sql: "UPDATE item SET id = 2000 WHERE id = 12")
                try db.execute(sql: "INSERT INTO item(id, name, score) VALUES (1500, 'new', 1)")
            }
        }
        #expect(prepared.migration == OnlineLadder.identifiers[1])
        #expect(prepared.preparedTables == ["item"])
        #expect(prepared.refusedRowCount == 0)
        #expect(chunks.withLock { $0 } >= 10)
        // After the copy caught up, before the swap.
        try await queue.write { db in
            try db.execute(sql: "UPDATE item SET score = 42 WHERE id = 20")
            try db.execute(sql: "INSERT INTO item(name, score) VALUES ('after', 3)")
        }
        let expected = try await queue.read { db in try OnlineLadder.rows(db) }
        let reports = PreparedCopyReports()
        try await queue.migrate(OnlineLadder.migrator(), progress: reports.progress)
        // The swap proved the copy exact and used it: nothing was rebuilt under the gate.
        #expect(reports.all == [PreparedCopyOutcome(tables: ["item"])])
        try await OnlineLadder.waitForTablesSetAside(queue)
        try await queue.read { db in
            #expect(try OnlineLadder.rows(db) == expected)
            #expect(try OnlineLadder.leftovers(db) == [])
            #expect(try OnlineLadder.migrator().appliedMigrations(db) == OnlineLadder.identifiers)
            let index = try db.fetchOne(
                String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'item_by_name'")
            #expect(index == "CREATE INDEX item_by_name ON item(name)")
            #expect(try db.fetchAll(String.self, sql: "PRAGMA integrity_check") == ["ok"])
            let plan = try db.fetchAll(
                Row.self, sql: "EXPLAIN QUERY PLAN SELECT id FROM item WHERE name = 'ahead'"
            ).map { try $0.decode(String.self, at: 3) }
            #expect(plan.contains { $0.contains("item_by_name") }, "\(plan)")
        }
        // The new definition is enforced.
        await #expect(throws: DatabaseError.self) {
            try await queue.write { db in try db.execute(sql: "INSERT INTO item(name, score) VALUES (NULL, 1)") }
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRowTheNewDefinitionRefusesDoesNotFailTheWriteAndTheSwapRefusesNamingIt(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(kind, directory, rows: 300)
        let wrote = Locked(false)
        let prepared = try await queue.prepareMigration(OnlineLadder.migrator(), rowsPerChunk: 50) { _ in
            guard !wrote.withLock({ $0 }) else { return }
            wrote.withLock { $0 = true }
            // Valid in the old table, refused by the new one: NULL name, negative score (through
            // an OR REPLACE, whose conflict clause overrides the mirror's), and one row ahead of
            // the copy made invalid.
            try? queue.write { db in
                try db.execute(sql: "INSERT INTO item(id, name, score) VALUES (1001, NULL, 1)")
                try db.execute(sql: "INSERT OR REPLACE INTO item(id, name, score) VALUES (1002, 'x', -5)")
                try db.execute(sql: "UPDATE item SET score = NULL WHERE id = 250")
            }
        }
        #expect(prepared.refusedRowCount == 3)
        #expect(prepared.refusedRows["item"] == ["250", "1001", "1002"])
        var refusal: (any Error)?
        do {
            try await queue.migrate(OnlineLadder.migrator())
        } catch {
            refusal = error
        }
        let message = "\(refusal.map { "\($0)" } ?? "no error")"
        #expect(message.contains("3 row(s)") && message.contains("1001") && message.contains("250"), "\(message)")
        // Nothing lost; the old table keeps serving once a migration succeeds.
        try queue.migrate(OnlineLadder.migrator(), upTo: OnlineLadder.identifiers[0])
        try await queue.write { db in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") == 302)
            try db.execute(sql: "UPDATE item SET name = 'fixed' WHERE name IS NULL")
            try db.execute(sql: "UPDATE item SET score = 0 WHERE score IS NULL OR score < 0")
        }
        let expected = try await queue.read { db in try OnlineLadder.rows(db) }
        let reports = PreparedCopyReports()
        try await queue.migrate(OnlineLadder.migrator(), progress: reports.progress)
        // The copy stayed in step through the refusal and the fixes: it is the one swapped in.
        #expect(reports.all == [PreparedCopyOutcome(tables: ["item"])])
        try await OnlineLadder.waitForTablesSetAside(queue)
        let after = try await queue.read { db in (try OnlineLadder.rows(db), try OnlineLadder.leftovers(db)) }
        #expect(after.0.count == 302)
        #expect(after.0 == expected)
        #expect(after.1 == [])
    }

    @Test(arguments: DatabaseKind.allCases)
    func cancellingThePreparationRemovesTheCopyAndItsTriggers(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(kind, directory, rows: 2_000)
        let started = Locked(0)
        let task = Task {
            try await queue.prepareMigration(OnlineLadder.migrator(), rowsPerChunk: 20) { _ in
                started.withLock { $0 += 1 }
            }
        }
        try await waitUntil { started.withLock { $0 } >= 3 }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        try await queue.write { db in
            #expect(try OnlineLadder.leftovers(db) == [])
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") == 2_000)
            try db.execute(sql: "INSERT INTO item(name, score) VALUES (NULL, NULL)")
            try db.execute(sql: "DELETE FROM item WHERE name IS NULL")
        }
        let reports = PreparedCopyReports()
        try await queue.migrate(OnlineLadder.migrator(), progress: reports.progress)
        #expect(reports.all == [])
        let count = try await queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item") }
        #expect(count == 2_000)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aCopyAWriteTheTriggersMissedLeftWrongIsNotSwappedInAndTheUpgradeSaysSo(kind: DatabaseKind) async throws {
        let v1 = "CREATE TABLE item(id INTEGER PRIMARY KEY, code TEXT UNIQUE, v TEXT, n REAL);"
        let v2 = "CREATE TABLE item(id INTEGER PRIMARY KEY, code TEXT UNIQUE, v TEXT NOT NULL, n REAL);"
        let migrator = {
            var migrator = DatabaseMigrator()
            migrator.registerMigration("v1", schema: v1)
            migrator.registerMigration("v2", schema: v2)
            return migrator
        }()
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(migrator, upTo: "v1")
        try await queue.write { db in
            for id in 1...300 {
                try db.execute(
                    sql: "INSERT INTO item(id, code, v, n) VALUES (?, ?, ?, ?)",
                    arguments: [id, "code-\(id)", "v\(id)", Double(id) / 4])
            }
        }
        let once = Locked(false)
        try await queue.prepareMigration(migrator, rowsPerChunk: 50) { _ in
            guard !once.withLock({ $0 }) else { return }
            once.withLock { $0 = true }
            // After the first chunk (rows 1...50 copied): the REPLACE deletes row 7 through the
            // UNIQUE conflict on `code`, which fires no DELETE trigger (recursive_triggers off).
            try? queue.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO item(id, code, v, n) VALUES (1000, 'code-7', 'new', 0.5)")
            }
        }
        let expected = try await queue.read { db in try db.contents(of: "item") }
        #expect(expected.count == 300)
        let reports = PreparedCopyReports()
        try await queue.migrate(migrator, progress: reports.progress)
        // The swap saw row 7 only in the copy, did not use it, said so, and rebuilt the table.
        let outcome = reports.all
        #expect(outcome.count == 1)
        #expect(outcome.first?.tables == ["item"])
        #expect(outcome.first?.wasUsed == false)
        let reason = outcome.first?.notUsedBecause ?? ""
        #expect(reason.contains("rows only in the copy: 7"), "\(reason)")
        let (rows, leftovers, steps) = try await queue.read { db in
            (try db.contents(of: "item"), try OnlineLadder.leftovers(db), try migrator.appliedMigrations(db))
        }
        #expect(rows == expected)
        #expect(leftovers == [])
        #expect(steps == ["v1", "v2"])
    }

    @Test func migrateWithoutAPreparedCopyRebuildsAsBefore() throws {
        let directory = try TemporaryDirectory()
        let queue = try seededQueue(.file, directory, rows: 100)
        let reports = PreparedCopyReports()
        try queue.migrate(OnlineLadder.migrator(), progress: reports.progress)
        #expect(reports.all == [])
        let after = try queue.read { db in
            (try db.fetchOne(Int.self, sql: "SELECT count(*) FROM item"), try OnlineLadder.leftovers(db))
        }
        #expect(after.0 == 100)
        #expect(after.1 == [])
    }
}
