extension Database {
    /// Reads the schema of the main database. See ``DatabaseSchema``.
    public func schema() throws -> DatabaseSchema {
        try DatabaseSchema(self)
    }

    /// Compares the live schema with the CREATE statements in `sql` and returns what it would
    /// take to get there, without changing anything.
    ///
    /// The desired schema is the whole application schema: its tables, virtual tables (FTS3/4/5,
    /// R*Tree), indexes, triggers and views. Live objects it does not mention are dropped
    /// (tables only when empty, or when `options` allows it). SQLite's and SerialDB's own
    /// tables, shadow tables, and virtual tables of other modules are never touched.
    ///
    /// - Parameters:
    ///   - sql: CREATE TABLE / VIRTUAL TABLE / INDEX / TRIGGER / VIEW statements.
    ///   - options: renames, fill values, allowed drops.
    /// - Throws: ``SerialDBError/Code/schemaChangeRefused`` when `sql` does not compile.
    public func planSchemaChange(to sql: String, options: SchemaChangeOptions = SchemaChangeOptions()) throws
        -> SchemaPlan
    {
        try planSchemaChange(to: sql, options: options, skippingRowChecksOf: [])
    }

    /// ``planSchemaChange(to:options:)``, without the checks that read every row of the
    /// `prepared` source tables (folded names), whose rows an online copy already holds.
    func planSchemaChange(to sql: String, options: SchemaChangeOptions, skippingRowChecksOf prepared: Set<String>)
        throws -> SchemaPlan
    {
        var planner = SchemaPlanner(
            db: self, live: try schema(), desired: try desiredSchema(sql), options: options)
        planner.skipsRowChecks = prepared
        return try planner.plan()
    }

    /// Applies a plan: the whole plan in one transaction with foreign keys deferred
    /// (``inSchemaChangeTransaction(_:)``), or, inside a migration step, in the step's.
    /// Afterwards the live schema is compared with the desired one.
    ///
    /// - Parameters:
    ///   - plan: from ``planSchemaChange(to:options:)`` on this database.
    ///   - progress: rows copied of total while tables are rebuilt.
    /// - Throws: ``SerialDBError/Code/schemaChangeRefused`` when the plan has refusals (nothing
    ///   is touched), when the schema changed since planning, or when rows do not fit the new
    ///   definition; ``SerialDBError/Code/foreignKeyViolation``; any ``DatabaseError``. On
    ///   error the database is left as it was.
    public func applySchemaChange(_ plan: SchemaPlan, progress: ((Int, Int) -> Void)? = nil) throws {
        try applySchemaChange(plan, progress: progress, swapping: nil)
    }

    /// ``applySchemaChange(_:progress:)``; `swap` takes over the rebuilds and indexes an online
    /// copy prepared.
    func applySchemaChange(_ plan: SchemaPlan, progress: ((Int, Int) -> Void)?, swapping swap: (any PlanSubstitution)?)
        throws
    {
        guard !plan.isRefused else {
            throw SerialDBError(
                .schemaChangeRefused,
                "The schema change is refused, nothing was changed: " + plan.refusals.joined(separator: " "))
        }
        let previousObserver = progressObserver
        if let progress { progressObserver = progress }
        defer { progressObserver = previousObserver }
        if isInsideTransaction {
            guard try fetchOne(Bool.self, sql: "PRAGMA foreign_keys") == false else {
                throw SerialDBError(
                    .invalidArguments,
                    "A schema change inside a transaction needs foreign keys off, or dropping a rebuilt table "
                        + "would cascade into its child rows. Apply it outside any transaction, or in a migration step."
                )
            }
            try run(plan, swapping: swap)
        } else {
            try inSchemaChangeTransaction { db in try db.run(plan, swapping: swap) }
        }
    }

    /// Plans and applies in one go, returning the plan that ran.
    @discardableResult
    public func changeSchema(to sql: String, options: SchemaChangeOptions = SchemaChangeOptions()) throws -> SchemaPlan
    {
        let plan = try planSchemaChange(to: sql, options: options)
        try applySchemaChange(plan)
        return plan
    }

