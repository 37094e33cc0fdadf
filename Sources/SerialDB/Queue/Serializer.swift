import Dispatch
import Foundation
import Synchronization

/// The one place that knows about threads: it owns the connection and runs every block alone,
/// detects reentrant calls and lock-order cycles, bridges async callers, turns task
/// cancellation into `sqlite3_interrupt`, and holds the gate state that a failed migration closes.
///
/// Two paths lead to the connection, both through one lock:
/// - A blocking call with nothing in line takes the lock and runs its block on its own thread:
///   no thread hand-off, which is what makes contended writes cheap (a serial dispatch queue
///   wakes a sleeping waiter for every transaction). Blocking calls that find the lock taken
///   wait for it directly, as for a mutex, and count themselves in `directWaiters`.
/// - Async work, upgrades, `close`, and blocking calls made while any of those are pending go
///   through a serial dispatch queue first, so they keep their submission order: everything
///   submitted after `startMigration` returns sees `pendingJobs > 0` and lines up behind it.
///   A job in that line first lets the direct waiters that were already waiting when it was
///   submitted have their turn: a blocking call that has begun waiting counts as submitted.
///
/// Safe to share (`@unchecked Sendable`): `database` and `gate` are touched only while
/// holding `lock`; `directWaiters` only while holding `line`; `owner`, `pendingJobs` and
/// `nextJobID` are atomics; `interruptTarget` is a `LockedValue`.
final class Serializer: @unchecked Sendable {
    /// Why work may be refused before it runs. Guarded by `lock`.
    enum Gate {
        case open
        case closed
        case migrationFailed(SerialDBError)
    }

    private let lock = NSLock()
    private let database: Database
    private var gate = Gate.open
    /// The thread running a block now (0: none), to refuse reentrant calls at once and to
    /// find lock-order cycles.
    private let owner = Atomic<UInt>(0)
    /// Jobs submitted to `dispatchQueue` and not finished: while positive, blocking calls
    /// queue behind them instead of waiting for the lock directly. Raised only while holding
    /// `line`, so that a blocking call either sees it or is seen in `directWaiters`.
    private let pendingJobs = Atomic<Int>(0)
    /// Orders direct waiters before the jobs submitted after they began to wait.
    private let line = NSCondition()
    /// Blocking calls waiting for `lock` directly, counted while `pendingJobs` was 0: a job
    /// submitted after they began waiting waits for them. No new one is counted while a job is
    /// pending, so the count only falls while a job waits for it.
    private var directWaiters = 0
    private let dispatchQueue: DispatchQueue
    /// The queue's name, for error messages.
    let label: String
    /// What the connection's commits changed, for observations.
    let observations = ObservationHub()

    /// The connection handle while open, and the async job (if any) that may be interrupted.
    private struct InterruptTarget {
        var connection: InterruptHandle?
        var runningAsyncJob: UInt64?
    }

    private let interruptTarget: LockedValue<InterruptTarget>
    private let nextJobID = Atomic<UInt64>(1)

    init(database: Database, label: String) {
        self.database = database
        self.label = label
        dispatchQueue = DispatchQueue(label: "SerialDB." + label)
        let interruptTarget = LockedValue(InterruptTarget(connection: database.interruptHandle))
        self.interruptTarget = interruptTarget
        // A block may close the connection itself (`db.close()`): forget the handle under the
        // interrupt lock before SQLite frees it, so no interrupt can reach a freed (or reused)
        // connection. The gate closes when that block returns.
        database.willClose = { interruptTarget.withLock { $0.connection = nil } }
    }

    /// Jobs in line and not finished (for tests).
    var pendingJobCount: Int { pendingJobs.load(ordering: .acquiring) }

    /// The thread running one of this queue's blocks now, 0 when none.
    var owningThread: UInt { owner.load(ordering: .relaxed) }

    // MARK: - Entry points

    /// Runs `block` with the connection and waits for it.
    ///
    /// - Throws: ``SerialDBError/Code/reentrantCall`` at once when called from a block of this
    ///   queue (waiting for ourselves would deadlock); ``SerialDBError/Code/lockOrderCycle`` when
    ///   waiting would close a cycle with other threads; the gate's error; the block's error.
    func sync<T>(_ block: (Database) throws -> T) throws -> T {
        let thread = ThreadIdentity.current
        try checkNotReentrant(thread)
        if lock.try() {
            if pendingJobs.load(ordering: .acquiring) == 0 {
                return try runHoldingLock(thread) { try perform(block) }
            }
            lock.unlock()
        }
        return try syncAfterWaiting(thread, block)
    }

