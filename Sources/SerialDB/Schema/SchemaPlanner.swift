/// Compares the live schema with a desired one and decides, table by table, what to do:
/// nothing, create, ADD COLUMN (constant time whatever the row count), rebuild, or drop.
/// Definitions are compared as token lists, so case, quoting, whitespace and comments never
/// trigger work.
struct SchemaPlanner {
    let db: Database
    let live: DatabaseSchema
    let desired: DatabaseSchema
    private(set) var options: SchemaChangeOptions
    /// Source tables (folded names) whose rows an online copy already holds in their new
    /// definition: the checks that read every row are skipped for them (the swap runs under
    /// the gate and must not scan the table).
    var skipsRowChecks: Set<String> = []

    private var steps: [SchemaPlan.Step] = []
    var refusals: [String] = []

    init(db: Database, live: DatabaseSchema, desired: DatabaseSchema, options: SchemaChangeOptions) {
        self.db = db
        self.live = live
        self.desired = desired
        self.options = options
    }

    mutating func plan() throws -> SchemaPlan {
        dropRenamesAlreadyApplied()
        try checkRenames()
        refusals += desired.unenforceableForeignKeys
        var created: [TableDefinition] = []
        var addedColumns: [(TableDefinition, [CreateTableParts.Item])] = []
        var rebuilds: [TableRebuild] = []
        var caseRenamed: [(TableDefinition, TableDefinition)] = []
        var matchedSources: Set<String> = []
        for table in desired.tables {
            guard let sourceName = options.sourceTableName(for: table.name), let source = live.table(named: sourceName)
            else {
                created.append(table)
                continue
            }
            matchedSources.insert(source.name.sqliteFolded)
            let renamesColumns = !options.oldColumnNames(inTable: table.name).isEmpty
            let renamed = !source.name.isSameSQLiteName(as: table.name)
            if !renamesColumns && !renamed {
                let added =
                    source.parts.comparisonKey == table.parts.comparisonKey
                    ? [] : addableColumns(from: source, to: table)
                if let added {
                    try checkKeptInPlace(table, from: source, adding: added)
                    if differsInCase(source, table) { caseRenamed.append((source, table)) }
                    if !added.isEmpty { addedColumns.append((table, added)) }
                    continue
                }
            }
            if let rebuild = try rebuild(from: source, to: table) { rebuilds.append(rebuild) }
        }
        let dropped = live.tables.filter { !matchedSources.contains($0.name.sqliteFolded) }
        for table in dropped { try checkDroppable(table) }
        // A rebuilt table whose new name is still held by the live source of another rebuild
        // (two tables swapping names) takes its name once every rebuild has dropped its source.
        let sourceNames = Set(rebuilds.map { $0.sourceTable.sqliteFolded })
        for index in rebuilds.indices {
            let target = rebuilds[index].targetTable.sqliteFolded
            rebuilds[index].renamesLater =
                target != rebuilds[index].sourceTable.sqliteFolded && sourceNames.contains(target)
        }

        var virtualTables = VirtualTablePlanner(
            db: db, live: live, desired: desired, options: options,
            rewrittenTables: Set((rebuilds.map(\.targetTable) + created.map(\.name)).map(\.sqliteFolded)))
        try virtualTables.plan()
        refusals += virtualTables.refusals

        // Rebuilding, renaming or dropping a table would break (or be refused by) views and
        // triggers that mention it, so such a plan drops them all first and recreates the
        // desired ones last. Otherwise only the changed ones are replaced, and the triggers of a
        // replaced view with it (dropping a view drops its INSTEAD OF triggers).
        let restructures =
            !rebuilds.isEmpty || !dropped.isEmpty || !caseRenamed.isEmpty || virtualTables.restructures
        let rebuiltNames = Set(
            rebuilds.map { $0.targetTable.sqliteFolded } + rebuilds.map { $0.sourceTable.sqliteFolded })
        // A case-only rename rewrites the statements of the table's indexes: they are
        // recreated as written, like those of a rebuilt table.
        let caseRenamedNames = Set(caseRenamed.map { $0.1.name.sqliteFolded })
        let droppedNames = Set(dropped.map { $0.name.sqliteFolded })
        let replacedViews = Set(live.views.filter { restructures || isChangedOrGone($0) }.map { $0.name.sqliteFolded })
        func onReplacedView(_ object: SchemaObject) -> Bool {
            object.kind == .trigger && replacedViews.contains(object.tableName.sqliteFolded)
        }
        for object in (live.triggers + live.views)
        where restructures || isChangedOrGone(object) || onReplacedView(object) {
            add("drop \(object.kind.rawValue) \(object.name.quotedDatabaseIdentifier)", dropSQL(object))
        }
        for index in live.indexes
        where isChangedOrGone(index) || caseRenamedNames.contains(index.tableName.sqliteFolded) {
            let table = index.tableName.sqliteFolded
            // Indexes of rebuilt and dropped tables go with their table.
            guard !rebuiltNames.contains(table), !droppedNames.contains(table) else { continue }
            add("drop index \(index.name.quotedDatabaseIdentifier)", dropSQL(index))
        }
        steps += virtualTables.stepsBeforeTables
        // Dropped tables go before the rebuilds and creates, which may reuse their names.
        // Foreign keys are off until the end of the change, so nothing cascades.
        for table in dropped {
            add(
                "drop table \(table.name.quotedDatabaseIdentifier)", "DROP TABLE \(table.name.quotedDatabaseIdentifier)"
            )
        }
        for rebuild in rebuilds {
            steps.append(
                SchemaPlan.Step(
                    summary: "rebuild \(rebuild.targetTable.quotedDatabaseIdentifier) (\(rebuild.rowCount) rows): "
                        + rebuild.reasons.joined(separator: "; "),
                    action: .rebuild(rebuild)))
        }
        for rebuild in rebuilds where rebuild.renamesLater {
            add("rename the rebuilt \(rebuild.targetTable.quotedDatabaseIdentifier)", rebuild.renameSQL)
        }
        for (source, table) in caseRenamed {
            for (summary, sql) in try caseRenames(from: source, to: table) { add(summary, sql) }
        }
        // New tables after the rebuilds: a renamed table frees its old name for a new one.
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
        steps += virtualTables.stepsAfterTables
        for index in desired.indexes {
            let table = index.tableName.sqliteFolded
            if rebuiltNames.contains(table) || caseRenamedNames.contains(table) || isNewOrChanged(index) {
                add("create index \(index.name.quotedDatabaseIdentifier)", index.sql)
            }
        }
        // Views before triggers: an INSTEAD OF trigger needs its view.
        for object in desired.views + desired.triggers
        where restructures || isNewOrChanged(object) || onReplacedView(object) {
            add("create \(object.kind.rawValue) \(object.name.quotedDatabaseIdentifier)", object.sql)
        }
        return SchemaPlan(
            steps: steps, refusals: refusals,
            schemaVersion: try db.fetchOne(Int.self, sql: "PRAGMA schema_version") ?? 0, desired: desired,
            tablesKeptAsWritten: rebuilds.map(\.targetTable) + caseRenamed.map { $0.1.name }
                + referencingTables(caseRenamedNames))
    }

