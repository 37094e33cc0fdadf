/// What `prepareMigration` did: the step whose tables it copied, how many rows, and the rows
/// written during the copy that the new definition refuses.
///
/// ```swift
/// let prepared = try await queue.prepareMigration(migrator)
/// if prepared.refusedRowCount > 0 { log("fix before the upgrade: \(prepared.refusedRows)") }
/// try queue.migrate(migrator)      // only the swap holds other work
/// ```
public struct PreparedMigration: Sendable, Equatable {
    /// The step whose tables were copied; nil when there was nothing to prepare (every step is
    /// applied, or the first pending one is not declarative or rebuilds no table).
    public var migration: String?
    /// The live tables copied into their new definition; the swap replaces them.
    public var preparedTables: [String]
    /// Tables of the step that cannot be copied online, with the reason: `migrate` rebuilds
    /// them under the gate, as it always did.
    public var tablesLeftForMigrate: [String: String]
    /// Rows the copy read.
    public var rowsCopied: Int
    /// Rows (by table) that the new definition refuses — a NOT NULL, CHECK, UNIQUE or foreign
    /// key they break —, each named by its rowid or key (up to five per table). The swap
    /// refuses while any is left: fix them, and `migrate` tries them again.
    public var refusedRows: [String: [String]]
    /// How many rows the new definition refuses, in all.
    public var refusedRowCount: Int

    /// Creates a report.
    public init(
        migration: String?, preparedTables: [String] = [], tablesLeftForMigrate: [String: String] = [:],
        rowsCopied: Int = 0, refusedRows: [String: [String]] = [:], refusedRowCount: Int = 0
    ) {
        self.migration = migration
        self.preparedTables = preparedTables
        self.tablesLeftForMigrate = tablesLeftForMigrate
        self.rowsCopied = rowsCopied
        self.refusedRows = refusedRows
        self.refusedRowCount = refusedRowCount
    }
}

/// The engine behind `prepareMigration`, shared by the queue and the pool: it sets the copies
/// up, runs their chunks through the writer's serializer, and removes them on cancellation.
enum OnlinePreparation {
    /// After each chunk the copy rests this many times the chunk's own duration, so that the
    /// application's work gets at least 2/3 of the connection while the copy runs.
    static let restFactor = 2.0
    /// Chunks between two passive WAL checkpoints.
    static let chunksPerCheckpoint = 8

    /// What `begin` set up.
    struct Setup: Sendable {
        var step: String?
        var copies: [OnlineTableCopy] = []
        var notPrepared: [String: String] = [:]
    }

    enum ChunkOutcome: Sendable {
        /// A chunk ran: rows read so far of the rows to copy, over every table of the step.
        case copied(Int, of: Int)
        /// Every table is copied; the triggers keep the copies in step.
        case finished
        /// The copy is no longer in the database: another connection swapped or removed it.
        case gone
    }

