import SerialDB

/// The table the harness writes and upgrades, and every statement it runs on it.
///
/// `item` rows carry their own identity and the identity of the last write that touched them:
/// `author`/`seq` name the insert, `last_author`/`last_seq` the latest write, and `payload`
/// (and `note`, once the upgrade added it) are derived from that write. So the stored row alone
/// says which write it holds, and the checker can compare it with what was acknowledged.
/// `author` references the `author` table, so the rebuild has a foreign key to carry over.
enum ItemTable {
    static let name = "item"
    static let authorTable = "author"
    static let index = "item_by_author"
    /// The author of the seed rows; seed row `id` has `seq = id`.
    static let seedAuthor = -1

    static func payload(_ id: OperationID) -> String { "p\(id.author).\(id.seq)" }
    static func seedPayload(id: Int) -> String { "seed-\(id)" }
    static func note(_ id: OperationID) -> String { "n\(id.author).\(id.seq)" }

    private static let item = name.quotedDatabaseIdentifier
    private static let appliedStepsSQL =
        "SELECT count(*) FROM \(DatabaseMigrator.migrationsTableName.quotedDatabaseIdentifier)"
    private static let insertSQL =
        "INSERT INTO \(item)(author, seq, payload, last_author, last_seq) VALUES (?, ?, ?, ?, ?)"
    private static let insertWithNoteSQL =
        "INSERT INTO \(item)(author, seq, payload, last_author, last_seq, note) VALUES (?, ?, ?, ?, ?, ?)"
    private static let updateSQL =
        "UPDATE \(item) SET payload = ?, last_author = ?, last_seq = ? WHERE author = ? AND seq = ?"
    private static let updateWithNoteSQL =
        "UPDATE \(item) SET payload = ?, last_author = ?, last_seq = ?, note = ? WHERE author = ? AND seq = ?"
    private static let seedSQL =
        "INSERT INTO \(item)(id, author, seq, payload, last_author, last_seq) VALUES (?, ?, ?, ?, ?, 0)"
    private static let authorSQL =
        "INSERT OR IGNORE INTO \(authorTable.quotedDatabaseIdentifier)(id, label) VALUES (?, ?)"

    /// How many migration steps the database has applied, read inside the write's own
    /// transaction: what the write saw, not what was true a moment before.
    static func appliedStepCount(_ db: Database) throws -> Int {
        try db.fetchOne(Int.self, sql: appliedStepsSQL) ?? 0
    }

    /// Inserts the seed author and `rows` seed rows (ids 1...rows), in the caller's transaction.
    static func populate(_ db: Database, rows: Int) throws {
        try registerAuthors(db, [seedAuthor])
        let statement = try db.cachedStatement(sql: seedSQL)
        for id in stride(from: 1, through: rows, by: 1) {
            try statement.execute(arguments: [id, seedAuthor, id, seedPayload(id: id), seedAuthor])
        }
    }

    /// Inserts the authors a generation of writers will use (the foreign key requires them).
    static func registerAuthors(_ db: Database, _ authors: [Int]) throws {
        for author in authors {
            try db.execute(sql: authorSQL, arguments: [author, "writer \(author)"])
        }
    }

    /// Runs one operation and returns the number of migration steps it saw.
    ///
    /// - Parameters:
    ///   - newSchema: write the `note` column, which exists only after the upgrade: the write
    ///     fails if it runs before the upgrade finished.
    ///   - times: 2 applies the operation twice (the harness's self-test of duplicate detection).
    static func perform(_ operation: WriteOperation, newSchema: Bool, times: Int = 1, in db: Database) throws -> Int {
        let steps = try appliedStepCount(db)
        let id = operation.id
        for _ in 0..<times {
            switch (operation.kind, newSchema) {
            case (.insert, false):
                try db.execute(sql: insertSQL, arguments: [id.author, id.seq, payload(id), id.author, id.seq])
            case (.insert, true):
                try db.execute(
                    sql: insertWithNoteSQL, arguments: [id.author, id.seq, payload(id), id.author, id.seq, note(id)])
            case (.update, false):
                try db.execute(
                    sql: updateSQL,
                    arguments: [payload(id), id.author, id.seq, operation.target.author, operation.target.seq])
            case (.update, true):
                try db.execute(
                    sql: updateWithNoteSQL,
                    arguments: [
                        payload(id), id.author, id.seq, note(id), operation.target.author, operation.target.seq,
                    ])
            }
            if operation.kind == .update && db.changesCount != 1 {
                // The row an acknowledged insert created is gone (or doubled): say so now.
                throw StressError(
                    "update \(id.author).\(id.seq) of row \(operation.target.author).\(operation.target.seq) "
                        + "changed \(db.changesCount) rows instead of 1")
            }
        }
        return steps
    }
}
