import Foundation

/// A value behind an `NSLock`. Used instead of `Synchronization.Mutex` because on Linux that
/// mutex waits on a futex directly, which ThreadSanitizer cannot see, so every access under it
/// would be reported as a race and real races would hide among the false ones.
///
/// `@unchecked Sendable` is safe: `value` is read and written only inside `withLock`.
final class LockedValue<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
