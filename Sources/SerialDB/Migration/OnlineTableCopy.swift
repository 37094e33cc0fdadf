/// One table that `prepareMigration` copies into its new definition while the application keeps
/// writing the live table: the SQL of the mirror triggers, of one chunk of the copy, and of the
/// swap's last checks.
///
/// The new table (the *shadow*) is created under the rebuild's temporary name with the new
/// definition and the new indexes. Three AFTER triggers on the live table write every change
/// into it, in the application's own transaction; chunks copy the rows that existed before,
/// each in its own short transaction. A row a trigger already wrote is newer than the chunk's
/// read, so the chunk skips it (`INSERT OR IGNORE` against the shadow's key).
///
/// A row the new definition refuses (a new NOT NULL, CHECK, UNIQUE or foreign key) never makes
/// the application's write fail: the trigger leaves it out of the shadow and records its key in
/// the copy's reject table. The swap tries those rows again and refuses, naming them, when they
/// still do not fit. Invariant, after every transaction: each live row is in the shadow with its
/// latest values, in the reject table, or beyond the copy's cursor.
struct OnlineTableCopy: Sendable {
    /// The row of ``OnlineCopyState`` this copy belongs to: it names the triggers and tables.
    let id: Int64
    let rebuild: TableRebuild
    /// The new table's temporary name.
    let shadow: String
    /// Columns of the live table that order the chunks and name rejected rows: its rowid, or its
    /// primary key.
    let chunkKey: [String]
    /// Columns written by the copy and the mirror: shadow column ← live column.
    let copied: [(target: String, source: String)]
    /// Shadow columns ← live columns that identify one row in both tables.
    let match: [(target: String, source: String)]
    /// Live columns whose shadow column is NOT NULL.
    let notNull: [String]
    /// The new unique keys: (shadow column, live column, collation).
    let uniqueKeys: [[(target: String, source: String, collation: String)]]
    /// The new foreign keys: parent table, and (live child column, parent column) pairs.
    let foreignKeys: [(parent: String, pairs: [(child: String, parent: String)])]
    /// The CHECK test of the new definition over a row, or nil when it cannot be evaluated
    /// before the insert (the insert's own OR IGNORE still leaves such a row out).
    let checkTest: (@Sendable (String) -> String)?
    /// The new indexes, built on the shadow during the copy under temporary names.
    let indexes: [PreparedIndex]
    /// Whether the swap may leave this table out of the foreign key check: its new keys are
    /// its old keys over columns of unchanged type, and every copied or mirrored row was checked.
    let vouchesForeignKeys: Bool
    /// What the copy was made for: a copy whose fingerprint differs is discarded, never swapped.
    let fingerprint: String

    /// An index of the new definition, built on the shadow.
    struct PreparedIndex: Sendable {
        /// Its name on the shadow.
        var temporaryName: String
        /// Its name in the new schema.
        var name: String
        /// CREATE INDEX as the new schema writes it (the plan's statement).
        var sql: String
        /// CREATE INDEX on the shadow under the temporary name.
        var shadowSQL: String
    }

    var sourceTable: String { rebuild.sourceTable }
    var triggerNames: [String] { Self.triggerNames(id) }
    var rejectTable: String { Self.rejectTable(id) }

    /// The mirror triggers of copy `id`.
    static func triggerNames(_ id: Int64) -> [String] {
        ["insert", "update", "delete"].map { "serialdb_online_\(id)_\($0)" }
    }

    /// The table where copy `id` records the keys of rows the new definition refuses.
    static func rejectTable(_ id: Int64) -> String { "serialdb_online_\(id)_rejects" }

    /// The table where the triggers of copy `id` record the key of every row they mirror: the
    /// keys the swap still has to check (``OnlineTableCopy+Verification``).
    static func changeTable(_ id: Int64) -> String { "serialdb_online_\(id)_changed" }
    var changeTable: String { Self.changeTable(id) }
    private var rejectColumns: [String] { chunkKey.indices.map { "k\($0 + 1)" } }

    // MARK: - Making one

