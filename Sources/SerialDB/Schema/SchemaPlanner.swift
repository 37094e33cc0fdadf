/// Compares the live schema with a desired one and decides, table by table, what to do:
/// nothing, create, ADD COLUMN (constant time whatever the row count), rebuild, or drop.
/// Definitions are compared as token lists, so case, quoting, whitespace and comments never
/// trigger work.
struct SchemaPlanner {
    let db: Database
    let live: DatabaseSchema
    let desired: DatabaseSchema
    let options: SchemaChangeOptions

    private var steps: [SchemaPlan.Step] = []
    private var refusals: [String] = []

    init(db: Database, live: DatabaseSchema, desired: DatabaseSchema, options: SchemaChangeOptions) {
        self.db = db
        self.live = live
        self.desired = desired
        self.options = options
    }

    mutating func plan() throws -> SchemaPlan {
        try checkRenames()
        var created: [TableDefinition] = []
        var addedColumns: [(TableDefinition, [CreateTableParts.Item])] = []
        var rebuilds: [TableRebuild] = []
        var matchedSources: Set<String> = []
        for table in desired.tables {
            let sourceName = options.sourceTableName(for: table.name)
            guard let source = live.table(named: sourceName) else {
                created.append(table)
                continue
            }
            matchedSources.insert(source.name.lowercased())
            let renamesColumns = !options.oldColumnNames(inTable: table.name).isEmpty
            let renamed = source.name.lowercased() != table.name.lowercased()
            if !renamesColumns && !renamed {
                if source.parts.comparisonKey == table.parts.comparisonKey { continue }
                if let added = addableColumns(from: source, to: table) {
                    addedColumns.append((table, added))
                    continue
                }
            }
            if let rebuild = try rebuild(from: source, to: table) { rebuilds.append(rebuild) }
        }
        let dropped = live.tables.filter { !matchedSources.contains($0.name.lowercased()) }
        for table in dropped { try checkDroppable(table) }

        // Rebuilding, renaming or dropping a table would break (or be refused by) views and
        // triggers that mention it, so such a plan drops them all first and recreates the
        // desired ones last. Otherwise only the changed ones are replaced.
        let restructures = !rebuilds.isEmpty || !dropped.isEmpty
        let rebuiltNames = Set(
            rebuilds.map { $0.targetTable.lowercased() } + rebuilds.map { $0.sourceTable.lowercased() })
        let droppedNames = Set(dropped.map { $0.name.lowercased() })
        for object in (live.triggers + live.views) where restructures || isChangedOrGone(object) {
            add("drop \(object.kind.rawValue) \(object.name.quotedDatabaseIdentifier)", dropSQL(object))
        }
        for index in live.indexes where isChangedOrGone(index) {
            let table = index.tableName.lowercased()
            // Indexes of rebuilt and dropped tables go with their table.
            guard !rebuiltNames.contains(table), !droppedNames.contains(table) else { continue }
            add("drop index \(index.name.quotedDatabaseIdentifier)", dropSQL(index))
        }
        for table in created {
            add("create table \(table.name.quotedDatabaseIdentifier)", table.sql)
        }
        // The column definition is the caller's own DDL, as SQLite accepted it in the scratch
        // database; it holds no values, so there is nothing to bind.
        for (table, items) in addedColumns {
            for item in items {
                add(
                    "add column \(item.text.split(separator: " ").first ?? "") to \(table.name.quotedDatabaseIdentifier)",
                    "ALTER TABLE \(table.name.quotedDatabaseIdentifier) ADD COLUMN \(item.text)")
            }
        }
        for rebuild in rebuilds {
            steps.append(
                SchemaPlan.Step(
                    summary: "rebuild \(rebuild.targetTable.quotedDatabaseIdentifier) (\(rebuild.rowCount) rows): "
                        + rebuild.reasons.joined(separator: "; "),
                    action: .rebuild(rebuild)))
        }
        for table in dropped {
            add(
                "drop table \(table.name.quotedDatabaseIdentifier)", "DROP TABLE \(table.name.quotedDatabaseIdentifier)"
            )
        }
        for index in desired.indexes {
            let table = index.tableName.lowercased()
            if rebuiltNames.contains(table) || isNewOrChanged(index) {
                add("create index \(index.name.quotedDatabaseIdentifier)", index.sql)
            }
        }
        for object in desired.triggers + desired.views where restructures || isNewOrChanged(object) {
            add("create \(object.kind.rawValue) \(object.name.quotedDatabaseIdentifier)", object.sql)
        }
        return SchemaPlan(
            steps: steps, refusals: refusals,
            schemaVersion: try db.fetchOne(Int.self, sql: "PRAGMA schema_version") ?? 0, desired: desired)
    }

