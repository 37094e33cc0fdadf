/// How `migrate` finishes a step that `prepareMigration` copied: under the gate, in the step's
/// one transaction, it stops the mirroring, checks each copy holds exactly the live table's keys
/// (`OnlineTableCopy.compare`), drops the old table and gives the copy
/// its name, renames the prepared indexes, and runs the rest of the step's plan (views,
/// triggers, other tables) as usual. The step is recorded in the same transaction, so a crash
/// before its commit leaves the old table serving, with its copy still in step. A copy found
/// not exact throws ``OnlineCopyMismatch``: the migrator rolls back and runs the step without it.
struct OnlineSwap: PlanSubstitution {
    let step: DatabaseMigrator.Step
    let declarative: DeclarativeStep
    let copies: [OnlineTableCopy]

    /// What `migrate` found prepared for a step.
    enum Preparation {
        /// Nothing (or a copy made for another step, now removed): the step runs as it always did.
        case none
        /// A copy caught up with its live tables: the step swaps it in.
        case ready(OnlineSwap)
        /// A copy made for this step that no longer fits its tables (their definition changed
        /// since): it was removed, and the step runs as it always did.
        case discarded(tables: [String], reason: String)
    }

    /// Tables the foreign key check may leave out (folded names, old and new): their rows'
    /// references were checked as they were copied and mirrored.
    var vouchedTables: Set<String> {
        Set(
            copies.filter(\.vouchesForeignKeys).flatMap {
                [$0.rebuild.sourceTable.sqliteFolded, $0.rebuild.targetTable.sqliteFolded]
            })
    }

    /// The live tables copied.
    var tables: [String] { copies.map(\.sourceTable) }

    private var prepared: Set<String> { Set(copies.map { $0.sourceTable.sqliteFolded }) }

    /// The swap for `step`, when a copy was prepared for it; runs before the step's transaction.
    /// A copy left for another step or definition is removed, and the step runs as it always
    /// did. A copy not finished (its process died, or still copies) is taken over: its chunks
    /// share one cursor in the database, so no row range is copied twice.
    static func prepared(for step: DatabaseMigrator.Step, in db: Database) throws -> Preparation {
        guard try OnlineCopyState.exists(db) else { return .none }
        let records = try OnlineCopyState.records(db)
        guard let declarative = step.declarative, !records.isEmpty,
            records.allSatisfy({ $0.step == step.identifier })
        else {
            try discardAll(db)
            return .none
        }
        let plan = try db.planSchemaChange(
            to: declarative.schema, options: declarative.options,
            skippingRowChecksOf: Set(records.map(\.source.sqliteFolded)))
        let copies = try OnlinePreparation.copies(for: records, plan: plan, db)
        guard copies.count == records.count else {
            try discardAll(db)
            return .discarded(
                tables: records.map(\.source),
                reason: "the definition of a copied table changed after prepareMigration, so its copy no longer fits")
        }
        // Finishing the copy is copying: an open elsewhere must leave it alone meanwhile.
        let lease = OnlineCopyLease.shared(for: db)
        defer { withExtendedLifetime(lease) {} }
        while true {
            switch try OnlinePreparation.nextChunk(of: copies, rows: 20_000, checkpoint: false, db) {
            case .copied(let done, let total): db.reportProgress(completed: min(done, total), total: total)
            case .finished: return .ready(OnlineSwap(step: step, declarative: declarative, copies: copies))
            case .gone: return .none
            }
        }
    }

    static func discardAll(_ db: Database) throws {
        try db.inTransaction(.immediate) { db in
            try OnlineCopyState.discardAll(db)
            return .commit
        }
    }

    /// The step, inside its transaction (foreign keys off): the plan again, without the checks
    /// that read every row of the copied tables, with the copies standing in for the rebuilds.
    func run(_ db: Database) throws {
        let plan = try db.planSchemaChange(
            to: declarative.schema, options: declarative.options, skippingRowChecksOf: prepared)
        let current = try OnlinePreparation.copies(for: try OnlineCopyState.records(db), plan: plan, db)
        guard current.map(\.fingerprint) == copies.map(\.fingerprint) else {
            throw SerialDBError(
                .schemaChangeRefused,
                "The schema changed while the upgrade started, so the prepared copy no longer fits; nothing was "
                    + "changed. Migrate again.")
        }
        try db.applySchemaChange(plan, progress: nil, swapping: self)
        for copy in copies { try OnlineCopyState.delete(copy.id, db) }
        try OnlineCopyState.dropTablesIfEmpty(db)
    }

