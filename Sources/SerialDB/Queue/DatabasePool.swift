import CSQLite
import Foundation

/// A database file shared by a service's threads with concurrent reads: one writer connection
/// behind a serializer, like ``DatabaseQueue``, plus up to ``maximumReaderCount`` reader
/// connections in WAL mode.
///
/// ```swift
/// let pool = try DatabasePool(path: "app.sqlite")
/// try pool.write { db in try db.execute(sql: "INSERT INTO player(name) VALUES (?)", arguments: ["Ann"]) }
/// let count = try pool.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
/// ```
///
/// - `read` runs on any free reader, at the same time as other reads and as the write, inside a
///   deferred transaction: it sees one committed snapshot from its first statement to its end.
///   Writes inside it are refused per statement.
/// - `write` and `writerDatabase` run on the writer, one block at a time, exactly as a queue's
///   blocks do.
/// - An upgrade started with `startMigration` holds every read and write submitted after it, and
///   a failed upgrade makes both throw `migrationFailed`, as on a queue.
/// - Calling any method of the pool from inside one of its blocks throws `reentrantCall`.
///
/// **Checkpoints.** The writer connection keeps SQLite's automatic checkpoint (a PASSIVE
/// checkpoint when the WAL passes 1,000 pages at a commit), which never waits for readers; a
/// reader that stays open for long keeps the WAL from being reset, so keep reads short. Call
/// ``checkpoint(_:)`` with `.truncate` in a quiet moment to shrink the WAL file.
///
/// Use a queue when one connection is enough (one writer, reads that are short or rare); use a
/// pool when reads are many or long and must not wait for writes.
/// See <https://www.sqlite.org/wal.html>.
public final class DatabasePool: DatabaseWriter {
    /// The file path.
    public let path: String
    /// How every connection is opened and set up (`prepareDatabase` runs on each).
    public let configuration: Configuration
    /// The most reader connections the pool opens.
    public let maximumReaderCount: Int
    let writer: Serializer
    let readers: ReaderPool
    /// Measures blocks when the configuration asks for slow-block reports or statistics.
    let health: QueueHealth?

    /// Opens a pool on `path` and runs `housekeeping` on the writer before any work can reach
    /// it. The public initializer (`init(path:configuration:maximumReaderCount:)`, beside the
    /// migrations, which own what it cleans up) passes the removal of online copies a killed
    /// process left unfinished.
    init(
        path: String, configuration: Configuration, maximumReaderCount: Int, housekeeping: (Database) throws -> Void
    ) throws {
        guard path != ":memory:", !path.isEmpty else {
            throw SerialDBError(
                .invalidArguments,
                "A DatabasePool needs a database file: an in-memory database cannot be shared between "
                    + "connections. Use a DatabaseQueue for in-memory databases.")
        }
        guard configuration.journalMode == .wal, !configuration.readOnly else {
            throw SerialDBError(
                .invalidArguments,
                "A DatabasePool needs journalMode .wal and a writable file, so reads can run beside the write. "
                    + "Use a DatabaseQueue otherwise.")
        }
        self.path = path
        self.configuration = configuration
        self.maximumReaderCount = max(1, maximumReaderCount)
        let label = configuration.label ?? path
        let database = try Database(path: path, configuration: configuration)
        try housekeeping(database)
        writer = Serializer(database: database, label: label)
        health = QueueHealth.make(configuration, label: label)
        readers = ReaderPool(
            path: path, configuration: configuration, maximumCount: self.maximumReaderCount, label: label)
    }

    // MARK: - Reading

