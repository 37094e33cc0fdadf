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

/// Columns whose values no two rows may share (NULLs aside), under their collations.
struct UniqueKey: Sendable, Equatable {
    /// Column names, in key order.
    var columns: [String]
    /// The collation of each column (`BINARY`, `NOCASE`...).
    var collations: [String]

    /// The same columns under the same collations, names compared as SQLite does.
    func isSame(as other: UniqueKey) -> Bool {
        columns.map(\.sqliteFolded) == other.columns.map(\.sqliteFolded)
            && collations.map(\.sqliteFolded) == other.collations.map(\.sqliteFolded)
    }
}

/// The pieces of a CREATE TABLE statement that the planner compares: each column definition
/// (by name), each table constraint, and the options after the closing parenthesis
/// (`WITHOUT ROWID`, `STRICT`), all in normalized token form.
struct CreateTableParts: Equatable {
    struct Item: Equatable {
        /// The column name (ASCII-folded, see `sqliteFolded`), or nil for a table constraint.
        var columnName: String?
        /// Normalized tokens.
        var tokens: [String]
        /// The original text of the item.
        var text: String
    }

    var columns: [Item] = []
    var constraints: [Item] = []
    var options: [String] = []
    /// The source range of the table name, to create the same table under another name.
    var nameRange: Range<String.Index>?

    init(sql: String) {
        let tokens = SQLTokenizer.tokenize(sql)
        guard let open = tokens.firstIndex(where: { $0.isSymbol("(") }) else { return }
        nameRange = open > 0 ? tokens[open - 1].range : nil
        var depth = 0
        var itemStart = open + 1
        var close = tokens.count
        for index in (open + 1)..<tokens.count {
            let token = tokens[index]
            if token.isSymbol("(") {
                depth += 1
            } else if token.isSymbol(")") {
                if depth == 0 {
                    add(tokens[itemStart..<index], sql: sql)
                    close = index
                    break
                }
                depth -= 1
            } else if token.isSymbol(","), depth == 0 {
                add(tokens[itemStart..<index], sql: sql)
                itemStart = index + 1
            }
        }
        if close + 1 < tokens.count {
            options = tokens[(close + 1)...].map(\.key)
        }
    }

    private mutating func add(_ tokens: ArraySlice<SQLToken>, sql: String) {
        guard let first = tokens.first, let last = tokens.last else { return }
        let constraintWords: Set = ["constraint", "primary", "unique", "check", "foreign"]
        let isConstraint =
            first.kind == .word && constraintWords.contains(first.normalized)
            && !sql[first.range].hasPrefix("\"") && !sql[first.range].hasPrefix("`") && !sql[first.range].hasPrefix("[")
        var keys = tokens.map(\.key)
        // SQLite takes a single-quoted column name ('my col') as an identifier: compare it
        // as the same name written with double quotes.
        if !isConstraint && first.kind == .string { keys[0] = "w:" + first.normalized.sqliteFolded }
        let item = Item(
            columnName: isConstraint ? nil : first.normalized.sqliteFolded, tokens: keys,
            text: String(sql[first.range.lowerBound..<last.range.upperBound]))
        if isConstraint { constraints.append(item) } else { columns.append(item) }
    }

    /// Everything but the table name: equal parts mean an equal table definition.
    var comparisonKey: [[String]] {
        columns.map(\.tokens) + [["|"]] + constraints.map(\.tokens) + [["|"]] + [options]
    }
}