    // MARK: - Tables

    private mutating func checkRenames() throws {
        for (old, new) in options.tableRenames {
            if live.table(named: old) == nil {
                refusals.append(
                    "Table \(old.quotedDatabaseIdentifier) cannot be renamed to \(new.quotedDatabaseIdentifier): there is no such table."
                )
            }
            if desired.table(named: new) == nil {
                refusals.append(
                    "Table \(old.quotedDatabaseIdentifier) is renamed to \(new.quotedDatabaseIdentifier), which the new schema does not define."
                )
            }
        }
        for (table, renames) in options.columnRenames {
            guard let target = desired.table(named: table) else {
                refusals.append(
                    "Columns are renamed in table \(table.quotedDatabaseIdentifier), which the new schema does not define."
                )
                continue
            }
            let source = live.table(named: options.sourceTableName(for: target.name))
            for (old, new) in renames {
                if source?.column(named: old) == nil {
                    refusals.append("Column \(table).\(old) cannot be renamed: the live table has no such column.")
                }
                if target.column(named: new) == nil {
                    refusals.append(
                        "Column \(table).\(old) is renamed to \(new), which the new schema does not define.")
                }
            }
        }
    }

    /// The new columns, when the only change is columns appended at the end that
    /// ALTER TABLE ADD COLUMN can take. See <https://www.sqlite.org/lang_altertable.html#altertabaddcol>.
    private func addableColumns(from source: TableDefinition, to table: TableDefinition) -> [CreateTableParts.Item]? {
        let old = source.parts
        let new = table.parts
        guard new.columns.count > old.columns.count, old.constraints == new.constraints, old.options == new.options,
            Array(new.columns.prefix(old.columns.count)).map(\.tokens) == old.columns.map(\.tokens)
        else { return nil }
        let added = Array(new.columns.dropFirst(old.columns.count))
        for item in added {
            guard let column = table.column(named: item.columnName ?? ""), column.primaryKeyIndex == 0,
                column.visibility != .generatedStored,
                !item.tokens.contains("w:unique"), !item.tokens.contains("w:primary")
            else { return nil }
            let defaultSQL = column.defaultSQL?.uppercased()
            if let defaultSQL, defaultSQL.hasPrefix("(") || defaultSQL.hasPrefix("CURRENT_") { return nil }
            let hasNonNullDefault = defaultSQL != nil && defaultSQL != "NULL"
            if column.isNotNull && !hasNonNullDefault { return nil }
            if item.tokens.contains("w:references") && hasNonNullDefault { return nil }
        }
        return added
    }