    // MARK: - Tables

    /// A rename that the live schema already shows (the old name gone, the new one there) was
    /// applied by an earlier run: running the same change again is a no-op, not a refusal.
    private mutating func dropRenamesAlreadyApplied() {
        for (old, new) in options.tableRenames where live.table(named: old) == nil && live.table(named: new) != nil {
            options.tableRenames[old] = nil
        }
        for (table, renames) in options.columnRenames {
            guard let target = desired.table(named: table),
                let sourceName = options.sourceTableName(for: target.name),
                let source = live.table(named: sourceName)
            else { continue }
            for (old, new) in renames where source.column(named: old) == nil && source.column(named: new) != nil {
                options.columnRenames[table]?[old] = nil
            }
        }
    }

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
                if desired.virtualTable(named: table) != nil { continue }  // VirtualTablePlanner checks them
                refusals.append(
                    "Columns are renamed in table \(table.quotedDatabaseIdentifier), which the new schema does not define."
                )
                continue
            }
            let source = options.sourceTableName(for: target.name).flatMap { live.table(named: $0) }
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
            // A fill value is written by the copy of a rebuild; ALTER TABLE has no place for it.
            if options.fillValue(table: table.name, column: column.name) != nil { return nil }
            // ALTER TABLE refuses a non-constant default (an expression in parentheses,
            // CURRENT_TIME...) on a table with rows; table_xinfo reports `(1+1)` without its
            // parentheses, so the definition's own tokens tell.
            if let position = item.tokens.firstIndex(of: "w:default"), position + 1 < item.tokens.count {
                let next = item.tokens[position + 1]
                if next == "(" || (next.hasPrefix("w:") && !["w:true", "w:false", "w:null"].contains(next)) {
                    return nil
                }
            }
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
            skipsRowChecks.contains(source.name.sqliteFolded)
            ? 0 : try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(source.name.quotedDatabaseIdentifier)") ?? 0
        var reasons: [String] = []
        if !source.name.isSameSQLiteName(as: table.name) {
            reasons.append("renamed from \(source.name.quotedDatabaseIdentifier)")
        }
        let (columns, usedSources) = try copiedColumns(from: source, to: table, rowCount: rowCount, reasons: &reasons)
        try refuseDroppedColumns(of: source, notUsedBy: usedSources, in: table)
        reasons += structuralDifferences(from: source, to: table, copying: columns)
        if reasons.isEmpty { reasons.append("definition changed") }

        if columns.isEmpty && table.isWithoutRowID && rowCount > 0 {
            refusals.append(
                "Table \(table.name) keeps none of its columns, and as a WITHOUT ROWID table its \(rowCount) row(s) "
                    + "would have no key. Keep or rename a key column, or drop and recreate the table.")
        }
        if rowCount > 0 {
            try checkUniqueKeys(of: table, copying: columns, from: source)
            try checkForeignKeys(of: table, copying: columns, from: source)
            try checkFilledValues(of: table, copying: columns, from: source)
            try checkConstraints(Self.checkExpressions(in: table.sql), of: table, copying: columns, from: source)
        }
        let temporaryName = try Self.freeTemporaryName(for: table.name, in: db)
        guard let createSQL = Self.createSQL(of: table, named: temporaryName) else {
            throw SerialDBError(.schemaChangeRefused, "Cannot read the CREATE TABLE statement of \(table.name).")
        }
        // The rowid travels with the INTEGER PRIMARY KEY when both tables have one that is copied;
        // otherwise it is copied by itself so rows keep their rowids, under whichever of its
        // names no column of the table takes.
        let aliasCopied =
            table.rowIDAlias.map { alias in
                columns.contains { $0.target.isSameSQLiteName(as: alias) && $0.source != nil }
            } ?? false
        let copiesRowID = source.rowIDName != nil && table.rowIDName != nil && !aliasCopied
        return TableRebuild(
            sourceTable: source.name, targetTable: table.name, reasons: reasons, temporaryName: temporaryName,
            createSQL: createSQL, columns: columns, copiesRowID: copiesRowID, sourceRowID: source.rowIDName,
            targetRowID: table.rowIDName, carriesAutoincrement: source.hasAutoincrement && table.hasAutoincrement,
            rowCount: rowCount)
    }

    /// How each writable column of `table` is filled: copied from a column of `source` (its
    /// own name, or the one it is renamed from), or new (a fill value, its default). Adds the
    /// reasons it finds and the refusals the data calls for; returns the columns and the
    /// (folded) names of the source columns they read.
    private mutating func copiedColumns(
        from source: TableDefinition, to table: TableDefinition, rowCount: Int, reasons: inout [String]
    ) throws -> ([TableRebuild.CopiedColumn], Set<String>) {
        let oldNames = options.oldColumnNames(inTable: table.name)
        let renamedAway = options.renamedAwayColumns(inTable: table.name)
        var columns: [TableRebuild.CopiedColumn] = []
        var usedSources: Set<String> = []
        for column in table.columns where column.isWritable {
            let folded = column.name.sqliteFolded
            // A name renamed away is no longer a source, even when a new column reuses it.
            let sourceName = oldNames[folded] ?? (renamedAway.contains(folded) ? nil : column.name)
            let fill = options.fillValue(table: table.name, column: column.name)
            // A generated column turned plain keeps the values it had: they can be read.
            if let sourceName, let sourceColumn = source.column(named: sourceName), sourceColumn.visibility != .hidden {
                usedSources.insert(sourceColumn.name.sqliteFolded)
                if !sourceName.isSameSQLiteName(as: column.name) {
                    reasons.append("column \(sourceName) renamed to \(column.name)")
                }
                if !sourceColumn.isWritable { reasons.append("column \(column.name) no longer generated") }
                reasons += differences(sourceColumn, column)
                if rowCount > 0 {
                    try checkValueConversion(from: sourceColumn, of: source, to: column, of: table)
                }
                var copied = TableRebuild.CopiedColumn(target: column.name, source: sourceColumn.name)
                if column.isNotNull && !sourceColumn.isNotNull && !isAutomaticKey(column, table)
                    && !skipsRowChecks.contains(source.name.sqliteFolded)
                {
                    let nulls = try nullCount(source.name, sourceColumn.name)
                    if nulls > 0 {
                        if let fill {
                            refuseNullFill(fill, for: column, of: table, rows: nulls)
                            copied.fill = fill
                        } else {
                            let condition = "\(sourceColumn.name.quotedDatabaseIdentifier) IS NULL"
                            refusals.append(
                                "Column \(table.name).\(column.name) becomes NOT NULL but \(nulls) row(s) hold NULL"
                                    + "\(try rowsNamed(in: source, where: condition)). "
                                    + "Give a fill value for it, or update those rows first.")
                        }
                    }
                }
                columns.append(copied)
            } else {
                reasons.append("new column \(column.name)")
                if let fill {
                    if !isAutomaticKey(column, table) { refuseNullFill(fill, for: column, of: table, rows: rowCount) }
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
        return (columns, usedSources)
    }

    /// Refuses a NULL fill value for a NOT NULL column that `rows` rows would get it: the copy
    /// would fail on the first of them, so the plan says so instead.
    private mutating func refuseNullFill(
        _ fill: DatabaseValue, for column: ColumnDefinition, of table: TableDefinition, rows: Int
    ) {
        guard fill.isNull, column.isNotNull, rows > 0 else { return }
        refusals.append(
            "The fill value of \(table.name).\(column.name) is NULL, but the column is NOT NULL and \(rows) row(s) "
                + "would get it. Give a value that is not NULL.")
    }

    /// Refuses dropping a column of `source` that no column of the new table reads, when it
    /// holds values and dropping it was not allowed.
    private mutating func refuseDroppedColumns(
        of source: TableDefinition, notUsedBy usedSources: Set<String>, in table: TableDefinition
    ) throws {
        guard !skipsRowChecks.contains(source.name.sqliteFolded) else { return }
        for column in source.columns where column.isWritable && !usedSources.contains(column.name.sqliteFolded) {
            let values = try nonNullCount(source.name, column.name)
            if values > 0 && !options.allowsDropping(table: table.name, column: column.name)
                && !options.allowsDropping(table: source.name, column: column.name)
            {
                refusals.append(
                    "Column \(source.name).\(column.name) holds \(values) non-NULL value(s) and is absent from the new "
                        + "schema. Rename it to a column of the new schema, or allow dropping it.")
            }
        }
    }

    /// What changed beyond the columns: dropped columns, constraints, options, foreign keys,
    /// column order.
    private func structuralDifferences(
        from source: TableDefinition, to table: TableDefinition, copying columns: [TableRebuild.CopiedColumn]
    ) -> [String] {
        let keptSources = columns.compactMap { $0.source?.sqliteFolded }
        var reasons = source.columns
            .filter { $0.isWritable && !keptSources.contains($0.name.sqliteFolded) }
            .map { "column \($0.name) dropped" }
        let oldParts = source.parts
        let newParts = table.parts
        if oldParts.constraints != newParts.constraints { reasons.append("table constraints changed") }
        if oldParts.options != newParts.options { reasons.append("table options changed") }
        if source.foreignKeys != table.foreignKeys { reasons.append("foreign keys changed") }
        let oldOrder = source.columns.map(\.name.sqliteFolded).filter(keptSources.contains)
        if oldOrder != keptSources { reasons.append("column order changed") }
        return reasons
    }

    /// The table's CREATE statement under another name. A CHECK or generated column that
    /// names its own table (`CHECK (t.x > 0)`) names the new one: SQLite renames those
    /// references back (quoted) when the table takes its final name, and the plan then stores
    /// the statement as written (``Database/keepDefinitionAsWritten(_:)``).
    static func createSQL(of table: TableDefinition, named name: String) -> String? {
        let tokens = SQLTokenizer.tokenize(table.sql)
        guard let open = tokens.firstIndex(where: { $0.isSymbol("(") }), open > 0 else { return nil }
        let tableName = tokens[open - 1].normalized
        var ranges = [tokens[open - 1].range]
        for index in (open + 1)..<max(open + 1, tokens.count - 1)
        where tokens[index].kind == .word && tokens[index].normalized == tableName && tokens[index + 1].isSymbol(".") {
            ranges.append(tokens[index].range)
        }
        var sql = table.sql
        for range in ranges.reversed() {
            sql.replaceSubrange(range, with: name.quotedDatabaseIdentifier)
        }
        return sql
    }

    // MARK: - Refusals the data can tell before anything runs

    /// Up to five rows of `table` matching `condition`, named by rowid or primary key, as
    /// ` (rows with rowid 3, 8)` for a refusal message.
    func rowsNamed(in table: TableDefinition, where condition: String, prefix: String = "") throws -> String {
        let keyColumns = table.columns.filter { $0.primaryKeyIndex > 0 }.sorted {
            $0.primaryKeyIndex < $1.primaryKeyIndex
        }
        let label: String
        let what: String
        if let rowID = table.rowIDName {
            label = prefix + rowID.quotedDatabaseIdentifier
            what = "rowid"
        } else if !keyColumns.isEmpty {
            label = keyColumns.map { "quote(\(prefix)\($0.name.quotedDatabaseIdentifier))" }.joined(
                separator: " || ', ' || ")
            what = "key (" + keyColumns.map(\.name).joined(separator: ", ") + ")"
        } else {
            return ""
        }
        let alias = prefix.isEmpty ? "" : " AS " + String(prefix.dropLast())
        let labels = try db.fetchAll(
            String.self,
            sql:
                "SELECT CAST(\(label) AS TEXT) FROM \(table.name.quotedDatabaseIdentifier)\(alias) WHERE \(condition) LIMIT 6"
        )
        guard !labels.isEmpty else { return "" }
        return " (rows with \(what) " + labels.prefix(5).joined(separator: ", ") + (labels.count > 5 ? ", ..." : "")
            + ")"
    }

    /// Rows whose new foreign key would point at no parent row are refused here, naming them;
    /// so are the rows of a kept key whose parent table is dropped or replaced by a new one.
    mutating func checkForeignKeys(
        of table: TableDefinition, copying columns: [TableRebuild.CopiedColumn], from source: TableDefinition
    ) throws {
        // (A parent missing from both schemas broke its references before the change, which
        // leaves those alone.)
        func parentIsNew(_ key: ForeignKeyDefinition) -> Bool {
            guard let parent = desired.table(named: key.parentTable) else {
                return live.table(named: key.parentTable) != nil
            }
            return options.sourceTableName(for: parent.name).flatMap { live.table(named: $0) } == nil
        }
        for key in table.foreignKeys where !source.foreignKeys.contains(key) || parentIsNew(key) {
            let childColumns = key.columns.map { name in
                columns.first { $0.target.isSameSQLiteName(as: name) && $0.fill == nil }?.source
            }
            guard childColumns.allSatisfy({ $0 != nil }) else { continue }
            // A parent table the new schema lacks has no rows: every reference is broken.
            let parent = desired.table(named: key.parentTable)
            let parentKey = desired.parentColumns(of: key)
            guard parent == nil || parentKey.count == key.columns.count else { continue }
            let condition: String
            let children = childColumns.compactMap { $0 }
            let notNull = children.map { "c.\($0.quotedDatabaseIdentifier) IS NOT NULL" }.joined(separator: " AND ")
            if let parent,
                let parentSource = options.sourceTableName(for: parent.name).flatMap({ live.table(named: $0) })
            {
                let parentOld = options.oldColumnNames(inTable: parent.name)
                let parentColumns = parentKey.map { parentOld[$0.sqliteFolded] ?? $0 }
                guard parentColumns.allSatisfy({ parentSource.column(named: $0) != nil }) else { continue }
                let matches = zip(parentColumns, children).map { parentColumn, child in
                    "p.\(parentColumn.quotedDatabaseIdentifier) = c.\(child.quotedDatabaseIdentifier)"
                }.joined(separator: " AND ")
                condition =
                    "\(notNull) AND NOT EXISTS (SELECT 1 FROM \(parentSource.name.quotedDatabaseIdentifier) AS p WHERE \(matches))"
            } else {
                condition = notNull  // a new parent table starts empty
            }
            let orphans =
                try db.fetchOne(
                    Int.self,
                    sql: "SELECT count(*) FROM \(source.name.quotedDatabaseIdentifier) AS c WHERE \(condition)")
                ?? 0
            guard orphans > 0 else { continue }
            refusals.append(
                "Table \(table.name) gets a foreign key (\(key.columns.joined(separator: ", "))) → \(key.parentTable), but "
                    + "\(orphans) row(s) refer to no row of \(key.parentTable)"
                    + "\(try rowsNamed(in: source, where: condition, prefix: "c.")). "
                    + "Add the missing parent rows or fix those rows first.")
        }
    }

    /// An INTEGER PRIMARY KEY turns NULL into a fresh rowid, so NOT NULL needs no fill.
    private func isAutomaticKey(_ column: ColumnDefinition, _ table: TableDefinition) -> Bool {
        table.rowIDAlias?.isSameSQLiteName(as: column.name) ?? false
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

    /// `serialdb_new_<table>`, or with a number when that name is taken.
    static func freeTemporaryName(for table: String, in db: Database) throws -> String {
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
                $0.kind == object.kind && $0.name.sqliteFolded == object.name.sqliteFolded
            })
        else { return true }
        return wanted.name != object.name || !wanted.isSameDefinition(as: object)
    }

    private func isNewOrChanged(_ object: SchemaObject) -> Bool {
        guard
            let existing = live.objects.first(where: {
                $0.kind == object.kind && $0.name.sqliteFolded == object.name.sqliteFolded
            })
        else { return true }
        return existing.name != object.name || !existing.isSameDefinition(as: object)
    }

    private func dropSQL(_ object: SchemaObject) -> String {
        "DROP \(object.kind.rawValue.uppercased()) \(object.name.quotedDatabaseIdentifier)"
    }

    private mutating func add(_ summary: String, _ sql: String) {
        steps.append(SchemaPlan.Step(summary: summary, action: .execute(sql)))
    }
}
