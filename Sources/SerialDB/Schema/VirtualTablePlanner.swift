/// The part of a schema change that concerns virtual tables: create the new ones, drop the
/// ones the new schema omits, and recreate and refill the ones whose definition changed.
/// A virtual table cannot be altered, so a changed definition means a new table:
///
/// - one that stores its rows (a full-text or R*Tree table) gets them copied, rowids kept,
///   columns matched by name (or by `renameColumn`);
/// - an external-content full-text index (`content='docs'`) is rebuilt from its content
///   table with the module's `'rebuild'` command, and so is an unchanged one whose content
///   table the plan rebuilds;
/// - a contentless index (`content=''`) cannot be refilled: recreating one that holds rows is
///   refused unless dropping it is allowed.
///
/// Dropping what holds data follows the rules of ordinary tables; an external-content index
/// holds none of its own. Everything that can be refused is refused here, at plan time.
struct VirtualTablePlanner {
    let db: Database
    let live: DatabaseSchema
    let desired: DatabaseSchema
    let options: SchemaChangeOptions
    /// Ordinary tables (folded final names) whose rows the plan rewrites: rebuilt or created.
    let rewrittenTables: Set<String>

    /// Steps that run before any ordinary table is dropped, rebuilt or created: drops, and
    /// recreations that read the old table's rows (its content table is still as it was).
    private(set) var stepsBeforeTables: [SchemaPlan.Step] = []
    /// Steps that run once the ordinary tables are in their final shape: creates, and
    /// everything that fills an index from its content table.
    private(set) var stepsAfterTables: [SchemaPlan.Step] = []
    private(set) var refusals: [String] = []
    /// Whether the plan drops or renames a virtual table, so that the triggers and views that
    /// name it must be dropped first and recreated last (SQLite's RENAME checks them).
    private(set) var restructures = false

    mutating func plan() throws {
        checkColumnRenames()
        for table in live.virtualTables where !table.isManaged {
            if desired.virtualTable(named: table.name) != nil || desired.table(named: table.name) != nil {
                refusals.append(
                    "The virtual table \(table.name.quotedDatabaseIdentifier) uses the module \(table.module), which "
                        + "schema steps do not manage, and the new schema defines a table of that name. "
                        + "Drop it in a closure step first.")
            }
        }
        for table in live.virtualTables where table.isManaged && desired.virtualTable(named: table.name) == nil {
            try drop(table)
        }
        for table in desired.virtualTables {
            let source = live.virtualTable(named: table.name)
            // An index the plan fills, or whose content table the plan takes away, must find
            // its content; an unchanged one over a table nobody touches is left as it is.
            if source?.comparisonKey != table.comparisonKey || table.contentTable.map(isRemoved) == true {
                checkContentTable(of: table)
            }
            guard let source, source.isManaged else {
                create(table)
                continue
            }
            if source.comparisonKey != table.comparisonKey {
                try recreate(source, as: table)
            } else if let content = table.contentTable, rewrittenTables.contains(content.sqliteFolded) {
                // Its content table gets new rows (rebuilt: values may change, such as NULLs
                // given a fill value), and an index that disagrees with its content answers
                // wrongly and can be corrupted by later 'delete' commands.
                stepsAfterTables.append(rebuildStep(table, reason: "its content table is rebuilt"))
            }
        }
    }

    // MARK: - Steps

