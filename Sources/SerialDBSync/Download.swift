import SerialDB

/// The download side: one FetchData page applied in one transaction, with its cursor.
enum Download {
    /// Applies a page and moves `TableVersion.Version` to its cursor, in the caller's
    /// transaction, with the outbox triggers quiet; with the connection's triggers off when
    /// they are the only ones (``ChangeCapture/areTheOnlyTriggers(_:)``). Returns the rows
    /// applied that this device did not upload itself.
    ///
    /// A key with unsent local changes is left alone (its upload will meet the server's row
    /// as a conflict). A change older than the version the key was last seen at is stale.
    /// `rewritesKnownRows` (a fetch from 0) rewrites rows at the version already known, so that
    /// a new definition's columns get the server's values, except the rows of `ownRows`: this
    /// sync uploaded them, read from the local table, and the server stored them at that
    /// version, so the server's row is the local one (a first sync's fetch after its upload
    /// would otherwise write every uploaded row a second time).
    ///
    /// The side tables are read and written through one prepared statement each, reused for
    /// every row of the page, and not read at all when they hold nothing of the table.
    static func apply(
        _ db: Database, _ application: TableFetch.PageApplication, ownRows: [String: Int64] = [:]
    ) throws -> Int {
        try SyncMetadata.applyingServerRows(db) {
            // The outbox triggers run a sub-program for every row written, although they
            // ignore server rows: without other triggers, the page is written with none.
            guard try ChangeCapture.areTheOnlyTriggers(db) else {
                return try applyRows(db, application, ownRows: ownRows)
            }
            return try db.withTriggersDisabled { try applyRows(db, application, ownRows: ownRows) }
        }
    }

    private static func applyRows(
        _ db: Database, _ application: TableFetch.PageApplication, ownRows: [String: Int64]
    ) throws -> Int {
        let page = application.page
        // Rows of one page may refer to rows of a later page or table.
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        let table = try SyncedTable(db, name: page.table)
        var keys: [String] = []
        var keyValues: [[DatabaseValue]] = []
        keys.reserveCapacity(page.changes.count)
        keyValues.reserveCapacity(page.changes.count)
        for change in page.changes {
            let (key, values) = try table.canonicalKey(db, of: change.row)
            keys.append(key)
            keyValues.append(values)
        }
        if application.recordsSeenKeys {
            try db.execute(
                sql:
                    "INSERT OR IGNORE INTO serialdb_sync_seen(table_name, key) SELECT ?1, value FROM json_each(?2)",
                arguments: [table.name, SyncMetadata.jsonArray(keys)])
        }
        let pending = try SyncMetadata.pendingKeys(db, table: table.name, keys: keys)
        var known = try SyncMetadata.knownVersions(db, table: table.name, keys: keys)
        var changedKnown: [String: Int64?] = [:]
        changedKnown.reserveCapacity(page.changes.count)
        let upsert = try db.cachedStatement(sql: table.fullUpsertSQL)
        var downloaded = 0
        for (index, change) in page.changes.enumerated() {
            let key = keys[index]
            if !pending.isEmpty && pending.contains(key) { continue }
            let knownVersion = known.isEmpty ? nil : known[key]
            if change.deleted {
                if let knownVersion, knownVersion > change.version { continue }
                if try table.delete(db, key: keyValues[index]) { downloaded += 1 }
                known[key] = nil
                changedKnown[key] = .some(nil)
            } else {
                if let knownVersion,
                    change.version < knownVersion
                        || (change.version == knownVersion
                            && (!application.rewritesKnownRows || ownRows[key] == knownVersion))
                {
                    continue
                }
                try table.upsert(db, row: change.row, full: upsert)
                known[key] = change.version
                changedKnown[key] = change.version
                if knownVersion != change.version { downloaded += 1 }
            }
        }
        try SyncMetadata.setKnownVersions(db, table: table.name, changedKnown)
        try SyncMetadata.setVersion(db, table: table.name, version: page.version)
        if application.finishesResync {
            downloaded += try finishResync(db, table: table)
        }
        return downloaded
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
