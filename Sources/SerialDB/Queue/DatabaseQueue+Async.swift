// The async twins: same names, same behaviour, but the caller suspends instead of blocking a
// thread. Cancelling the calling task skips a block that has not started and interrupts the
// statement of one that has; either way the call throws `CancellationError`, after the block's
// work is rolled back (statements that end or undo work are never refused after cancellation),
// so the database keeps no trace of it and the connection is ready for the next block.

extension DatabaseQueue {
    /// Async twin of `inDatabase(_:)`.
    public func inDatabase<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await run(CallSite(file: file, line: line, function: function), block)
    }

    /// Async twin of `inTransaction(_:_:)`.
    public func inTransaction(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ kind: TransactionKind = .deferred,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try await run(CallSite(file: file, line: line, function: function)) { db in try db.inTransaction(kind, block) }
    }

    /// Async twin of `inSavepoint(_:)`.
    public func inSavepoint(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try await run(CallSite(file: file, line: line, function: function)) { db in try db.inSavepoint(block) }
    }

    /// Async twin of `read(_:)`.
    public func read<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await run(CallSite(file: file, line: line, function: function)) { db in try db.readTransaction(block) }
    }

    /// Async twin of `write(_:)`.
    public func write<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await run(CallSite(file: file, line: line, function: function)) { db in try db.writeTransaction(block) }
    }

    /// Async twin of `close()`.
    public func close() async throws {
        try await serializer.close()
    }

    /// Runs `block` through the serializer, measured when the configuration asks for it.
    private func run<T: Sendable>(
        _ site: CallSite, _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        guard let health else { return try await serializer.async(block) }
        return try await health.measure(site) { started in
            try await serializer.async { db in
                started()
                return try block(db)
            }
        }
    }
}
