/// Moves one table to a new definition the way SQLite documents it: create the new table
/// under a temporary name, copy the rows, drop the old table, rename the new one. The live
/// table is never renamed first (since SQLite 3.26 that rewrites the references held by
/// views, triggers and other tables' foreign keys, and dropping the renamed table with foreign
/// keys on cascades into child rows). Indexes, triggers and views are recreated by the plan.
/// See <https://www.sqlite.org/lang_altertable.html#otheralter>.
public struct TableRebuild: Sendable {
    /// One column of the copy: where its value comes from.
    struct CopiedColumn: Sendable {
        /// The column of the new table.
        var target: String
        /// The column of the old table, or nil when the value is `fill` alone.
        var source: String?
        /// A value for rows where the source is NULL (or for every row without a source).
        var fill: DatabaseValue?
    }

    /// The table in the live database.
    public var sourceTable: String
    /// The table's name in the new schema (differs from `sourceTable` for a renamed table).
    public var targetTable: String
    /// Why the table must be rebuilt.
    public var reasons: [String]
    /// The temporary name of the new table.
    var temporaryName: String
    /// CREATE TABLE of the new definition under `temporaryName`.
    var createSQL: String
    var columns: [CopiedColumn]
    /// Carry the rowid of a rowid table that has no INTEGER PRIMARY KEY receiving it.
    var copiesRowID: Bool
    /// The name that reads the source's rowid (`rowid`, `_rowid_` or `oid`, whichever no
    /// column takes), or nil: then rows are read in one statement rather than in rowid chunks.
    var sourceRowID: String?
    /// The name that writes the new table's rowid.
    var targetRowID: String?
    var carriesAutoincrement: Bool
    /// Rows in the source table when the plan was made.
    public var rowCount: Int
    /// The new table keeps its temporary name until a later step (`renameSQL`): its final
    /// name is still held by the source of another rebuild (two tables swapping names).
    var renamesLater = false

    /// Gives the new table its final name.
    var renameSQL: String {
        "ALTER TABLE \(temporaryName.quotedDatabaseIdentifier) RENAME TO \(targetTable.quotedDatabaseIdentifier)"
    }

    private static let rowsPerChunk = 50_000

    /// `INSERT INTO new(...) SELECT ... FROM old`, with `?` for fill values; `condition`
    /// restricts the source rows.
    func copySQL(condition: String?) -> (sql: String, arguments: [DatabaseValue]) {
        var targets: [String] = []
        var sources: [String] = []
        var arguments: [DatabaseValue] = []
        if copiesRowID, let sourceRowID, let targetRowID {
            targets.append(targetRowID.quotedDatabaseIdentifier)
            sources.append(sourceRowID.quotedDatabaseIdentifier)
        }
        for column in columns {
            targets.append(column.target.quotedDatabaseIdentifier)
            switch (column.source, column.fill) {
            case (let source?, nil):
                sources.append(source.quotedDatabaseIdentifier)
            case (let source?, let fill?):
                sources.append("coalesce(\(source.quotedDatabaseIdentifier), ?)")
                arguments.append(fill)
            case (nil, let fill):
                sources.append("?")
                arguments.append(fill ?? .null)
            }
        }
        if targets.isEmpty {
            // No column survives, only the rows: they get fresh rowids (the planner refuses
            // this for a WITHOUT ROWID table, whose rows would have no key).
            targets.append("rowid")
            sources.append("NULL")
        }
        // OR ABORT overrides any ON CONFLICT REPLACE / IGNORE of the new definition: a row that
        // collides is a refusal, never a silently deleted or skipped row.
        var sql =
            "INSERT OR ABORT INTO \(temporaryName.quotedDatabaseIdentifier)(\(targets.joined(separator: ", "))) "
            + "SELECT \(sources.joined(separator: ", ")) FROM \(sourceTable.quotedDatabaseIdentifier)"
        if let condition { sql += " WHERE " + condition }
        return (sql, arguments)
    }

    /// The statements, as a dry run prints them.
    var statements: [String] {
        var statements = [createSQL, copySQL(condition: nil).sql]
        if carriesAutoincrement {
            statements.append("-- carry the AUTOINCREMENT counter of \(sourceTable.quotedDatabaseIdentifier)")
        }
        statements.append("DROP TABLE \(sourceTable.quotedDatabaseIdentifier)")
        if !renamesLater { statements.append(renameSQL) }
        return statements
    }

