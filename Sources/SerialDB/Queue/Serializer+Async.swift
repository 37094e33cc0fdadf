// Async callers: the block runs on the line's dispatch queue while the caller suspends, and
// the caller's task cancellation reaches the block through its `AsyncJob` and the
// `InterruptTarget`.
extension Serializer {
    /// Runs `block` without blocking the caller's thread. Cancelling the task makes the call
    /// throw `CancellationError` at once if the block has not started (it never will), and
    /// interrupts its statement if it has.
    func async<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkNotReentrant()
        try Task.checkCancellation()
        let job = AsyncJob<T>(id: interrupts.newJobID())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                guard job.suspend(continuation) else { return }
                // Straight to the line rather than through `enqueue`: its turn taken inside this
                // one closure, with no second closure wrapped around it.
                line.submit(unlessAbandoned: { job.isCancelledBeforeStart }) {
                    self.runTurn {
                        guard job.start() else { return }
                        let result = Result { try self.performCancellable(job, block) }
                        // Before the caller resumes: whoever awaited a commit finds it published.
                        self.publishCommits()
                        job.finish(result)
                    }
                }
            }
        } onCancel: {
            // Only the job this task submitted: never a later job that reuses the connection.
            if job.cancel() { interrupts.interrupt(job: job.id) }
        }
    }

    /// Runs `block` during the job's turn as the interruptible async job, with the connection
    /// checking the job's flag before each statement.
    private func performCancellable<T>(_ job: AsyncJob<T>, _ block: (Database) throws -> T) throws -> T {
        let flag = job.flag
        if flag.isCancelled { throw CancellationError() }
        return try interrupts.running(job: job.id) {
            database.isCancelled = { flag.isCancelled }
            defer { database.isCancelled = nil }
            do {
                return try perform(block)
            } catch {
                // Interrupted statements and statements refused after cancellation both mean
                // "cancelled" to the caller, once the work is undone: a transaction that could not
                // be rolled back is reported as such.
                if flag.isCancelled && !database.isInsideTransaction { throw CancellationError() }
                throw error
            }
        }
    }
}
