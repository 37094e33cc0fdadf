/// A virtual table (`CREATE VIRTUAL TABLE name USING module(arguments)`) as SQLite stores it.
///
/// Schema steps manage the full-text (`fts3`, `fts4`, `fts5`) and R*Tree (`rtree`,
/// `rtree_i32`) modules; virtual tables of other modules are read but left alone. The shadow
/// tables a module keeps its data in (`x_content`, `x_data`, `x_node`...) belong to the
/// virtual table, never to the application's tables.
/// See <https://www.sqlite.org/vtab.html>.
public struct VirtualTableDefinition: Sendable {
    /// Where a table's rows are kept, which decides how a new definition is filled.
    public enum Content: Sendable, Equatable {
        /// The table stores its rows itself (an ordinary full-text or R*Tree table): a new
        /// definition gets them by copying.
        case own
        /// An external-content full-text index (`content='docs'`): it stores no rows, only an
        /// index of those of `table`, and is rebuilt from them.
        case external(table: String)
        /// A contentless full-text index (`content=''`): it stores only the index of the rows
        /// once inserted, which nothing can rebuild.
        case contentless
    }

    /// The table name.
    public var name: String
    /// The CREATE VIRTUAL TABLE statement from `sqlite_master`.
    public var sql: String
    /// The module, lowercased (`fts5`, `rtree`...).
    public var module: String
    /// The module arguments, each as written.
    public var arguments: [String]
    /// Columns as `PRAGMA table_xinfo` reports them, hidden ones included (empty for a table of
    /// a module SerialDB does not manage).
    public var columns: [ColumnDefinition]
    /// Where its rows are kept.
    public var content: Content

    /// The modules schema steps create, drop and recreate.
    static let managedModules: Set = ["fts3", "fts4", "fts5", "rtree", "rtree_i32"]

    /// Whether schema steps manage this table.
    public var isManaged: Bool { Self.managedModules.contains(module) }

    /// The module arguments split into tokens, per argument.
    private let argumentTokens: [[SQLToken]]

    init(name: String, sql: String, columns: [ColumnDefinition]) {
        self.name = name
        self.sql = sql
        self.columns = columns
        let tokens = SQLTokenizer.tokenize(sql)
        let using = tokens.firstIndex { $0.isWord("using") } ?? tokens.count
        module = using + 1 < tokens.count ? tokens[using + 1].normalized : ""
        var arguments: [[SQLToken]] = []
        if using + 2 < tokens.count, tokens[using + 2].isSymbol("(") {
            var depth = 0
            var current: [SQLToken] = []
            for token in tokens[(using + 3)...] {
                if token.isSymbol("(") { depth += 1 }
                if token.isSymbol(")") {
                    if depth == 0 { break }
                    depth -= 1
                }
                if token.isSymbol(","), depth == 0 {
                    arguments.append(current)
                    current = []
                } else {
                    current.append(token)
                }
            }
            if !current.isEmpty { arguments.append(current) }
        }
        argumentTokens = arguments
        self.arguments = arguments.map { argument in
            guard let first = argument.first, let last = argument.last else { return "" }
            return String(sql[first.range.lowerBound..<last.range.upperBound])
        }
        content = .own
        if module == "fts4" || module == "fts5", let value = option("content") {
            content = value.isEmpty ? .contentless : .external(table: value)
        }
    }

    /// The value of a `key=value` module argument of a full-text table (names unquoted),
    /// or nil. FTS3 has no options: there `content=x` would be a column.
    func option(_ key: String) -> String? {
        guard module == "fts4" || module == "fts5" else { return nil }
        for argument in argumentTokens
        where argument.count == 3 && argument[0].isWord(key) && argument[1].isSymbol("=") {
            return argument[2].normalized
        }
        return nil
    }

    /// Whether this is a full-text table.
    var isFullText: Bool { module.hasPrefix("fts") }

    /// The external content table, if any.
    var contentTable: String? {
        if case .external(let table) = content { return table }
        return nil
    }

    /// The columns a copy of the rows carries (besides the rowid): the visible ones, plus the
    /// language id column of an FTS4 table (hidden, but it holds each row's language).
    var copiedColumns: [String] {
        let languageID = option("languageid")
        return columns.filter { column in
            column.visibility == .normal || languageID.map { column.name.isSameSQLiteName(as: $0) } ?? false
        }.map(\.name)
    }

