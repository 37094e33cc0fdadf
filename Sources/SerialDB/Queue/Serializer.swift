import Foundation

/// The one place that owns a queue's connection and runs every block alone. It composes the
/// concerns, each in a type of its own:
/// - the order of work: ``SerialLine``, the lock and the line behind it (the direct-waiter
///   hand-off is drawn there);
/// - the gate: ``UpgradeGate``, which refuses work after a failed upgrade or a close;
/// - reentrancy and lock order: ``BlockOwner``, the thread running a block now, checked on
///   every call, and the process's ``WaitForGraph``, consulted only by callers that wait;
/// - async callers and their cancellation: `Serializer+Async.swift`, with ``AsyncJob`` and
///   ``InterruptTarget``, which turns task cancellation into `sqlite3_interrupt`.
///
/// Safe to share (`@unchecked Sendable`): `database` and `gate` are touched only during a
/// turn of `line` (holding its lock); `owner` is an atomic; `interrupts` and `line` are
/// thread-safe.
final class Serializer: @unchecked Sendable {
    let line: SerialLine
    let database: Database
    /// Guarded by `line`'s lock. Its blocks come in line order, so they ask the gate as work
    /// that comes after every finished upgrade (see ``UpgradeGate/refusesWorkAfterEveryFinishedUpgrade``).
    // Unchecked exclusivity: every access is made during a turn, so by one thread at a time,
    // and none overlaps another (no access passes `gate` inout to code that touches it). The
    // run-time check cost some 80 instructions on every block (a sixtieth of an empty write).
    @exclusivity(unchecked)
    private var gate: UpgradeGate
    /// The thread running a block now, to refuse reentrant calls at once and to find
    /// lock-order cycles.
    let owner: BlockOwner
    /// The queue's name, for error messages.
    let label: String
    /// What the connection's commits changed, for observations.
    let observations = ObservationHub()
    /// The connection handle while open, and the async job (if any) that may be interrupted.
    let interrupts: InterruptTarget

    init(database: Database, label: String) {
        self.database = database
        self.label = label
        line = SerialLine(label: label)
        owner = BlockOwner(label: label)
        gate = UpgradeGate(
            closedError: SerialDBError(
                .closed, "The queue \(label) is closed. Open a new DatabaseQueue to use the database."))
        let interrupts = InterruptTarget(connection: database.interruptHandle)
        self.interrupts = interrupts
        // A block may close the connection itself (`db.close()`): forget the handle under the
        // interrupt lock before SQLite frees it, so no interrupt can reach a freed (or reused)
        // connection. The gate closes when that block returns.
        database.willClose = { interrupts.forgetConnection() }
    }

    /// Jobs in line and not finished (for tests).
    var pendingJobCount: Int { line.pendingJobCount }

    /// The thread running one of this queue's blocks now, 0 when none.
    var owningThread: UInt { owner.thread }

    // MARK: - Entry points

    /// Runs `block` with the connection and waits for it.
    ///
    /// - Throws: ``SerialDBError/Code/reentrantCall`` at once when called from a block of this
    ///   queue (waiting for ourselves would deadlock); ``SerialDBError/Code/lockOrderCycle`` when
    ///   waiting would close a cycle with other threads; the gate's error; the block's error.
    func sync<T>(_ block: (Database) throws -> T) throws -> T {
        let thread = ThreadIdentity.current
        try checkNotReentrant(thread)
        if line.takeTurnAtOnce() {
            return try runHoldingLock(thread) { try perform(block) }
        }
        return try syncAfterWaiting(thread, block)
    }

    /// The contended path of ``sync(_:)``: the only one that consults the wait-for graph.
    private func syncAfterWaiting<T>(_ thread: UInt, _ block: (Database) throws -> T) throws -> T {
        let graph = WaitForGraph.shared
        try graph.beginWaiting(thread, for: self)
        return try line.waitForTurn(
            afterTakingLock: { graph.endWaiting(thread) },
            // Queued behind a job, this runs inside `DispatchQueue.sync`: on this thread, asked
            // again rather than assumed.
            { try runHoldingLock(ThreadIdentity.current) { try perform(block) } })
    }

