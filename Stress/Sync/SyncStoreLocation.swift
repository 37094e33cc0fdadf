import HarnessSupport
import SerialDBSyncServer

/// Where the sync scenario's server keeps its rows. ``open()`` is the one place that creates a
/// store: the server child serves from it, and the parent reads the final rows through it.
enum SyncStoreLocation: Sendable, Equatable {
    /// The embedded store, an SQLite file.
    case file(String)
    /// A PostgreSQL database (`--postgres URL`).
    case postgres(String)

    /// Opens (creating when missing) the store.
    ///
    /// - Throws: `UsageError` for PostgreSQL, which this build does not have yet; the store's
    ///   own errors.
    func open() throws -> any SyncStore {
        switch self {
        case .file(let path):
            return try SQLiteSyncStore(path: path)
        case .postgres:
            throw UsageError(
                "--postgres: the PostgreSQL sync store is not available in this build of stress; "
                    + "leave --postgres out to run the sync scenario on the embedded SQLite store")
        }
    }

    /// The arguments that name this store on a child's command line.
    var arguments: [String] {
        switch self {
        case .file(let path): return ["--db", path]
        case .postgres(let url): return ["--postgres", url]
        }
    }
}
