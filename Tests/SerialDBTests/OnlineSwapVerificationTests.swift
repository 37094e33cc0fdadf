import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The swap proves a prepared copy holds the live keys by the changes recorded since the
/// preparation checked them and the row counts, without comparing every key under the gate.
@Suite struct OnlineSwapVerificationTests {
    @Test(arguments: DatabaseKind.allCases)
    func theSwapChecksOnlyTheKeysChangedSinceThePreparationAndStillSwapsExactRows(kind: DatabaseKind) async throws {
        let directory = try TemporaryDirectory()
        let tracing = Locked(false)
        let statements = Locked<[String]>([])
        var configuration = Configuration()
        configuration.trace = { sql in
            if tracing.withLock({ $0 }) { statements.withLock { $0.append(sql) } }
        }
        let queue = try kind.makeQueue(in: directory, configuration: configuration)
        try queue.migrate(OnlineLadder.migrator(), upTo: OnlineLadder.identifiers[0])
        try await queue.write { db in try OnlineLadder.seed(db, count: 3_000) }
        let chunks = Locked(0)
        try await queue.prepareMigration(OnlineLadder.migrator(), rowsPerChunk: 500) { _ in
            let chunk = chunks.withLock { count -> Int in
                count += 1
                return count
            }
            guard chunk == 2 else { return }
            // Behind the copy and ahead of it: a key moved both ways, deletes, inserts.
            try? queue.write { db in
                try db.execute(sql: "UPDATE item SET id = 5000 WHERE id = 10")
                try db.execute(sql: "UPDATE item SET id = 9000 WHERE id = 2500")
                try db.execute(sql: "DELETE FROM item WHERE id IN (20, 2600)")
                try db.execute(sql: "INSERT INTO item(id, name, score) VALUES (6000, 'new', 1)")
            }
        }
        // After the preparation: recorded for the swap to check.
        try await queue.write { db in
            try db.execute(sql: "UPDATE item SET id = 7000, name = 'moved' WHERE id = 30")
            try db.execute(sql: "DELETE FROM item WHERE id = 40")
            try db.execute(sql: "INSERT INTO item(name, score) VALUES ('after', 2)")
        }
        let expected = try await queue.read { db in try OnlineLadder.rows(db) }
        tracing.withLock { $0 = true }
        let reports = PreparedCopyReports()
        try await queue.migrate(OnlineLadder.migrator(), progress: reports.progress)
        tracing.withLock { $0 = false }
        #expect(reports.all == [PreparedCopyOutcome(tables: ["item"])])
        // No statement of the swap joined the whole live table with the copy.
        let compared = statements.withLock { $0 }.filter { $0.contains("FROM \"item\" JOIN \"serialdb_new_item\"") }
        #expect(compared.isEmpty, "\(compared)")
        try await OnlineLadder.waitForTablesSetAside(queue)
        let (rows, leftovers) = try await queue.read { db in (try OnlineLadder.rows(db), try OnlineLadder.leftovers(db))
        }
        #expect(rows == expected)
        #expect(rows.count == 2_999)
        #expect(leftovers == [])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRowDeletedWithoutATriggerAfterThePreparationIsCaughtByTheRowCounts(kind: DatabaseKind) async throws {
        // The new definition drops the UNIQUE, so the copy takes the REPLACE's row: only the
        // count tells that the row it deleted is still in the copy.
        let v1 = "CREATE TABLE item(id INTEGER PRIMARY KEY, code TEXT UNIQUE, v TEXT);"
        let v2 = "CREATE TABLE item(id INTEGER PRIMARY KEY, code TEXT, v TEXT NOT NULL);"
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", schema: v1)
        migrator.registerMigration("v2", schema: v2)
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(migrator, upTo: "v1")
        try await queue.write { db in
            for id in 1...300 {
                try db.execute(
                    sql: "INSERT INTO item(id, code, v) VALUES (?, ?, ?)", arguments: [id, "code-\(id)", "v\(id)"])
            }
        }
        try await queue.prepareMigration(migrator, rowsPerChunk: 50)
        // Deletes row 7 through the UNIQUE conflict, which fires no DELETE trigger
        // (recursive_triggers off); the INSERT is mirrored and recorded.
        try await queue.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO item(id, code, v) VALUES (1000, 'code-7', 'new')")
        }
        let expected = try await queue.read { db in try db.contents(of: "item") }
        let reports = PreparedCopyReports()
        try await queue.migrate(migrator, progress: reports.progress)
        let outcome = reports.all
        #expect(outcome.count == 1)
        #expect(outcome.first?.wasUsed == false)
        let reason = outcome.first?.notUsedBecause ?? ""
        #expect(reason.contains("rows only in the copy: 7"), "\(reason)")
        let rows = try await queue.read { db in try db.contents(of: "item") }
        #expect(rows == expected)
        #expect(rows.count == 300)
    }
}