    /// Runs `job` with the connection after the work in line, whatever the gate says (the
    /// connection may be closed): for housekeeping nobody waits for, such as removing hooks.
    func runLater(_ job: @escaping @Sendable (Database) -> Void) {
        enqueue { job(self.database) }
    }

    /// Interrupts whatever statement is running now, from any thread.
    func interrupt() {
        interrupts.interrupt()
    }

    /// Waits for work in line, then closes the connection; the gate stays closed.
    func close() throws {
        let thread = ThreadIdentity.current
        try owner.beginWaiting(thread, for: self)
        line.runInLine(
            afterTakingLock: { WaitForGraph.shared.endWaiting(thread) },
            { runHoldingLock(ThreadIdentity.current) { closeConnection() } })
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

    /// Call during a turn.
    private func closeConnection() {
        if gate.isClosed { return }
        observations.connectionWillClose()
        interrupts.forgetConnection()
        database.close()
        gate.close()
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
            if self.gate.isClosed { return completion(.failure(self.gate.refusal)) }
            // Its place is taken as its turn comes: the line already put it after the work
            // submitted before it, which is all the serializer's gate needs from tickets.
            let ticket = self.gate.upgradeSubmitted()
            do {
                try self.performUnchecked(upgrade)
                // If the step closed the connection itself, the gate stays closed.
                self.gate.upgradeFinished(ticket, error: nil)
                self.publishCommits()
                completion(.success(()))
            } catch {
                self.gate.upgradeFinished(ticket, error: gateError(error))
                completion(.failure(error))
            }
        }
    }

    /// Blocks the calling thread until `isOver` holds, as a wait for this queue (a thread that
    /// waits for this queue's upgrade needs the queue): refused with
    /// ``SerialDBError/Code/lockOrderCycle`` when the wait would close a cycle.
    func blockingWait(isOver: @escaping @Sendable () -> Bool, _ wait: () -> Void) throws {
        let thread = ThreadIdentity.current
        try owner.beginWaiting(thread, for: self, isOver: isOver)
        defer { WaitForGraph.shared.endWaiting(thread) }
        wait()
    }

    /// Throws ``SerialDBError/Code/reentrantCall`` when called from a block of this queue.
    @inline(__always)
    func checkNotReentrant(_ thread: UInt = ThreadIdentity.current) throws {
        try owner.checkNotReentrant(thread)
    }

    // MARK: - Running blocks

    /// Submits `job` to run, in submission order, during a turn of the line. A job found
    /// abandoned when its turn comes is skipped without waiting for the lock.
    func enqueue(
        unlessAbandoned abandoned: @escaping @Sendable () -> Bool = { false }, _ job: @escaping @Sendable () -> Void
    ) {
        line.submit(unlessAbandoned: abandoned) { self.runTurn(job) }
    }

    /// Runs `body` as a job's turn of the line (the lock taken), on the thread that runs it.
    @inline(__always)
    func runTurn(_ body: () -> Void) {
        runHoldingLock(ThreadIdentity.current, body)
    }

    /// Runs `body` during a turn (the lock already taken), marked as owned by `thread`; ends
    /// the turn. Commits the block made are published to observations first: after the commit,
    /// never inside it, and before any later block (an observation's fetch) can run.
    private func runHoldingLock<T>(_ thread: UInt, _ body: () throws -> T) rethrows -> T {
        owner.set(thread)
        defer {
            publishCommits()
            owner.set(0)
            line.endTurn()
        }
        return try body()
    }

    /// Tells observations what the blocks that ran committed. Call during a turn.
    @inline(__always)
    func publishCommits() {
        if observations.hasPendingCommit { observations.publishCommits() }
    }

    /// The gate's check, then the block, run inline (see `performUnchecked`). Call during a turn.
    func perform<T>(_ block: (Database) throws -> T) throws -> T {
        if gate.refusesWorkAfterEveryFinishedUpgrade { throw gate.refusal }
        return try performUnchecked(block)
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
            if database.isClosed { gate.close() }
            throw database.rollbackAfterFailure(error)
        }
        if database.isClosed { gate.close() }
        if database.isInsideTransaction {
            throw database.rollbackAfterFailure(
                SerialDBError(
                    .transactionLeftOpen,
                    "A block on queue \(label) returned with a transaction still open; it was rolled back. "
                        + "Use inTransaction, or end the transaction you begin."))
        }
        return result
    }
}
