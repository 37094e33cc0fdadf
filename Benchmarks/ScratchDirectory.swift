import Foundation

/// A fresh directory under the system temporary directory for the run's database files, so
/// both sides work on the same file system; removed with everything in it on deinit.
final class ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("serialdb-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of database file `name`.sqlite in the directory.
    func databasePath(_ name: String) -> String {
        url.appendingPathComponent(name + ".sqlite").path
    }

    /// Deletes a database file and its WAL and shared-memory files, so the disk use of a run
    /// stays at one workload's files.
    func removeDatabase(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
