import Foundation

/// The reader connections of a ``DatabasePool``: opened lazily up to a maximum, each used by one
/// read at a time, and the read side of the pool's gate.
///
/// Every read takes a ticket of the pool's ``UpgradeGate`` when it is submitted, and an upgrade
/// takes one too: a read waits while an upgrade with an earlier ticket is pending, and throws
/// the upgrade's error if it failed, so reads submitted after `startMigration` never see a
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

    // Unchecked exclusivity on every stored `var` below: a read touches them a dozen times
    // (check-out and check-in), and the run-time checks cost some 550 instructions per read,
    // a sixth of the whole round trip. Accesses cannot overlap: every one is made holding
    // `condition`, so by one thread at a time, and none passes a property inout to code that
    // touches the same property (the closures given to `contains`, `first` and `firstIndex`
    // read only their argument).

    @exclusivity(unchecked)
    private var idle: [Database] = []
    @exclusivity(unchecked)
    private var openCount = 0
    @exclusivity(unchecked)
    private var gate: UpgradeGate
    /// The reads running now, one per checked-out connection, so at most `maximumCount`: a
    /// short array searched in a line costs less than hashing a ticket into a dictionary.
    @exclusivity(unchecked)
    private var running: [RunningRead] = []

    /// A read holding a reader connection.
    private struct RunningRead {
        /// Its place in line, to find the async read that a cancellation names.
        let ticket: UpgradeGate.Ticket
        /// The thread running its block: a pool call from that thread is reentrant. Kept
        /// here, under the lock the read takes anyway, so that a read costs no other lock.
        let thread: UInt
        /// Its connection, which has the read's ticket and thread in no field of its own.
        let database: ObjectIdentifier
        /// To interrupt its statement; `nil` once the block closed the connection, so that no
        /// interrupt reaches a freed (or reused) `sqlite3`.
        var connection: InterruptHandle?
    }

    init(path: String, configuration: Configuration, maximumCount: Int, label: String) {
        self.path = path
        self.configuration = configuration
        self.maximumCount = max(1, maximumCount)
        self.label = label
        gate = UpgradeGate(
            closedError: SerialDBError(
                .closed, "The pool \(label) is closed. Open a new DatabasePool to use the database."))
        running.reserveCapacity(self.maximumCount)
    }

    /// A place in line, taken when an async read is submitted (a blocking read takes its own
    /// as it checks out: that is the moment it is submitted).
    func takeTicket() -> UpgradeGate.Ticket {
        condition.withLock { gate.takeTicket() }
    }

    // MARK: - The gate

    /// Holds every read submitted from now on until ``upgradeFinished(ticket:error:)``.
    func upgradeSubmitted() -> UpgradeGate.Ticket {
        condition.withLock { gate.upgradeSubmitted() }
    }

    /// Releases the reads held by the upgrade `ticket`; with an error, reads submitted after it
    /// throw that error until a later upgrade succeeds.
    func upgradeFinished(ticket: UpgradeGate.Ticket, error: SerialDBError?) {
        condition.withLock {
            gate.upgradeFinished(ticket, error: error)
            condition.broadcast()
        }
    }

    // MARK: - Reading

    /// Whether `thread` runs a read block of this pool now.
    func isReading(on thread: UInt) -> Bool {
        condition.withLock { running.contains { $0.thread == thread } }
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
        thread: UInt, ticket: UpgradeGate.Ticket? = nil, cancellation: CancellationFlag? = nil,
        _ block: (Database) throws -> T
    ) throws -> T {
        let database = try checkOut(thread: thread, ticket: ticket, cancellation: cancellation)
        if let cancellation {
            database.isCancelled = { cancellation.isCancelled }
        }
        defer {
            database.isCancelled = nil
            checkIn(database)
        }
        do {
            return try database.readTransaction(block)
        } catch {
            if let cancellation, cancellation.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// Interrupts the statement of the async read `ticket`, if it is running; wakes it if it waits.
    func cancel(ticket: UpgradeGate.Ticket) {
        condition.withLock {
            if let read = running.first(where: { $0.ticket == ticket }) {
                read.connection?.interrupt()
            }
            condition.broadcast()
        }
    }

    /// Interrupts every running read.
    func interruptAll() {
        condition.withLock {
            for read in running {
                read.connection?.interrupt()
            }
        }
    }

    /// Waits for the gate and a free reader, then hands it out with the read recorded as
    /// running on `thread`.
    private func checkOut(
        thread: UInt, ticket: UpgradeGate.Ticket?, cancellation: CancellationFlag?
    ) throws -> Database {
        condition.lock()
        defer { condition.unlock() }
        // Checked before the gate: a read from inside a read must throw, never wait.
        if running.contains(where: { $0.thread == thread }) { throw reentrantCallError() }
        let ticket = ticket ?? gate.takeTicket()
        while true {
            let decision = gate.decision(for: ticket)
            // A closed pool says so even to a cancelled read; cancellation comes before an
            // upgrade's wait or error.
            if cancellation?.isCancelled == true, !gate.isClosed { throw CancellationError() }
            switch decision {
            case .refused:
                throw gate.refusal
            case .wait:
                break
            case .run:
                if let database = idle.popLast() {
                    return register(database, thread: thread, ticket: ticket)
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
                        return register(database, thread: thread, ticket: ticket)
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
    private func register(_ database: Database, thread: UInt, ticket: UpgradeGate.Ticket) -> Database {
        running.append(
            RunningRead(
                ticket: ticket, thread: thread, database: ObjectIdentifier(database),
                connection: database.interruptHandle))
        return database
    }

    private func checkIn(_ database: Database) {
        // A reader goes back only without a transaction: the next read must get a fresh snapshot.
        // The read block already rolled back after any error; if a transaction is somehow still
        // open and ROLLBACK fails too, the connection is closed below instead of reused.
        if database.isInsideTransaction { try? database.rollback() }
        condition.withLock {
            let id = ObjectIdentifier(database)
            if let index = running.firstIndex(where: { $0.database == id }) {
                let last = running.count - 1
                running.swapAt(index, last)
                running.removeLast()
            }
            if database.isClosed || database.isInsideTransaction || gate.isClosed {
                // Closed by its block, stuck in a transaction, or the pool closed meanwhile:
                // never hand it out again.
                closeHoldingLock(database)
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
        let database = try Database(path: path, configuration: readerConfiguration)
        // Set once for the connection's life: a read block that closes its connection makes the
        // pool forget the handle before SQLite frees it.
        let id = ObjectIdentifier(database)
        database.willClose = { [weak self] in self?.connectionWillClose(id) }
        return database
    }

    private func connectionWillClose(_ id: ObjectIdentifier) {
        condition.withLock {
            if let index = running.firstIndex(where: { $0.database == id }) {
                running[index].connection = nil
            }
        }
    }

    /// Closes a reader the pool no longer hands out. Call holding `condition`: its `willClose`
    /// (which takes `condition`) is dropped first, since the pool forgets it anyway.
    private func closeHoldingLock(_ database: Database) {
        database.willClose = nil
        database.close()
    }

    // MARK: - Closing

    /// Refuses new reads, waits for the running ones, and closes every reader connection.
    func close() {
        condition.lock()
        gate.close()
        condition.broadcast()
        while idle.count < openCount {
            condition.wait()
        }
        for database in idle {
            closeHoldingLock(database)
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
}
