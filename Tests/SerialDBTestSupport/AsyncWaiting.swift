/// Suspends until `condition` holds, checking every few milliseconds. Async tests use it
/// instead of a semaphore: a blocking wait parks one of the few cooperative threads (two on a
/// 2-core machine), and two such waits in tests running in parallel deadlock the pool.
public func waitUntil(timeout: Duration = .seconds(120), _ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimeout() }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// A bounded wait ran out of time: what it waited for most likely deadlocked.
public struct WaitTimeout: Error, CustomStringConvertible {
    public init() {}

    public var description: String { "timed out waiting: the code under test most likely deadlocked" }
}
