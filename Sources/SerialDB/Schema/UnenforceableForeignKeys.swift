extension Database {
    /// Refusals for the foreign keys of `schema`, read from this database, that SQLite cannot
    /// enforce: their parent columns are not the parent's PRIMARY KEY nor UNIQUE (or do not
    /// exist, or are fewer or more than the child columns). Every write to such a child table,
    /// and `PRAGMA foreign_key_check`, fails with "foreign key mismatch", so a migration that
    /// reaches the check would fail at its very end. SQLite itself tells which tables: the
    /// check reports the mismatch even on empty tables.
    /// See <https://www.sqlite.org/foreignkeys.html#fk_indexes>.
    func unenforceableForeignKeys(of schema: DatabaseSchema) throws -> [String] {
        var refusals: [String] = []
        for table in schema.tables where !table.foreignKeys.isEmpty {
            do {
                _ = try fetchAll(Row.self, sql: "SELECT * FROM pragma_foreign_key_check(?)", arguments: [table.name])
            } catch let error as DatabaseError where error.message.contains("foreign key mismatch") {
                let culprits = table.foreignKeys.filter { !schema.canEnforce($0) }
                for key in culprits.isEmpty ? table.foreignKeys : culprits {
                    let parentColumns = schema.parentColumns(of: key)
                    let described = "(\(parentColumns.joined(separator: ", ")))"
                    refusals.append(
                        "Table \(table.name) has a foreign key (\(key.columns.joined(separator: ", "))) → "
                            + "\(key.parentTable)\(described) that SQLite cannot enforce: \(key.parentTable) has no "
                            + "PRIMARY KEY or UNIQUE constraint on exactly \(described), so every write to "
                            + "\(table.name) would fail with \"foreign key mismatch\". Declare \(described) UNIQUE "
                            + "or the PRIMARY KEY of \(key.parentTable), or point the key at columns that are.")
                }
            }
        }
        return refusals
    }
}

extension DatabaseSchema {
    /// The parent columns a foreign key refers to: the ones it names, or the parent's
    /// primary key.
    func parentColumns(of key: ForeignKeyDefinition) -> [String] {
        guard key.parentColumns.isEmpty, let parent = table(named: key.parentTable) else { return key.parentColumns }
        return parent.columns.filter { $0.primaryKeyIndex > 0 }.sorted { $0.primaryKeyIndex < $1.primaryKeyIndex }
            .map(\.name)
    }

    /// Whether the key's parent columns are a key of the parent (a missing parent table is
    /// not a mismatch: its rows are reported as broken references instead).
    func canEnforce(_ key: ForeignKeyDefinition) -> Bool {
        guard let parent = table(named: key.parentTable) else { return true }
        let columns = parentColumns(of: key)
        guard columns.count == key.columns.count, columns.allSatisfy({ parent.column(named: $0) != nil }) else {
            return false
        }
        let wanted = Set(columns.map(\.sqliteFolded))
        if let alias = parent.rowIDAlias, wanted == [alias.sqliteFolded] { return true }
        return parent.uniqueKeys.contains { Set($0.columns.map(\.sqliteFolded)) == wanted }
    }
}
