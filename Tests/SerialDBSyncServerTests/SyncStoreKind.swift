import SerialDBSyncServer
import SerialDBTestSupport

/// The stores the wire protocol suite runs against. A new store (PostgreSQL, issue 13) adds a
/// case here and runs every protocol test unchanged.
enum SyncStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqliteFile
    case sqliteMemory

    var description: String { rawValue }

    /// A new, empty store; the directory keeps a file store alive.
    func makeStore(in directory: TemporaryDirectory) throws -> any SyncStore {
        switch self {
        case .sqliteFile: return try SQLiteSyncStore(path: directory.path("server.sqlite"))
        case .sqliteMemory: return try SQLiteSyncStore()
        }
    }
}