    /// The copy of `rebuild`, or the reason it cannot be prepared online (the swap then rebuilds
    /// that table under the gate, as `migrate` always did).
    static func make(
        id: Int64, rebuild: TableRebuild, shadow: String, live: DatabaseSchema, desired: DatabaseSchema, db: Database
    ) throws -> Result<OnlineTableCopy, OnlineCopyRefusal> {
        guard let source = live.table(named: rebuild.sourceTable),
            let target = desired.table(named: rebuild.targetTable)
        else { return .failure(OnlineCopyRefusal("its definition cannot be read")) }
        if rebuild.renamesLater {
            return .failure(OnlineCopyRefusal("it takes the name of another rebuilt table"))
        }
        if rebuild.columns.contains(where: { $0.fill != nil || $0.source == nil }) {
            return .failure(OnlineCopyRefusal("a fill value cannot be written by a trigger"))
        }
        var copied = rebuild.columns.compactMap { column in column.source.map { (target: column.target, source: $0) } }
        if rebuild.copiesRowID, let from = rebuild.sourceRowID, let to = rebuild.targetRowID {
            copied.insert((target: to, source: from), at: 0)
        }
        guard !copied.isEmpty else { return .failure(OnlineCopyRefusal("no column is kept")) }
        let sourceKey =
            source.rowIDName.map { [$0] }
            ?? source.columns.filter { $0.primaryKeyIndex > 0 }.sorted { $0.primaryKeyIndex < $1.primaryKeyIndex }
            .map(\.name)
        // The shadow's key must be the live table's key: then a live row and its copy are one
        // row to the triggers, whatever happens to the others.
        var match: [(target: String, source: String)] = []
        if let targetRowID = target.rowIDName {
            if rebuild.copiesRowID, let from = rebuild.sourceRowID {
                match = [(target: targetRowID, source: from)]
            } else if let alias = target.rowIDAlias,
                let from = copied.first(where: { $0.target.isSameSQLiteName(as: alias) })
            {
                match = [(target: targetRowID, source: from.source)]
            }
        } else {
            let keyColumns = target.columns.filter { $0.primaryKeyIndex > 0 }.sorted {
                $0.primaryKeyIndex < $1.primaryKeyIndex
            }
            match = keyColumns.compactMap { key in
                copied.first { $0.target.isSameSQLiteName(as: key.name) }.map { (target: key.name, source: $0.source) }
            }
            if match.count != keyColumns.count { match = [] }
        }
        func isSourceKey(_ names: [String]) -> Bool {
            let aliases = Set([source.rowIDName, source.rowIDAlias].compactMap { $0?.sqliteFolded })
            if sourceKey.count == 1, source.rowIDName != nil, names.count == 1 {
                return aliases.contains(names[0].sqliteFolded)
            }
            return Set(names.map(\.sqliteFolded)) == Set(sourceKey.map(\.sqliteFolded))
                && names.count == sourceKey.count
        }
        guard !match.isEmpty, !sourceKey.isEmpty, isSourceKey(match.map(\.source)) else {
            return .failure(OnlineCopyRefusal("its new key is not its old key"))
        }
        func sourceColumn(of targetColumn: String) -> String? {
            copied.first { $0.target.isSameSQLiteName(as: targetColumn) }?.source
        }
        let notNull = target.columns.filter { column in
            column.isNotNull && !(target.rowIDAlias?.isSameSQLiteName(as: column.name) ?? false)
        }.compactMap { sourceColumn(of: $0.name) }
        let uniqueKeys = target.uniqueKeys.compactMap { key -> [(String, String, String)]? in
            let sources = key.columns.map(sourceColumn(of:))
            guard sources.allSatisfy({ $0 != nil }) else { return nil }
            return zip(key.columns, zip(sources.compactMap { $0 }, key.collations)).map { ($0, $1.0, $1.1) }
        }
        var foreignKeys: [(parent: String, pairs: [(child: String, parent: String)])] = []
        for key in target.foreignKeys {
            // A parent that does not exist yet (a new or renamed table) would fail the trigger.
            let parentName = key.parentTable
            guard live.table(named: parentName) != nil else {
                return .failure(
                    OnlineCopyRefusal("its foreign key points at \(key.parentTable), which does not exist yet"))
            }
            let children = key.columns.map(sourceColumn(of:))
            let parents = desired.parentColumns(of: key)
            guard children.allSatisfy({ $0 != nil }), parents.count == children.count else {
                return .failure(OnlineCopyRefusal("its foreign key reads a column the copy does not fill"))
            }
            foreignKeys.append((parentName, zip(children.compactMap { $0 }, parents).map { ($0, $1) }))
        }
        let sameKeys =
            source.foreignKeys == target.foreignKeys
            && target.foreignKeys.flatMap(\.columns).allSatisfy { name in
                guard let from = sourceColumn(of: name), let old = source.column(named: from),
                    let new = target.column(named: name)
                else { return false }
                return old.type.sqliteFolded == new.type.sqliteFolded && from.isSameSQLiteName(as: name)
            }
        var indexes: [PreparedIndex] = []
        for (position, index) in desired.indexes.filter({ $0.tableName.isSameSQLiteName(as: target.name) })
            .enumerated()
        {
            let temporaryName = "serialdb_online_\(id)_index_\(position + 1)"
            if let shadowSQL = Self.indexSQL(index.sql, named: temporaryName, on: shadow) {
                indexes.append(
                    PreparedIndex(temporaryName: temporaryName, name: index.name, sql: index.sql, shadowSQL: shadowSQL))
            }
        }
        let checkTest = try Self.checkTest(for: target, copied: copied, source: source.name, db: db)
        let fingerprint = [
            source.sql, target.sql, copied.map { "\($0.target)=\($0.source)" }.joined(separator: ","),
            sourceKey.joined(separator: ","),
        ].joined(separator: "\u{1}")
        return .success(
            OnlineTableCopy(
                id: id, rebuild: rebuild, shadow: shadow, chunkKey: sourceKey, copied: copied, match: match,
                notNull: notNull, uniqueKeys: uniqueKeys, foreignKeys: foreignKeys, checkTest: checkTest,
                indexes: indexes, vouchesForeignKeys: sameKeys, fingerprint: fingerprint))
    }

