import Foundation

/// The reader connections of a ``DatabasePool``: opened lazily up to a maximum, each used by one
/// read at a time, and the read side of the pool's gate.
///
/// The gate works by tickets: every read takes a ticket when it is submitted, and an upgrade takes
/// one too. A read waits while an upgrade with an earlier ticket is pending, and throws the
/// upgrade's error if it failed, so reads submitted after `startMigration` never see a
/// half-upgraded schema, while reads submitted before it keep their place.
///
/// Safe to share (`@unchecked Sendable`): every stored property is read and written only while
/// holding `condition`; a reader `Database` is used by the one thread that took it out of `idle`,
/// until it puts it back.
final class ReaderPool: @unchecked Sendable {
    private let condition = NSCondition()
    private let path: String
    private let configuration: Configuration
    private let maximumCount: Int
    private let label: String

    private var idle: [Database] = []
    private var openCount = 0
    private var nextTicket: UInt64 = 0
    /// Tickets of upgrades submitted and not finished, oldest first.
    private var pendingUpgrades: [UInt64] = []
    /// The error of the last upgrade if it failed, and the ticket it was submitted with.
    private var failedUpgrade: (ticket: UInt64, error: SerialDBError)?
    private var isClosed = false
    /// The connection each running async read uses, to interrupt it when its task is cancelled.
    private var runningReads: [UInt64: InterruptHandle] = [:]
    /// The threads running a read block now, one entry per read: a pool call from one of them
    /// is reentrant. Kept here, under the lock the read takes anyway, so that a read costs no
    /// other lock.
    private var readingThreads: [UInt] = []

    init(path: String, configuration: Configuration, maximumCount: Int, label: String) {
        self.path = path
        self.configuration = configuration
        self.maximumCount = max(1, maximumCount)
        self.label = label
    }

    /// A place in line, taken when an async read is submitted (a blocking read takes its own
    /// as it checks out: that is the moment it is submitted).
    func takeTicket() -> UInt64 {
        condition.withLock { nextTicketTaken() }
    }

    // MARK: - The gate

    /// Holds every read submitted from now on until ``upgradeFinished(ticket:error:)``.
    func upgradeSubmitted() -> UInt64 {
        condition.withLock {
            nextTicket += 1
            pendingUpgrades.append(nextTicket)
            return nextTicket
        }
    }

    /// Releases the reads held by the upgrade `ticket`; with an error, reads submitted after it
    /// throw that error until a later upgrade succeeds.
    func upgradeFinished(ticket: UInt64, error: SerialDBError?) {
        condition.withLock {
            pendingUpgrades.removeAll { $0 == ticket }
            if let error {
                failedUpgrade = (ticket, error)
            } else if let failed = failedUpgrade, failed.ticket < ticket {
                failedUpgrade = nil
            }
            condition.broadcast()
        }
    }

    // MARK: - Reading

    /// Whether `thread` runs a read block of this pool now.
    func isReading(on thread: UInt) -> Bool {
        condition.withLock { readingThreads.contains(thread) }
    }