    private mutating func drop(_ table: VirtualTableDefinition) throws {
        let rows = try storedRows(of: table)
        if rows > 0 && !options.allowsDropping(table: table.name) {
            refusals.append(
                "The \(table.summary) table \(table.name.quotedDatabaseIdentifier) holds \(rows) row(s) and is absent "
                    + "from the new schema. Add its CREATE VIRTUAL TABLE to the new schema, or allow dropping it.")
        }
        let users = (desired.triggers + desired.views).filter { object in
            SQLTokenizer.tokenize(object.sql).contains { $0.kind == .word && $0.normalized == table.name.sqliteFolded }
        }
        if !users.isEmpty {
            refusals.append(
                "The virtual table \(table.name.quotedDatabaseIdentifier) is absent from the new schema, but "
                    + users.map { "\($0.kind.rawValue) \($0.name.quotedDatabaseIdentifier)" }.joined(separator: ", ")
                    + " of the new schema still use\(users.count == 1 ? "s" : "") it. Add its CREATE VIRTUAL TABLE "
                    + "to the new schema, or change those.")
        }
        restructures = true
        stepsBeforeTables.append(
            step("drop virtual table \(table.name.quotedDatabaseIdentifier) (\(table.summary))", dropSQL(table.name)))
    }

    private mutating func create(_ table: VirtualTableDefinition) {
        stepsAfterTables.append(
            step("create virtual table \(table.name.quotedDatabaseIdentifier) (\(table.summary))", table.sql))
        if table.contentTable != nil { stepsAfterTables.append(rebuildStep(table, reason: "a new index")) }
    }

    private mutating func recreate(_ source: VirtualTableDefinition, as table: VirtualTableDefinition) throws {
        let rows = try storedRows(of: source)
        let name = table.name.quotedDatabaseIdentifier
        let reasons = differences(from: source, to: table)
        restructures = true
        if table.contentTable != nil {
            // The new index is filled from its content table: rows the old table stored
            // itself are discarded.
            if case .own = source.content, rows > 0 { refuseDiscarding(source, rows: rows, because: table) }
            stepsAfterTables.append(step("drop virtual table \(name) to recreate it: \(reasons)", dropSQL(table.name)))
            stepsAfterTables.append(step("create virtual table \(name) (\(table.summary))", table.sql))
            stepsAfterTables.append(rebuildStep(table, reason: "recreated"))
            return
        }
        if source.content == .contentless {
            // Nothing can read the rows back out of a contentless index.
            if rows > 0 { refuseDiscarding(source, rows: rows, because: table) }
            stepsBeforeTables.append(step("drop virtual table \(name) to recreate it: \(reasons)", dropSQL(table.name)))
            stepsBeforeTables.append(step("create virtual table \(name) (\(table.summary)), empty", table.sql))
            return
        }
        if table.content == .contentless, case .own = source.content, rows > 0 {
            refuseDiscarding(source, rows: rows, because: table)
        }
        let copied = try copiedColumns(from: source, to: table)
        // An external-content source reads its rows from its content table.
        let copiedRows =
            source.contentTable == nil
            ? rows
            : try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(source.name.quotedDatabaseIdentifier)") ?? 0
        let temporaryName = try SchemaPlanner.freeTemporaryName(for: table.name, in: db)
        let temporary = temporaryName.quotedDatabaseIdentifier
        let targets = (["rowid"] + copied.map(\.target.quotedDatabaseIdentifier)).joined(separator: ", ")
        let sources = (["rowid"] + copied.map(\.source.quotedDatabaseIdentifier)).joined(separator: ", ")
        stepsBeforeTables += [
            step(
                "recreate virtual table \(name) (\(table.summary)): \(reasons); new definition under a temporary name",
                table.createSQL(named: temporaryName)),
            step(
                "copy the \(copiedRows) row(s) of \(name), with their rowids",
                "INSERT INTO \(temporary)(\(targets)) SELECT \(sources) FROM \(source.name.quotedDatabaseIdentifier)"),
            step("drop the old \(name)", dropSQL(source.name)),
            step(
                "rename the new \(name)", "ALTER TABLE \(temporary) RENAME TO \(name)"),
        ]
    }

