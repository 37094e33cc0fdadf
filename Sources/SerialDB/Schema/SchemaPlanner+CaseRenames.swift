extension SchemaPlanner {
    /// The statements that give a table kept in place the exact names of the new schema when
    /// they differ only in case (`Username` → `username`): SQLite compares names without case,
    /// so nothing else would notice, yet the schema asked for spells them so. Columns are
    /// renamed in place; the table goes through a temporary name, as SQLite refuses a rename
    /// to a name it considers taken. Both keep every row.
    /// See <https://www.sqlite.org/lang_altertable.html#altertabrename>.
    func caseRenames(from source: TableDefinition, to table: TableDefinition) throws -> [(String, String)] {
        var statements: [(String, String)] = []
        let quotedSource = source.name.quotedDatabaseIdentifier
        for column in table.columns {
            guard let old = source.column(named: column.name), old.name != column.name else { continue }
            statements.append(
                (
                    "rename column \(old.name.quotedDatabaseIdentifier) of \(quotedSource) to "
                        + column.name.quotedDatabaseIdentifier,
                    "ALTER TABLE \(quotedSource) RENAME COLUMN \(old.name.quotedDatabaseIdentifier) TO "
                        + column.name.quotedDatabaseIdentifier
                ))
        }
        if source.name != table.name {
            let temporary = try Self.freeTemporaryName(for: table.name, in: db).quotedDatabaseIdentifier
            let summary = "rename table \(quotedSource) to \(table.name.quotedDatabaseIdentifier)"
            statements.append((summary, "ALTER TABLE \(quotedSource) RENAME TO \(temporary)"))
            statements.append((summary, "ALTER TABLE \(temporary) RENAME TO \(table.name.quotedDatabaseIdentifier)"))
        }
        return statements
    }

    /// Tables whose foreign keys name one of `tables`: renaming a table rewrites their
    /// REFERENCES clauses (quoted), so they get their statements back as written too.
    func referencingTables(_ tables: Set<String>) -> [String] {
        desired.tables.filter { table in table.foreignKeys.contains { tables.contains($0.parentTable.sqliteFolded) } }
            .map(\.name)
    }

    /// Whether a table kept in place is spelled differently in the new schema (its name or a
    /// column's name differs in case only).
    func differsInCase(_ source: TableDefinition, _ table: TableDefinition) -> Bool {
        source.name != table.name
            || table.columns.contains { column in
                source.column(named: column.name).map { $0.name != column.name } ?? false
            }
    }
}
