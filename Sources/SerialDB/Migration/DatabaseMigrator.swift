import Foundation

/// Ordered, named schema migration steps, each applied once and recorded in the database.
///
/// ```swift
/// var migrator = DatabaseMigrator()
/// migrator.registerMigration("v1") { db in
///     try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
/// }
/// migrator.registerMigration("v2") { db in
///     try db.execute(sql: "ALTER TABLE player ADD COLUMN score INTEGER NOT NULL DEFAULT 0")
/// }
/// try queue.migrate(migrator)
/// ```
///
/// Each step runs in its own IMMEDIATE transaction, with foreign keys off the way SQLite
/// requires for table rebuilds (`PRAGMA foreign_keys = OFF` before BEGIN), a
/// `PRAGMA foreign_key_check` before COMMIT, and foreign keys restored afterwards whatever
/// happened. The identifier of the step is recorded in `serialdb_migrations` inside the same
/// transaction, so a step commits whole or leaves no trace.
/// See <https://www.sqlite.org/lang_altertable.html#otheralter>.
///
/// Several processes may migrate one file at the same moment: each step takes the write lock
/// first and then re-reads what is applied, so it runs exactly once; the others wait within
/// their busy timeout and find it done.
public struct DatabaseMigrator: Sendable {
    /// The table where applied step identifiers are recorded.
    public static let migrationsTableName = "serialdb_migrations"

    struct Step: Sendable {
        let identifier: String
        let body: @Sendable (Database) throws -> Void
        /// The schema of a declarative step, which `prepareMigration` can copy ahead of time.
        var declarative: DeclarativeStep? = nil
    }

    private(set) var steps: [Step] = []
    private var registrationErrors: [String] = []
    private var legacyVersion: LegacyVersion?

    /// Accept a database that has applied steps this migrator does not know (it was written by
    /// a newer version of the app). Default: `false`, such a database is refused before
    /// anything is touched, because running against a schema you do not know loses data.
    public var allowsUnknownMigrations = false

    /// An empty migrator.
    public init() {}

    /// The registered step identifiers, in order.
    public var migrationIdentifiers: [String] { steps.map(\.identifier) }

    /// Adds a step, run after the ones registered before it.
    ///
    /// - Parameters:
    ///   - identifier: a unique, stable name; it is stored in the database.
    ///   - body: the step. It runs inside the step's transaction: a BEGIN, COMMIT, END or
    ///     ROLLBACK in it is refused before it runs and fails the step, which then leaves no
    ///     trace. Throw to roll the step back; use `db.inSavepoint` to nest.
    public mutating func registerMigration(_ identifier: String, _ body: @escaping @Sendable (Database) throws -> Void)
    {
        register(Step(identifier: identifier, body: body))
    }

    mutating func register(_ step: Step) {
        if steps.contains(where: { $0.identifier == step.identifier }) {
            // Registration cannot throw (it reads as configuration); migrate reports it.
            registrationErrors.append("the migration \"\(step.identifier)\" is registered twice")
        }
        steps.append(step)
    }

    /// Declares where a database that predates SerialDB kept its version: a database whose
    /// marker says N, and that has no `serialdb_migrations` table yet, is taken to have
    /// applied the first N registered steps. They are recorded as applied and never run.
    ///
    /// ```swift
    /// migrator.adoptLegacyVersion(.table("t_info", column: "version"))
    /// migrator.adoptLegacyVersion(.custom { db in try myOwnVersionReading(db) })
    /// ```
    ///
    /// A marker above the number of registered steps is refused with
    /// ``SerialDBError/Code/unknownMigrations`` (the database was written by a newer app).
    public mutating func adoptLegacyVersion(_ source: LegacyVersion) {
        legacyVersion = source
    }

    // MARK: - Reading state

    /// The identifiers recorded as applied, in the order they were applied.
    public func appliedMigrations(_ db: Database) throws -> [String] {
        guard try db.tableExists(Self.migrationsTableName) else { return [] }
        return try db.fetchAll(
            String.self,
            sql: "SELECT identifier FROM \(Self.migrationsTableName.quotedDatabaseIdentifier) ORDER BY rowid")
    }

    /// Whether every registered step is applied.
    public func hasCompletedMigrations(_ db: Database) throws -> Bool {
        Set(try appliedMigrations(db)).isSuperset(of: migrationIdentifiers)
    }

    // MARK: - Migrating

