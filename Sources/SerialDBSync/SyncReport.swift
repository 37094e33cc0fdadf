import SerialDB

/// What one ``SyncClient/sync(progress:)`` did.
public struct SyncReport: Sendable {
    /// Local changes the server applied.
    public var uploaded = 0
    /// Rows applied from the server that this device did not just upload (deletes included).
    public var downloaded = 0
    /// Uploads whose base version no longer matched, and how each was settled.
    public var conflicts: [SyncConflict] = []
    /// Table definitions created or changed from the server, and the ones refused.
    public var schemaChanges: [SyncSchemaChange] = []
    /// Local changes the server refused, or that could not be sent (a REAL that is infinite,
    /// a table the server no longer syncs); they left the outbox, the local row is as it was.
    public var rejected: [SyncRejection] = []
    /// Tables this device synced that the server no longer serves (removed from its
    /// configuration): they are no longer synced; the local tables and their rows are kept,
    /// and their unsent changes are in ``rejected``.
    public var unsyncedTables: [String] = []

    /// An empty report.
    public init() {}
}

/// Two devices changed one row: the server's state when this device's upload arrived.
public struct SyncConflict: Sendable {
    /// The table.
    public var table: String
    /// The primary-key columns of the row.
    public var key: [String: DatabaseValue]
    /// This device's row, or `nil` when this device deleted it.
    public var localRow: [String: DatabaseValue]?
    /// The server's row, or `nil` when it is deleted there.
    public var serverRow: [String: DatabaseValue]?
    /// The version this device's change was based on.
    public var localBaseVersion: Int64
    /// The server's current version of the row.
    public var serverVersion: Int64
    /// How it was settled.
    public var resolution: SyncConflictResolution
}

/// How a conflict is settled.
public enum SyncConflictResolution: Sendable, Equatable {
    /// Adopt the server's row (the default).
    case keepServer
    /// Keep this device's row and upload it again on the server's version.
    case keepLocal
}

/// A table definition that came from the server.
public struct SyncSchemaChange: Sendable {
    /// The table.
    public var table: String
    /// The definition this device had, or `nil` for a new table.
    public var fromStructVersion: Int64?
    /// The server's definition.
    public var toStructVersion: Int64
    /// What was done, one line per step (`rebuild "note": ...`); empty when nothing had to change.
    public var steps: [String]
    /// Rows the table held that the sync had never seen (written before the table was
    /// synced): they are local changes, queued for upload and sent by the same sync.
    public var capturedRows = 0
    /// Values this device had not uploaded yet, held by columns the server dropped from the
    /// table (and so dropped here too): the row is otherwise kept and still goes up.
    public var droppedValues: [SyncDroppedValue] = []
    /// Why it was refused (it would lose data, or rows do not fit); empty when applied. A
    /// refused change changed nothing, and the table is not downloaded until it is resolved.
    public var refusals: [String]

    /// Whether the change was applied.
    public var isApplied: Bool { refusals.isEmpty }
}

/// A value that was never uploaded, in a column the server's new definition dropped.
public struct SyncDroppedValue: Sendable {
    /// The table (its new name when the server renamed it).
    public var table: String
    /// The primary-key columns of the row.
    public var key: [String: DatabaseValue]
    /// The dropped column.
    public var column: String
    /// The value it held.
    public var value: DatabaseValue
}

/// A local change the server refused.
public struct SyncRejection: Sendable {
    /// The table.
    public var table: String
    /// The primary-key columns of the row.
    public var key: [String: DatabaseValue]
    /// Upsert or delete.
    public var operation: SyncMutation.Operation
    /// The server's message, or why this device did not send the change (it starts with
    /// `not sent:`).
    public var message: String
}

/// Where a sync is, for a progress bar.
public struct SyncProgress: Sendable, Equatable {
    /// The part of the sync running.
    public enum Phase: Sendable, Equatable {
        /// Sending local changes.
        case uploading
        /// Asking which tables changed.
        case checking
        /// Fetching the rows of one table.
        case downloading(table: String)
        /// Done.
        case finished
    }

    /// The part of the sync running.
    public var phase: Phase
    /// Tables downloaded so far.
    public var tablesCompleted: Int
    /// Tables to download in this sync (known after checking).
    public var tablesTotal: Int
    /// Local changes the server applied so far.
    public var rowsUploaded: Int
    /// Rows applied from the server so far.
    public var rowsDownloaded: Int
}
