import Foundation
import SerialDB

/// The database files the scenarios make, copy and reset: a database at step 1 of the plan with
/// its seed rows is made once per scenario and copied wherever a fresh start is needed.
enum DatabaseFiles {
    /// Creates the seeded database at `path` and returns the seconds the seed rows took to insert.
    static func createSeeded(at path: String, rows: Int) throws -> Double {
        let queue = try DatabaseQueue(path: path)
        try queue.migrate(UpgradePlan().migrator(), upTo: UpgradePlan.baseStep)
        let clock = RunClock()
        try queue.write { db in try ItemTable.populate(db, rows: rows) }
        let seconds = clock.now
        // Leave everything in the main file, so that copying it alone copies the database.
        try queue.inDatabase { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
        return seconds
    }

    /// Replaces the database at `destination` (and its WAL and shared-memory files) by a copy of
    /// the one at `source`, which must have no WAL content.
    static func copy(from source: String, to destination: String) throws {
        try remove(destination)
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }

    /// Copies a database as a crash left it: the main file and its WAL. The shared-memory file
    /// is left out; whoever opens the copy rebuilds it from the WAL, as after a reboot.
    static func copyAsLeft(from source: String, to destination: String) throws {
        try remove(destination)
        try FileManager.default.copyItem(atPath: source, toPath: destination)
        if FileManager.default.fileExists(atPath: source + "-wal") {
            try FileManager.default.copyItem(atPath: source + "-wal", toPath: destination + "-wal")
        }
    }

    /// Removes a database file with its WAL and shared-memory files.
    static func remove(_ path: String) throws {
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
    }
}