    /// Everything but the table name, normalized: an option value compares the same whether
    /// written as a bare word, a number, a quoted identifier or a string (`content=docs`,
    /// `content='docs'`, `prefix=2`, `prefix="2"`), ASCII letters case-insensitively as the
    /// modules read them.
    var comparisonKey: [String] {
        [module]
            + argumentTokens.flatMap { argument -> [String] in
                var keys = argument.map(\.key)
                if argument.count == 3, argument[0].kind == .word, argument[1].isSymbol("=") {
                    keys[2] = "v:" + argument[2].normalized.sqliteFolded
                }
                return keys + [","]
            }
    }

    /// The statement under another name, for a copy built beside the live table.
    func createSQL(named newName: String) -> String {
        let tokens = SQLTokenizer.tokenize(sql)
        guard let using = tokens.firstIndex(where: { $0.isWord("using") }), using > 0 else { return sql }
        var text = sql
        text.replaceSubrange(tokens[using - 1].range, with: newName.quotedDatabaseIdentifier)
        return text
    }

    /// The suffixes of the shadow tables each managed module creates.
    private static let shadowSuffixes: [String: Set<String>] = [
        "fts3": ["content", "segments", "segdir", "docsize", "stat"],
        "fts4": ["content", "segments", "segdir", "docsize", "stat"],
        "fts5": ["data", "idx", "content", "docsize", "config"],
        "rtree": ["node", "rowid", "parent"],
        "rtree_i32": ["node", "rowid", "parent"],
    ]

    /// Whether `table` is one of this table's shadow tables (`docs_fts_data`...). SQLite
    /// reports them as such in `pragma_table_list`; this also holds when it cannot (a module
    /// that is not loaded).
    func ownsShadowTable(named table: String) -> Bool {
        let prefix = name.sqliteFolded + "_"
        let folded = table.sqliteFolded
        guard folded.hasPrefix(prefix) else { return false }
        return Self.shadowSuffixes[module]?.contains(String(folded.dropFirst(prefix.count))) ?? false
    }

    /// What the table is, for plans and listings: `fts5`, `fts5, content from "docs"`,
    /// `fts4, contentless`.
    public var summary: String {
        switch content {
        case .own: return module
        case .external(let table): return "\(module), content from \(table.quotedDatabaseIdentifier)"
        case .contentless: return "\(module), contentless"
        }
    }
}

extension VirtualTableDefinition {
    /// The virtual tables among the rows of `pragma_table_list` (name, type, ...), sorted by
    /// name. Columns are read only for managed modules: another module may not be loaded on
    /// this connection, and reading its columns would fail.
    static func all(in db: Database, listed: [Row]) throws -> [VirtualTableDefinition] {
        var tables: [VirtualTableDefinition] = []
        for row in listed where try row.decode(String.self, at: 1) == "virtual" {
            let name: String = try row.decode(at: 0)
            guard !DatabaseSchema.isInternal(name) else { continue }
            let sql =
                try db.fetchOne(
                    String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                    arguments: [name]) ?? ""
            var table = VirtualTableDefinition(name: name, sql: sql, columns: [])
            if table.isManaged { table.columns = try DatabaseSchema.columns(of: name, db) }
            tables.append(table)
        }
        return tables.sorted { $0.name < $1.name }
    }
}

extension VirtualTableDefinition {
    /// Refuses a desired schema with a virtual table of a module schema steps do not manage.
    static func refuseUnmanaged(in scratch: Database) throws {
        let listed = try scratch.fetchAll(
            Row.self, sql: "SELECT name, type FROM pragma_table_list WHERE schema = 'main' AND type = 'virtual'")
        let unmanaged = try all(in: scratch, listed: listed).filter { !$0.isManaged }
        guard unmanaged.isEmpty else {
            throw SerialDBError(
                .schemaChangeRefused,
                "Virtual tables of the modules fts3, fts4, fts5, rtree and rtree_i32 can be managed by a schema step, "
                    + "but not "
                    + unmanaged.map { "\($0.name.quotedDatabaseIdentifier) (\($0.module))" }.joined(separator: ", ")
                    + "; nothing was changed. Create those in a closure step.")
        }
    }

    /// What differs between the managed virtual tables of two schemas, for the check after a change.
    static func mismatches(live: DatabaseSchema, desired: DatabaseSchema) -> [String] {
        var mismatches: [String] = []
        for table in desired.virtualTables {
            guard let actual = live.virtualTable(named: table.name) else {
                mismatches.append("virtual table \(table.name) is missing")
                continue
            }
            if actual.comparisonKey != table.comparisonKey {
                mismatches.append("virtual table \(table.name) is `\(actual.sql)` instead of `\(table.sql)`")
            }
        }
        for table in live.virtualTables where table.isManaged && desired.virtualTable(named: table.name) == nil {
            mismatches.append("virtual table \(table.name) is still there")
        }
        return mismatches
    }
}