    private mutating func rebuild(from source: TableDefinition, to table: TableDefinition) throws -> TableRebuild? {
        let rowCount =
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(source.name.quotedDatabaseIdentifier)") ?? 0
        let oldNames = options.oldColumnNames(inTable: table.name)
        var reasons: [String] = []
        if source.name.lowercased() != table.name.lowercased() {
            reasons.append("renamed from \(source.name.quotedDatabaseIdentifier)")
        }
        var columns: [TableRebuild.CopiedColumn] = []
        var usedSources: Set<String> = []
        for column in table.columns where column.isWritable {
            let sourceName = oldNames[column.name.lowercased()] ?? column.name
            let fill = options.fillValue(table: table.name, column: column.name)
            if let sourceColumn = source.column(named: sourceName), sourceColumn.isWritable {
                usedSources.insert(sourceColumn.name.lowercased())
                if sourceName.lowercased() != column.name.lowercased() {
                    reasons.append("column \(sourceName) renamed to \(column.name)")
                }
                reasons += differences(sourceColumn, column)
                var copied = TableRebuild.CopiedColumn(target: column.name, source: sourceColumn.name)
                if column.isNotNull && !sourceColumn.isNotNull && !isAutomaticKey(column, table) {
                    let nulls = try nullCount(source.name, sourceColumn.name)
                    if nulls > 0 {
                        if let fill {
                            copied.fill = fill
                        } else {
                            refusals.append(
                                "Column \(table.name).\(column.name) becomes NOT NULL but \(nulls) row(s) hold NULL. "
                                    + "Give a fill value for it, or update those rows first.")
                        }
                    }
                }
                columns.append(copied)
            } else {
                reasons.append("new column \(column.name)")
                if let fill {
                    columns.append(TableRebuild.CopiedColumn(target: column.name, source: nil, fill: fill))
                } else if column.isNotNull && (column.defaultSQL == nil || column.defaultSQL?.uppercased() == "NULL")
                    && rowCount > 0 && !isAutomaticKey(column, table)
                {
                    refusals.append(
                        "New column \(table.name).\(column.name) is NOT NULL without a default, and the table holds "
                            + "\(rowCount) row(s). Give a fill value for it, or a DEFAULT in the schema.")
                }
            }
        }
        for column in source.columns where column.isWritable && !usedSources.contains(column.name.lowercased()) {
            reasons.append("column \(column.name) dropped")
            let values = try nonNullCount(source.name, column.name)
            if values > 0 && !options.allowsDropping(table: table.name, column: column.name)
                && !options.allowsDropping(table: source.name, column: column.name)
            {
                refusals.append(
                    "Column \(source.name).\(column.name) holds \(values) non-NULL value(s) and is absent from the new "
                        + "schema. Rename it to a column of the new schema, or allow dropping it.")
            }
        }
        let oldParts = source.parts
        let newParts = table.parts
        if oldParts.constraints != newParts.constraints { reasons.append("table constraints changed") }
        if oldParts.options != newParts.options { reasons.append("table options changed") }
        if source.foreignKeys != table.foreignKeys { reasons.append("foreign keys changed") }
        let oldOrder = source.columns.map { $0.name.lowercased() }.filter { name in
            table.columns.contains {
                ($0.name.lowercased() == name) || oldNames[$0.name.lowercased()]?.lowercased() == name
            }
        }
        let newOrder = table.columns.map { oldNames[$0.name.lowercased()]?.lowercased() ?? $0.name.lowercased() }
            .filter(oldOrder.contains)
        if oldOrder != newOrder { reasons.append("column order changed") }
        if reasons.isEmpty { reasons.append("definition changed") }

        if columns.isEmpty && table.isWithoutRowID && rowCount > 0 {
            refusals.append(
                "Table \(table.name) keeps none of its columns, and as a WITHOUT ROWID table its \(rowCount) row(s) "
                    + "would have no key. Keep or rename a key column, or drop and recreate the table.")
        }
        let temporaryName = try freeTemporaryName(for: table.name)
        guard let nameRange = newParts.nameRange else {
            throw SerialDBError(.schemaChangeRefused, "Cannot read the CREATE TABLE statement of \(table.name).")
        }
        var createSQL = table.sql
        createSQL.replaceSubrange(nameRange, with: temporaryName.quotedDatabaseIdentifier)
        // The rowid travels with the INTEGER PRIMARY KEY when both tables have one that is copied;
        // otherwise it is copied by itself so rows keep their rowids.
        let aliasCopied =
            table.rowIDAlias.map { alias in
                columns.contains { $0.target.lowercased() == alias.lowercased() && $0.source != nil }
            } ?? false
        let copiesRowID = !source.isWithoutRowID && !table.isWithoutRowID && !aliasCopied
        return TableRebuild(
            sourceTable: source.name, targetTable: table.name, reasons: reasons, temporaryName: temporaryName,
            createSQL: createSQL, columns: columns, copiesRowID: copiesRowID, sourceHasRowID: !source.isWithoutRowID,
            carriesAutoincrement: source.hasAutoincrement && table.hasAutoincrement, rowCount: rowCount)
    }