    static func prepare(
        _ migrator: DatabaseMigrator, writer: Serializer, rowsPerChunk: Int,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) async throws -> PreparedMigration {
        // Held until the copy returns or is removed: an open elsewhere then leaves it alone.
        let lease = try await writer.async { db in OnlineCopyLease.shared(for: db) }
        defer { withExtendedLifetime(lease) {} }
        let setup = try await writer.async { db in try begin(migrator, db) }
        guard let step = setup.step, !setup.copies.isEmpty else {
            return PreparedMigration(migration: setup.step, tablesLeftForMigrate: setup.notPrepared)
        }
        let clock = ContinuousClock()
        do {
            var chunks = 0
            copying: while true {
                try Task.checkCancellation()
                let started = clock.now
                chunks += 1
                let checkpoint = chunks % chunksPerCheckpoint == 0
                let outcome = try await writer.async { db in
                    try nextChunk(of: setup.copies, rows: rowsPerChunk, checkpoint: checkpoint, db)
                }
                // The rest follows the chunk's own time, not the progress handler's: a handler
                // that takes a minute (a UI, a test holding the copy) must not buy two of rest.
                let worked = clock.now - started
                switch outcome {
                case .copied(let done, let total):
                    progress?(
                        MigrationProgress(
                            event: .stepProgress, migration: step, completedSteps: 0, totalSteps: 1,
                            completedUnits: min(done, total), totalUnits: total))
                case .finished:
                    break copying
                case .gone:
                    return try await writer.async { db in try outcomeOfVanishedCopy(step, setup, migrator, db) }
                }
                try await Task.sleep(for: worked * restFactor)
            }
            // The changes mirrored meanwhile are checked in chunks too, so that the swap checks
            // only those made after the last chunk.
            while true {
                try Task.checkCancellation()
                let started = clock.now
                let settled = try await writer.async { db in try settleChanges(of: setup.copies, rows: rowsPerChunk, db)
                }
                guard settled >= rowsPerChunk else { break }
                try await Task.sleep(for: (clock.now - started) * restFactor)
            }
            return try await writer.async { db in try finish(step, setup, db) }
        } catch {
            // Cancelled or failed: nothing of the copy stays behind; the live tables never changed.
            // The removal runs in a task of its own, which the cancellation does not reach.
            let copies = setup.copies
            try? await Task.detached {
                try await writer.async { db in
                    try db.inTransaction(.immediate) { db in
                        for record in try OnlineCopyState.records(db)
                        where copies.contains(where: { $0.id == record.id }) {
                            try OnlineCopyState.discard(record, db)
                        }
                        try OnlineCopyState.dropTablesIfEmpty(db)
                        return .commit
                    }
                }
            }.value
            throw error
        }
    }

    /// Plans the first pending step and sets up a copy of each table it rebuilds, or resumes
    /// the copies a previous run left for the same step; a copy left for another step or
    /// definition is removed first. One IMMEDIATE transaction.
    static func begin(_ migrator: DatabaseMigrator, _ db: Database) throws -> Setup {
        try migrator.checkRegistrations()
        try migrator.checkNoUnknownMigrations(try migrator.appliedMigrations(db))
        _ = try migrator.adoptLegacyVersionIfNeeded(db)
        var setup = Setup()
        try db.inTransaction(.immediate) { db in
            let applied = Set(try migrator.appliedMigrations(db))
            guard let step = migrator.steps.first(where: { !applied.contains($0.identifier) }),
                let declarative = step.declarative
            else {
                try OnlineCopyState.discardAll(db)
                return .commit
            }
            setup.step = step.identifier
            let plan = try db.planSchemaChange(to: declarative.schema, options: declarative.options)
            guard !plan.isRefused else {
                throw SerialDBError(
                    .schemaChangeRefused,
                    "The step \"\(step.identifier)\" cannot be prepared, nothing was copied: "
                        + plan.refusals.joined(separator: " "))
            }
            let records = try OnlineCopyState.records(db)
            if !records.isEmpty {
                let resumed = try copies(for: records, plan: plan, db)
                if records.allSatisfy({ $0.step == step.identifier }) && resumed.count == records.count {
                    setup.copies = resumed
                    return .commit
                }
                try OnlineCopyState.discardAll(db)
            }
            try OnlineCopyState.createTables(db)
            let live = try db.schema()
            for case .rebuild(let rebuild) in plan.steps.map(\.action) {
                let id = try OnlineCopyState.addRecord(
                    step: step.identifier, source: rebuild.sourceTable, shadow: rebuild.temporaryName, fingerprint: "",
                    total: rebuild.rowCount, db)
                switch try OnlineTableCopy.make(
                    id: id, rebuild: rebuild, shadow: rebuild.temporaryName, live: live, desired: plan.desired, db: db)
                {
                case .success(let copy):
                    try OnlineCopyState.setFingerprint(copy.fingerprint, of: id, db)
                    for sql in copy.installSQL { try db.execute(sql: sql) }
                    setup.copies.append(copy)
                case .failure(let refusal):
                    try OnlineCopyState.delete(id, db)
                    setup.notPrepared[rebuild.sourceTable] = refusal.reason
                }
            }
            try OnlineCopyState.dropTablesIfEmpty(db)
            return .commit
        }
        return setup
    }

