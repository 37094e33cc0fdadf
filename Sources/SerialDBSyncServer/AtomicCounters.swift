import Synchronization

/// A fixed number of integers, each added to and read with a relaxed atomic operation: what a
/// request adds to the metrics costs a few atomic additions and no lock.
final class AtomicCounters: @unchecked Sendable {
    // Safe to share: the slots are allocated and initialised in init and freed in deinit, and
    // between the two only touched through `Atomic`'s own operations.
    private let slots: UnsafeMutablePointer<Atomic<Int>>
    /// How many counters there are.
    let count: Int

    /// `count` counters, all 0.
    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        for index in 0..<count { (slots + index).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// Adds `amount` to counter `index` (which may go down, for a gauge).
    func add(_ amount: Int, at index: Int) {
        precondition(index >= 0 && index < count, "counter \(index) of \(count)")
        slots[index].wrappingAdd(amount, ordering: .relaxed)
    }

    /// Counter `index` now.
    subscript(index: Int) -> Int {
        precondition(index >= 0 && index < count, "counter \(index) of \(count)")
        return slots[index].load(ordering: .relaxed)
    }
}