    /// Runs `block` on a reader connection in a deferred transaction, concurrently with other
    /// reads and with the write, and returns its result.
    ///
    /// - Throws: ``SerialDBError/Code/writeInReadOnlyBlock`` for a statement that writes;
    ///   ``SerialDBError/Code/reentrantCall`` from inside a block of this pool; the gate's
    ///   errors (closed, a failed migration); the block's error.
    public func read<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        // The writer's check here; the readers' inside `readers.read`, under the lock it takes
        // anyway (a read costs two lock acquisitions in all: check-out and check-in).
        let thread = ThreadIdentity.current
        try writer.checkNotReentrant(thread)
        return try measured(CallSite(file: file, line: line, function: function)) { started in
            try readers.read(thread: thread) { db in
                started()
                return try block(db)
            }
        }
    }

    // MARK: - Writing

    /// Runs `block` on the writer in an IMMEDIATE transaction that commits unless it throws.
    ///
    /// - Throws: like `DatabaseQueue/write(_:)`; ``SerialDBError/Code/reentrantCall`` from
    ///   inside any block of this pool.
    public func write<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try checkNotReentrant()
        return try measured(CallSite(file: file, line: line, function: function)) { started in
            try writer.sync { db in
                started()
                return try db.writeTransaction(block)
            }
        }
    }

    /// Runs `block` on the writer connection with no transaction, like
    /// `DatabaseQueue/inDatabase(_:)`; the same as `writerDatabase(_:)`.
    public func inDatabase<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try writerDatabase(file: file, line: line, function: function, block)
    }

    /// Runs `block` on the writer connection with no transaction, like
    /// `DatabaseQueue/inDatabase(_:)`.
    public func writerDatabase<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try checkNotReentrant()
        return try measured(CallSite(file: file, line: line, function: function)) { started in
            try writer.sync { db in
                started()
                return try block(db)
            }
        }
    }

    /// Runs `block` on the writer in a transaction of `kind`, committed or rolled back as the
    /// block returns, like `DatabaseQueue/inTransaction(_:_:)`.
    public func inTransaction(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ kind: TransactionKind = .deferred, _ block: (Database) throws -> TransactionCompletion
    ) throws {
        try checkNotReentrant()
        try measured(CallSite(file: file, line: line, function: function)) { started in
            try writer.sync { db in
                started()
                try db.inTransaction(kind, block)
            }
        }
    }

    /// Runs `block` on the writer inside a savepoint (outside a transaction, it acts as one),
    /// like `DatabaseQueue/inSavepoint(_:)`. See <https://www.sqlite.org/lang_savepoint.html>.
    public func inSavepoint(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> TransactionCompletion
    ) throws {
        try checkNotReentrant()
        try measured(CallSite(file: file, line: line, function: function)) { started in
            try writer.sync { db in
                started()
                try db.inSavepoint(block)
            }
        }
    }

    // MARK: - Maintenance

    /// Interrupts the statements running now, on the writer and on every reader.
    public func interrupt() {
        writer.interrupt()
        readers.interruptAll()
    }

    /// Runs a WAL checkpoint on the writer connection and returns the WAL's size in frames and
    /// how many were copied into the database.
    ///
    /// - Throws: ``DatabaseError``, for example `SQLITE_BUSY` when a `.restart` or `.truncate`
    ///   checkpoint could not finish because readers still use the WAL.
    ///   See <https://www.sqlite.org/c3ref/wal_checkpoint_v2.html>.
    @discardableResult
    public func checkpoint(_ mode: WALCheckpointMode = .passive) throws -> (walFrames: Int, checkpointedFrames: Int) {
        try writerDatabase { db in
            let handle = try db.openHandle()
            var walFrames: Int32 = 0
            var checkpointed: Int32 = 0
            let code = sqlite3_wal_checkpoint_v2(handle, nil, mode.sqliteMode, &walFrames, &checkpointed)
            guard code == SQLITE_OK else { throw db.error(code: code) }
            return (Int(walFrames), Int(checkpointed))
        }
    }

    /// Waits for the work in line and the running reads, then closes every connection; later
    /// calls throw ``SerialDBError/Code/closed``.
    public func close() throws {
        try checkNotReentrant()
        try writer.close()
        readers.close()
    }

    /// Blocks run (reads and writes), and their wait and run time percentiles, since the pool
    /// opened; `nil` unless ``Configuration/recordsStatistics`` is set.
    public func statistics() -> QueueStatistics? {
        health?.statistics()
    }

    /// Runs `body`, measured when the configuration asks for it.
    func measured<T>(_ site: CallSite, _ body: (_ started: @escaping @Sendable () -> Void) throws -> T) throws -> T {
        guard let health else { return try body {} }
        return try health.measure(site, body)
    }

    /// Async twin of ``measured(_:_:)``.
    func measured<T>(
        _ site: CallSite, _ body: (_ started: @escaping @Sendable () -> Void) async throws -> T
    ) async throws -> T {
        guard let health else { return try await body {} }
        return try await health.measure(site, body)
    }

    /// The writer's serializer and the readers, for the extensions shared with the queue.
    public var writerInternals: DatabaseWriterInternals {
        DatabaseWriterInternals(serializer: writer, readers: readers)
    }

    // MARK: - Reentrancy

    /// Throws ``SerialDBError/Code/reentrantCall`` when the calling thread runs a block of this
    /// pool: a writer block (the writer's serializer knows the thread that runs its block) or
    /// a read block (the reader pool records the threads running one).
    func checkNotReentrant() throws {
        let thread = ThreadIdentity.current
        try writer.checkNotReentrant(thread)
        if readers.isReading(on: thread) { throw readers.reentrantCallError() }
    }
}
