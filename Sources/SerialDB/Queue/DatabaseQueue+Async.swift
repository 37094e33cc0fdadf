// The async twins: same names, same behaviour, but the caller suspends instead of blocking a
// thread. Cancelling the calling task skips a block that has not started and interrupts the
// statement of one that has; either way the call throws `CancellationError`, after the block's
// work is rolled back (statements that end or undo work are never refused after cancellation),
// so the database keeps no trace of it and the connection is ready for the next block.

extension DatabaseQueue {
    /// Async twin of `inDatabase(_:)`.
    public func inDatabase<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serializer.async(block)
    }

    /// Async twin of `inTransaction(_:_:)`.
    public func inTransaction(
        _ kind: TransactionKind = .deferred,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try await serializer.async { db in try db.inTransaction(kind, block) }
    }

    /// Async twin of `inSavepoint(_:)`.
    public func inSavepoint(_ block: @escaping @Sendable (Database) throws -> TransactionCompletion) async throws {
        try await serializer.async { db in try db.inSavepoint(block) }
    }

    /// Async twin of `read(_:)`.
    public func read<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serializer.async { db in try db.readTransaction(block) }
    }

    /// Async twin of `write(_:)`.
    public func write<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serializer.async { db in try db.writeTransaction(block) }
    }

    /// Async twin of `close()`.
    public func close() async throws {
        try await serializer.close()
    }
}
