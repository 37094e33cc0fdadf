import Dispatch

// The async twins: same names, same behaviour, but the caller suspends instead of blocking a
// thread. Cancelling the calling task skips a block that has not started and interrupts the
// statement of one that has; either way the call throws `CancellationError`.

extension DatabasePool {
    /// Async twin of `read(_:)`: the read runs on a reader connection off the caller's thread.
    public func read<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try checkNotReentrant()
        try Task.checkCancellation()
        let ticket = readers.takeTicket()
        let cancellation = CancellationFlag()
        return try await measured(CallSite(file: file, line: line, function: function)) { started in
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                    DispatchQueue.global().async {
                        continuation.resume(
                            with: Result {
                                try self.readers.read(
                                    thread: ThreadIdentity.current, ticket: ticket, cancellation: cancellation
                                ) { db in
                                    started()
                                    return try block(db)
                                }
                            })
                    }
                }
            } onCancel: {
                cancellation.cancel()
                readers.cancel(ticket: ticket)
            }
        }
    }

    /// Async twin of `write(_:)`.
    public func write<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try checkNotReentrant()
        return try await measured(CallSite(file: file, line: line, function: function)) { started in
            try await writer.async { db in
                started()
                return try db.writeTransaction(block)
            }
        }
    }

    /// Async twin of `writerDatabase(_:)`.
    public func writerDatabase<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try checkNotReentrant()
        return try await measured(CallSite(file: file, line: line, function: function)) { started in
            try await writer.async { db in
                started()
                return try block(db)
            }
        }
    }

    /// Async twin of `inDatabase(_:)`: the same as the async `writerDatabase(_:)`.
    public func inDatabase<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await writerDatabase(file: file, line: line, function: function, block)
    }

    /// Async twin of `inSavepoint(_:)`.
    public func inSavepoint(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try checkNotReentrant()
        try await measured(CallSite(file: file, line: line, function: function)) { started in
            try await writer.async { db in
                started()
                try db.inSavepoint(block)
            }
        }
    }

    /// Async twin of `inTransaction(_:_:)`.
    public func inTransaction(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ kind: TransactionKind = .deferred,
        _ block: @escaping @Sendable (Database) throws -> TransactionCompletion
    ) async throws {
        try checkNotReentrant()
        try await measured(CallSite(file: file, line: line, function: function)) { started in
            try await writer.async { db in
                started()
                try db.inTransaction(kind, block)
            }
        }
    }

    /// Async twin of ``close()``.
    public func close() async throws {
        try checkNotReentrant()
        try await writer.close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.readers.close()
                continuation.resume()
            }
        }
    }
}
