import CSQLite

/// How far ``DatabasePool/checkpoint(_:)`` goes. See
/// <https://www.sqlite.org/c3ref/wal_checkpoint_v2.html>.
public enum WALCheckpointMode: Sendable {
    /// Copies what it can without waiting for readers or writers.
    case passive
    /// Waits for the writer, then copies every frame; readers may still use the WAL.
    case full
    /// Like `.full`, then waits for readers so the next writer starts the WAL from its beginning.
    case restart
    /// Like `.restart`, then truncates the WAL file to zero bytes.
    case truncate

    var sqliteMode: Int32 {
        switch self {
        case .passive: return SQLITE_CHECKPOINT_PASSIVE
        case .full: return SQLITE_CHECKPOINT_FULL
        case .restart: return SQLITE_CHECKPOINT_RESTART
        case .truncate: return SQLITE_CHECKPOINT_TRUNCATE
        }
    }
}