    /// The contended path of ``sync(_:)``: the only one that consults the wait-for graph.
    private func syncAfterWaiting<T>(_ thread: UInt, _ block: (Database) throws -> T) throws -> T {
        let graph = WaitForGraph.shared
        try graph.beginWaiting(thread, for: self)
        line.lock()
        if pendingJobs.load(ordering: .acquiring) == 0 {
            directWaiters += 1
            line.unlock()
            lock.lock()
            graph.endWaiting(thread)
            leaveDirectWaiters()
            return try runHoldingLock(thread) { try perform(block) }
        }
        line.unlock()
        // Async work or an upgrade is in line: keep submission order by queueing behind it.
        // `DispatchQueue.sync` runs the closure on this thread.
        return try dispatchQueue.sync {
            lock.lock()
            graph.endWaiting(thread)
            return try runHoldingLock(ThreadIdentity.current) { try perform(block) }
        }
    }

    /// Runs `block` without blocking the caller's thread. Cancelling the task makes the call
    /// throw `CancellationError` at once if the block has not started (it never will), and
    /// interrupts its statement if it has.
    func async<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkNotReentrant()
        try Task.checkCancellation()
        let job = AsyncJob<T>(id: nextJobID.add(1, ordering: .relaxed).oldValue)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                guard job.suspend(continuation) else { return }
                enqueue(unlessAbandoned: { job.isCancelledBeforeStart }) {
                    guard job.start() else { return }
                    let result = Result { try self.performCancellable(job, block) }
                    // Before the caller resumes: whoever awaited a commit finds it published.
                    self.publishCommits()
                    job.finish(result)
                }
            }
        } onCancel: {
            guard job.cancel() else { return }
            interruptTarget.withLock { target in
                // Only the job this task submitted: never a later job that reuses the connection.
                if target.runningAsyncJob == job.id, let connection = target.connection {
                    connection.interrupt()
                }
            }
        }
    }

    /// Runs `job` with the connection after the work in line, whatever the gate says (the
    /// connection may be closed): for housekeeping nobody waits for, such as removing hooks.
    func runLater(_ job: @escaping @Sendable (Database) -> Void) {
        enqueue { job(self.database) }
    }

    /// Interrupts whatever statement is running now, from any thread.
    func interrupt() {
        interruptTarget.withLock { target in
            if let connection = target.connection { connection.interrupt() }
        }
    }

    /// Waits for work in line, then closes the connection; the gate stays closed.
    func close() throws {
        let thread = ThreadIdentity.current
        try checkNotReentrant(thread)
        let graph = WaitForGraph.shared
        try graph.beginWaiting(thread, for: self)
        submitJob()
        defer { pendingJobs.subtract(1, ordering: .acquiringAndReleasing) }
        dispatchQueue.sync {
            waitForDirectWaiters()
            lock.lock()
            graph.endWaiting(thread)
            runHoldingLock(ThreadIdentity.current) { closeConnection() }
        }
    }

    /// Async twin of ``close()``: suspends until the work in line is done and the connection closed.
    func close() async throws {
        try checkNotReentrant()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            enqueue {
                self.closeConnection()
                continuation.resume()
            }
        }
    }

    /// Call with `lock` held.
    private func closeConnection() {
        if case .closed = gate { return }
        observations.connectionWillClose()
        interruptTarget.withLock { $0.connection = nil }
        database.close()
        gate = .closed
    }

    /// Queues an upgrade: it runs after the work already in line (blocking calls already
    /// waiting included), and everything submitted after this call returns waits behind it. If
    /// it fails, the gate refuses all later work with `gateError(error)` until an upgrade succeeds.
    func submitUpgrade(
        _ upgrade: @escaping @Sendable (Database) throws -> Void,
        gateError: @escaping @Sendable (any Error) -> SerialDBError,
        completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        enqueue {
            if case .closed = self.gate {
                return completion(.failure(self.closedError()))
            }
            do {
                try self.performUnchecked(upgrade)
                if case .closed = self.gate {
                    // The step closed the connection itself: the queue stays closed.
                } else {
                    self.gate = .open
                }
                self.publishCommits()
                completion(.success(()))
            } catch {
                if case .closed = self.gate {} else { self.gate = .migrationFailed(gateError(error)) }
                completion(.failure(error))
            }
        }
    }

    /// Blocks the calling thread until `isOver` holds, as a wait for this queue (a thread that
    /// waits for this queue's upgrade needs the queue): refused with
    /// ``SerialDBError/Code/lockOrderCycle`` when the wait would close a cycle.
    func blockingWait(isOver: @escaping @Sendable () -> Bool, _ wait: () -> Void) throws {
        let thread = ThreadIdentity.current
        try checkNotReentrant(thread)
        let graph = WaitForGraph.shared
        try graph.beginWaiting(thread, for: self, isOver: isOver)
        defer { graph.endWaiting(thread) }
        wait()
    }

    /// Throws ``SerialDBError/Code/reentrantCall`` when called from a block of this queue.
    /// Inlined (one load and a compare on every call); the error is built out of line.
    @inline(__always)
    func checkNotReentrant(_ thread: UInt = ThreadIdentity.current) throws {
        if owner.load(ordering: .relaxed) == thread { throw reentrantCallError() }
    }

    @inline(never)
    private func reentrantCallError() -> SerialDBError {
        SerialDBError(
            .reentrantCall,
            "A DatabaseQueue method was called from inside a block of the same queue (\(label)); "
                + "waiting for itself would deadlock. Use the Database the block received, "
                + "and db.inSavepoint to nest a transaction.")
    }

    // MARK: - Running blocks

    /// Counts a job as pending, so that every blocking call made after this returns lines up
    /// behind it, and every blocking call that began waiting before is counted in
    /// `directWaiters` (the job lets those go first).
    private func submitJob() {
        line.lock()
        pendingJobs.add(1, ordering: .acquiringAndReleasing)
        line.unlock()
    }

    /// Submits `job` to run, in submission order, holding the lock. A job found abandoned when
    /// its turn comes is skipped without waiting for the lock.
    private func enqueue(
        unlessAbandoned abandoned: @escaping @Sendable () -> Bool = { false }, _ job: @escaping @Sendable () -> Void
    ) {
        submitJob()
        dispatchQueue.async {
            if !abandoned() {
                self.waitForDirectWaiters()
                self.lock.lock()
                self.runHoldingLock(ThreadIdentity.current, job)
            }
            self.pendingJobs.subtract(1, ordering: .acquiringAndReleasing)
        }
    }

    /// Waits until the blocking calls that were waiting directly when the current job was
    /// submitted have had their turn.
    private func waitForDirectWaiters() {
        line.lock()
        while directWaiters > 0 { line.wait() }
        line.unlock()
    }

    /// A direct waiter got the lock.
    private func leaveDirectWaiters() {
        line.lock()
        directWaiters -= 1
        if directWaiters == 0 { line.broadcast() }
        line.unlock()
    }

    /// Runs `body` with the lock already taken, marked as owned by `thread`; releases the lock.
    /// Commits the block made are published to observations first: after the commit, never
    /// inside it, and before any later block (an observation's fetch) can run.
    private func runHoldingLock<T>(_ thread: UInt, _ body: () throws -> T) rethrows -> T {
        owner.store(thread, ordering: .relaxed)
        defer {
            publishCommits()
            owner.store(0, ordering: .relaxed)
            lock.unlock()
        }
        return try body()
    }

    /// Tells observations what the blocks that ran committed. Call with `lock` held.
    @inline(__always)
    private func publishCommits() {
        if observations.hasPendingCommit { observations.publishCommits() }
    }

    private func closedError() -> SerialDBError {
        SerialDBError(.closed, "The queue \(label) is closed. Open a new DatabaseQueue to use the database.")
    }

    /// The gate's check, then the block, run inline (see `performUnchecked`).
    private func perform<T>(_ block: (Database) throws -> T) throws -> T {
        switch gate {
        case .open: return try performUnchecked(block)
        case .closed: throw closedError()
        case .migrationFailed(let error): throw error
        }
    }

    /// Runs the block; a transaction it leaves open is rolled back and reported. A block that
    /// closed the connection closes the queue.
    // Inlined into `perform`: one generic call less on every round trip.
    @inline(__always)
    private func performUnchecked<T>(_ block: (Database) throws -> T) throws -> T {
        let result: T
        do {
            result = try block(database)
        } catch {
            if database.isClosed { gate = .closed }
            throw database.rollbackAfterFailure(error)
        }
        if database.isClosed { gate = .closed }
        if database.isInsideTransaction {
            throw database.rollbackAfterFailure(
                SerialDBError(
                    .transactionLeftOpen,
                    "A block on queue \(label) returned with a transaction still open; it was rolled back. "
                        + "Use inTransaction, or end the transaction you begin."))
        }
        return result
    }

    private func performCancellable<T>(_ job: AsyncJob<T>, _ block: (Database) throws -> T) throws -> T {
        let flag = job.flag
        if flag.isCancelled { throw CancellationError() }
        interruptTarget.withLock { $0.runningAsyncJob = job.id }
        database.isCancelled = { flag.isCancelled }
        defer {
            database.isCancelled = nil
            interruptTarget.withLock { $0.runningAsyncJob = nil }
        }
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
