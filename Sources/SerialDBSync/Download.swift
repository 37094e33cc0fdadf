import SerialDB

/// The download side: one FetchData page applied in one transaction, with its cursor.
enum Download {
    /// What one fetch knows of a table's `serialdb_sync_row` entries from one page to the next:
    /// every entry's version is at most ``highest``. A page whose changes all have higher
    /// versions cannot meet a known version that decides anything (a change is stale only
    /// below the version known, and rewritten or counted alike whether its key is unknown or
    /// known below it), so its keys are not looked up: the case of every page of a device's
    /// first download, where the table had no entry when the fetch began.
    ///
    /// It holds only while this fetch's pages are the only writes: the connection's
    /// `total_changes()` and `PRAGMA data_version` (which moves when another connection
    /// commits) are taken at the end of the page that made it, and any write in between (the
    /// app's, another client's on the same database, another process's) drops it.
    struct KnownVersionBound: Sendable, Equatable {
        var highest: Int64
        var totalChanges: Int
        var dataVersion: Int64

        /// The bound's `highest` when nothing has written since it was taken, else `nil`.
        func highestIfUnchanged(_ db: Database) throws -> Int64? {
            guard db.totalChangesCount == totalChanges, try Download.dataVersion(db) == dataVersion else { return nil }
            return highest
        }
    }

    /// A page applied: the rows downloaded, and what the next page of the fetch may rely on.
    struct Applied: Sendable {
        var downloaded: Int
        var bound: KnownVersionBound?
    }

    private static func dataVersion(_ db: Database) throws -> Int64 {
        try db.fetchOne(Int64.self, sql: "PRAGMA data_version") ?? 0
    }

    /// Applies a page and moves `TableVersion.Version` to its cursor, in the caller's
    /// transaction, with the outbox triggers quiet; with the connection's triggers off when
    /// they are the only ones (``ChangeCapture/areTheOnlyTriggers(_:)``). Returns the rows
    /// applied that this device did not upload itself, and the bound the next page of the same
    /// fetch passes back (`bound`, the one the page before returned; `nil` on a first page).
    ///
    /// A key with unsent local changes is left alone (its upload will meet the server's row
    /// as a conflict). A change older than the version the key was last seen at is stale.
    /// `rewritesKnownRows` (a fetch from 0) rewrites rows at the version already known, so that
    /// a new definition's columns get the server's values, except the rows of `ownRows`: this
    /// sync uploaded them, read from the local table, and the server stored them at that
    /// version, so the server's row is the local one (a first sync's fetch after its upload
    /// would otherwise write every uploaded row a second time). In every fetch, a row of
    /// `ownRows` back at the version the upload got is neither written nor looked up
    /// (`isOwnRow`).
    ///
    /// The side tables are read and written through one prepared statement each, reused for
    /// every row of the page, and not read at all when they hold nothing of the table (or,
    /// for the known versions, nothing that can matter: ``KnownVersionBound``).
    static func apply(
        _ db: Database, _ application: TableFetch.PageApplication, ownRows: [String: Int64] = [:],
        bound: KnownVersionBound? = nil
    ) throws -> Applied {
        let highestKnown = try bound?.highestIfUnchanged(db)
        let (downloaded, highest) = try SyncMetadata.applyingServerRows(db) {
            // The outbox triggers run a sub-program for every row written, although they
            // ignore server rows: without other triggers, the page is written with none.
            guard try ChangeCapture.areTheOnlyTriggers(db) else {
                return try applyRows(db, application, ownRows: ownRows, highestKnown: highestKnown)
            }
            return try db.withTriggersDisabled {
                try applyRows(db, application, ownRows: ownRows, highestKnown: highestKnown)
            }
        }
        try BrokenForeignKeys.check(
            db, writing: "a downloaded page of \(application.page.table.quotedDatabaseIdentifier)")
        return Applied(
            downloaded: downloaded,
            bound: try highest.map {
                KnownVersionBound(highest: $0, totalChanges: db.totalChangesCount, dataVersion: try dataVersion(db))
            })
    }

