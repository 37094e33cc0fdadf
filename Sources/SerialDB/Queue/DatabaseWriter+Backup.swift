import Foundation

// Written once for the queue and the pool: the copy's steps are writer blocks.
extension DatabaseWriter {
    /// Copies the live database into a new file at `path`, while the queue or pool keeps serving
    /// work.
    ///
    /// The copy runs in steps of `pagesPerStep` pages, each its own block on the writer, so other
    /// work waits for one step at a time, not for the whole copy; writes made through this queue or pool
    /// between steps are carried into the copy. When the copy is complete it must pass
    /// `PRAGMA integrity_check`.
    ///
    /// ```swift
    /// try queue.backup(to: "backups/app-2026-11-30.sqlite") { progress in
    ///     print(progress.copiedPages, "of", progress.totalPages)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - path: where to write the copy.
    ///   - pagesPerStep: pages copied per step (at least 1).
    ///   - overwriting: whether an existing file at `path` may be replaced. Without it, an
    ///     existing file is refused and left untouched.
    ///   - progress: called after each step.
    /// - Throws: ``SerialDBError/Code/invalidArguments`` for an existing file,
    ///   ``SerialDBError/Code/backupFailed`` when the copy fails its integrity check,
    ///   ``DatabaseError`` when SQLite cannot copy; the queue's own errors (closed, a failed
    ///   migration). On failure a new file is removed and an existing one keeps its content.
    ///   See <https://www.sqlite.org/backup.html>.
    public func backup(
        to path: String, pagesPerStep: Int = 256, overwriting: Bool = false,
        progress: ((BackupProgress) -> Void)? = nil
    ) throws {
        try writerInternals.checkNotReentrant()
        let existed = FileManager.default.fileExists(atPath: path)
        if existed && !overwriting {
            throw SerialDBError(
                .invalidArguments,
                "A file exists at \(path); the backup left it untouched. Choose a new path, or pass "
                    + "overwriting: true to replace it.")
        }
        do {
            try copy(to: path, pagesPerStep: max(1, pagesPerStep), progress: progress)
        } catch {
            if !existed {
                for suffix in ["", "-journal", "-wal", "-shm"] {
                    try? FileManager.default.removeItem(atPath: path + suffix)
                }
            }
            throw error
        }
    }

    private func copy(to path: String, pagesPerStep: Int, progress: ((BackupProgress) -> Void)?) throws {
        var destinationConfiguration = Configuration()
        destinationConfiguration.journalMode = nil  // the copy takes the source's mode with its header
        destinationConfiguration.label = "backup of \(self.path)"
        let destination = try Database(path: path, configuration: destinationConfiguration)
        defer { destination.close() }
        // The backup handle is used only inside this queue's blocks, one after another.
        let backup = try inDatabase { db in try DatabaseBackup(from: db, to: destination) }
        var done = false
        var copiedBefore = -1
        while !done {
            let (finished, copied, total) = try inDatabase { _ in
                let finished = try backup.step(pages: pagesPerStep)
                return (finished, backup.totalPages - backup.remainingPages, backup.totalPages)
            }
            done = finished
            progress?(BackupProgress(copiedPages: copied, totalPages: total))
            if !done && copied == copiedBefore {
                // Locked (another process is writing the file): give it a moment instead of spinning.
                Thread.sleep(forTimeInterval: 0.005)
            }
            copiedBefore = copied
        }
        let problems = try destination.fetchAll(String.self, sql: "PRAGMA integrity_check")
        guard problems == ["ok"] else {
            throw SerialDBError(
                .backupFailed,
                "The backup at \(path) fails its integrity check: \(problems.prefix(5).joined(separator: "; ")). "
                    + "Check the source with PRAGMA integrity_check, then back up again.")
        }
    }
}
