import Synchronization

/// What an interrupt of a queue may reach: the connection while it is open, and the async job
/// running on it now, so that cancelling a task interrupts the statement of the job that task
/// submitted and never a later job that reuses the connection.
final class InterruptTarget: Sendable {
    private struct Target {
        var connection: InterruptHandle?
        var runningAsyncJob: UInt64?
    }

    private let target: LockedValue<Target>
    private let nextJobID = Atomic<UInt64>(1)

    init(connection: InterruptHandle?) {
        target = LockedValue(Target(connection: connection))
    }

    /// A number for a new async job, never given to another.
    func newJobID() -> UInt64 {
        nextJobID.add(1, ordering: .relaxed).oldValue
    }

    /// The connection is about to be freed: no interrupt may reach it (or a connection that
    /// reuses its memory) from now on.
    func forgetConnection() {
        target.withLock { $0.connection = nil }
    }

    /// Interrupts whatever statement is running now.
    func interrupt() {
        target.withLock { target in
            if let connection = target.connection { connection.interrupt() }
        }
    }

    /// Interrupts the statement of the async job `id` if it is the one running now.
    func interrupt(job id: UInt64) {
        target.withLock { target in
            if target.runningAsyncJob == id, let connection = target.connection {
                connection.interrupt()
            }
        }
    }

    /// Runs `body` as the async job `id`, the one ``interrupt(job:)`` with that id reaches.
    func running<T>(job id: UInt64, _ body: () throws -> T) rethrows -> T {
        target.withLock { $0.runningAsyncJob = id }
        defer { target.withLock { $0.runningAsyncJob = nil } }
        return try body()
    }
}
