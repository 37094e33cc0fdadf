import Foundation

/// Runs a call into the store on a thread of its own and waits for it at most a deadline: the
/// admin listener must answer (503, "did not answer") even when the store hangs on a lock or a
/// lost connection. A call that misses its deadline finishes on its thread whenever the store
/// lets it; while `limit` such calls are still waiting, later ones are not started at all, so a
/// hung store cannot pile up threads.
final class BoundedStoreCalls: @unchecked Sendable {
    // Safe to share: `outstanding` is behind `condition`; each call's slot is behind it too.
    private let condition = NSCondition()
    private var outstanding = 0
    private let limit: Int

    /// At most `limit` calls waiting on the store at once.
    init(limit: Int = 4) {
        self.limit = limit
    }

    /// What `body` returned or threw, or `nil` when it did not finish within `seconds` (or was
    /// not started because earlier calls are still waiting on the store).
    func run<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () throws -> T) -> Result<T, any Error>? {
        let started: Bool = condition.withLock {
            guard outstanding < limit else { return false }
            outstanding += 1
            return true
        }
        guard started else { return nil }
        let slot = Slot<T>()
        Thread.detachNewThread { [self] in
            let result = Result { try body() }
            condition.withLock {
                slot.result = result
                outstanding -= 1
                condition.broadcast()
            }
        }
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while slot.result == nil && condition.wait(until: deadline) {}
            return slot.result
        }
    }

    /// Where a call's thread leaves its result (behind the owner's `condition`).
    private final class Slot<T>: @unchecked Sendable {
        // Safe to share: read and written only while holding `BoundedStoreCalls.condition`.
        var result: Result<T, any Error>?
    }
}