    /// Stands in for `rebuild` when its table was copied: the old table is replaced by the copy.
    func replaces(_ rebuild: TableRebuild, in db: Database) throws -> Bool {
        guard let copy = copies.first(where: { $0.sourceTable.isSameSQLiteName(as: rebuild.sourceTable) }) else {
            return false
        }
        try copy.dropTriggers(db)
        // The changes recorded since the preparation checked them, and the row counts, prove the
        // copy holds the live keys; else one pass over both tables does. Only when it is not: rows
        // only the copy holds are a write the triggers missed (then the copy is not used); else
        // rows the new definition refused are tried again, and whatever still differs is a copy
        // not to use either.
        if try !copy.agreesSinceCopied(db) {
            var comparison = try copy.compare(db)
            if !comparison.isExact {
                let onlyInCopy = try copy.rowsOnlyInCopy(db)
                guard onlyInCopy.isEmpty else { throw try copy.mismatch(comparison, onlyInCopy: onlyInCopy, db) }
                try refuseRowsTheNewDefinitionRefuses(copy, db)
                comparison = try copy.compare(db)
                guard comparison.isExact else { throw try copy.mismatch(comparison, onlyInCopy: [], db) }
            }
        }
        try db.execute(sql: "DROP TABLE \(copy.rejectTable.quotedDatabaseIdentifier)")
        try db.execute(sql: "DROP TABLE IF EXISTS \(copy.changeTable.quotedDatabaseIdentifier)")
        try rebuild.replaceSource(with: copy.shadow, in: db) { db in
            try OnlineAsideTable.setAside(rebuild.sourceTable, as: OnlineAsideTable.name(for: copy.id), db)
        }
        return true
    }

    /// Throws the swap's refusal when rows written during the copy still break the new definition.
    private func refuseRowsTheNewDefinitionRefuses(_ copy: OnlineTableCopy, _ db: Database) throws {
        let refused = try copy.refusedRows(db)
        guard refused.count > 0 else { return }
        throw SerialDBError(
            .schemaChangeRefused,
            "\(refused.count) row(s) of \(copy.sourceTable.quotedDatabaseIdentifier) written while the copy ran do not "
                + "satisfy its new definition (rows with \(copy.keyDescription) "
                + refused.described.joined(separator: "; ")
                + (refused.count > refused.described.count ? "; ..." : "")
                + "), so the upgrade was rolled back and the old table keeps serving. Fix those rows and migrate "
                + "again: the copy stays in step.")
    }

    /// Stands in for a CREATE INDEX of the plan when the copy built that index: the prepared
    /// index takes its name. SQLite has no ALTER INDEX, so the schema row is renamed, and the
    /// connection reloads its schema (`writable_schema = RESET`); the table's rename already
    /// tells other connections to reload theirs. Where writing the schema is forbidden, the
    /// index is built again under its name.
    /// See <https://www.sqlite.org/pragma.html#pragma_writable_schema>.
    func replaces(_ sql: String, in db: Database) throws -> Bool {
        guard let index = copies.lazy.flatMap(\.indexes).first(where: { $0.sql == sql }) else { return false }
        do {
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(
                sql: "UPDATE sqlite_master SET name = ?, sql = ? WHERE type = 'index' AND name = ?",
                arguments: [index.name, index.sql, index.temporaryName])
            let renamed = db.changesCount == 1
            try db.execute(sql: "PRAGMA writable_schema = RESET")
            if renamed { return true }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            try? db.execute(sql: "PRAGMA writable_schema = RESET")
        }
        try db.execute(sql: "DROP INDEX IF EXISTS \(index.temporaryName.quotedDatabaseIdentifier)")
        return false
    }
}