    private func run(_ plan: SchemaPlan, swapping swap: (any PlanSubstitution)?) throws {
        guard try fetchOne(Int.self, sql: "PRAGMA schema_version") == plan.schemaVersion else {
            throw SerialDBError(
                .schemaChangeRefused,
                "The schema changed since the plan was made; nothing was changed. Plan again.")
        }
        for step in plan.steps {
            switch step.action {
            case .execute(let sql):
                if let swap, try swap.replaces(sql, in: self) { continue }
                do {
                    try execute(sql: sql)
                } catch let error as DatabaseError
                    where error.resultCode == .SQLITE_CONSTRAINT
                    || (sql.hasPrefix("ALTER TABLE") && error.message.hasSuffix("constraint failed"))
                {
                    // Existing rows that fail a new CHECK, NOT NULL or UNIQUE index: the same
                    // situation a rebuild's copy reports as a refusal, reported the same way.
                    // (ADD COLUMN reports its CHECK on existing rows as a plain SQLITE_ERROR
                    // "CHECK constraint failed".)
                    throw SerialDBError(
                        .schemaChangeRefused,
                        "The step \"\(step.summary)\" failed because existing rows do not satisfy the new "
                            + "definition, so the change was rolled back. Fix those rows and migrate again.",
                        underlying: error)
                }
            case .rebuild(let rebuild):
                if let swap, try swap.replaces(rebuild, in: self) { continue }
                try rebuild.run(self)
            }
        }
        for name in plan.tablesKeptAsWritten {
            if let table = plan.desired.table(named: name) { try keepDefinitionAsWritten(table) }
        }
        try Self.verify(try schema(), matches: plan.desired)
    }

    /// Executes the desired schema into a scratch in-memory database, so SQLite parses it and
    /// normalizes it exactly as it does the live one. The scratch connection is set up like
    /// this one (``Configuration/prepareDatabase`` included) and is given every collation and
    /// function registered on this one, also after it opened, so it compiles what this one does.
    func desiredSchema(_ sql: String) throws -> DatabaseSchema {
        var configuration = self.configuration
        configuration.foreignKeysEnabled = false
        configuration.readOnly = false
        configuration.createsMissingFile = true
        configuration.journalMode = nil
        configuration.vfsName = nil
        configuration.trace = nil
        let scratch = try Database(path: ":memory:", configuration: configuration)
        try scratch.addRegistrations(of: self)
        do {
            try scratch.execute(sql: sql)
        } catch {
            throw SerialDBError(
                .schemaChangeRefused, "The new schema does not compile; nothing was changed. Fix the SQL.",
                underlying: error)
        }
        try VirtualTableDefinition.refuseUnmanaged(in: scratch)
        // SerialDB's own objects are never read as the application's, so an application
        // object under such a name would silently never be created.
        let reserved = try scratch.fetchAll(
            String.self,
            sql: "SELECT name FROM sqlite_master WHERE lower(name) LIKE 'serialdb\\_%' ESCAPE '\\' ORDER BY name")
        guard reserved.isEmpty else {
            throw SerialDBError(
                .schemaChangeRefused,
                "The names \(reserved.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) start with `serialdb_`, "
                    + "which SerialDB reserves for its own tables; nothing was changed. Rename them.")
        }
        var schema = try DatabaseSchema(scratch)
        schema.unenforceableForeignKeys = try scratch.unenforceableForeignKeys(of: schema)
        return schema
    }

    /// A last line of defence: after the plan ran, the schema must be the desired one.
    private static func verify(_ live: DatabaseSchema, matches desired: DatabaseSchema) throws {
        var mismatches: [String] = []
        for table in desired.tables {
            guard let actual = live.table(named: table.name) else {
                mismatches.append("table \(table.name) is missing")
                continue
            }
            if actual.parts.comparisonKey != table.parts.comparisonKey {
                mismatches.append("table \(table.name) is `\(actual.sql)` instead of `\(table.sql)`")
            } else if actual.name != table.name || actual.columns.map(\.name) != table.columns.map(\.name) {
                mismatches.append("table \(table.name) is spelled `\(actual.sql)` instead of `\(table.sql)`")
            }
        }
        for table in live.tables where desired.table(named: table.name) == nil {
            mismatches.append("table \(table.name) is still there")
        }
        mismatches += VirtualTableDefinition.mismatches(live: live, desired: desired)
        let liveObjects = live.objects.map { SQLTokenizer.normalized($0.sql) }
        let desiredObjects = desired.objects.map { SQLTokenizer.normalized($0.sql) }
        if Set(liveObjects.map { $0.joined(separator: " ") }) != Set(desiredObjects.map { $0.joined(separator: " ") }) {
            mismatches.append("indexes, triggers or views differ")
        }
        guard mismatches.isEmpty else {
            throw SerialDBError(
                .schemaChangeRefused,
                "After the change the schema is not the requested one (" + mismatches.joined(separator: "; ")
                    + "), so it was rolled back. This is a SerialDB bug: please report it with both schemas.")
        }
    }
}
