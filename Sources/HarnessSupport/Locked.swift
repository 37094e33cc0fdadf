import Foundation

/// A value behind an `NSLock`, for state shared between the threads of a test, a stress run or a
/// benchmark.
///
/// Not `Synchronization.Mutex`: on Linux its lock is a futex that ThreadSanitizer cannot see, so
/// every access under it is reported as a race when the suite runs with `--sanitize=thread`.
/// `NSLock` is a pthread mutex, which ThreadSanitizer understands.
///
/// `@unchecked Sendable` is safe: every access to `value` goes through `lock`.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    /// Wraps `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
