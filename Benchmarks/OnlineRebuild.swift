import Foundation
import HarnessSupport
import SerialDB

/// `rebuild_1m`'s schema change made online: `prepareMigration` copies the table (its chunks
/// rest twice their own time between them, so that an application's work would get the
/// connection; here nothing else runs), then `migrate` swaps the copy in under the gate. Both
/// phases are printed on each run; the workload's time is the whole (`rebuild_1m_online`) or the
/// swap alone (`rebuild_1m_online_swap`: what other work waits for).
enum OnlineRebuild {
    enum Timed {
        case whole
        case swap
    }

    static let before = "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)"
    static let after = "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT, c REAL)"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("before", schema: before)
        migrator.registerMigration("after", schema: after)
        return migrator
    }

    static func run(path: String, rows: Int, timed: Timed) throws -> SideRun {
        try RawConnection.populate(path: path, rows: rows)
        let queue = try SerialDBSide.open(path: path)
        try queue.migrate(migrator, upTo: "before")  // the table as it is: recorded, nothing rebuilt
        let clock = ContinuousClock()
        let start = clock.now
        let prepared = try waitForTask { try await queue.prepareMigration(migrator) }
        let swapStart = clock.now
        let copy = Locked<PreparedCopyOutcome?>(nil)
        try queue.migrate(migrator) { progress in
            if let outcome = progress.preparedCopy { copy.withLock { $0 = outcome } }
        }
        let end = clock.now
        guard prepared.preparedTables == ["t"], prepared.rowsCopied == rows,
            copy.withLock({ $0 }) == PreparedCopyOutcome(tables: ["t"])
        else {
            throw BenchError.setup(
                "the online rebuild did not swap in its copy: \(prepared), \(String(describing: copy.withLock { $0 }))")
        }
        print(
            "rebuild_1m_online: prepare \(milliseconds(swapStart - start)) ms (copy of \(rows) rows, writes go on), "
                + "swap \(milliseconds(end - swapStart)) ms (under the gate)")
        return try SerialDBSide.finish(
            queue, path: path, elapsed: timed == .whole ? end - start : end - swapStart, operations: rows)
    }

    private static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.0f", duration.milliseconds)
    }
}
