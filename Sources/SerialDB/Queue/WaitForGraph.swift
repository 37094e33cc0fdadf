/// Which thread waits for which queue, process-wide, to refuse a wait that would close a
/// lock-order cycle (thread 1 runs A's block and calls B while thread 2 runs B's block and calls
/// A) instead of letting both threads hang forever.
///
/// Only a caller that actually has to wait registers here, so the uncontended path never
/// touches it. The other half of the graph, which thread runs a queue's block, is each
/// serializer's `owningThread`.
///
/// Why the thread that closes a cycle always sees it: every owner in the cycle stored itself as
/// owner before its block made the call that waits, and every other wait was registered under
/// this lock before the closing one; so the closing thread's walk finds every edge. A walk never
/// reports a cycle that is not there either: a thread registers only after it released what it
/// released (the lock orders the owner stores before the registration that a walk reads).
final class WaitForGraph: Sendable {
    /// The graph of this process.
    static let shared = WaitForGraph()

    /// What a thread waits for.
    private struct Wait {
        let queue: Serializer
        /// For a wait that ends by an event rather than by taking the queue (an upgrade that
        /// finished): true once the thread no longer needs the queue, though it has not woken yet.
        let isOver: (@Sendable () -> Bool)?
    }

    /// Thread → what it waits for.
    private let waits = LockedValue<[UInt: Wait]>([:])

    /// Records that `thread` is about to wait for `queue`.
    ///
    /// - Parameter isOver: for a wait that ends by an event, whether the event happened.
    /// - Throws: ``SerialDBError/Code/lockOrderCycle`` naming the queues, without recording the
    ///   wait, when `queue`'s block is run by a thread that (through any number of queues) waits
    ///   for a queue `thread` is running a block of.
    func beginWaiting(_ thread: UInt, for queue: Serializer, isOver: (@Sendable () -> Bool)? = nil) throws {
        let cycle = waits.withLock { waits -> [Serializer]? in
            if let cycle = Self.cycle(from: thread, to: queue, in: waits) { return cycle }
            waits[thread] = Wait(queue: queue, isOver: isOver)
            return nil
        }
        if let cycle { throw Self.cycleError(cycle) }
    }

    /// Records that `thread` no longer waits (it got the queue, or gave up).
    func endWaiting(_ thread: UInt) {
        waits.withLock { _ = $0.removeValue(forKey: thread) }
    }

    /// Follows queue → owning thread → queue that thread waits for → ..., and returns the
    /// queues passed if the walk comes back to `thread`.
    private static func cycle(from thread: UInt, to queue: Serializer, in waits: [UInt: Wait]) -> [Serializer]? {
        var path = [queue]
        var current = queue
        // Each step uses up one registered wait; more steps than that means a cycle that does
        // not pass through `thread`, which its own closing thread has already refused.
        for _ in 0...waits.count {
            let owner = current.owningThread
            if owner == 0 { return nil }
            if owner == thread { return path }
            guard let next = waits[owner], next.isOver?() != true else { return nil }
            path.append(next.queue)
            current = next.queue
        }
        return nil
    }

    private static func cycleError(_ cycle: [Serializer]) -> SerialDBError {
        let links = zip(cycle, cycle.dropFirst()).map { held, wanted in
            "\(held.label)'s block runs on a thread that waits for \(wanted.label)"
        }
        let held = cycle[cycle.count - 1].label
        return SerialDBError(
            .lockOrderCycle,
            "Waiting for queue \(cycle[0].label) would deadlock: "
                + (links + ["this thread runs \(held)'s block"]).joined(separator: ", ")
                + " (a lock-order cycle through \(cycle.count) queues). Nothing ran. Call the queues in one "
                + "fixed order everywhere, or make the inner call after the outer block returns.")
    }
}