    /// The copies the records describe, made from `plan` (the same step planned again); a
    /// record whose table the plan no longer rebuilds the same way has none.
    static func copies(for records: [OnlineCopyState.Record], plan: SchemaPlan, _ db: Database) throws
        -> [OnlineTableCopy]
    {
        let live = try db.schema()
        var copies: [OnlineTableCopy] = []
        for case .rebuild(let rebuild) in plan.steps.map(\.action) {
            guard let record = records.first(where: { $0.source.isSameSQLiteName(as: rebuild.sourceTable) }),
                case .success(let copy) = try OnlineTableCopy.make(
                    id: record.id, rebuild: rebuild, shadow: record.shadow, live: live, desired: plan.desired, db: db),
                copy.fingerprint == record.fingerprint
            else { continue }
            copies.append(copy)
        }
        return copies
    }

    /// Copies one chunk of the first table not done, in its own IMMEDIATE transaction; then,
    /// when asked, a passive WAL checkpoint, so that the log stays bounded during a long copy.
    static func nextChunk(of copies: [OnlineTableCopy], rows: Int, checkpoint: Bool, _ db: Database) throws
        -> ChunkOutcome
    {
        var outcome = ChunkOutcome.gone
        try db.inTransaction(.immediate) { db in
            let records = try OnlineCopyState.records(db).filter { record in copies.contains { $0.id == record.id } }
            guard records.count == copies.count else { return .commit }
            guard let record = records.first(where: { !$0.isDone }),
                let copy = copies.first(where: { $0.id == record.id })
            else {
                outcome = .finished
                return .commit
            }
            let (cursor, read) = try copy.copyChunk(
                after: try OnlineCopyState.cursor(of: record.id, db), rows: rows, db)
            try OnlineCopyState.advance(record.id, to: cursor, read: read, db)
            outcome = .copied(records.map(\.copied).reduce(read, +), of: records.map(\.total).reduce(0, +))
            return .commit
        }
        if checkpoint && !db.isInMemory {
            _ = try db.fetchAll(Row.self, sql: "PRAGMA wal_checkpoint(PASSIVE)")
        }
        return outcome
    }

    /// Checks up to `rows` recorded changes of each copy, in one IMMEDIATE transaction; returns
    /// how many the copies agreed with (``OnlineTableCopy/settleChanges(rows:_:)``).
    static func settleChanges(of copies: [OnlineTableCopy], rows: Int, _ db: Database) throws -> Int {
        var settled = 0
        try db.inTransaction(.immediate) { db in
            for copy in copies { settled += try copy.settleChanges(rows: rows, db) }
            return .commit
        }
        return settled
    }

    /// After the last chunk: the rows the new definition still refuses, tried once more.
    static func finish(_ step: String, _ setup: Setup, _ db: Database) throws -> PreparedMigration {
        var result = PreparedMigration(
            migration: step, preparedTables: setup.copies.map(\.sourceTable), tablesLeftForMigrate: setup.notPrepared)
        try db.inTransaction(.immediate) { db in
            let records = try OnlineCopyState.records(db)
            result.rowsCopied = records.filter { record in setup.copies.contains { $0.id == record.id } }
                .map(\.copied).reduce(0, +)
            for copy in setup.copies {
                let refused = try copy.refusedRows(db)
                guard refused.count > 0 else { continue }
                result.refusedRows[copy.sourceTable] = refused.described
                result.refusedRowCount += refused.count
            }
            return .commit
        }
        return result
    }

    /// The copy vanished under the preparation: another connection swapped it (the step is
    /// applied: done) or removed it.
    private static func outcomeOfVanishedCopy(
        _ step: String, _ setup: Setup, _ migrator: DatabaseMigrator, _ db: Database
    ) throws -> PreparedMigration {
        guard try migrator.appliedMigrations(db).contains(step) else {
            throw SerialDBError(
                .schemaChangeRefused,
                "The copy prepared for step \"\(step)\" was removed by another connection while it ran; the live "
                    + "tables are unchanged. Call prepareMigration again.")
        }
        return PreparedMigration(
            migration: step, preparedTables: setup.copies.map(\.sourceTable), tablesLeftForMigrate: setup.notPrepared)
    }
}