    /// Writes the rows; returns how many were downloaded and the highest version the table's
    /// known entries may have now, when that is known (`highestKnown` was, or the table had
    /// no entry).
    private static func applyRows(
        _ db: Database, _ application: TableFetch.PageApplication, ownRows: [String: Int64], highestKnown: Int64?
    ) throws -> (Int, Int64?) {
        let page = application.page
        let changes = application.changes
        // A row may refer to one later in the page; tables come parents first (FetchOrder),
        // and what is still broken when the page is written is told by BrokenForeignKeys.
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        let table = try SyncedTable(db, name: page.table)
        // How each shape of row (its column names in order) maps onto the table: worked out
        // once per shape, a page's rows having one or two.
        let shapes = try changes.shapes.map { try table.rowShape(of: $0) }
        var keys: [String] = []
        keys.reserveCapacity(changes.count)
        for index in 0..<changes.count {
            keys.append(
                try table.canonicalKey(db, of: changes.values(of: index), shape: shapes[changes.shapeOfChange[index]]))
        }
        if application.recordsSeenKeys {
            try db.execute(
                sql:
                    "INSERT OR IGNORE INTO serialdb_sync_seen(table_name, key) SELECT ?1, value FROM json_each(?2)",
                arguments: [table.name, SyncMetadata.jsonArray(keys)])
        }
        let pending = try SyncMetadata.pendingKeys(db, table: table.name, keys: keys)
        var highestKnown = highestKnown
        if highestKnown == nil, try !SyncMetadata.hasKnownVersions(db, table: table.name) {
            highestKnown = .min
        }
        // This sync's own rows (see `isOwnRow`) are not looked up.
        let own =
            ownRows.isEmpty
            ? []
            : keys.indices.map {
                isOwnRow(version: changes.versions[$0], deleted: changes.deleted[$0], keys[$0], ownRows)
            }
        let lookedUp = own.isEmpty ? Array(keys.indices) : keys.indices.filter { !own[$0] }
        let known: [String: Int64]
        if lookedUp.isEmpty {
            known = [:]
        } else if let highestKnown, lookedUp.allSatisfy({ changes.versions[$0] > highestKnown }) {
            known = [:]
        } else {
            known = try SyncMetadata.knownVersions(
                db, table: table.name, keys: own.isEmpty ? keys : lookedUp.map { keys[$0] })
        }
        // The page's own changes, by key: a key the page holds twice meets its earlier change.
        var changedKnown: [String: Int64?] = [:]
        changedKnown.reserveCapacity(changes.count)
        let upsert = try db.cachedStatement(sql: table.fullUpsertSQL)
        var rowValues: [DatabaseValue] = []
        var downloaded = 0
        for (index, key) in keys.enumerated() {
            ProcessorSharing.afterRow(index)
            if !pending.isEmpty && pending.contains(key) { continue }
            if !own.isEmpty && own[index] && changedKnown[key] == nil { continue }
            let knownVersion: Int64?
            if let changed = changedKnown[key] {
                knownVersion = changed
            } else {
                knownVersion = known.isEmpty ? nil : known[key]
            }
            let version = changes.versions[index]
            let shape = shapes[changes.shapeOfChange[index]]
            if changes.deleted[index] {
                if let knownVersion, knownVersion > version { continue }
                if try table.delete(db, key: table.keyValues(of: changes.values(of: index), shape: shape)) {
                    downloaded += 1
                }
                changedKnown[key] = .some(nil)
            } else {
                if let knownVersion,
                    version < knownVersion
                        || (version == knownVersion && (!application.rewritesKnownRows || ownRows[key] == knownVersion))
                {
                    continue
                }
                if shape.columnPositions != nil {
                    try table.upsert(
                        db, values: changes.values(of: index), shape: shape, full: upsert, reusing: &rowValues)
                } else {
                    try table.upsert(db, row: changes.row(of: index))
                }
                changedKnown[key] = version
                if knownVersion != version { downloaded += 1 }
            }
        }
        try SyncMetadata.setKnownVersions(db, table: table.name, changedKnown)
        try SyncMetadata.setVersion(db, table: table.name, version: page.version)
        if application.finishesResync {
            downloaded += try finishResync(db, table: table)
        }
        return (downloaded, highestKnown.map { max($0, changes.versions.max() ?? $0) })
    }

    /// Whether `change` is a row this sync uploaded, come back at the very version the server
    /// answered for it (`ownRows`, recorded as the key's known version when the answer was
    /// settled): it needs no write and no look-up of its key's known version, because every
    /// entry that key can have means the same thing. The server's row at that version is the
    /// row as it was read here (as for ``apply(_:_:ownRows:bound:)``'s fetch from 0). Since then
    /// the local row can only have changed:
    /// - by the app: the key has an unsent change, and is left alone before this is asked;
    /// - by another client of the database that applied a later server state (its entry then
    ///   holds that state's version, above this one): the page is older than that state, and
    ///   a change below the version known is stale.
    /// The one case where the entry would have decided otherwise is an entry gone, a later
    /// delete applied by another client: the stale row would come back until the next fetch
    /// deleted it again; left alone, the delete stays. A different version (another device
    /// wrote the key in between, a conflict) is not this sync's row and is decided as any.
    private static func isOwnRow(version: Int64, deleted: Bool, _ key: String, _ ownRows: [String: Int64]) -> Bool {
        !deleted && ownRows[key] == version
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
