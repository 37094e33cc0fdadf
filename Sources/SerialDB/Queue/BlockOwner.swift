import Synchronization

/// Which thread runs a queue's block now: the queue's reentrancy check, and the half of the
/// process's ``WaitForGraph`` that says who holds the queue (the graph holds the other half,
/// who waits for it).
///
/// Not copyable (it holds an atomic): the serializer keeps it in a `let`, so every call is a
/// direct, inlined load or store.
struct BlockOwner: ~Copyable {
    /// The owning thread, 0 when none.
    private let owner = Atomic<UInt>(0)
    /// The queue's name, for the error message.
    private let label: String

    init(label: String) {
        self.label = label
    }

    /// The thread running a block now, 0 when none.
    @inline(__always)
    var thread: UInt { owner.load(ordering: .relaxed) }

    /// Records `thread` as running a block (0: none runs). Call holding the queue's lock.
    @inline(__always)
    func set(_ thread: UInt) {
        owner.store(thread, ordering: .relaxed)
    }

    /// Throws ``SerialDBError/Code/reentrantCall`` when `thread` runs a block of this queue:
    /// waiting for itself would deadlock. Inlined (one load and a compare on every call); the
    /// error is built out of line.
    @inline(__always)
    func checkNotReentrant(_ thread: UInt) throws {
        if owner.load(ordering: .relaxed) == thread { throw reentrantCallError() }
    }

    /// Checks that `thread` may wait for `queue`, and records that it waits: refused with
    /// ``SerialDBError/Code/reentrantCall`` when it runs the queue's block, with
    /// ``SerialDBError/Code/lockOrderCycle`` when the wait would close a cycle. The caller ends
    /// the wait with `WaitForGraph.shared.endWaiting(thread)`.
    func beginWaiting(
        _ thread: UInt, for queue: Serializer, isOver: (@Sendable () -> Bool)? = nil
    ) throws {
        try checkNotReentrant(thread)
        try WaitForGraph.shared.beginWaiting(thread, for: queue, isOver: isOver)
    }

    @inline(never)
    private func reentrantCallError() -> SerialDBError {
        SerialDBError(
            .reentrantCall,
            "A DatabaseQueue method was called from inside a block of the same queue (\(label)); "
                + "waiting for itself would deadlock. Use the Database the block received, "
                + "and db.inSavepoint to nest a transaction.")
    }
}
