import Dispatch

/// Runs `body` in a new task and blocks the calling thread until it ends, returning its result:
/// async work called from a harness's synchronous code. Never call it on a thread of Swift's
/// cooperative pool, which it would hold while the task needs one.
public func waitForTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            let value = try await body()
            outcome.withLock { $0 = .success(value) }
        } catch {
            outcome.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}
