/// One async call on its way through the queue. Cancelled while it waits for its turn, its
/// caller is resumed at once with `CancellationError` and its block never runs; cancelled while
/// it runs, its statement is interrupted and its caller is resumed when the block returns.
///
/// The continuation is resumed exactly once, by whichever of `cancel()` and `finish(_:)` owns it
/// in the current state.
final class AsyncJob<T: Sendable>: Sendable {
    private enum State {
        /// Submitted; the caller has not handed over its continuation yet.
        case submitted
        /// The caller is suspended, waiting for the job's turn.
        case waiting(CheckedContinuation<T, any Error>)
        /// The block is running: only `finish(_:)` resumes the caller now.
        case running(CheckedContinuation<T, any Error>)
        /// Cancelled before it started: the caller was (or will be) resumed with CancellationError.
        case cancelled
        /// The caller was resumed with the block's result.
        case finished
    }

    /// Identifies the job to the interrupt target, so cancelling it never interrupts a later job.
    let id: UInt64
    /// Read by the connection before each statement once the block runs.
    let flag = CancellationFlag()
    private let state = LockedValue(State.submitted)

    init(id: UInt64) {
        self.id = id
    }

    /// Hands over the suspended caller's continuation.
    ///
    /// - Returns: `false` when the job was cancelled already: the continuation has been resumed
    ///   with `CancellationError`, and the job must not be queued.
    func suspend(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            guard case .submitted = state else { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Whether the job was cancelled before its turn (it will be skipped).
    var isCancelledBeforeStart: Bool {
        state.withLock { state in
            if case .cancelled = state { return true }
            return false
        }
    }

    /// Called when the job's turn comes, holding the connection.
    ///
    /// - Returns: whether the block should run (`false`: it was cancelled while waiting).
    func start() -> Bool {
        state.withLock { state in
            guard case .waiting(let continuation) = state else { return false }
            state = .running(continuation)
            return true
        }
    }

    /// Resumes the caller with the block's outcome.
    func finish(_ result: Result<T, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard case .running(let continuation) = state else { return nil }
            state = .finished
            return continuation
        }
        continuation?.resume(with: result)
    }

    /// Cancels the job: a job that has not started is abandoned and its caller resumed now.
    ///
    /// - Returns: whether the block is running (or done), so its statement may need an interrupt.
    func cancel() -> Bool {
        flag.cancel()
        let (continuation, started) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Bool) in
            switch state {
            case .submitted:
                state = .cancelled
                return (nil, false)
            case .waiting(let continuation):
                state = .cancelled
                return (continuation, false)
            case .running, .finished:
                return (nil, true)
            case .cancelled:
                return (nil, false)
            }
        }
        continuation?.resume(throwing: CancellationError())
        return started
    }
}
