extension SchemaPlanner {
    /// The rows of `source` as the new table would hold them, as a subquery named after the
    /// table: each writable column of `table` under its name (copied, filled, or at its
    /// default), plus `serialdb_row`, the source rowid (NULL without one). A column copied
    /// under the same conversion is the source column itself, so it keeps its type affinity in
    /// comparisons; the others are computed values (``StoredValueConversion``), which have
    /// none: `lossy` names them.
    struct NewRows {
        var sql: String
        var arguments: [DatabaseValue]
        /// Folded names of the columns without their affinity, with the conversion they take.
        var lossy: [String: StoredValueConversion]
    }

    func newRows(of table: TableDefinition, copying columns: [TableRebuild.CopiedColumn], from source: TableDefinition)
        -> NewRows
    {
        var inner: [String] = []
        var outer: [String] = []
        var arguments: [DatabaseValue] = []
        var lossy: [String: StoredValueConversion] = [:]
        for column in table.columns where column.isWritable {
            let name = column.name.quotedDatabaseIdentifier
            let copied = columns.first { $0.target.isSameSQLiteName(as: column.name) }
            let conversion = StoredValueConversion(
                declaredType: column.type, strict: table.isStrict,
                isRowIDAlias: table.rowIDAlias?.isSameSQLiteName(as: column.name) ?? false)
            switch (copied?.source, copied?.fill) {
            case (let from?, nil):
                inner.append("\(from.quotedDatabaseIdentifier) AS \(name)")
                if storedValue(of: from, in: source, as: column.name, in: table).converts {
                    lossy[column.name.sqliteFolded] = conversion
                    outer.append("\(conversion.convertedSQL(name)) AS \(name)")
                } else {
                    outer.append(name)
                }
                continue
            case (let from?, let fill?):
                inner.append("coalesce(\(from.quotedDatabaseIdentifier), ?) AS \(name)")
                arguments.append(fill)
            case (nil, let fill?):
                inner.append("? AS \(name)")
                arguments.append(fill)
            case (nil, nil):
                inner.append("(\(column.defaultSQL ?? "NULL")) AS \(name)")
            }
            lossy[column.name.sqliteFolded] = conversion
            outer.append("\(conversion.convertedSQL(name)) AS \(name)")
        }
        let rowLabel = (source.rowIDName?.quotedDatabaseIdentifier ?? "NULL") + " AS \"serialdb_row\""
        let sql = """
            (SELECT "serialdb_row", \(outer.joined(separator: ", ")) FROM \
            (SELECT \(rowLabel), \(inner.joined(separator: ", ")) FROM \(source.name.quotedDatabaseIdentifier))) \
            AS \(table.name.quotedDatabaseIdentifier)
            """
        return NewRows(sql: sql, arguments: arguments, lossy: lossy)
    }

