import Foundation

/// A value behind a lock, for collecting results from several threads in tests.
public final class Locked<Value>: @unchecked Sendable {
    // Safe: every access to `value` goes through `lock`.
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) {
        self.value = value
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