    /// The CHECK constraints of `target` as a test over one row (`NEW`, or the live table in a
    /// chunk), evaluated by SQLite over the row as the new table would hold it; nil when the
    /// table has none, or when SQLite cannot compile the test (then the insert's OR IGNORE is
    /// the only guard).
    private static func checkTest(
        for target: TableDefinition, copied: [(target: String, source: String)], source: String, db: Database
    ) throws -> (@Sendable (String) -> String)? {
        let expressions = SchemaPlanner.checkExpressions(in: target.sql)
        guard !expressions.isEmpty else { return nil }
        let columns = target.columns.filter(\.isWritable).map {
            column -> (name: String, source: String?, fallback: String) in
            let from = copied.first { $0.target.isSameSQLiteName(as: column.name) }?.source
            return (column.name, from, "(\(column.defaultSQL ?? "NULL"))")
        }
        let targetName = target.name
        // A CHECK passes unless its value, as NUMERIC, is 0 (NULL passes).
        let passes = expressions.map { "CAST((\($0)) AS NUMERIC) IS NOT 0" }.joined(separator: " AND ")
        let test: @Sendable (String) -> String = { row in
            let values = columns.map { column in
                (column.source.map { "\(row).\($0.quotedDatabaseIdentifier)" } ?? column.fallback) + " AS "
                    + column.name.quotedDatabaseIdentifier
            }
            return "EXISTS (SELECT 1 FROM (SELECT \(values.joined(separator: ", "))) AS "
                + "\(targetName.quotedDatabaseIdentifier) WHERE \(passes))"
        }
        do {
            _ = try db.makeStatement(
                sql: "SELECT \(test(source.quotedDatabaseIdentifier)) FROM \(source.quotedDatabaseIdentifier) LIMIT 0")
        } catch is DatabaseError {
            return nil
        }
        return test
    }

    /// `CREATE INDEX` rewritten to name `name` on table `table`, or nil when its name is
    /// qualified by a schema.
    static func indexSQL(_ sql: String, named name: String, on table: String) -> String? {
        let tokens = SQLTokenizer.tokenize(sql)
        guard var position = tokens.firstIndex(where: { $0.isWord("index") }) else { return nil }
        position += 1
        if position + 2 < tokens.count, tokens[position].isWord("if"), tokens[position + 1].isWord("not"),
            tokens[position + 2].isWord("exists")
        {
            position += 3
        }
        guard position + 2 < tokens.count, tokens[position].kind == .word, tokens[position + 1].isWord("on"),
            tokens[position + 2].kind == .word, !(position + 3 < tokens.count && tokens[position + 3].isSymbol("."))
        else { return nil }
        var rewritten = sql
        rewritten.replaceSubrange(tokens[position + 2].range, with: table.quotedDatabaseIdentifier)
        rewritten.replaceSubrange(tokens[position].range, with: name.quotedDatabaseIdentifier)
        return rewritten
    }

