import SerialDB

/// The download side: one FetchData page applied in one transaction, with its cursor.
enum Download {
    /// Applies a page and moves `TableVersion.Version` to its cursor, in the caller's
    /// transaction, with the outbox triggers quiet. Returns the rows applied that this device
    /// did not upload itself.
    ///
    /// A key with unsent local changes is left alone (its upload will meet the server's row
    /// as a conflict). A change older than the version the key was last seen at is stale.
    /// `refetch` (a fetch from 0) rewrites rows at the version already known, so that a new
    /// definition's columns get the server's values.
    static func apply(_ db: Database, page: FetchDataResponse, refetch: Bool, resyncing: Bool) throws -> Int {
        try SyncMetadata.applyingServerRows(db) {
            // Rows of one page may refer to rows of a later page or table.
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            let table = try SyncedTable(db, name: page.table)
            var downloaded = 0
            for change in page.changes {
                let (key, values) = try table.canonicalKey(db, of: change.row)
                if resyncing {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO serialdb_sync_seen(table_name, key) VALUES (?, ?)",
                        arguments: [table.name, key])
                }
                if try SyncMetadata.hasPendingChange(db, table: table.name, key: key) { continue }
                let known = try SyncMetadata.knownVersion(db, table: table.name, key: key)
                if change.deleted {
                    if let known, known > change.version { continue }
                    if try table.delete(db, key: values) { downloaded += 1 }
                    try SyncMetadata.setKnownVersion(db, table: table.name, key: key, version: nil)
                } else {
                    if let known, change.version < known || (change.version == known && !refetch) { continue }
                    try table.upsert(db, row: change.row)
                    try SyncMetadata.setKnownVersion(db, table: table.name, key: key, version: change.version)
                    if known != change.version { downloaded += 1 }
                }
            }
            try SyncMetadata.setVersion(db, table: table.name, version: page.version)
            if resyncing && !page.hasMore {
                downloaded += try finishResync(db, table: table)
            }
            return downloaded
        }
    }

    /// Starts a resync of `table`: cursor to 0, remember that a resync runs.
    static func startResync(_ db: Database, table: String) throws {
        try SyncMetadata.setVersion(db, table: table, version: 0)
        try db.execute(sql: "INSERT OR IGNORE INTO serialdb_sync_resync(table_name) VALUES (?)", arguments: [table])
        try db.execute(sql: "DELETE FROM serialdb_sync_seen WHERE table_name = ?", arguments: [table])
    }

    /// The tables whose resync was interrupted.
    static func resyncingTables(_ db: Database) throws -> Set<String> {
        Set(try db.fetchAll(String.self, sql: "SELECT table_name FROM serialdb_sync_resync"))
    }

    /// After the last page of a resync: local rows the server no longer has are deleted,
    /// except those with unsent changes. Returns how many were deleted.
    private static func finishResync(_ db: Database, table: SyncedTable) throws -> Int {
        let key = CanonicalKey.expression(columns: table.primaryKey)
        try db.execute(
            sql: """
                DELETE FROM \(table.name.quotedDatabaseIdentifier)
                WHERE \(key) NOT IN (SELECT key FROM serialdb_sync_seen WHERE table_name = ?1)
                AND \(key) NOT IN (SELECT key FROM serialdb_sync_outbox WHERE table_name = ?1)
                """, arguments: [table.name])
        let deleted = db.changesCount
        try db.execute(
            sql: """
                DELETE FROM serialdb_sync_row WHERE table_name = ?1
                AND key NOT IN (SELECT key FROM serialdb_sync_seen WHERE table_name = ?1)
                """, arguments: [table.name])
        try db.execute(sql: "DELETE FROM serialdb_sync_seen WHERE table_name = ?", arguments: [table.name])
        try db.execute(sql: "DELETE FROM serialdb_sync_resync WHERE table_name = ?", arguments: [table.name])
        return deleted
    }
}
