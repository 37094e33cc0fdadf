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
    /// - Throws: the store's own errors (`PostgresError` for a PostgreSQL that cannot be reached).
    func open() throws -> any SyncStore {
        switch self {
        case .file(let path):
            return try SQLiteSyncStore(path: path)
        case .postgres(let url):
            return try PostgresSyncStore(url: url)
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
