import CSQLite
import Dispatch
import Synchronization

/// The one place that knows about threads: it owns the connection and runs every block on one
/// private serial dispatch queue, detects reentrant calls, bridges async callers, turns task
/// cancellation into `sqlite3_interrupt`, and holds the gate state that a failed migration closes.
///
/// Safe to share (`@unchecked Sendable`): `database` and `gate` are touched only by blocks
/// running on `dispatchQueue`, which runs one block at a time; everything read from other
/// threads (`interruptTarget`, `nextJobID`) is behind a `Mutex` or an `Atomic`.
final class Serializer: @unchecked Sendable {
    /// Why work may be refused before it runs. Read and written on `dispatchQueue` only.
    enum Gate {
        case open
        case closed
        case migrationFailed(SerialDBError)
    }

    private let dispatchQueue: DispatchQueue
    private let onQueueKey = DispatchSpecificKey<Void>()
    private let database: Database
    private var gate = Gate.open
    private let label: String

    /// The connection handle while open, and the async job (if any) that may be interrupted.
    private struct InterruptTarget {
        var connection: ConnectionHandle?
        var runningAsyncJob: UInt64?
    }

    private let interruptTarget: Mutex<InterruptTarget>
    private let nextJobID = Atomic<UInt64>(1)

    init(database: Database, label: String) {
        self.database = database
        self.label = label
        dispatchQueue = DispatchQueue(label: "SerialDB." + label)
        dispatchQueue.setSpecific(key: onQueueKey, value: ())
        interruptTarget = Mutex(InterruptTarget(connection: database.handle.map(ConnectionHandle.init)))
    }

    // MARK: - Entry points

    /// Runs `block` on the queue and waits for it.
    ///
    /// - Throws: ``SerialDBError/Code/reentrantCall`` at once when called from a block of this
    ///   queue (waiting for ourselves would deadlock); the gate's error; the block's error.
    func sync<T>(_ block: (Database) throws -> T) throws -> T {
        try checkNotReentrant()
        return try dispatchQueue.sync { try perform(block) }
    }

    /// Runs `block` on the queue without blocking the caller's thread. Cancelling the task
    /// skips the block if it has not started, and interrupts its statement if it has.
    func async<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkNotReentrant()
        try Task.checkCancellation()
        let flag = CancellationFlag()
        let jobID = nextJobID.add(1, ordering: .relaxed).oldValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                dispatchQueue.async {
                    continuation.resume(with: Result { try self.performCancellable(jobID, flag, block) })
                }
            }
        } onCancel: {
            flag.cancel()
            interruptTarget.withLock { target in
                // Only the job this task submitted: never a later job that reuses the connection.
                if target.runningAsyncJob == jobID, let connection = target.connection {
                    sqlite3_interrupt(connection.pointer)
                }
            }
        }
    }

    /// Interrupts whatever statement is running now, from any thread.
    func interrupt() {
        interruptTarget.withLock { target in
            if let connection = target.connection { sqlite3_interrupt(connection.pointer) }
        }
    }

    /// Waits for work in line, then closes the connection; the gate stays closed.
    func close() throws {
        try checkNotReentrant()
        dispatchQueue.sync { closeOnQueue() }
    }

    /// Async twin of ``close()``: suspends until the work in line is done and the connection closed.
    func close() async throws {
        try checkNotReentrant()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            dispatchQueue.async {
                self.closeOnQueue()
                continuation.resume()
            }
        }
    }

    private func closeOnQueue() {
        if case .closed = gate { return }
        interruptTarget.withLock { $0.connection = nil }
        database.close()
        gate = .closed
    }

    /// Queues an upgrade: it runs after the work already in line, and everything submitted
    /// after this call returns waits behind it (the queue is FIFO). If it fails, the gate
    /// refuses all later work with `gateError(error)` until an upgrade succeeds.
    func submitUpgrade(
        _ upgrade: @escaping @Sendable (Database) throws -> Void,
        gateError: @escaping @Sendable (any Error) -> SerialDBError,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        dispatchQueue.async {
            if case .closed = self.gate {
                return completion(.failure(self.closedError()))
            }
            do {
                try self.performUnchecked(upgrade)
                self.gate = .open
                completion(.success(()))
            } catch {
                self.gate = .migrationFailed(gateError(error))
                completion(.failure(error))
            }
        }
    }

    /// Throws ``SerialDBError/Code/reentrantCall`` when called from a block of this queue.
    func checkNotReentrant() throws {
        if DispatchQueue.getSpecific(key: onQueueKey) != nil {
            throw SerialDBError(
                .reentrantCall,
                "A DatabaseQueue method was called from inside a block of the same queue (\(label)); "
                    + "waiting for itself would deadlock. Use the Database the block received, "
                    + "and db.inSavepoint to nest a transaction.")
        }
    }

    // MARK: - Running blocks

    private func closedError() -> SerialDBError {
        SerialDBError(.closed, "The queue \(label) is closed. Open a new DatabaseQueue to use the database.")
    }

    private func perform<T>(_ block: (Database) throws -> T) throws -> T {
        switch gate {
        case .open: break
        case .closed: throw closedError()
        case .migrationFailed(let error): throw error
        }
        return try performUnchecked(block)
    }

    /// Runs the block; a transaction it leaves open is rolled back and reported.
    private func performUnchecked<T>(_ block: (Database) throws -> T) throws -> T {
        let result: T
        do {
            result = try block(database)
        } catch {
            database.rollbackAfterFailure()
            throw error
        }
        if database.isInsideTransaction {
            database.rollbackAfterFailure()
            throw SerialDBError(
                .transactionLeftOpen,
                "A block on queue \(label) returned with a transaction still open; it was rolled back. "
                    + "Use inTransaction, or end the transaction you begin.")
        }
        return result
    }

    private func performCancellable<T>(
        _ jobID: UInt64, _ flag: CancellationFlag, _ block: (Database) throws -> T
    ) throws -> T {
        if flag.isCancelled { throw CancellationError() }
        interruptTarget.withLock { $0.runningAsyncJob = jobID }
        database.isCancelled = { flag.isCancelled }
        defer {
            database.isCancelled = nil
            interruptTarget.withLock { $0.runningAsyncJob = nil }
        }
        do {
            return try perform(block)
        } catch {
            // Interrupted statements and statements refused after cancellation both mean
            // "cancelled" to the caller.
            if flag.isCancelled { throw CancellationError() }
            throw error
        }
    }
}

/// A `sqlite3*` that may cross threads: SerialDB passes it only to `sqlite3_interrupt`, which
/// SQLite documents as safe to call from any thread while the connection is open; it is
/// cleared under the same lock before the connection closes.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
