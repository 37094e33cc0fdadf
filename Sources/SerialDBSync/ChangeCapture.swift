import SerialDB

/// The outbox triggers of one synced table: after each insert, update and delete made by the
/// app (not while server rows are applied), the key and the operation go into
/// `serialdb_sync_outbox`, replacing the key's previous unsent entry. An update that changes
/// the key records a delete of the old key and an upsert of the new one.
///
/// The triggers are named `serialdb_sync_…`, so the schema engine never counts them as the
/// app's; a table rebuild drops them with the old table, so they are created again after
/// every schema change of the table.
enum ChangeCapture {
    /// The condition of an outbox entry not sent yet, as the triggers test it. The `+` keeps
    /// the seq from being used as a range to scan: the key's index finds its entries, however
    /// many wait.
    static let unsent = "+seq > \(SyncMetadata.sentThroughSQL)"

    static func triggerNames(of table: String) -> [String] {
        ["insert", "update", "delete"].map { "serialdb_sync_\($0)_\(table)" }
    }

    /// (Re)creates the triggers of `table`, registering it in `serialdb_sync_table`, and
    /// queues for upload the rows the table already holds that the sync has never seen: rows
    /// the app wrote before the table was synced (or while something had dropped the
    /// triggers) are local changes like any other. A row that is already on the server under
    /// the same key meets it as a conflict, reported like every conflict.
    ///
    /// - Returns: how many rows were queued.
    @discardableResult
    static func install(_ db: Database, table: SyncedTable) throws -> Int {
        try db.execute(sql: "INSERT OR IGNORE INTO serialdb_sync_table(name) VALUES (?)", arguments: [table.name])
        guard
            let id = try db.fetchOne(
                Int64.self, sql: "SELECT id FROM serialdb_sync_table WHERE name = ?", arguments: [table.name])
        else {
            throw SyncError(.unsupportedTable, "Table \(table.name.quotedDatabaseIdentifier) could not be registered.")
        }
        try remove(db, table: table.name)
        // A trigger cannot bind parameters, so it names its table through the integer id:
        // an Int64 rendered in decimal is the only value that enters this SQL text.
        let tableName = "(SELECT name FROM serialdb_sync_table WHERE id = \(id))"
        let quiet = "(SELECT applying FROM serialdb_sync_state WHERE id = 1) = 0"
        let newKey = CanonicalKey.expression(columns: table.primaryKey, prefix: "NEW.")
        let oldKey = CanonicalKey.expression(columns: table.primaryKey, prefix: "OLD.")
        let quotedTable = table.name.quotedDatabaseIdentifier
        let names = triggerNames(of: table.name).map(\.quotedDatabaseIdentifier)
        func record(_ key: String, _ op: String, when condition: String = "1") -> String {
            """
            DELETE FROM serialdb_sync_outbox WHERE \(unsent) AND table_name = \(tableName) AND key = \(key) AND \(condition);
            INSERT INTO serialdb_sync_outbox(table_name, key, op) SELECT \(tableName), \(key), '\(op)' WHERE \(condition);
            """
        }
        try db.execute(
            sql: """
                CREATE TRIGGER \(names[0]) AFTER INSERT ON \(quotedTable) WHEN \(quiet) BEGIN
                \(record(newKey, "upsert"))
                END
                """)
        try db.execute(
            sql: """
                CREATE TRIGGER \(names[1]) AFTER UPDATE ON \(quotedTable) WHEN \(quiet) BEGIN
                \(record(oldKey, "delete", when: "\(oldKey) IS NOT \(newKey)"))
                \(record(newKey, "upsert"))
                END
                """)
        try db.execute(
            sql: """
                CREATE TRIGGER \(names[2]) AFTER DELETE ON \(quotedTable) WHEN \(quiet) BEGIN
                \(record(oldKey, "delete"))
                END
                """)
        return try captureUnseenRows(db, table: table)
    }

    /// Queues an upsert for every row without a known server version and without an outbox
    /// entry. One statement, whatever the number of rows.
    private static func captureUnseenRows(_ db: Database, table: SyncedTable) throws -> Int {
        try db.execute(
            sql: """
                INSERT INTO serialdb_sync_outbox(table_name, key, op)
                SELECT ?1, local.key, 'upsert'
                FROM (SELECT \(CanonicalKey.expression(columns: table.primaryKey)) AS key
                      FROM \(table.name.quotedDatabaseIdentifier)) AS local
                WHERE NOT EXISTS (SELECT 1 FROM serialdb_sync_row WHERE table_name = ?1 AND key = local.key)
                AND NOT EXISTS (SELECT 1 FROM serialdb_sync_outbox WHERE table_name = ?1 AND key = local.key)
                """, arguments: [table.name])
        return db.changesCount
    }

    /// Whether the database's only triggers, main and temp schemas alike, are these outbox
    /// triggers, each on the table it is named after: writes of server rows (which the
    /// triggers ignore) may then run with the connection's triggers off. Any other trigger (the
    /// app's, an FTS table's content trigger, the mirror of a `prepareMigration` copy, one a
    /// foreign-key cascade reaches) must fire, so any other keeps them on. Read inside the
    /// transaction that writes, so that a trigger created by another connection cannot be
    /// missed.
    static func areTheOnlyTriggers(_ db: Database) throws -> Bool {
        let temporary = try db.fetchOne(
            Bool.self, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_temp_schema WHERE type = 'trigger')")
        guard temporary == false else { return false }
        let triggers = try db.fetchAll(
            Row.self, sql: "SELECT name, tbl_name FROM sqlite_schema WHERE type = 'trigger'")
        guard !triggers.isEmpty else { return true }
        let synced = try db.fetchAll(String.self, sql: "SELECT name FROM serialdb_sync_table")
        var ours: Set<[String]> = []
        for table in synced {
            for name in triggerNames(of: table) { ours.insert([name, table]) }
        }
        return try triggers.allSatisfy { ours.contains([try $0.decode(String.self, at: 0), try $0.decode(at: 1)]) }
    }

    /// Drops the triggers of `table` if they exist.
    static func remove(_ db: Database, table: String) throws {
        for name in triggerNames(of: table) {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(name.quotedDatabaseIdentifier)")
        }
    }
}