    /// Applies every step not yet applied.
    ///
    /// - Throws: ``SerialDBError/Code/migrationFailed`` naming the step that failed (with the
    ///   cause); the steps before it stay committed and nothing of it remains.
    ///   ``SerialDBError/Code/unknownMigrations`` for a database written by a newer migrator,
    ///   before anything is touched. ``SerialDBError/Code/invalidMigrator`` for a duplicate
    ///   identifier.
    public func migrate(_ db: Database) throws {
        try migrate(db, upTo: nil, dropsTablesSetAside: true, progress: nil)
    }

    /// Applies the steps up to and including `identifier`.
    ///
    /// - Throws: like ``migrate(_:)``, and ``SerialDBError/Code/invalidMigrator`` for an
    ///   unknown identifier, or a database already past it (the message names the step the
    ///   database is at; migrations never go back).
    public func migrate(_ db: Database, upTo identifier: String) throws {
        try migrate(db, upTo: identifier, dropsTablesSetAside: true, progress: nil)
    }

    /// `dropsTablesSetAside`: whether the old tables of swapped-in copies are dropped before it
    /// returns; a queue or pool drops them in chunks after the gate opens instead.
    func migrate(
        _ db: Database, upTo target: String?, dropsTablesSetAside: Bool,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws {
        try migrateSteps(db, upTo: target, progress: progress)
        if dropsTablesSetAside, try !OnlineAsideTable.tables(db).isEmpty {
            try db.inTransaction(.immediate) { db in
                try OnlineAsideTable.dropAll(db)
                return .commit
            }
        }
    }

    private func migrateSteps(_ db: Database, upTo target: String?, progress: (@Sendable (MigrationProgress) -> Void)?)
        throws
    {
        try checkRegistrations()
        var wanted = steps
        if let target {
            guard let index = steps.firstIndex(where: { $0.identifier == target }) else {
                throw SerialDBError(
                    .invalidMigrator,
                    "No migration \"\(target)\" is registered; known: \(migrationIdentifiers.joined(separator: ", ")).")
            }
            wanted = Array(steps[...index])
        }
        // Refuse a database from the future before anything is written.
        var applied = try appliedMigrations(db)
        try checkNoUnknownMigrations(applied)
        if try adoptLegacyVersionIfNeeded(db) {
            applied = try appliedMigrations(db)
        }

        let appliedAtStart = Set(applied)
        if let target {
            try checkNotPast(target, applied: appliedAtStart)
        }
        let pending = wanted.filter { !appliedAtStart.contains($0.identifier) }
        var lastCommitted = steps.last { appliedAtStart.contains($0.identifier) }?.identifier
        for (index, step) in pending.enumerated() {
            progress?(
                MigrationProgress(
                    event: .stepStarted, migration: step.identifier, completedSteps: index, totalSteps: pending.count))
            db.progressObserver = { done, total in
                progress?(
                    MigrationProgress(
                        event: .stepProgress, migration: step.identifier, completedSteps: index,
                        totalSteps: pending.count, completedUnits: done, totalUnits: total))
            }
            defer { db.progressObserver = nil }
            let preparedCopy: PreparedCopyOutcome?
            do {
                preparedCopy = try apply(step, to: db)
            } catch {
                throw SerialDBError(
                    .migrationFailed,
                    "The schema upgrade failed at step \"\(step.identifier)\" and was rolled back; the database stays at "
                        + (lastCommitted.map { "step \"\($0)\"" } ?? "its state before any step")
                        + ". Fix the step and migrate again.",
                    underlying: error)
            }
            lastCommitted = step.identifier
            progress?(
                MigrationProgress(
                    event: .stepCommitted, migration: step.identifier, completedSteps: index + 1,
                    totalSteps: pending.count, preparedCopy: preparedCopy))
        }
    }

    func checkRegistrations() throws {
        if let problem = registrationErrors.first {
            throw SerialDBError(
                .invalidMigrator, "The migrator is invalid: \(problem). Give each step its own identifier.")
        }
    }

    /// Runs one step in its own transaction, with foreign keys deferred as SQLite's table
    /// rebuild procedure requires. Returns what became of a copy `prepareMigration` made for it.
    private func apply(_ step: Step, to db: Database) throws -> PreparedCopyOutcome? {
        // A copy made ahead by `prepareMigration` turns a declarative step into a swap.
        switch try OnlineSwap.prepared(for: step, in: db) {
        case .none:
            try run(step, swapping: nil, db)
            return nil
        case .discarded(let tables, let reason):
            try run(step, swapping: nil, db)
            return PreparedCopyOutcome(tables: tables, notUsedBecause: reason)
        case .ready(let swap):
            do {
                guard try run(step, swapping: swap, db) else { return nil }
                return PreparedCopyOutcome(tables: swap.tables)
            } catch let mismatch as OnlineCopyMismatch {
                // Rolled back: the copy is removed and the step rebuilds as if nothing was prepared.
                try OnlineSwap.discardAll(db)
                try run(step, swapping: nil, db)
                return PreparedCopyOutcome(tables: swap.tables, notUsedBecause: mismatch.reason)
            }
        }
    }

    /// The step's transaction; returns whether it ran the step (another process may have
    /// applied it while this one waited for the write lock).
    @discardableResult
    private func run(_ step: Step, swapping swap: OnlineSwap?, _ db: Database) throws -> Bool {
        var ran = false
        // A BEGIN, COMMIT, END or ROLLBACK in the step is refused before it runs.
        try db.inSchemaChangeTransaction(
            named: "Migration \"\(step.identifier)\"", vouchedTables: swap?.vouchedTables ?? []
        ) { db in
            try createMigrationsTable(db)
            // Another process may have applied the step while we waited for the write lock.
            let applied = try appliedMigrations(db)
            try checkNoUnknownMigrations(applied)
            if applied.contains(step.identifier) { return }
            if let swap { try swap.run(db) } else { try step.body(db) }
            guard db.isInsideTransaction else { throw db.transactionEndedError(refusing: nil) }
            try record(step.identifier, in: db)
            ran = true
        }
        return ran
    }

    /// `migrate(upTo:)` never goes back: a database already past the target is refused,
    /// naming the step it is at, rather than left as it is while the caller expects the target.
    private func checkNotPast(_ target: String, applied: Set<String>) throws {
        guard let targetIndex = steps.firstIndex(where: { $0.identifier == target }),
            let current = steps.lastIndex(where: { applied.contains($0.identifier) }),
            current > targetIndex
        else { return }
        throw SerialDBError(
            .invalidMigrator,
            "The database is already at step \"\(steps[current].identifier)\", past \"\(target)\": migrations "
                + "never go back, so migrate(upTo: \"\(target)\") cannot bring it there. Nothing was changed. "
                + "Migrate up to \"\(steps[current].identifier)\" or a later step.")
    }

    func checkNoUnknownMigrations(_ applied: [String]) throws {
        guard !allowsUnknownMigrations else { return }
        let known = Set(migrationIdentifiers)
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            throw SerialDBError(
                .unknownMigrations,
                "The database has applied migrations this app does not know (\(unknown.joined(separator: ", "))): "
                    + "it was upgraded by a newer version. Nothing was changed. Update the app, or set "
                    + "allowsUnknownMigrations if this version can work with that schema.")
        }
    }

