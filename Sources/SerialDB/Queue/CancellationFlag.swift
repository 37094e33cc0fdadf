import Synchronization

/// Set when the task awaiting an async block is cancelled; read by the connection before each
/// statement so cancellation is seen even between statements, where `sqlite3_interrupt` has
/// nothing to stop.
final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
    }
}
