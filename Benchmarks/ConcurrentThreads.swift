import Foundation
import Synchronization

/// Runs one body on several dedicated threads at once and waits for all of them, like the C
/// side's pthreads. (Dispatch's `concurrentPerform` would cap the width at the core count.)
///
/// The first error raises ``hasFailed`` so the other bodies can stop early; it is rethrown
/// once every thread has finished.
final class ConcurrentThreads: Sendable {
    private let failed = Atomic<Bool>(false)
    private let outcome = Mutex<(completed: Int, error: (any Error)?)>((0, nil))

    private init() {}

    /// Whether some body has thrown.
    var hasFailed: Bool { failed.load(ordering: .relaxed) }

    /// Starts `count` threads running `body(index, group)` and returns the sum of their results.
    static func run(count: Int, _ body: @escaping @Sendable (Int, ConcurrentThreads) throws -> Int) throws -> Int {
        let group = ConcurrentThreads()
        let finished = DispatchGroup()
        for index in 0..<count {
            finished.enter()
            let thread = Thread {
                defer { finished.leave() }
                do {
                    let completed = try body(index, group)
                    group.outcome.withLock { $0.completed += completed }
                } catch {
                    group.failed.store(true, ordering: .relaxed)
                    group.outcome.withLock { if $0.error == nil { $0.error = error } }
                }
            }
            thread.start()
        }
        finished.wait()
        let (completed, error) = group.outcome.withLock { $0 }
        if let error { throw error }
        return completed
    }
}
