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