    /// Source and target of each copied column; refuses dropping a column that holds values.
    private mutating func copiedColumns(
        from source: VirtualTableDefinition, to table: VirtualTableDefinition
    ) throws -> [(source: String, target: String)] {
        let oldNames = options.oldColumnNames(inTable: table.name)
        let renamedAway = options.renamedAwayColumns(inTable: table.name)
        let sourceColumns = source.copiedColumns
        var copied: [(source: String, target: String)] = []
        for column in table.copiedColumns {
            let folded = column.sqliteFolded
            let sourceName = oldNames[folded] ?? (renamedAway.contains(folded) ? nil : column)
            let match =
                sourceName.flatMap { name in sourceColumns.first { $0.isSameSQLiteName(as: name) } }
                // A rename an earlier run applied: the live table already has the new name.
                ?? (oldNames[folded] != nil ? sourceColumns.first { $0.isSameSQLiteName(as: column) } : nil)
            if let match { copied.append((match, column)) }
        }
        for column in sourceColumns where !copied.contains(where: { $0.source.isSameSQLiteName(as: column) }) {
            let values =
                try db.fetchOne(
                    Int.self,
                    sql:
                        "SELECT count(\(column.quotedDatabaseIdentifier)) FROM \(source.name.quotedDatabaseIdentifier)"
                ) ?? 0
            if values > 0 && !options.allowsDropping(table: table.name, column: column) {
                refusals.append(
                    "Column \(source.name).\(column) of the virtual table holds \(values) non-NULL value(s) and is "
                        + "absent from its new definition. Rename it to a column of the new definition, or allow "
                        + "dropping it.")
            }
        }
        return copied
    }

    private func rebuildStep(_ table: VirtualTableDefinition, reason: String) -> SchemaPlan.Step {
        let name = table.name.quotedDatabaseIdentifier
        return step(
            "fill the full-text index \(name) from \(table.contentTable?.quotedDatabaseIdentifier ?? "") (\(reason))",
            "INSERT INTO \(name)(\(name)) VALUES('rebuild')")
    }

    // MARK: - Checks

    /// A column rename must name a column of the live table and one of the new definition;
    /// one the live table already shows was applied by an earlier run.
    private mutating func checkColumnRenames() {
        for (tableName, renames) in options.columnRenames {
            guard let table = desired.virtualTable(named: tableName) else { continue }
            let source = live.virtualTable(named: table.name)
            for (old, new) in renames {
                let has = { (table: VirtualTableDefinition?, column: String) in
                    table?.copiedColumns.contains { $0.isSameSQLiteName(as: column) } ?? false
                }
                if !has(source, old) && has(source, new) { continue }
                if !has(source, old) {
                    refusals.append(
                        "Column \(tableName).\(old) cannot be renamed: the live virtual table has no such column.")
                }
                if !has(table, new) {
                    refusals.append(
                        "Column \(tableName).\(old) is renamed to \(new), which the new definition does not have.")
                }
            }
        }
    }

    /// An external-content index must find its content table, and each of its columns there,
    /// or the `'rebuild'` (and every query) fails.
    private mutating func checkContentTable(of table: VirtualTableDefinition) {
        guard let content = table.contentTable else { return }
        let name = table.name.quotedDatabaseIdentifier
        if desired.views.contains(where: { $0.name.isSameSQLiteName(as: content) })
            || desired.virtualTable(named: content) != nil
        {
            return
        }
        guard let contentTable = desired.table(named: content) else {
            refusals.append(
                "The full-text index \(name) reads its content from \(content.quotedDatabaseIdentifier), which the new "
                    + "schema does not define. Define that table, or change the index's content= option.")
            return
        }
        var needed = table.copiedColumns
        if table.module == "fts5", let rowID = table.option("content_rowid") { needed.append(rowID) }
        let missing = needed.filter { column in
            contentTable.column(named: column) == nil
                && !(table.module == "fts5" && ["rowid", "_rowid_", "oid"].contains(column.sqliteFolded))
        }
        if !missing.isEmpty {
            refusals.append(
                "The full-text index \(name) reads the column(s) \(missing.joined(separator: ", ")) from its content "
                    + "table \(contentTable.name.quotedDatabaseIdentifier), which has no such column in the new schema. "
                    + "Add them to that table, or name its columns in the index.")
        }
    }

