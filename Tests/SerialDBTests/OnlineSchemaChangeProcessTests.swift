import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The online copy across processes: a child killed with SIGKILL during the copy, after it
/// caught up, or during the swap leaves the old table whole (or the new one, once the swap
/// committed), and the next upgrade finishes; a second process's `migrate` takes over a copy
/// still running, without copying any row range twice.
@Suite struct OnlineSchemaChangeProcessTests {
    private static let rows = 3_000

    private func seededFile(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.path("online.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.migrate(OnlineLadder.migrator(), upTo: OnlineLadder.identifiers[0])
        try queue.write { db in try OnlineLadder.seed(db, count: Self.rows) }
        try queue.close()
        return path
    }

    private func child(_ path: String, delay: Double, pauseAt: Int? = nil) throws -> ChildProcess {
        let pause = pauseAt.map { ["\($0)"] } ?? []
        return try ChildProcess(executable: "serialdb-test-child", arguments: ["prepare", path, "\(delay)"] + pause)
    }

    /// Opens the file as the killed child left it: old schema with every row, or the new one
    /// with every row; then the next preparation and upgrade finish and leave nothing behind.
    private func checkAfterKill(_ path: String) async throws {
        let queue = try DatabaseQueue(path: path)
        let (steps, rows) = try blocking {
            try queue.read { db in
                (try OnlineLadder.migrator().appliedMigrations(db), try OnlineLadder.rows(db))
            }
        }
        #expect(rows.count == Self.rows)
        #expect(rows.first == "1: item-1/1")
        if steps == OnlineLadder.identifiers {
            let leftovers = try blocking { try queue.read { db in try OnlineLadder.leftovers(db) } }
            #expect(leftovers == [])
        } else {
            #expect(steps == [OnlineLadder.identifiers[0]])
            // The old table still takes what only the old definition allows.
            try blocking {
                try queue.write { db in
                    try db.execute(sql: "INSERT INTO item(id, name, score) VALUES (9999, NULL, NULL)")
                    try db.execute(sql: "DELETE FROM item WHERE id = 9999")
                }
            }
            try await queue.prepareMigration(OnlineLadder.migrator())
            let reports = PreparedCopyReports()
            try await queue.migrate(OnlineLadder.migrator(), progress: reports.progress)
            #expect(reports.all == [PreparedCopyOutcome(tables: ["item"])])
            try await OnlineLadder.waitForTablesSetAside(queue)
        }
        let (after, leftovers, integrity) = try blocking {
            try queue.read { db in
                (
                    try OnlineLadder.rows(db), try OnlineLadder.leftovers(db),
                    try db.fetchAll(String.self, sql: "PRAGMA integrity_check")
                )
            }
        }
        #expect(after == rows)
        #expect(leftovers == [])
        #expect(integrity == ["ok"])
        try await queue.close()
    }

    /// What SerialDB's copy left in the file, read through a bare connection (no queue or pool,
    /// whose open would act on it).
    private func leftovers(_ path: String) throws -> (objects: [String], copied: [Int]) {
        let db = try Database(path: path)
        defer { db.close() }
        let copied =
            try db.tableExists("serialdb_online_copy")
            ? try db.fetchAll(Int.self, sql: "SELECT copied FROM serialdb_online_copy") : []
        return (try OnlineLadder.leftovers(db), copied)
    }

    @Test(arguments: [false, true])
    func aChildKilledDuringTheCopyLeavesTheOldTableWholeAndTheNextOpenRemovesTheCopy(pool: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = try seededFile(directory)
        // Paused between chunks at 500 rows: the kill lands mid-copy however loaded the machine is.
        let child = try child(path, delay: 0, pauseAt: 500)
        _ = try await child.line(withPrefix: "paused")
        child.kill()
        _ = try await child.exitStatus()
        let left = try leftovers(path)
        #expect(left.objects.contains("trigger serialdb_online_1_update"), "\(left.objects)")
        try #require(left.copied.count == 1, "\(left.copied)")
        #expect(left.copied[0] >= 500 && left.copied[0] < Self.rows, "\(left.copied)")
        // Opening the file removes the unfinished copy: no trigger, shadow or bookkeeping left,
        // every row of the old table there, and its writes no longer mirrored.
        let writer: any DatabaseWriter = pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        let (objects, rows) = try blocking {
            try writer.read { db in (try OnlineLadder.leftovers(db), try OnlineLadder.rows(db)) }
        }
        #expect(objects == [])
        #expect(rows.count == Self.rows)
        #expect(rows.first == "1: item-1/1")
        try blocking { try writer.write { db in try db.execute(sql: "UPDATE item SET name = NULL WHERE id = 1") } }
        try blocking { try writer.write { db in try db.execute(sql: "UPDATE item SET name = 'item-1' WHERE id = 1") } }
        try await writer.close()
        try await checkAfterKill(path)
    }

    @Test func aCopyWhoseProcessWasKilledIsResumedByAProcessThatHadTheFileOpen() async throws {
        let directory = try TemporaryDirectory()
        let path = try seededFile(directory)
        let child = try child(path, delay: 0, pauseAt: 500)
        _ = try await child.line(withPrefix: "paused")
        // Opened while the child copies: the open leaves its copy alone.
        let queue = try DatabaseQueue(path: path)
        child.kill()
        _ = try await child.exitStatus()
        let copied = try leftovers(path).copied
        try #require(copied.count == 1, "\(copied)")
        #expect(copied[0] >= 500 && copied[0] < Self.rows, "\(copied)")
        let firstReport = Locked<Int?>(nil)
        try await queue.prepareMigration(OnlineLadder.migrator(), rowsPerChunk: 100) { progress in
            firstReport.withLock { $0 = $0 ?? progress.completedUnits }
        }
        // It went on from the dead child's cursor.
        #expect((firstReport.withLock { $0 } ?? 0) > copied[0])
        try await queue.close()
        try await checkAfterKill(path)
    }

    @Test func aChildKilledAfterTheCopyCaughtUpLeavesTheOldTableServing() async throws {
        let directory = try TemporaryDirectory()
        let path = try seededFile(directory)
        let child = try child(path, delay: 0)
        _ = try await child.line(withPrefix: "prepared")
        child.kill()
        _ = try await child.exitStatus()
        // A copy that caught up is kept by the open, in step, for the next migrate to swap in.
        let queue = try DatabaseQueue(path: path)
        let kept = try blocking { try queue.read { db in try OnlineLadder.leftovers(db) } }
        #expect(kept.contains("table serialdb_online_copy"), "\(kept)")
        try await queue.close()
        try await checkAfterKill(path)
    }

    @Test func aChildKilledDuringTheSwapLeavesTheOldOrTheNewTableNeverAMix() async throws {
        let directory = try TemporaryDirectory()
        let path = try seededFile(directory)
        let child = try child(path, delay: 0)
        _ = try await child.line(withPrefix: "prepared")
        child.send("go")
        _ = try await child.line(withPrefix: "swapping")
        child.kill()
        _ = try await child.exitStatus()
        try await checkAfterKill(path)
    }

    @Test func aChildKilledAfterTheSwapBeforeItDroppedTheOldTableLeavesTheNewTableAndTheOpenDropsTheOld()
        async throws
    {
        let directory = try TemporaryDirectory()
        let path = try seededFile(directory)
        let child = try child(path, delay: 0)
        _ = try await child.line(withPrefix: "prepared")
        child.send("go")
        // The swap committed; the block the child queued behind it holds the queue, so none of
        // the chunks that drop the old table has run.
        _ = try await child.line(withPrefix: "swapped")
        child.kill()
        _ = try await child.exitStatus()
        let left = try leftovers(path)
        #expect(left.objects == ["table serialdb_old_1", "index serialdb_old_1_index_1"], "\(left.objects)")
        let db = try Database(path: path)
        let (setAside, references) = try (
            db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_old_1"),
            db.fetchAll(Row.self, sql: "PRAGMA foreign_key_list(serialdb_old_1)")
        )
        db.close()
        #expect((setAside ?? 0) > 0 && (setAside ?? 0) <= Self.rows, "\(String(describing: setAside))")
        #expect(references.isEmpty)
        // The open drops it (checkAfterKill sees nothing left), and the new table has every row.
        try await checkAfterKill(path)
    }

    @Test func aSecondProcessMigratingDuringTheCopyTakesItOverWithoutCopyingTwice() async throws {
        let directory = try TemporaryDirectory()
        let path = try seededFile(directory)
        let child = try child(path, delay: 0, pauseAt: 300)
        _ = try await child.line(withPrefix: "paused")
        var configuration = Configuration()
        configuration.busyTimeout = .seconds(30)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        // The child still copies: the open left its copy alone.
        #expect(try blocking { try queue.read { db in try OnlineLadder.leftovers(db) } } != [])
        let reports = Locked<[Int]>([])
        let outcomes = PreparedCopyReports()
        try await queue.migrate(OnlineLadder.migrator()) { progress in
            if progress.event == .stepProgress, let done = progress.completedUnits {
                reports.withLock { $0.append(done) }
            }
            outcomes.progress(progress)
        }
        // The copy this process finished is the one swapped in.
        #expect(outcomes.all == [PreparedCopyOutcome(tables: ["item"])])
        // This process went on from the child's cursor, not from the first row.
        let first = reports.withLock { $0.first } ?? 0
        #expect(first > 300)
        // Let go, the child's preparation sees the step applied and ends without error.
        child.send("resume")
        _ = try await child.line(withPrefix: "prepared")
        child.send("go")
        #expect(try await child.exitStatus() == 0)
        try await OnlineLadder.waitForTablesSetAside(queue)
        let (rows, leftovers) = try blocking {
            try queue.read { db in (try OnlineLadder.rows(db), try OnlineLadder.leftovers(db)) }
        }
        #expect(rows.count == Self.rows)
        #expect(leftovers == [])
    }
}
