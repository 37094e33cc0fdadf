import Dispatch
import Foundation
import Synchronization

/// The lock in front of a queue's connection and the line that orders who takes it: the
/// serializer's ordering, and nothing else (it knows no connection, gate or thread owner).
///
/// Two ways lead to the lock:
/// - A blocking call with nothing in line takes the lock on its own thread (``takeTurnAtOnce()``),
///   or, finding it taken, waits for it directly as for a mutex (``waitForTurn(afterTakingLock:_:)``),
///   counted in `directWaiters`: no thread hand-off, which is what makes contended writes cheap
///   (a serial dispatch queue wakes a sleeping waiter for every transaction).
/// - Jobs (async work, upgrades, `close`), and blocking calls made while a job is pending, go
///   through a serial dispatch queue first, so they keep their submission order: everything
///   submitted after ``submit(unlessAbandoned:_:)`` returns sees `pendingJobs > 0` and lines
///   up behind that job. A job first lets the direct waiters that were already waiting when
///   it was submitted have their turn: a blocking call that has begun waiting counts as submitted.
///
/// Whoever gets a turn holds the lock and ends the turn with ``endTurn()``.
///
/// The direct-waiter hand-off, with thread A running a block, B a blocking call and J a job:
///
///     time  A (has the lock)    B: blocking call                J: job submitted after B waits
///     ────  ──────────────────  ──────────────────────────────  ──────────────────────────────
///      1    runs its block      lock.try() fails
///      2                        line: pendingJobs == 0,
///                               so directWaiters = 1
///      3                        lock.lock() … sleeps            submitJob: line: pendingJobs = 1
///      4                                                        on the dispatch queue:
///                                                               waitForDirectWaiters: 1 > 0,
///                                                               line.wait() … sleeps
///      5    endTurn: unlock     wakes with the lock;
///                               directWaiters = 0, broadcast
///      6                        runs its block                  wakes; lock.lock() … sleeps
///      7                        endTurn: unlock                 wakes with the lock, runs
///
/// B goes first because it began waiting before J was submitted: it counts as submitted first.
/// A blocking call C made after step 3 sees `pendingJobs == 1` and queues on the dispatch queue
/// behind J, so C never overtakes J either.
///
/// Why `submitJob` raises `pendingJobs` holding `line`: B's steps 2 (read `pendingJobs`, then
/// count itself) and J's step 3 must not interleave. Without the `line` lock, B could read
/// `pendingJobs == 0`, then J could raise it and find `directWaiters == 0` before B counted
/// itself, and J would race B for the lock and might run first, though B began waiting before
/// J was submitted: an upgrade would overtake a write made before `startMigration`. Under
/// `line`, either B sees the job (and queues behind it) or the job sees B (and waits for it).
///
/// Safe to share (`@unchecked Sendable`): `directWaiters` is touched only holding `line`;
/// `pendingJobs` is an atomic, raised only holding `line`; the locks and the dispatch queue are
/// thread-safe.
final class SerialLine: @unchecked Sendable {
    /// The connection's lock: held by whoever has the turn.
    private let lock = NSLock()
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

    init(label: String) {
        dispatchQueue = DispatchQueue(label: "SerialDB." + label)
    }

    /// Jobs in line and not finished (for tests).
    var pendingJobCount: Int { pendingJobs.load(ordering: .acquiring) }

    /// Takes the lock if it is free and no job is in line (the uncontended blocking call).
    ///
    /// - Returns: whether the caller has the turn (and must end it with ``endTurn()``).
    @inline(__always)
    func takeTurnAtOnce() -> Bool {
        if lock.try() {
            if pendingJobs.load(ordering: .acquiring) == 0 { return true }
            lock.unlock()
        }
        return false
    }

    /// Waits for the turn of a blocking call that could not take it at once: directly for the
    /// lock when no job is in line, else behind the jobs on the dispatch queue, which runs
    /// `body` on this thread. `afterTakingLock` runs as soon as the lock is held; `body` runs
    /// holding it and must end the turn.
    func waitForTurn<T>(afterTakingLock: () -> Void, _ body: () throws -> T) rethrows -> T {
        line.lock()
        if pendingJobs.load(ordering: .acquiring) == 0 {
            directWaiters += 1
            line.unlock()
            lock.lock()
            afterTakingLock()
            leaveDirectWaiters()
            return try body()
        }
        line.unlock()
        return try dispatchQueue.sync {
            lock.lock()
            afterTakingLock()
            return try body()
        }
    }

    /// Submits `job` to run in submission order holding the lock (it must end its turn), after
    /// the direct waiters already waiting. A job found abandoned when its turn comes is skipped
    /// without waiting for the lock.
    func submit(
        unlessAbandoned abandoned: @escaping @Sendable () -> Bool = { false }, _ job: @escaping @Sendable () -> Void
    ) {
        submitJob()
        dispatchQueue.async {
            if !abandoned() {
                self.waitForDirectWaiters()
                self.lock.lock()
                job()
            }
            self.pendingJobs.subtract(1, ordering: .acquiringAndReleasing)
        }
    }

    /// Like ``submit(unlessAbandoned:_:)``, but blocks the calling thread until `body` (run on
    /// it, holding the lock, ending the turn) returns. `afterTakingLock` runs as soon as the
    /// lock is held.
    func runInLine<T>(afterTakingLock: () -> Void, _ body: () throws -> T) rethrows -> T {
        submitJob()
        defer { pendingJobs.subtract(1, ordering: .acquiringAndReleasing) }
        return try dispatchQueue.sync {
            waitForDirectWaiters()
            lock.lock()
            afterTakingLock()
            return try body()
        }
    }

    /// Releases the lock at the end of a turn.
    @inline(__always)
    func endTurn() {
        lock.unlock()
    }

    /// Counts a job as pending, so that every blocking call made after this returns lines up
    /// behind it, and every blocking call that began waiting before is counted in
    /// `directWaiters` (the job lets those go first).
    private func submitJob() {
        line.lock()
        pendingJobs.add(1, ordering: .acquiringAndReleasing)
        line.unlock()
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
}
