/// Where the online copies of a prepared step stand, kept in the database itself so that a
/// copy survives a crash or a restart and any connection (another process too) can resume it,
/// finish it or swap it: `serialdb_online_copy` holds one row per table, and
/// `serialdb_online_cursor` the key of the last row each copy read.
///
/// Every chunk reads and advances the cursor inside its own transaction, so two connections
/// copying the same table share the work: no row range is copied twice.
struct OnlineCopyState: Sendable {
    static let table = "serialdb_online_copy"
    static let cursorTable = "serialdb_online_cursor"

    /// One table being copied.
    struct Record: Sendable {
        var id: Int64
        /// The migration step the copy was made for.
        var step: String
        /// The live table.
        var source: String
        /// The new table's temporary name.
        var shadow: String
        var fingerprint: String
        /// Rows read so far, and the live table's rows when the copy began.
        var copied: Int
        var total: Int
        /// Every row before the cursor was copied; the triggers keep the shadow in step.
        var isDone: Bool
    }

    /// Whether any copy was left in the database.
    static func exists(_ db: Database) throws -> Bool {
        try db.tableExists(table)
    }

    static func records(_ db: Database) throws -> [Record] {
        guard try exists(db) else { return [] }
        return try db.fetchAll(
            Row.self,
            sql: "SELECT id, step, source, shadow, fingerprint, copied, total, done FROM "
                + "\(table.quotedDatabaseIdentifier) ORDER BY id"
        ).map { row in
            Record(
                id: try row.decode(at: 0), step: try row.decode(at: 1), source: try row.decode(at: 2),
                shadow: try row.decode(at: 3), fingerprint: try row.decode(at: 4), copied: try row.decode(at: 5),
                total: try row.decode(at: 6), isDone: try row.decode(at: 7))
        }
    }

    static func createTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(table.quotedDatabaseIdentifier)(
                    id INTEGER PRIMARY KEY, step TEXT NOT NULL, source TEXT NOT NULL, shadow TEXT NOT NULL,
                    fingerprint TEXT NOT NULL, copied INTEGER NOT NULL DEFAULT 0, total INTEGER NOT NULL,
                    done INTEGER NOT NULL DEFAULT 0)
                """)
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(cursorTable.quotedDatabaseIdentifier)(
                    copy INTEGER NOT NULL, position INTEGER NOT NULL, value, PRIMARY KEY (copy, position))
                """)
    }

    /// Adds a record and returns its id.
    static func addRecord(step: String, source: String, shadow: String, fingerprint: String, total: Int, _ db: Database)
        throws -> Int64
    {
        try db.execute(
            sql: "INSERT INTO \(table.quotedDatabaseIdentifier)(step, source, shadow, fingerprint, total) "
                + "VALUES (?, ?, ?, ?, ?)", arguments: [step, source, shadow, fingerprint, total])
        return db.lastInsertedRowID
    }

    /// The key of the last row copy `id` read, or nil before its first chunk.
    static func cursor(of id: Int64, _ db: Database) throws -> [DatabaseValue]? {
        let values = try db.fetchAll(
            DatabaseValue.self,
            sql: "SELECT value FROM \(cursorTable.quotedDatabaseIdentifier) WHERE copy = ? ORDER BY position",
            arguments: [id])
        return values.isEmpty ? nil : values
    }

    /// Records a chunk: the new cursor (nil: the last chunk) and the rows it read.
    static func advance(_ id: Int64, to cursor: [DatabaseValue]?, read: Int, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM \(cursorTable.quotedDatabaseIdentifier) WHERE copy = ?", arguments: [id])
        for (position, value) in (cursor ?? []).enumerated() {
            try db.execute(
                sql: "INSERT INTO \(cursorTable.quotedDatabaseIdentifier)(copy, position, value) VALUES (?, ?, ?)",
                arguments: [id, position, value])
        }
        try db.execute(
            sql: "UPDATE \(table.quotedDatabaseIdentifier) SET copied = copied + ?, done = ? WHERE id = ?",
            arguments: [read, cursor == nil, id])
    }

    static func setFingerprint(_ fingerprint: String, of id: Int64, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE \(table.quotedDatabaseIdentifier) SET fingerprint = ? WHERE id = ?",
            arguments: [fingerprint, id])
    }

    /// Forgets one record.
    static func delete(_ id: Int64, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM \(cursorTable.quotedDatabaseIdentifier) WHERE copy = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id = ?", arguments: [id])
    }

    /// Drops the state tables once no record is left.
    static func dropTablesIfEmpty(_ db: Database) throws {
        guard try exists(db),
            try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \(table.quotedDatabaseIdentifier)") == 0
        else { return }
        try db.execute(sql: "DROP TABLE \(table.quotedDatabaseIdentifier)")
        try db.execute(sql: "DROP TABLE IF EXISTS \(cursorTable.quotedDatabaseIdentifier)")
    }

    /// Removes every copy left in the database: triggers, shadows, reject tables and records,
    /// in the caller's transaction. The live tables are not touched.
    static func discardAll(_ db: Database) throws {
        for record in try records(db) {
            try discard(record, db)
        }
        try dropTablesIfEmpty(db)
    }

    /// Run by every open of the file (a queue's, or a pool's writer): removes the copies a
    /// process left unfinished when it died, with their triggers, so that the live table's
    /// writes stop paying for the mirroring. A copy some process is still making (it holds the
    /// ``OnlineCopyLease``) is left alone, and so is one that had caught up: its triggers keep
    /// it in step, and the next `migrate` swaps it in. When another connection holds the write
    /// lock, or the file is read-only, nothing is removed: the next open, `prepareMigration` or
    /// `migrate` does it. Old tables a swap set aside (``OnlineAsideTable``) and left undropped
    /// are dropped too, unless some process is still dropping them.
    static func removeAbandoned(_ db: Database) throws {
        guard !db.configuration.readOnly, !db.isInMemory else { return }
        let copies = try exists(db)
        let setAside = try OnlineAsideTable.tables(db)
        guard copies || !setAside.isEmpty, let lease = OnlineCopyLease.exclusive(for: db)
        else { return }
        defer { withExtendedLifetime(lease) {} }
        do {
            try db.inTransaction(.immediate) { db in
                try OnlineAsideTable.dropAll(db)
                guard copies else { return .commit }
                for record in try records(db) where !record.isDone {
                    try discard(record, db)
                }
                try dropTablesIfEmpty(db)
                return .commit
            }
        } catch let error as DatabaseError
            where [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_READONLY].contains(error.resultCode)
        {
            // Left for later, as said above: opening the file must not fail for a leftover.
        }
    }

    /// Removes one copy by the names its record gives.
    static func discard(_ record: Record, _ db: Database) throws {
        for name in OnlineTableCopy.triggerNames(record.id) {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(name.quotedDatabaseIdentifier)")
        }
        try db.execute(sql: "DROP TABLE IF EXISTS \(record.shadow.quotedDatabaseIdentifier)")
        try db.execute(sql: "DROP TABLE IF EXISTS \(OnlineTableCopy.rejectTable(record.id).quotedDatabaseIdentifier)")
        try db.execute(sql: "DROP TABLE IF EXISTS \(OnlineTableCopy.changeTable(record.id).quotedDatabaseIdentifier)")
        try delete(record.id, db)
    }
}