    /// Whether the live schema has a table or view of this name that the new schema lacks.
    private func isRemoved(_ name: String) -> Bool {
        let inLive =
            live.table(named: name) != nil || live.virtualTable(named: name) != nil
            || live.views.contains { $0.name.isSameSQLiteName(as: name) }
        let inDesired =
            desired.table(named: name) != nil || desired.virtualTable(named: name) != nil
            || desired.views.contains { $0.name.isSameSQLiteName(as: name) }
        return inLive && !inDesired
    }

    private mutating func refuseDiscarding(
        _ source: VirtualTableDefinition, rows: Int, because table: VirtualTableDefinition
    ) {
        guard !options.allowsDropping(table: table.name) else { return }
        let what =
            source.content == .contentless
            ? "is contentless: the text of its \(rows) indexed row(s) is not stored, so they cannot be copied into "
                + "its new definition"
            : "stores \(rows) row(s), which its new definition (\(table.summary)) would not keep"
        refusals.append(
            "The virtual table \(source.name.quotedDatabaseIdentifier) \(what). Allow dropping it to recreate it "
                + (table.contentTable != nil ? "filled from its content table" : "empty")
                + (source.content == .contentless ? ", then insert the rows again" : "")
                + "; or keep its definition.")
    }

    // MARK: - Reading

    /// The rows a table holds of its own: none for an external-content index (they are its
    /// content table's).
    private func storedRows(of table: VirtualTableDefinition) throws -> Int {
        switch table.content {
        case .external: return 0
        case .own:
            return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table.name.quotedDatabaseIdentifier)") ?? 0
        case .contentless:
            // FTS5 counts a contentless table's rows; FTS4 cannot scan one, but its
            // `_docsize` table has a row per document (unless matchinfo=fts3, which leaves
            // only the segments: then any segment means rows).
            if table.module == "fts5" {
                return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table.name.quotedDatabaseIdentifier)")
                    ?? 0
            }
            for (shadow, query) in [("_docsize", "count(*)"), ("_segdir", "min(count(*), 1)")] {
                let shadowName = table.name + shadow
                // SQLite compares names with ASCII case folding, as lower() folds.
                if let stored = try db.fetchOne(
                    String.self, sql: "SELECT name FROM sqlite_master WHERE lower(name) = lower(?)",
                    arguments: [shadowName])
                {
                    return try db.fetchOne(Int.self, sql: "SELECT \(query) FROM \(stored.quotedDatabaseIdentifier)")
                        ?? 0
                }
            }
            return 0
        }
    }

    private func differences(from source: VirtualTableDefinition, to table: VirtualTableDefinition) -> String {
        var reasons: [String] = []
        if source.module != table.module { reasons.append("module \(source.module) → \(table.module)") }
        if source.content != table.content { reasons.append("content: \(source.summary) → \(table.summary)") }
        let oldColumns = Set(source.copiedColumns.map(\.sqliteFolded))
        let newColumns = Set(table.copiedColumns.map(\.sqliteFolded))
        let added = table.copiedColumns.filter { !oldColumns.contains($0.sqliteFolded) }
        let dropped = source.copiedColumns.filter { !newColumns.contains($0.sqliteFolded) }
        if !added.isEmpty { reasons.append("new column(s) " + added.joined(separator: ", ")) }
        if !dropped.isEmpty { reasons.append("column(s) " + dropped.joined(separator: ", ") + " dropped") }
        if reasons.isEmpty { reasons.append("options changed") }
        return reasons.joined(separator: "; ")
    }

    private func dropSQL(_ name: String) -> String {
        "DROP TABLE \(name.quotedDatabaseIdentifier)"
    }

    private func step(_ summary: String, _ sql: String) -> SchemaPlan.Step {
        SchemaPlan.Step(summary: summary, action: .execute(sql))
    }
}
