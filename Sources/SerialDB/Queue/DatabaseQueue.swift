/// One SQLite connection behind one serial queue: share it freely across threads and tasks.
///
/// Every block runs alone. Blocking methods run their block on the calling thread and wait for
/// their turn; each has an `async` twin of the same name that suspends instead. Async blocks,
/// migrations and `close()` run in submission order, and blocking calls made while any is
/// pending line up behind them; a blocking call already waiting runs before a migration or
/// `close()` submitted after it; blocking calls that wait at the same moment are served in no
/// fixed order.
///
/// ```swift
/// let queue = try DatabaseQueue(path: "app.sqlite")
/// try queue.write { db in
///     try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: ["Ann", 10])
/// }
/// let count = try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") }
/// ```
///
/// Calling a method of the queue from inside one of its own blocks throws
/// ``SerialDBError/Code/reentrantCall`` at once instead of deadlocking; nest with
/// ``Database/inSavepoint(_:)``. A cycle through two queues on one thread (A's block calls B,
/// whose block calls A) throws the same way: each queue knows which thread runs its block.
/// Across threads (thread 1 in A's block calls B while thread 2 in B's block calls A), the
/// wait that would close the cycle throws ``SerialDBError/Code/lockOrderCycle`` instead of
/// hanging both threads.
///
/// `DatabaseQueue` is `Sendable` without `@unchecked`: all its state lives in the
/// `Serializer`, whose safety argument is written beside it.
public final class DatabaseQueue: DatabaseWriter {
    /// The database file path, or `":memory:"`.
    public let path: String
    /// The configuration the connection was opened with.
    public let configuration: Configuration
    let serializer: Serializer
    /// Measures blocks when the configuration asks for slow-block reports or statistics.
    let health: QueueHealth?

    /// Opens `path` and runs `housekeeping` on the connection before any work can reach it.
    /// The public initializer (`init(path:configuration:)`, beside the migrations, which own
    /// what it cleans up) passes the removal of online copies a killed process left unfinished.
    init(path: String, configuration: Configuration, housekeeping: (Database) throws -> Void) throws {
        self.path = path
        self.configuration = configuration
        let database = try Database(path: path, configuration: configuration)
        try housekeeping(database)
        serializer = Serializer(database: database, label: configuration.label ?? path)
        health = QueueHealth.make(configuration, label: configuration.label ?? path)
    }

    /// Opens a private in-memory database, gone when the queue is.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try self.init(path: ":memory:", configuration: configuration, housekeeping: { _ in })
    }

    /// Runs `block` with the connection, outside any transaction, and returns its result.
    ///
    /// A transaction the block leaves open is rolled back and reported with
    /// ``SerialDBError/Code/transactionLeftOpen``.
    ///
    /// - Throws: the block's error; ``SerialDBError`` when called reentrantly, when waiting
    ///   would close a lock-order cycle, after `close()` (or a block that closed the
    ///   connection), or after a failed migration.
    public func inDatabase<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try run(CallSite(file: file, line: line, function: function), block)
    }

    /// Runs `block` in a transaction of the given kind; commits on `.commit`, rolls back on
    /// `.rollback`, on a thrown error (rethrown), or when COMMIT fails.
    ///
    /// ```swift
    /// try queue.inTransaction(.immediate) { db in
    ///     try db.execute(sql: "UPDATE player SET score = score + 1")
    ///     return .commit
    /// }
    /// ```
    ///
    /// See <https://www.sqlite.org/lang_transaction.html>.
    public func inTransaction(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ kind: TransactionKind = .deferred,
        _ block: (Database) throws -> TransactionCompletion
    ) throws {
        try run(CallSite(file: file, line: line, function: function)) { db in try db.inTransaction(kind, block) }
    }

    /// Runs `block` inside a savepoint (outside a transaction, it acts as one).
    /// See <https://www.sqlite.org/lang_savepoint.html>.
    public func inSavepoint(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> TransactionCompletion
    ) throws {
        try run(CallSite(file: file, line: line, function: function)) { db in try db.inSavepoint(block) }
    }

    /// Runs `block` in a deferred transaction where writes are refused: any statement that
    /// would write, or a pragma given a value (`PRAGMA foreign_keys = OFF`), throws
    /// ``SerialDBError/Code/writeInReadOnlyBlock`` before it runs; pragma queries such as
    /// `PRAGMA journal_mode` are allowed. The transaction gives the block one consistent snapshot.
    public func read<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try run(CallSite(file: file, line: line, function: function)) { db in try db.readTransaction(block) }
    }

    /// Runs `block` in an immediate transaction that commits unless the block throws.
    public func write<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try run(CallSite(file: file, line: line, function: function)) { db in try db.writeTransaction(block) }
    }

    /// Makes the statement running now fail with `SQLITE_INTERRUPT`. Safe from any thread.
    /// See <https://www.sqlite.org/c3ref/interrupt.html>.
    public func interrupt() {
        serializer.interrupt()
    }

    /// Waits for the work already submitted, then closes the connection. Later calls throw
    /// ``SerialDBError/Code/closed``; closing twice is harmless.
    ///
    /// - Throws: ``SerialDBError/Code/reentrantCall`` from inside a block of this queue.
    public func close() throws {
        try serializer.close()
    }

    /// Blocks run, and their wait and run time percentiles, since the queue opened; `nil` unless
    /// ``Configuration/recordsStatistics`` is set.
    public func statistics() -> QueueStatistics? {
        health?.statistics()
    }

    /// The serializer, for the extensions shared with the pool.
    public var writerInternals: DatabaseWriterInternals {
        DatabaseWriterInternals(serializer: serializer, readers: nil)
    }

    /// Runs `block` through the serializer, measured when the configuration asks for it.
    /// Inlined into each entry point: one generic call less on every round trip.
    @inline(__always)
    private func run<T>(_ site: CallSite, _ block: (Database) throws -> T) throws -> T {
        guard let health else { return try serializer.sync(block) }
        return try health.measure(site) { started in
            try serializer.sync { db in
                started()
                return try block(db)
            }
        }
    }
}
