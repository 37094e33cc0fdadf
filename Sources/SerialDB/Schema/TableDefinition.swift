/// A table as SQLite stores it: its CREATE statement plus what the pragmas report.
public struct TableDefinition: Sendable {
    /// The table name.
    public var name: String
    /// The CREATE TABLE statement from `sqlite_master`.
    public var sql: String
    /// Columns in order, including generated ones.
    public var columns: [ColumnDefinition]
    /// Foreign keys.
    public var foreignKeys: [ForeignKeyDefinition]
    /// `WITHOUT ROWID`.
    public var isWithoutRowID: Bool
    /// `STRICT`.
    public var isStrict: Bool

    /// Unique keys (PRIMARY KEY and UNIQUE constraints, unique indexes over plain columns):
    /// what a copy of the rows into this table must not duplicate. Partial and expression
    /// indexes are left out.
    var uniqueKeys: [UniqueKey] = []

    /// The column that aliases the rowid (a lone `INTEGER PRIMARY KEY`), if any. A column
    /// declared `INTEGER PRIMARY KEY DESC` is the one exception SQLite keeps for compatibility:
    /// it is an ordinary column beside the rowid.
    /// See <https://www.sqlite.org/lang_createtable.html#rowid>.
    public var rowIDAlias: String? {
        let keyColumns = columns.filter { $0.primaryKeyIndex > 0 }
        guard !isWithoutRowID, keyColumns.count == 1, keyColumns[0].type.uppercased() == "INTEGER" else { return nil }
        let name = keyColumns[0].name.sqliteFolded
        if let item = parts.columns.first(where: { $0.columnName == name }),
            item.tokens.indices.contains(where: { index in
                index + 2 < item.tokens.count && item.tokens[index] == "w:primary"
                    && item.tokens[index + 1] == "w:key" && item.tokens[index + 2] == "w:desc"
            })
        {
            return nil
        }
        return keyColumns[0].name
    }

    /// A name that reads and writes the rowid of this table (`rowid`, `_rowid_` or `oid`,
    /// whichever no column takes), or nil for a WITHOUT ROWID table or one whose columns take
    /// all three. See <https://www.sqlite.org/lang_createtable.html#rowid>.
    var rowIDName: String? {
        guard !isWithoutRowID else { return nil }
        return ["rowid", "_rowid_", "oid"].first { column(named: $0) == nil }
    }

    /// `AUTOINCREMENT` on the primary key.
    public var hasAutoincrement: Bool {
        SQLTokenizer.tokenize(sql).contains { $0.isWord("autoincrement") }
    }

    /// The column with this name (ASCII letters case-insensitive, as SQLite compares names).
    public func column(named name: String) -> ColumnDefinition? {
        let lowered = name.sqliteFolded
        return columns.first { $0.name.sqliteFolded == lowered }
    }

    /// The statement split into column definitions, table constraints and options.
    var parts: CreateTableParts { CreateTableParts(sql: sql) }
}