    // MARK: - SQL

    var shadowName: String { shadow.quotedDatabaseIdentifier }
    var liveName: String { sourceTable.quotedDatabaseIdentifier }

    /// The shadow row that holds live row `row` (`NEW`, `OLD`, or the live table).
    func matches(_ row: String) -> String {
        match.map {
            "\(shadowName).\($0.target.quotedDatabaseIdentifier) = \(row).\($0.source.quotedDatabaseIdentifier)"
        }
        .joined(separator: " AND ")
    }

    /// The change recorded for `row`. The unary `+` takes the live column's affinity off the
    /// comparison, so that SQLite searches the change table's key (whose columns have none)
    /// instead of scanning it at every write.
    private func changeMatches(_ row: String) -> String {
        zip(rejectColumns, chunkKey).map {
            "\(changeTable.quotedDatabaseIdentifier).\($0.quotedDatabaseIdentifier) = +\(row).\($1.quotedDatabaseIdentifier)"
        }
        .joined(separator: " AND ")
    }

    private func rejectMatches(_ row: String) -> String {
        zip(rejectColumns, chunkKey).map { "\($0.quotedDatabaseIdentifier) = \(row).\($1.quotedDatabaseIdentifier)" }
            .joined(separator: " AND ")
    }

    private func values(_ row: String) -> String {
        copied.map { "\(row).\($0.source.quotedDatabaseIdentifier)" }.joined(separator: ", ")
    }

    private var targets: String {
        copied.map { $0.target.quotedDatabaseIdentifier }.joined(separator: ", ")
    }

    /// What a row must satisfy before it is written into the shadow. The chunk needs only the
    /// foreign keys (its own OR IGNORE is exact); a trigger checks everything, because an OR
    /// clause on the application's statement overrides the trigger's OR IGNORE.
    private func admits(_ row: String, everything: Bool) -> String {
        var conditions: [String] = []
        for pair in foreignKeys {
            let nulls = pair.pairs.map { "\(row).\($0.child.quotedDatabaseIdentifier) IS NULL" }
            let found = pair.pairs.map {
                "\(pair.parent.quotedDatabaseIdentifier).\($0.parent.quotedDatabaseIdentifier) = \(row).\($0.child.quotedDatabaseIdentifier)"
            }.joined(separator: " AND ")
            conditions.append(
                "("
                    + (nulls + ["EXISTS (SELECT 1 FROM \(pair.parent.quotedDatabaseIdentifier) WHERE \(found))"])
                    .joined(separator: " OR ") + ")")
        }
        if everything {
            conditions += notNull.map { "\(row).\($0.quotedDatabaseIdentifier) IS NOT NULL" }
            for key in uniqueKeys {
                let same = key.map {
                    "\(shadowName).\($0.target.quotedDatabaseIdentifier) = \(row).\($0.source.quotedDatabaseIdentifier) "
                        + "COLLATE \($0.collation.quotedDatabaseIdentifier)"
                }.joined(separator: " AND ")
                conditions.append("NOT EXISTS (SELECT 1 FROM \(shadowName) WHERE \(same))")
            }
            if let checkTest { conditions.append(checkTest(row)) }
        }
        return conditions.isEmpty ? "1" : conditions.joined(separator: " AND ")
    }

