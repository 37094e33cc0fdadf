extension SchemaPlanner {
    /// Refuses a copy that would change stored values of a column (its type or its table's
    /// strictness changes the conversion SQLite applies) unless the caller allows converting
    /// them, and a copy into a STRICT column (or rowid alias) that would refuse some of them.
    /// The values are judged by what SQLite's own copy would store, in SQL, row by row.
    mutating func checkValueConversion(
        from sourceColumn: ColumnDefinition, of source: TableDefinition, to column: ColumnDefinition,
        of table: TableDefinition
    ) throws {
        let isAlias = table.rowIDAlias?.isSameSQLiteName(as: column.name) ?? false
        let wasAlias = source.rowIDAlias?.isSameSQLiteName(as: sourceColumn.name) ?? false
        let old = StoredValueConversion(
            declaredType: sourceColumn.type, strict: source.isStrict, isRowIDAlias: wasAlias)
        let new = StoredValueConversion(declaredType: column.type, strict: table.isStrict, isRowIDAlias: isAlias)
        guard old != new else { return }
        let value = sourceColumn.name.quotedDatabaseIdentifier
        let change =
            "from \(StoredValueConversion.describe(sourceColumn.type, strict: source.isStrict)) to "
            + StoredValueConversion.describe(column.type, strict: table.isStrict)
        if let refused = new.refusesSQL(value) {
            let count = try count(in: source, where: refused)
            if count > 0 {
                refusals.append(
                    "Column \(table.name).\(column.name) changes \(change), but \(count) stored value(s) cannot be "
                        + "stored that way, such as \(try samples(in: source, where: refused, value, new))"
                        + "\(try rowsNamed(in: source, where: refused)). Update or clear those values first.")
                return
            }
        }
        guard !options.allowsConverting(table: table.name, column: column.name) else { return }
        let altered = new.altersSQL(value)
        let count = try count(in: source, where: altered)
        guard count > 0 else { return }
        refusals.append(
            "Column \(table.name).\(column.name) changes \(change), which would change \(count) stored value(s): "
                + "\(try samples(in: source, where: altered, value, new))\(try rowsNamed(in: source, where: altered)). "
                + "Allow converting them (SchemaChangeOptions.allowConverting, or `--convert \(table.name).\(column.name)`), "
                + "or update those rows first.")
    }

    /// The value a copy stores into column `target` of `table` from column `source` of
    /// `sourceTable`, as SQL over the source row, and whether it can differ from the stored one.
    func storedValue(of source: String, in sourceTable: TableDefinition, as target: String, in table: TableDefinition)
        -> (sql: String, converts: Bool)
    {
        let value = source.quotedDatabaseIdentifier
        guard let sourceColumn = sourceTable.column(named: source), let column = table.column(named: target) else {
            return (value, false)
        }
        let old = StoredValueConversion(
            declaredType: sourceColumn.type, strict: sourceTable.isStrict,
            isRowIDAlias: sourceTable.rowIDAlias?.isSameSQLiteName(as: source) ?? false)
        let new = StoredValueConversion(
            declaredType: column.type, strict: table.isStrict,
            isRowIDAlias: table.rowIDAlias?.isSameSQLiteName(as: target) ?? false)
        return old == new ? (value, false) : (new.convertedSQL(value), true)
    }

    private func count(in table: TableDefinition, where condition: String) throws -> Int {
        try db.fetchOne(
            Int.self, sql: "SELECT count(*) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(condition)") ?? 0
    }

    /// Up to three values matching `condition`, each with what it would become:
    /// `'0042' → 42, '1e3' → 1000`.
    private func samples(
        in table: TableDefinition, where condition: String, _ value: String, _ conversion: StoredValueConversion
    ) throws -> String {
        // Long text and blobs are cut to 40 characters or bytes; numbers are shown whole.
        func shown(_ expression: String) -> String {
            "CASE WHEN typeof(\(expression)) IN ('text', 'blob') THEN quote(substr(\(expression), 1, 40)) "
                + "ELSE quote(\(expression)) END"
        }
        let shown = try db.fetchAll(
            String.self,
            sql: """
                SELECT \(shown(value)) || ' → ' || \(shown(conversion.convertedSQL(value)))
                FROM \(table.name.quotedDatabaseIdentifier) WHERE \(condition) LIMIT 3
                """)
        return shown.joined(separator: ", ")
    }
}