    /// Rows that would share a value of a new unique key (values compared as the new table
    /// stores them: `'1'` and `1` become one integer) are refused here, naming them, rather
    /// than failing the copy half-way.
    mutating func checkUniqueKeys(
        of table: TableDefinition, copying columns: [TableRebuild.CopiedColumn], from source: TableDefinition
    ) throws {
        var sourceKeys = source.uniqueKeys
        if let alias = source.rowIDAlias { sourceKeys.append(UniqueKey(columns: [alias], collations: ["BINARY"])) }
        let rows = newRows(of: table, copying: columns, from: source)
        for key in table.uniqueKeys
            + (table.rowIDAlias.map { [UniqueKey(columns: [$0], collations: ["BINARY"])] } ?? [])
        {
            // A key the live table already enforces over the same values cannot be broken.
            let sources = key.columns.map { name in
                columns.first { $0.target.isSameSQLiteName(as: name) && $0.fill == nil }?.source
            }
            if sources.allSatisfy({ $0 != nil }), key.columns.allSatisfy({ rows.lossy[$0.sqliteFolded] == nil }),
                sourceKeys.contains(where: {
                    $0.isSame(as: UniqueKey(columns: sources.compactMap { $0 }, collations: key.collations))
                })
            {
                continue
            }
            let names = key.columns.map(\.quotedDatabaseIdentifier)
            let grouped = zip(names, key.collations).map { "\($0) COLLATE \($1.quotedDatabaseIdentifier)" }
            let notNull = names.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
            let values = names.map { "quote(\($0))" }.joined(separator: " || ', ' || ")
            let duplicates = try db.fetchAll(
                Row.self,
                sql: """
                    SELECT \(values), count(*) FROM \(rows.sql) WHERE \(notNull)
                    GROUP BY \(grouped.joined(separator: ", ")) HAVING count(*) > 1 LIMIT 4
                    """, arguments: StatementArguments(rows.arguments))
            guard !duplicates.isEmpty else { continue }
            let described = try duplicates.prefix(3).map { row in
                "\(try row.decode(String.self, at: 0)) in \(try row.decode(Int.self, at: 1)) rows"
            }.joined(separator: ", ")
            refusals.append(
                "Table \(table.name) gets a unique key on (\(key.columns.joined(separator: ", "))) but its rows repeat "
                    + "values: \(described)\(duplicates.count > 3 ? ", ..." : ""). "
                    + "Make those rows unique (or delete the extra ones) first.")
        }
    }

    /// Fill values and defaults that a STRICT column (or a rowid alias) cannot hold: the copy
    /// would fail on the first row taking one. (Copied values are judged by
    /// ``checkValueConversion(from:of:to:of:)``.)
    mutating func checkFilledValues(
        of table: TableDefinition, copying columns: [TableRebuild.CopiedColumn], from source: TableDefinition
    ) throws {
        for column in table.columns where column.isWritable {
            let copied = columns.first { $0.target.isSameSQLiteName(as: column.name) }
            let isAlias = table.rowIDAlias?.isSameSQLiteName(as: column.name) ?? false
            let conversion = StoredValueConversion(
                declaredType: column.type, strict: table.isStrict, isRowIDAlias: isAlias)
            guard copied?.source == nil || copied?.fill != nil, let refused = conversion.refusesSQL("\"v\"") else {
                continue
            }
            let value: String
            var arguments: [DatabaseValue] = []
            if let fill = copied?.fill {
                value = "?"
                arguments.append(fill)
            } else {
                value = "(\(column.defaultSQL ?? "NULL"))"
            }
            // The value is used by every row without a source, or whose source is NULL.
            let used = copied?.source.map { "\($0.quotedDatabaseIdentifier) IS NULL" } ?? "1"
            let refusedRows =
                try db.fetchOne(
                    Int.self,
                    sql: """
                        SELECT count(*) FROM \(source.name.quotedDatabaseIdentifier)
                        WHERE \(used) AND (SELECT \(refused) FROM (SELECT \(value) AS "v"))
                        """, arguments: StatementArguments(arguments)) ?? 0
            guard refusedRows > 0 else { continue }
            let kind =
                isAlias
                ? "the INTEGER PRIMARY KEY" : StoredValueConversion.describe(column.type, strict: table.isStrict)
            refusals.append(
                "Column \(table.name).\(column.name) is \(kind), which cannot hold the \(copied?.fill == nil ? "default" : "fill value") that \(refusedRows) row(s) "
                    + "would take. Give a value of the column's type.")
        }
    }

