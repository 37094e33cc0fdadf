import Dispatch

/// A schema upgrade started with `DatabaseQueue.startMigration(_:)`: wait for it, await it, or
/// follow its progress.
///
/// ```swift
/// let upgrade = queue.startMigration(migrator)     // returns at once
/// Task { for await step in upgrade.progress { print(step.migration, step.completedSteps) } }
/// // ... serve requests: every block submitted from now on waits for the upgrade ...
/// try upgrade.wait()
/// ```
public final class MigrationHandle: Sendable {
    private enum State {
        case running(waiters: [CheckedContinuation<Void, any Error>])
        case finished(Result<Void, any Error>)
    }

    private let state = LockedValue(State.running(waiters: []))
    private let finished = DispatchSemaphore(value: 0)
    private let serializer: Serializer
    private let progressContinuation: AsyncStream<MigrationProgress>.Continuation

    /// Progress reports, in order; the stream ends when the upgrade ends.
    public let progress: AsyncStream<MigrationProgress>

    init(serializer: Serializer) {
        self.serializer = serializer
        (progress, progressContinuation) = AsyncStream.makeStream(of: MigrationProgress.self)
    }

    func report(_ progress: MigrationProgress) {
        progressContinuation.yield(progress)
    }

    func finish(_ result: Result<Void, any Error>) {
        progressContinuation.finish()
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard case .running(let waiters) = state else { return [] }
            state = .finished(result)
            return waiters
        }
        for waiter in waiters {
            waiter.resume(with: result)
        }
        // Wakes one blocked `wait()`; each waiter passes the signal on.
        finished.signal()
    }

    /// Whether the upgrade has ended, successfully or not.
    public var isFinished: Bool {
        state.withLock { state in
            if case .finished = state { return true }
            return false
        }
    }

    /// Blocks until the upgrade ends.
    ///
    /// - Throws: the migration's error (for example ``SerialDBError/Code/migrationFailed``
    ///   naming the failed step); ``SerialDBError/Code/reentrantCall`` from inside a block of
    ///   the queue, where waiting would deadlock; ``SerialDBError/Code/lockOrderCycle`` when
    ///   the upgrade waits (through other queues) for a queue whose block this thread runs.
    public func wait() throws {
        // Waiting for the upgrade is waiting for the queue: from inside another queue's block,
        // it can close a lock-order cycle, which is refused instead of hanging.
        let finished = finished
        try serializer.blockingWait(
            isOver: { [self] in isFinished },
            {
                finished.wait()
                finished.signal()
            })
        try result()
    }

    /// Suspends until the upgrade ends; async twin of `wait()`.
    public func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result = state.withLock { state -> Result<Void, any Error>? in
                switch state {
                case .running(let waiters):
                    state = .running(waiters: waiters + [continuation])
                    return nil
                case .finished(let result):
                    return result
                }
            }
            if let result { continuation.resume(with: result) }
        }
    }

    private func result() throws {
        let outcome = state.withLock { state -> Result<Void, any Error>? in
            if case .finished(let result) = state { return result }
            return nil
        }
        try outcome?.get()
    }
}
