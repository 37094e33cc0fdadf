/// How a ``DatabaseQueue`` (or a standalone ``Database``) opens and sets up its connection.
///
/// ```swift
/// var config = Configuration()
/// config.busyTimeout = .seconds(5)
/// config.label = "app.db"
/// config.prepareDatabase = { db in try db.execute(sql: "PRAGMA cache_size = -8000") }
/// let queue = try DatabaseQueue(path: "app.sqlite", configuration: config)
/// ```
public struct Configuration: Sendable {
    /// SQLite journal modes. See <https://www.sqlite.org/pragma.html#pragma_journal_mode>.
    public enum JournalMode: String, Sendable {
        /// Write-ahead log: readers never block the writer; durable after a process crash.
        case wal = "WAL"
        /// Classic rollback journal, deleted after each transaction.
        case delete = "DELETE"
        /// Rollback journal truncated instead of deleted.
        case truncate = "TRUNCATE"
        /// Rollback journal header zeroed instead of deleted.
        case persist = "PERSIST"
    }

    /// SQLite's `synchronous` levels. See <https://www.sqlite.org/pragma.html#pragma_synchronous>.
    public enum SynchronousMode: String, Sendable {
        /// No fsync: fastest, may corrupt on power loss.
        case off = "OFF"
        /// In WAL mode, durable across application crashes; the last commits may roll back on power loss.
        case normal = "NORMAL"
        /// fsync on every commit: durable across power loss.
        case full = "FULL"
        /// FULL plus a sync of the directory after deleting a rollback journal.
        case extra = "EXTRA"
    }

    /// Journal mode for file databases (in-memory databases keep theirs). Default: `.wal`.
    /// `nil` leaves the file's mode as it is, for tools that must not change a database they
    /// only inspect or migrate.
    public var journalMode: JournalMode? = .wal
    /// Durability level. Default: `.full`, SQLite's own default: a commit that returned
    /// survives power loss. `.normal` is faster in WAL mode and survives process crashes.
    public var synchronous: SynchronousMode = .full
    /// Whether foreign key constraints are enforced. Default: `true`.
    /// See <https://www.sqlite.org/foreignkeys.html>.
    public var foreignKeysEnabled = true
    /// How long a statement waits for another connection's lock before failing with
    /// `SQLITE_BUSY`. Default: 5 seconds. See <https://www.sqlite.org/c3ref/busy_timeout.html>.
    public var busyTimeout: Duration = .seconds(5)
    /// Opens the database read-only: every write fails with `SQLITE_READONLY`.
    public var readOnly = false
    /// Creates the file when it does not exist. Default: `true`. Set it to `false` when a
    /// missing file means a wrong path, so opening fails with `SQLITE_CANTOPEN` instead of
    /// creating an empty database.
    public var createsMissingFile = true
    /// The name of a registered SQLite VFS to open the file through (`nil`: the default VFS).
    /// Tests use it to inject I/O faults. See <https://www.sqlite.org/vfs.html>.
    public var vfsName: String?
    /// A name for the queue, used in its dispatch queue label and error messages.
    public var label: String?
    /// Whether error messages and the trace hook include bound values. Default: `false`,
    /// because values often hold personal data that must not reach logs.
    public var publicStatementArguments = false
    /// Runs once on the new connection, after SerialDB's own setup: register functions,
    /// set pragmas, attach databases. Throwing fails the open.
    public var prepareDatabase: (@Sendable (Database) throws -> Void)?
    /// Receives the SQL of every statement as it starts (`sqlite3_trace_v2`), with bound
    /// values only when ``publicStatementArguments`` is true. Called on the queue's thread:
    /// keep it fast. See <https://www.sqlite.org/c3ref/trace_v2.html>.
    public var trace: (@Sendable (String) -> Void)?
    /// A queue or pool block that waits or runs longer than this is reported to
    /// ``onSlowBlock``. Default: `nil`, which measures nothing.
    public var slowBlockThreshold: Duration?
    /// Receives a ``SlowBlockReport`` for each block over ``slowBlockThreshold``: where it was
    /// called from, how long it waited for the queue and how long it ran. Called on the thread
    /// that ran the block, after it ran: keep it fast (log, count).
    public var onSlowBlock: (@Sendable (SlowBlockReport) -> Void)?
    /// Whether the queue or pool keeps wait and run time statistics for ``DatabaseQueue/statistics()``.
    /// Default: `false`. It reads the clock three times a block (tens of nanoseconds).
    public var recordsStatistics = false

    /// The default configuration.
    public init() {}
}