    /// Runs `block` on a reader connection, in a deferred transaction with writes refused.
    ///
    /// - Parameters:
    ///   - thread: the calling thread, which runs `block`: refused if it already runs a read
    ///     block of this pool, and recorded as running one until `block` returns.
    ///   - ticket: the read's place in line, from ``takeTicket()``; `nil` takes one now.
    ///   - cancellation: for async reads: checked while waiting and before each statement.
    /// - Throws: ``SerialDBError/Code/reentrantCall`` when `thread` already runs a read block;
    ///   the gate's errors; the block's error.
    func read<T>(
        thread: UInt, ticket: UInt64? = nil, cancellation: CancellationFlag? = nil, _ block: (Database) throws -> T
    ) throws -> T {
        let (database, ticket) = try checkOut(thread: thread, ticket: ticket, cancellation: cancellation)
        if let cancellation {
            database.isCancelled = { cancellation.isCancelled }
        }
        defer {
            database.isCancelled = nil
            checkIn(database, thread: thread, ticket: ticket)
        }
        do {
            return try database.readTransaction(block)
        } catch {
            if let cancellation, cancellation.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// Interrupts the statement of the async read `ticket`, if it is running; wakes it if it waits.
    func cancel(ticket: UInt64) {
        condition.withLock {
            if let connection = runningReads[ticket] {
                connection.interrupt()
            }
            condition.broadcast()
        }
    }

    /// Interrupts every running read.
    func interruptAll() {
        condition.withLock {
            for connection in runningReads.values {
                connection.interrupt()
            }
        }
    }

    /// Waits for the gate and a free reader, then hands it out with the read recorded as
    /// running on `thread`; returns it with the read's ticket.
    private func checkOut(
        thread: UInt, ticket: UInt64?, cancellation: CancellationFlag?
    ) throws -> (Database, UInt64) {
        condition.lock()
        defer { condition.unlock() }
        // Checked before the gate: a read from inside a read must throw, never wait.
        if readingThreads.contains(thread) { throw reentrantCallError() }
        let ticket = ticket ?? nextTicketTaken()
        while true {
            if isClosed { throw closedError() }
            if cancellation?.isCancelled == true { throw CancellationError() }
            let heldByUpgrade = pendingUpgrades.first.map { $0 < ticket } ?? false
            if !heldByUpgrade {
                if let failed = failedUpgrade, failed.ticket < ticket { throw failed.error }
                if let database = idle.popLast() {
                    return (register(database, thread: thread, ticket: ticket), ticket)
                }
                if openCount < maximumCount {
                    // The slot is taken under the lock; the connection is opened outside it,
                    // since opening reads the schema and may wait on the file.
                    openCount += 1
                    condition.unlock()
                    let opened = Result { try openReader() }
                    condition.lock()
                    switch opened {
                    case .success(let database):
                        return (register(database, thread: thread, ticket: ticket), ticket)
                    case .failure(let error):
                        openCount -= 1
                        condition.broadcast()
                        throw error
                    }
                }
            }
            condition.wait()
        }
    }

    /// Call holding `condition`.
    private func nextTicketTaken() -> UInt64 {
        nextTicket += 1
        return nextTicket
    }

    /// Call holding `condition`.
    private func register(_ database: Database, thread: UInt, ticket: UInt64) -> Database {
        readingThreads.append(thread)
        runningReads[ticket] = database.interruptHandle
        // A read block that closes its connection: forget the handle before SQLite frees it, so
        // no cancellation can interrupt a freed (or reused) connection.
        database.willClose = { [weak self] in
            guard let self else { return }
            self.condition.withLock { _ = self.runningReads.removeValue(forKey: ticket) }
        }
        return database
    }

    private func checkIn(_ database: Database, thread: UInt, ticket: UInt64) {
        database.willClose = nil  // closed below, under the lock, by the pool itself
        // A reader goes back only without a transaction: the next read must get a fresh snapshot.
        // The read block already rolled back after any error; if a transaction is somehow still
        // open and ROLLBACK fails too, the connection is closed below instead of reused.
        if database.isInsideTransaction { try? database.rollback() }
        condition.withLock {
            runningReads[ticket] = nil
            if let index = readingThreads.lastIndex(of: thread) { readingThreads.remove(at: index) }
            if database.isClosed || database.isInsideTransaction || isClosed {
                // Closed by its block, stuck in a transaction, or the pool closed meanwhile:
                // never hand it out again.
                database.close()
                openCount -= 1
            } else {
                idle.append(database)
            }
            condition.broadcast()
        }
    }

    private func openReader() throws -> Database {
        var readerConfiguration = configuration
        // The writer chose the journal mode (WAL); a reader must not try to change it.
        readerConfiguration.journalMode = nil
        return try Database(path: path, configuration: readerConfiguration)
    }

    // MARK: - Closing

    /// Refuses new reads, waits for the running ones, and closes every reader connection.
    func close() {
        condition.lock()
        isClosed = true
        condition.broadcast()
        while idle.count < openCount {
            condition.wait()
        }
        for database in idle {
            database.close()
        }
        idle.removeAll()
        openCount = 0
        condition.unlock()
    }

    /// The error for a pool call from inside a read block of the pool.
    func reentrantCallError() -> SerialDBError {
        SerialDBError(
            .reentrantCall,
            "A DatabasePool method was called from inside a block of the same pool (\(label)); "
                + "it could wait for itself. Use the Database the block received.")
    }

    private func closedError() -> SerialDBError {
        SerialDBError(.closed, "The pool \(label) is closed. Open a new DatabasePool to use the database.")
    }
}
