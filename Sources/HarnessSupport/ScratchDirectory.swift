import Foundation

/// A fresh directory under the system temporary directory for a test's, a stress scenario's or a
/// benchmark run's files, removed with everything in it on deinit.
public final class ScratchDirectory: Sendable {
    /// The directory's URL.
    public let url: URL

    /// Creates `<tmp>/<prefix>-<UUID>`.
    public init(prefix: String = "serialdb") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file inside the directory.
    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// Deletes a database file with its WAL, shared-memory and rollback journal files.
    public func removeDatabase(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