    /// The statements that create the shadow, its indexes, the reject table and the triggers.
    var installSQL: [String] {
        let keys = rejectColumns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let forget = { (row: String) in
            "DELETE FROM \(shadowName) WHERE \(matches(row)); "
                + "DELETE FROM \(rejectTable.quotedDatabaseIdentifier) WHERE \(rejectMatches(row));"
        }
        let write = { (row: String) in
            "INSERT OR IGNORE INTO \(shadowName)(\(targets)) SELECT \(values(row)) WHERE \(admits(row, everything: true)); "
                + "INSERT OR IGNORE INTO \(rejectTable.quotedDatabaseIdentifier)(\(keys)) "
                + "SELECT \(chunkKey.map { "\(row).\($0.quotedDatabaseIdentifier)" }.joined(separator: ", ")) "
                + "WHERE changes() = 0;"
        }
        // Without a conflict clause of its own to be overridden: the application's OR ABORT must
        // not fail on a key already recorded.
        let changed = changeTable.quotedDatabaseIdentifier
        let record = { (row: String) in
            "INSERT INTO \(changed)(\(keys)) SELECT \(chunkKey.map { "\(row).\($0.quotedDatabaseIdentifier)" }.joined(separator: ", ")) "
                + "WHERE NOT EXISTS (SELECT 1 FROM \(changed) WHERE \(changeMatches(row)));"
        }
        let names = triggerNames.map(\.quotedDatabaseIdentifier)
        return [rebuild.createSQL.replacingTemporaryName(rebuild.temporaryName, with: shadow)]
            + indexes.map(\.shadowSQL)
            + [
                "CREATE TABLE \(rejectTable.quotedDatabaseIdentifier)(\(keys), PRIMARY KEY (\(keys)))",
                "CREATE TABLE \(changed)(\(keys), PRIMARY KEY (\(keys)))",
                "CREATE TRIGGER \(names[0]) AFTER INSERT ON \(liveName) BEGIN \(forget("NEW")) \(write("NEW")) "
                    + "\(record("NEW")) END",
                "CREATE TRIGGER \(names[1]) AFTER UPDATE ON \(liveName) BEGIN \(forget("OLD")) \(forget("NEW")) "
                    + "\(write("NEW")) \(record("OLD")) \(record("NEW")) END",
                "CREATE TRIGGER \(names[2]) AFTER DELETE ON \(liveName) BEGIN \(forget("OLD")) \(record("OLD")) END",
            ]
    }

    func dropTriggers(_ db: Database) throws {
        for name in triggerNames { try db.execute(sql: "DROP TRIGGER IF EXISTS \(name.quotedDatabaseIdentifier)") }
    }

    // MARK: - Copying

    /// Copies the rows after `cursor` (all of them when nil), up to `rows` of them, inside the
    /// caller's transaction. Returns the key of the last row it read (nil: the table is done)
    /// and how many rows it read.
    func copyChunk(after cursor: [DatabaseValue]?, rows: Int, _ db: Database) throws -> (
        cursor: [DatabaseValue]?, read: Int
    ) {
        let key = chunkKey.map { "\(liveName).\($0.quotedDatabaseIdentifier)" }
        let tuple = key.count == 1 ? key[0] : "(" + key.joined(separator: ", ") + ")"
        let placeholders = key.count == 1 ? "?" : "(" + key.map { _ in "?" }.joined(separator: ", ") + ")"
        var conditions: [String] = []
        var arguments: [DatabaseValue] = []
        if let cursor {
            conditions.append("\(tuple) > \(placeholders)")
            arguments += cursor
        }
        let lower = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let last = try db.fetchOne(
            Row.self,
            sql:
                "SELECT \(key.joined(separator: ", ")) FROM \(liveName)\(lower) ORDER BY \(key.joined(separator: ", ")) "
                + "LIMIT 1 OFFSET ?", arguments: StatementArguments(arguments + [.integer(Int64(max(1, rows) - 1))]))
        let upper: [DatabaseValue]? = try last.map { row in
            try key.indices.map { try row.decode(DatabaseValue.self, at: $0) }
        }
        if let upper {
            conditions.append("\(tuple) <= \(placeholders)")
            arguments += upper
        }
        let range = conditions.isEmpty ? "1" : conditions.joined(separator: " AND ")
        let bound = StatementArguments(arguments)
        try db.execute(
            sql: "INSERT OR IGNORE INTO \(shadowName)(\(targets)) SELECT \(values(liveName)) FROM \(liveName) "
                + "WHERE \(range) AND \(admits(liveName, everything: false))", arguments: bound)
        try db.execute(
            sql: "INSERT OR IGNORE INTO \(rejectTable.quotedDatabaseIdentifier)"
                + "(\(rejectColumns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) "
                + "SELECT \(key.joined(separator: ", ")) FROM \(liveName) WHERE \(range) "
                + "AND NOT EXISTS (SELECT 1 FROM \(shadowName) WHERE \(matches(liveName)))", arguments: bound)
        let read =
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(liveName) WHERE \(range)", arguments: bound) ?? 0
        // Every live row of the range is now in the shadow or the reject table: the changes the
        // triggers recorded for those rows before are accounted for. (A key recorded for a row
        // deleted since stays: the swap checks that the copy lacks it too.)
        if try db.tableExists(changeTable) {
            let changed = changeTable.quotedDatabaseIdentifier
            try db.execute(
                sql: "DELETE FROM \(changed) WHERE rowid IN (SELECT \(changed).rowid FROM \(liveName) JOIN \(changed) "
                    + "ON \(changeMatches(liveName)) WHERE \(range))", arguments: bound)
        }
        return (upper, read)
    }