    /// An INTEGER PRIMARY KEY turns NULL into a fresh rowid, so NOT NULL needs no fill.
    private func isAutomaticKey(_ column: ColumnDefinition, _ table: TableDefinition) -> Bool {
        table.rowIDAlias?.lowercased() == column.name.lowercased()
    }

    private func differences(_ old: ColumnDefinition, _ new: ColumnDefinition) -> [String] {
        var reasons: [String] = []
        if old.type.uppercased() != new.type.uppercased() {
            reasons.append(
                "column \(new.name): type \(old.type.isEmpty ? "none" : old.type) → \(new.type.isEmpty ? "none" : new.type)"
            )
        }
        if old.isNotNull != new.isNotNull {
            reasons.append("column \(new.name): \(new.isNotNull ? "now NOT NULL" : "now nullable")")
        }
        if old.defaultSQL != new.defaultSQL { reasons.append("column \(new.name): default changed") }
        if (old.primaryKeyIndex > 0) != (new.primaryKeyIndex > 0) { reasons.append("primary key changed") }
        return reasons
    }

    private mutating func checkDroppable(_ table: TableDefinition) throws {
        let rows = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table.name.quotedDatabaseIdentifier)") ?? 0
        if rows > 0 && !options.allowsDropping(table: table.name) {
            refusals.append(
                "Table \(table.name.quotedDatabaseIdentifier) holds \(rows) row(s) and is absent from the new schema. "
                    + "Rename it to a table of the new schema, or allow dropping it.")
        }
    }

    private func nullCount(_ table: String, _ column: String) throws -> Int {
        try db.fetchOne(
            Int.self,
            sql:
                "SELECT count(*) FROM \(table.quotedDatabaseIdentifier) WHERE \(column.quotedDatabaseIdentifier) IS NULL"
        )
            ?? 0
    }

    private func nonNullCount(_ table: String, _ column: String) throws -> Int {
        try db.fetchOne(
            Int.self,
            sql: "SELECT count(\(column.quotedDatabaseIdentifier)) FROM \(table.quotedDatabaseIdentifier)") ?? 0
    }

    private func freeTemporaryName(for table: String) throws -> String {
        var candidate = "serialdb_new_" + table
        var attempt = 1
        while try db.fetchOne(
            Int.self, sql: "SELECT 1 FROM sqlite_master WHERE lower(name) = lower(?)", arguments: [candidate]) != nil
        {
            attempt += 1
            candidate = "serialdb_new\(attempt)_" + table
        }
        return candidate
    }

    // MARK: - Indexes, triggers, views

    private func isChangedOrGone(_ object: SchemaObject) -> Bool {
        guard
            let wanted = desired.objects.first(where: {
                $0.kind == object.kind && $0.name.lowercased() == object.name.lowercased()
            })
        else { return true }
        return !wanted.isSameDefinition(as: object)
    }

    private func isNewOrChanged(_ object: SchemaObject) -> Bool {
        guard
            let existing = live.objects.first(where: {
                $0.kind == object.kind && $0.name.lowercased() == object.name.lowercased()
            })
        else { return true }
        return !existing.isSameDefinition(as: object)
    }

    private func dropSQL(_ object: SchemaObject) -> String {
        "DROP \(object.kind.rawValue.uppercased()) \(object.name.quotedDatabaseIdentifier)"
    }

    private mutating func add(_ summary: String, _ sql: String) {
        steps.append(SchemaPlan.Step(summary: summary, action: .execute(sql)))
    }
}
