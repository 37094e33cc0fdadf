import Dispatch
import Foundation

// Waits with a bound, for tests of code that can deadlock when it is wrong: a regression then
// fails the test with a message within seconds instead of hanging `swift test`. A thread left
// stuck by such a regression is abandoned; the rest of the suite goes on.

/// The bound for waits that only a deadlock would exhaust: generous, so a loaded machine never
/// trips it, and short enough that a hang fails fast.
public let deadlockBound: Double = 60

/// Runs `body` on a new thread and waits at most `seconds` for it to return.
///
/// - Returns: whether `body` returned in time (`false`: it is most likely deadlocked).
public func finishes(within seconds: Double = deadlockBound, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success
}

/// Runs `body` on a new thread, waits at most `seconds`, and returns what it returned or threw.
///
/// - Throws: ``WaitTimeout`` when `body` did not return in time.
public func outcome<T: Sendable>(
    within seconds: Double = deadlockBound, _ body: @escaping @Sendable () throws -> T
) throws -> Result<T, any Error> {
    let result = Locked<Result<T, any Error>?>(nil)
    let finished = finishes(within: seconds) {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
    }
    guard finished else { throw WaitTimeout() }
    return result.withLock { $0! }
}

extension DispatchSemaphore {
    /// Waits at most `seconds` for a signal.
    ///
    /// - Returns: whether the signal came in time.
    public func wait(seconds: Double) -> Bool {
        wait(timeout: .now() + seconds) == .success
    }

    /// Waits for `count` signals, at most `seconds` for all of them together (not each: a
    /// deadlock must fail the test fast, not after `count` bounds).
    ///
    /// - Returns: whether all the signals came in time.
    public func wait(signals count: Int, seconds: Double = deadlockBound) -> Bool {
        let deadline = DispatchTime.now() + seconds
        return (0..<count).allSatisfy { _ in wait(timeout: deadline) == .success }
    }
}

/// Suspends until `task` ends, at most `timeout`.
///
/// - Throws: ``WaitTimeout`` when it did not end in time (the task is left to itself).
public func result<T: Sendable>(
    of task: Task<T, any Error>, within timeout: Duration = .seconds(deadlockBound)
) async throws -> Result<T, any Error> {
    let result = Locked<Result<T, any Error>?>(nil)
    let watcher = Task {
        let outcome = await task.result
        result.withLock { $0 = outcome }
    }
    do {
        try await waitUntil(timeout: timeout) { result.withLock { $0 != nil } }
    } catch {
        watcher.cancel()
        throw error
    }
    return result.withLock { $0! }
}

/// Runs blocking `body` (a socket read, a wait on another process) on a thread of its own and
/// suspends until it returns, at most `seconds`: an async test that blocked in place would hold
/// one of the cooperative pool's few threads (two on a 2-core machine) for as long, and the
/// tests running beside it, whose tasks need those threads, would wait with it.
///
/// - Throws: ``WaitTimeout`` when `body` did not return in time; what `body` threw.
public func onOwnThread<T: Sendable>(
    within seconds: Double = deadlockBound, _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    Thread.detachNewThread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
    }
    try await waitUntil(timeout: .seconds(seconds)) { result.withLock { $0 != nil } }
    return try result.withLock { $0! }.get()
}
