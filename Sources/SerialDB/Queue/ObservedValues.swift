/// The values of an observed fetch: the value now, then a fresh value after each commit that
/// changed a table the fetch read. Made by ``DatabaseWriter/observe(_:)``.
///
/// ```swift
/// for try await top in queue.observe({ db in
///     try db.fetchAll(Player.self, sql: "SELECT * FROM player ORDER BY score DESC LIMIT 10")
/// }) {
///     render(top)
/// }
/// ```
///
/// - **What re-runs the fetch.** SQLite reports the tables each of the fetch's statements reads
///   as it compiles them (views and triggers resolved to their tables); a commit through this
///   queue or pool that changed one of them, or changed the schema (a migration, a sync client
///   applying a new table definition), re-runs it. Commits to other tables and rolled-back
///   transactions do not. Writes by other connections, including other processes, are **not**
///   observed.
/// - **After the commit.** The fetch runs once the block that committed has returned, never
///   inside the commit: on a queue as a block of the queue, on a pool on a reader connection,
///   beside the writer. During `startMigration` it waits like any other work and runs on the
///   new schema.
/// - **Skipped states, never older ones.** The fetch runs when the consumer asks for the next
///   value and something changed; a consumer slower than the commits skips intermediate
///   states, but the last value always reflects the last commit, and values never go back.
///   ``removeDuplicates()`` also skips a value equal to the one before.
/// - **The end.** A fetch that throws ends the sequence with its error. Cancelling the
///   consuming task (or leaving the loop) ends it and removes what it installed; the writer's
///   hooks go with the last observation.
///
/// Many observations share one set of hooks on the writer connection; a commit costs each
/// only if it changed a table that observation read.
public struct ObservedValues<Value: Sendable>: AsyncSequence, Sendable {
    /// The values the fetch returns.
    public typealias Element = Value

    typealias Read =
        @Sendable (
            _ block: @escaping @Sendable (Database) throws -> (Value, Set<String>)
        ) async throws -> (Value, Set<String>)

    let internals: DatabaseWriterInternals
    let read: Read
    let fetch: @Sendable (Database) throws -> Value
    let isDuplicate: (@Sendable (Value, Value) -> Bool)?

    /// Starts the observation: nothing is installed until the first value is asked for.
    public func makeAsyncIterator() -> Iterator {
        Iterator(run: ObservationRun(self))
    }

    /// Gives the observed values; see ``ObservedValues``.
    public struct Iterator: AsyncIteratorProtocol {
        let run: ObservationRun<Value>

        /// The value now (first call), then the value after the next commit that changed what
        /// the fetch read; `nil` once the consuming task is cancelled.
        ///
        /// - Throws: the fetch's error, which ends the sequence; the queue's or pool's errors
        ///   (closed, a failed migration).
        public mutating func next() async throws -> Value? {
            try await run.next()
        }
    }
}

extension ObservedValues where Value: Equatable {
    /// The same observation, skipping each value equal to the one given before it.
    public func removeDuplicates() -> ObservedValues {
        ObservedValues(internals: internals, read: read, fetch: fetch, isDuplicate: { $0 == $1 })
    }
}

/// One iteration of an observation: registers with the writer's hub on the first `next()`,
/// unregisters when it ends or is dropped. Used by one consumer at a time, as iterators are.
final class ObservationRun<Value: Sendable> {
    private let observation: ObservedValues<Value>
    private let state = ObservationState()
    private var started = false
    private var ended = false
    private var last: Value?

    init(_ observation: ObservedValues<Value>) {
        self.observation = observation
    }

    deinit {
        finish()
    }

    func next() async throws -> Value? {
        guard !ended else { return nil }
        let hub = observation.internals.serializer.observations
        do {
            if !started {
                started = true
                try Task.checkCancellation()
                let state = state
                // A writer block: no commit can fall between the hooks and the registration.
                try await observation.internals.serializer.async { db in
                    hub.installHooks(on: db)
                    hub.register(state)
                }
            } else {
                guard await hub.waitForChange(state) else { return finish() }
                if hub.isWriterClosed {
                    // Throws the queue's or pool's `closed` error, through its gate.
                    try await observation.internals.serializer.async { _ in }
                }
                hub.fetchWillBegin(state)
            }
            while true {
                let fetch = observation.fetch
                let (value, region) = try await observation.read { db in try db.recordingReads { try fetch(db) } }
                hub.fetchDidEnd(state, region: region)
                if let isDuplicate = observation.isDuplicate {
                    if let last, isDuplicate(last, value) {
                        guard await hub.waitForChange(state) else { return finish() }
                        hub.fetchWillBegin(state)
                        continue
                    }
                    last = value
                }
                return value
            }
        } catch {
            finish()
            if error is CancellationError || Task.isCancelled { return nil }
            throw error
        }
    }

    /// Whether a commit concerned the observation since its last fetch began (for tests).
    var isMarkedChanged: Bool {
        observation.internals.serializer.observations.isChanged(state)
    }

    /// Whether the consumer is suspended, waiting for a change (for tests).
    var isWaitingForChange: Bool {
        observation.internals.serializer.observations.isWaiting(state)
    }

    /// Ends the observation: unregisters, and removes the hooks after the last one.
    @discardableResult
    private func finish() -> Value? {
        guard !ended else { return nil }
        ended = true
        guard started else { return nil }
        let hub = observation.internals.serializer.observations
        if hub.unregister(state) {
            observation.internals.serializer.runLater { db in hub.removeHooksIfUnused(from: db) }
        }
        return nil
    }
}
