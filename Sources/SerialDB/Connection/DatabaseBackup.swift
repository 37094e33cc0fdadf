import CSQLite
import Foundation

/// An online copy of one connection's main database into another, a few pages at a time, through
/// SQLite's backup API.
///
/// Most code calls ``DatabaseQueue/backup(to:pagesPerStep:overwriting:progress:)``, which runs
/// each step as its own queue block so writers are held for one step, not for the whole copy.
/// Changes made through the source connection between steps are carried into the copy by SQLite;
/// a change by another connection or process restarts the copy at the next step.
/// See <https://www.sqlite.org/backup.html>.
public final class DatabaseBackup {
    private var backup: OpaquePointer?
    private let destination: Database

    /// Starts a copy of `source`'s main database into `destination`'s (which it replaces when the
    /// copy completes).
    ///
    /// - Throws: ``DatabaseError`` when SQLite cannot start the backup (for example `destination`
    ///   is inside a transaction).
    public init(from source: Database, to destination: Database) throws {
        let sourceHandle = try source.openHandle()
        let destinationHandle = try destination.openHandle()
        guard let backup = sqlite3_backup_init(destinationHandle, "main", sourceHandle, "main") else {
            throw destination.error(code: sqlite3_errcode(destinationHandle))
        }
        self.backup = backup
        self.destination = destination
    }

    deinit {
        if let backup { sqlite3_backup_finish(backup) }
    }

    /// Pages still to copy, as of the last step.
    public private(set) var remainingPages = 0
    /// Pages in the source database, as of the last step (0 before the first).
    public private(set) var totalPages = 0

    /// Copies up to `pages` pages (all of them when negative). Returns `true` once the copy is
    /// complete and committed to the destination.
    ///
    /// A step that finds the source or destination locked returns `false` without copying, to be
    /// called again later.
    ///
    /// - Throws: ``DatabaseError`` when the copy fails; the destination is left as it was.
    public func step(pages: Int) throws -> Bool {
        guard let backup else { return true }
        let code = sqlite3_backup_step(backup, Int32(clamping: pages))
        // Read before finishing: the counts die with the backup handle.
        remainingPages = Int(sqlite3_backup_remaining(backup))
        totalPages = Int(sqlite3_backup_pagecount(backup))
        switch code {
        case SQLITE_OK, SQLITE_BUSY, SQLITE_LOCKED:
            return false
        case SQLITE_DONE:
            let finishCode = sqlite3_backup_finish(backup)
            self.backup = nil
            guard finishCode == SQLITE_OK else { throw destination.error(code: finishCode) }
            remainingPages = 0
            return true
        default:
            sqlite3_backup_finish(backup)
            self.backup = nil
            throw destination.error(code: code)
        }
    }
}

/// How far an online backup has come.
public struct BackupProgress: Sendable, Equatable {
    /// Pages copied so far.
    public let copiedPages: Int
    /// Pages in the source database.
    public let totalPages: Int
}