    // MARK: - The migrations table

    func createMigrationsTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(Self.migrationsTableName.quotedDatabaseIdentifier)(
                    identifier TEXT NOT NULL PRIMARY KEY,
                    applied_at TEXT NOT NULL)
                """)
    }

    func record(_ identifier: String, in db: Database) throws {
        try db.execute(
            sql:
                "INSERT INTO \(Self.migrationsTableName.quotedDatabaseIdentifier)(identifier, applied_at) VALUES (?, ?)",
            arguments: [identifier, Date()])
    }

    /// On the first run over a database that kept its own version, records the steps it
    /// already has, in one transaction.
    /// Returns whether it looked (then the applied steps may have changed, also by another
    /// process adopting the database meanwhile).
    func adoptLegacyVersionIfNeeded(_ db: Database) throws -> Bool {
        guard let legacyVersion, !(try db.tableExists(Self.migrationsTableName)) else { return false }
        try db.inTransaction(.immediate) { db in
            // Re-check under the write lock: another process may have adopted it meanwhile.
            guard !(try db.tableExists(Self.migrationsTableName)) else { return .commit }
            let version = try readLegacyVersion(legacyVersion, db)
            guard version > 0 else { return .commit }
            guard version <= steps.count else {
                throw SerialDBError(
                    .unknownMigrations,
                    "The database's own version marker says \(version), but only \(steps.count) steps are registered: "
                        + "it was written by a newer version of the app. Nothing was changed.")
            }
            try createMigrationsTable(db)
            for step in steps.prefix(version) {
                try record(step.identifier, in: db)
            }
            return .commit
        }
        return true
    }

    private func readLegacyVersion(_ source: LegacyVersion, _ db: Database) throws -> Int {
        switch source {
        case .userVersion:
            return try db.fetchOne(Int.self, sql: "PRAGMA user_version") ?? 0
        case .table(let table, let column):
            guard try db.tableExists(table) else { return 0 }
            let marker = try db.fetchOne(
                DatabaseValue.self,
                sql: "SELECT \(column.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier) LIMIT 1")
            return try LegacyVersion.stepCount(marker ?? .null, table: table, column: column)
        case .custom(let read):
            return try read(db)
        }
    }
}
