extension Database {
    /// Stores a table's CREATE statement as the caller wrote it after a rename rewrote it.
    ///
    /// `ALTER TABLE ... RENAME` rewrites the stored statement: it quotes the new name and
    /// every reference to the table inside it, so `CHECK (t.x > 0)` comes back as
    /// `CHECK ("t".x > 0)`. The statement written back is the one SQLite parsed into an
    /// identical table in the scratch database (same columns, constraints and options, only
    /// spelled differently), so the table itself does not change; the schema_version bump of
    /// the rename tells other connections to read it again. A connection that forbids writing
    /// the schema (`SQLITE_DBCONFIG_DEFENSIVE`) keeps SQLite's equivalent spelling.
    /// See <https://www.sqlite.org/pragma.html#pragma_writable_schema>.
    func keepDefinitionAsWritten(_ table: TableDefinition) throws {
        let stored = try fetchOne(
            String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table.name]
        )
        guard let stored, stored != table.sql,
            CreateTableParts(sql: stored).comparisonKey == table.parts.comparisonKey
        else { return }
        let wasWritable = try fetchOne(Bool.self, sql: "PRAGMA writable_schema") ?? false
        if !wasWritable { try execute(sql: "PRAGMA writable_schema = ON") }
        defer { if !wasWritable { try? execute(sql: "PRAGMA writable_schema = OFF") } }
        do {
            try execute(
                sql: "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?",
                arguments: [table.sql, table.name])
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            // Writing the schema is forbidden here: SQLite's spelling is the same table.
        }
    }
}