    /// Runs the rebuild inside the caller's transaction, reporting rows copied.
    func run(_ db: Database) throws {
        try db.execute(sql: createSQL)
        let sourceRows =
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(sourceTable.quotedDatabaseIdentifier)") ?? 0
        let copied: Int
        do {
            copied = try copyRows(db, total: sourceRows)
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_CONSTRAINT || error.resultCode == .SQLITE_MISMATCH
        {
            // Rows that break the new definition are the caller's to fix; any other error
            // (I/O, full disk, interrupt) is rethrown as it is.
            throw SerialDBError(
                .schemaChangeRefused,
                "Copying the rows of \(sourceTable.quotedDatabaseIdentifier) into its new definition failed, so "
                    + "the change was rolled back: some rows do not satisfy the new definition. Fix those rows "
                    + "(or give a fill value) and migrate again.",
                underlying: error)
        }
        // A last line of defence: every row must have arrived, whatever the new definition says.
        guard copied == sourceRows else {
            throw SerialDBError(
                .schemaChangeRefused,
                "Copying the rows of \(sourceTable.quotedDatabaseIdentifier) moved \(copied) of \(sourceRows) rows, so "
                    + "the change was rolled back. Check the new definition's conflict clauses and triggers.")
        }
        try replaceSource(with: temporaryName, in: db)
    }

    /// Carries the AUTOINCREMENT counter over to `newTable`, removes the source table and gives
    /// `newTable` its final name (unless a later step does). The source is dropped, unless
    /// `setsSourceAside` (the online swap's, which renames it out of the way to drop it later)
    /// returns true.
    func replaceSource(
        with newTable: String, in db: Database, setsSourceAside: ((Database) throws -> Bool)? = nil
    ) throws {
        if carriesAutoincrement {
            // The new table's counter starts at the highest copied id; the old one may have
            // been higher (rows deleted from the end), and ids must never be reused. It is
            // set under the temporary name: the rename carries it.
            try db.execute(
                sql: """
                    INSERT INTO sqlite_sequence(name, seq)
                    SELECT ?, seq FROM sqlite_sequence WHERE name = ?
                    AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)
                    """, arguments: [newTable, sourceTable, newTable])
            try db.execute(
                sql: """
                    UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence WHERE name = ?))
                    WHERE name = ? AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)
                    """, arguments: [sourceTable, newTable, sourceTable])
        }
        if try setsSourceAside?(db) != true {
            try db.execute(sql: "DROP TABLE \(sourceTable.quotedDatabaseIdentifier)")
        }
        if !renamesLater {
            try db.execute(
                sql:
                    "ALTER TABLE \(newTable.quotedDatabaseIdentifier) RENAME TO \(targetTable.quotedDatabaseIdentifier)"
            )
        }
    }

    /// Copies every row, returning how many arrived.
    private func copyRows(_ db: Database, total: Int) throws -> Int {
        guard let sourceRowID, total > Self.rowsPerChunk else {
            let (sql, arguments) = copySQL(condition: nil)
            try db.execute(sql: sql, arguments: StatementArguments(arguments))
            let copied = db.changesCount
            db.reportProgress(completed: total, total: total)
            return copied
        }
        // Chunks of rowids, so a long copy can report progress; each chunk ends at an actual
        // rowid, so sparse rowids cost nothing. The bounds are inclusive, so the smallest
        // possible rowid (Int64.min) is copied too.
        let rowID = sourceRowID.quotedDatabaseIdentifier
        let boundary = try db.makeStatement(
            sql:
                "SELECT \(rowID) FROM \(sourceTable.quotedDatabaseIdentifier) WHERE \(rowID) >= ? ORDER BY \(rowID) LIMIT 1 OFFSET ?"
        )
        let (chunkSQL, fills) = copySQL(condition: "\(rowID) >= ? AND \(rowID) <= ?")
        let chunk = try db.makeStatement(sql: chunkSQL)
        var lower = Int64.min
        var copied = 0
        while true {
            let upper = try boundary.fetchOne(Int64.self, arguments: [lower, Self.rowsPerChunk - 1]) ?? Int64.max
            try chunk.execute(arguments: StatementArguments(fills + [.integer(lower), .integer(upper)]))
            copied += db.changesCount
            db.reportProgress(completed: min(copied, total), total: total)
            if upper == Int64.max { break }
            lower = upper + 1
        }
        return copied
    }
}