    // MARK: - Rejected rows

    /// The rows recorded as refused by the new definition that still are: each is tried again
    /// (it may fit now), and described when it does not.
    func refusedRows(_ db: Database, limit: Int = 5) throws -> (count: Int, described: [String]) {
        let keys = rejectColumns.map { "r.\($0.quotedDatabaseIdentifier)" }
        let joined = zip(chunkKey, keys).map { "\(liveName).\($0.quotedDatabaseIdentifier) = \($1)" }
            .joined(separator: " AND ")
        let rows = try db.fetchAll(
            Row.self,
            sql: "SELECT \(keys.joined(separator: ", ")) FROM \(rejectTable.quotedDatabaseIdentifier) AS r "
                + "WHERE EXISTS (SELECT 1 FROM \(liveName) WHERE \(joined)) "
                + "AND NOT EXISTS (SELECT 1 FROM \(shadowName) JOIN \(liveName) ON \(matches(liveName)) WHERE \(joined)) "
                + "ORDER BY \(keys.joined(separator: ", "))")
        guard !rows.isEmpty else { return (0, []) }
        let key = chunkKey.map { "\(liveName).\($0.quotedDatabaseIdentifier)" }
        let tuple = key.count == 1 ? key[0] : "(" + key.joined(separator: ", ") + ")"
        let placeholders = key.count == 1 ? "?" : "(" + key.map { _ in "?" }.joined(separator: ", ") + ")"
        var described: [String] = []
        var count = 0
        for row in rows {
            let keyValues = try chunkKey.indices.map { try row.decode(DatabaseValue.self, at: $0) }
            var fits = false
            do {
                try db.inSavepoint { db in
                    try db.execute(
                        sql: "INSERT INTO \(shadowName)(\(targets)) SELECT \(values(liveName)) FROM \(liveName) "
                            + "WHERE \(tuple) = \(placeholders) AND \(admits(liveName, everything: true))",
                        arguments: StatementArguments(keyValues))
                    fits = db.changesCount == 1
                    return fits ? .commit : .rollback
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                fits = false
            }
            if fits {
                try db.execute(
                    sql: "DELETE FROM \(rejectTable.quotedDatabaseIdentifier) WHERE "
                        + rejectColumns.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: " AND "),
                    arguments: StatementArguments(keyValues))
                continue
            }
            count += 1
            if described.count < limit {
                described.append(keyValues.map { "\($0)" }.joined(separator: ", "))
            }
        }
        return (count, described)
    }

    /// Describes the key of rejected rows for messages: "rowid" or "key (a, b)".
    var keyDescription: String {
        chunkKey.count == 1 && rebuild.sourceRowID != nil ? "rowid" : "key (" + chunkKey.joined(separator: ", ") + ")"
    }
}

/// Why a table cannot be copied online; the swap rebuilds it under the gate instead.
struct OnlineCopyRefusal: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension String {
    /// The CREATE TABLE of a rebuild, with its temporary name replaced (a resumed copy keeps
    /// the shadow it made, whose name may differ from the one a new plan picks).
    fileprivate func replacingTemporaryName(_ name: String, with other: String) -> String {
        guard name != other else { return self }
        return replacingOccurrences(of: name.quotedDatabaseIdentifier, with: other.quotedDatabaseIdentifier)
    }
}