    /// Refuses a change whose CHECK constraints some rows would fail once copied (or, for
    /// columns added in place, once they take their default), naming them, rather than
    /// letting the copy fail half-way through the migration. SQLite evaluates each CHECK over
    /// ``newRows(of:copying:from:)``. A CHECK that reads a computed value where its type
    /// affinity could change a comparison (a TEXT value, or any value next to a string
    /// literal or a TEXT column), or that this cannot evaluate (one reading the rowid), is left to the copy,
    /// which still refuses the change, so this never refuses what the copy would take.
    mutating func checkConstraints(
        _ expressions: [String], of table: TableDefinition, copying columns: [TableRebuild.CopiedColumn],
        from source: TableDefinition
    ) throws {
        guard !expressions.isEmpty else { return }
        let rows = newRows(of: table, copying: columns, from: source)
        // Text a comparison would convert to a number next to a numeric column: a string
        // literal, or a column of TEXT affinity.
        let textColumns = Set(
            table.columns.filter { StoredValueConversion(declaredType: $0.type, strict: false) == .text }
                .map(\.name.sqliteFolded))
        for expression in expressions {
            let tokens = SQLTokenizer.tokenize(expression)
            let hasString = tokens.contains {
                $0.kind == .string || ($0.kind == .word && textColumns.contains($0.normalized))
            }
            let affinityMatters = tokens.contains { token in
                guard token.kind == .word, let conversion = rows.lossy[token.normalized] else { return false }
                switch conversion {
                case .none: return false
                case .text, .strict(.text, _): return true
                default: return hasString
                }
            }
            guard !affinityMatters else { continue }
            let failing: [DatabaseValue]
            let count: Int
            do {
                let condition = "FROM \(rows.sql) WHERE NOT (\(expression))"
                failing = try db.fetchAll(
                    DatabaseValue.self, sql: "SELECT \"serialdb_row\" \(condition) LIMIT 6",
                    arguments: StatementArguments(rows.arguments))
                guard !failing.isEmpty else { continue }
                count =
                    try db.fetchOne(
                        Int.self, sql: "SELECT count(*) \(condition)", arguments: StatementArguments(rows.arguments))
                    ?? failing.count
            } catch is DatabaseError {
                continue
            }
            let named = failing.filter { !$0.isNull }.prefix(5).map { "\($0)" }
            refusals.append(
                "Table \(table.name) gets CHECK (\(expression)), but \(count) row(s) would fail it"
                    + (named.isEmpty
                        ? "" : " (rows with rowid \(named.joined(separator: ", "))\(failing.count > 5 ? ", ..." : ""))")
                    + ". Update those rows first, or change the CHECK.")
        }
    }

    /// For a table changed in place: the rows against its new unique indexes (CREATE UNIQUE
    /// INDEX fails on duplicates), its foreign keys to a dropped or new parent, and against the CHECKs of the columns it gains (ALTER TABLE
    /// ADD COLUMN fails on a row the CHECK refuses, the new columns at their defaults).
    mutating func checkKeptInPlace(
        _ table: TableDefinition, from source: TableDefinition, adding added: [CreateTableParts.Item]
    ) throws {
        let kept = source.columns.filter(\.isWritable).map {
            TableRebuild.CopiedColumn(target: $0.name, source: $0.name)
        }
        try checkUniqueKeys(of: table, copying: kept, from: source)
        try checkForeignKeys(of: table, copying: kept, from: source)
        try checkConstraints(
            added.flatMap { Self.checkExpressions(in: $0.text) }, of: table, copying: kept, from: source)
    }

    /// The CHECK expressions of a CREATE TABLE statement or of one column definition, as
    /// written (the text between the parentheses after each CHECK).
    static func checkExpressions(in sql: String) -> [String] {
        let tokens = SQLTokenizer.tokenize(sql)
        var expressions: [String] = []
        var index = 0
        while index + 1 < tokens.count {
            defer { index += 1 }
            guard tokens[index].isWord("check"), sql[tokens[index].range].first?.isLetter == true,
                tokens[index + 1].isSymbol("(")
            else { continue }
            var depth = 0
            for end in (index + 1)..<tokens.count {
                if tokens[end].isSymbol("(") { depth += 1 }
                if tokens[end].isSymbol(")") { depth -= 1 }
                if depth == 0 {
                    expressions.append(String(sql[tokens[index + 1].range.upperBound..<tokens[end].range.lowerBound]))
                    index = end
                    break
                }
            }
        }
        return expressions
    }
}
