/// What ``DatabaseQueue`` and ``DatabasePool`` share for writing, on top of
/// ``DatabaseReader``: the blocks that run on the one writer connection, and the features
/// written once for both (`migrate(_:progress:)`, ``startMigration(_:progress:)``,
/// ``backup(to:pagesPerStep:overwriting:progress:)``, ``observe(_:)``).
///
/// ```swift
/// func addPlayer(_ name: String, to writer: some DatabaseWriter) throws {
///     try writer.write { db in
///         try db.execute(sql: "INSERT INTO player(name) VALUES (?)", arguments: [name])
///     }
/// }
/// ```
///
/// On a queue every block runs on its one connection; on a pool, `read` runs on a reader
/// connection and everything else on the writer.
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `block` on the writer with no transaction. See
    /// `DatabaseQueue.inDatabase(_:)`.
    func inDatabase<T>(
        file: StaticString, line: UInt, function: StaticString, _ block: (Database) throws -> T
    ) throws -> T

    /// Runs `block` on the writer in a transaction of `kind`, committed or rolled back as the
    /// block returns. See `DatabaseQueue.inTransaction(_:_:)`.
    func inTransaction(
        file: StaticString, line: UInt, function: StaticString, _ kind: TransactionKind,
        _ block: (Database) throws -> TransactionCompletion
    ) throws

    /// Runs `block` on the writer inside a savepoint (outside a transaction, it acts as one).
    func inSavepoint(
        file: StaticString, line: UInt, function: StaticString, _ block: (Database) throws -> TransactionCompletion
    ) throws

    /// Runs `block` on the writer in an IMMEDIATE transaction that commits unless it throws.
    func write<T>(
        file: StaticString, line: UInt, function: StaticString, _ block: (Database) throws -> T
    ) throws -> T

    /// Async twin of ``inDatabase(file:line:function:_:)``.
    func inDatabase<T: Sendable>(
        file: StaticString, line: UInt, function: StaticString, _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T

    /// Async twin of ``inTransaction(file:line:function:_:_:)``.
    func inTransaction(
        file: StaticString, line: UInt, function: StaticString, _ kind: TransactionKind,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws

    /// Async twin of ``inSavepoint(file:line:function:_:)``.
    func inSavepoint(
        file: StaticString, line: UInt, function: StaticString,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws

    /// Async twin of ``write(file:line:function:_:)``.
    func write<T: Sendable>(
        file: StaticString, line: UInt, function: StaticString, _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T

    /// The parts SerialDB's shared extensions work with; only the library can make them.
    var writerInternals: DatabaseWriterInternals { get }
}

/// The writer's serializer and, for a pool, its readers: what the extensions on
/// ``DatabaseWriter`` (migrations, backups, observation) need. It has no public members and
/// cannot be made outside SerialDB, which keeps ``DatabaseWriter`` for the library's own types.
public struct DatabaseWriterInternals: Sendable {
    let serializer: Serializer
    /// A pool's readers, which share the upgrade gate; `nil` for a queue.
    let readers: ReaderPool?

    /// Throws ``SerialDBError/Code/reentrantCall`` when the calling thread runs a block of this
    /// queue or pool.
    func checkNotReentrant() throws {
        let thread = ThreadIdentity.current
        try serializer.checkNotReentrant(thread)
        if let readers, readers.isReading(on: thread) { throw readers.reentrantCallError() }
    }
}

// The same methods with the caller's position defaulted, for generic callers (a queue or a pool
// called directly uses its own method).
extension DatabaseWriter {
    /// ``inDatabase(file:line:function:_:)`` with the caller's position filled in.
    public func inDatabase<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try inDatabase(file: file, line: line, function: function, block)
    }

    /// ``inTransaction(file:line:function:_:_:)`` with the caller's position filled in.
    public func inTransaction(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ kind: TransactionKind = .deferred, _ block: (Database) throws -> TransactionCompletion
    ) throws {
        try inTransaction(file: file, line: line, function: function, kind, block)
    }

    /// ``inSavepoint(file:line:function:_:)`` with the caller's position filled in.
    public func inSavepoint(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> TransactionCompletion
    ) throws {
        try inSavepoint(file: file, line: line, function: function, block)
    }

    /// ``write(file:line:function:_:)`` with the caller's position filled in.
    public func write<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try write(file: file, line: line, function: function, block)
    }

    /// Async ``inDatabase(file:line:function:_:)`` with the caller's position filled in.
    public func inDatabase<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await inDatabase(file: file, line: line, function: function, block)
    }

    /// Async ``inTransaction(file:line:function:_:_:)`` with the caller's position filled in.
    public func inTransaction(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ kind: TransactionKind = .deferred,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try await inTransaction(file: file, line: line, function: function, kind, block)
    }

    /// Async ``inSavepoint(file:line:function:_:)`` with the caller's position filled in.
    public func inSavepoint(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try await inSavepoint(file: file, line: line, function: function, block)
    }

    /// Async ``write(file:line:function:_:)`` with the caller's position filled in.
    public func write<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await write(file: file, line: line, function: function, block)
    }
}
