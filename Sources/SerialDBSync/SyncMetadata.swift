import Foundation
import SerialDB
import SerialDBSyncWire

/// The tables the sync keeps in an app database: `TableVersion` (the original design's names,
/// visible to the app) and SerialDB's own side tables, named `serialdb_…` so that the schema
/// engine never treats them as the app's:
///
/// - `serialdb_sync_state`: one row, this device's client id, the form of the canonical keys
///   (`key_format`, see `CanonicalKey`), `sent_through` and the `applying` flag. The
///   flag is set to 1 and back to 0 inside each transaction that applies server rows, so the
///   outbox triggers stay quiet for those writes; other connections never see it set, and a
///   crash rolls it back with the rest. `sent_through` is the highest seq ever sent: see the
///   outbox.
/// - `serialdb_sync_table`: an integer id per synced table, so that the triggers name their
///   table without putting a name into SQL text.
/// - `serialdb_sync_row`: the server version each row was last seen at (its next base
///   version), keyed by table and canonical key. No entry: the key is new to the server.
/// - `serialdb_sync_outbox`: local changes in order; `seq` is the seq sent to the server. An
///   entry is sent (without an answer yet) exactly when its seq is at most `sent_through`:
///   batches are read in seq order from the first unsent entry, an entry a batch skips leaves
///   the outbox, and a later change gets a higher seq, so the sent entries are exactly those
///   of the kept batches below. At most one unsent entry per key (a newer change replaces it).
///   Databases synced by an earlier version marked each sent entry in a column `sent` (and a
///   partial index of those): ``install(_:)`` takes `sent_through` from it once, and the
///   column stays, unused. Marking a batch sent thus writes one number instead of every entry
///   and an index entry each (6,500 instructions per entry).
/// - `serialdb_sync_sent`: each batch sent without an answer (its entries' seqs `first_seq` to
///   `last_seq`), its mutations exactly as the request carried them, so that a retry repeats
///   it. One row per batch beside the outbox rather than a copy in each entry (growing every
///   entry in place costs twice as much, a row per entry about 9,000 instructions per entry
///   to write and delete), and answered entries are deleted from a table of small rows.
///   Databases synced by an earlier version kept each mutation in an outbox column `mutation`,
///   which ``install(_:)`` empties into this table.
/// - `serialdb_sync_resync`, `serialdb_sync_seen`: a resync in progress and the keys it has
///   seen, so that a resync interrupted between pages resumes and still deletes what it should.
enum SyncMetadata {
    static let statements = [
        """
        CREATE TABLE IF NOT EXISTS TableVersion(
            TableName TEXT PRIMARY KEY NOT NULL,
            OwnerType TEXT NOT NULL,
            Owner TEXT NOT NULL,
            StructVersion INTEGER NOT NULL,
            Version INTEGER NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS serialdb_sync_state(
            id INTEGER PRIMARY KEY CHECK (id = 1),
            client_id TEXT NOT NULL,
            applying INTEGER NOT NULL DEFAULT 0,
            key_format INTEGER NOT NULL DEFAULT 2,
            sent_through INTEGER NOT NULL DEFAULT 0)
        """,
        "CREATE TABLE IF NOT EXISTS serialdb_sync_table(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        """
        CREATE TABLE IF NOT EXISTS serialdb_sync_row(
            table_name TEXT NOT NULL, key TEXT NOT NULL, version INTEGER NOT NULL,
            PRIMARY KEY(table_name, key)) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS serialdb_sync_outbox(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            table_name TEXT NOT NULL, key TEXT NOT NULL, op TEXT NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS serialdb_sync_sent(
            first_seq INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL, mutations TEXT NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS serialdb_sync_outbox_key ON serialdb_sync_outbox(table_name, key)",
        "CREATE TABLE IF NOT EXISTS serialdb_sync_resync(table_name TEXT PRIMARY KEY NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS serialdb_sync_seen(
            table_name TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY(table_name, key)) WITHOUT ROWID
        """,
    ]

    /// Creates the tables when missing, brings a database synced by an earlier version to the
    /// current layout (canonical keys, kept batches, `sent_through`), and returns this
    /// device's client id (a UUID made once) and whether the outbox triggers must be made
    /// again (they compute an old key form, or test the old `sent` flag).
    static func install(_ db: Database) throws -> (clientID: String, staleTriggers: Bool) {
        let stateColumns = try columnNames(db, of: "serialdb_sync_state")
        for statement in statements {
            try db.execute(sql: statement)
        }
        let migratedKeys = try CanonicalKey.migrateLegacyKeys(db)
        try moveSentMutations(db)
        let movedSentFlag = try moveSentFlag(db, stateColumns: stateColumns)
        try db.execute(
            sql: "INSERT OR IGNORE INTO serialdb_sync_state(id, client_id) VALUES (1, ?)",
            arguments: [UUID().uuidString.lowercased()])
        guard let clientID = try db.fetchOne(String.self, sql: "SELECT client_id FROM serialdb_sync_state") else {
            throw SyncError(.invalidAccount, "The sync state row is missing; the database was changed by hand.")
        }
        return (clientID, migratedKeys || movedSentFlag)
    }

    /// The columns of `table`, none when it does not exist.
    private static func columnNames(_ db: Database, of table: String) throws -> [String] {
        try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
    }

    /// Gives a state row made before `sent_through` the column, taken from the `sent` flags of
    /// the outbox (every sent entry comes before every unsent one, as now), and drops their
    /// index. Returns whether it did: the triggers then still test the flag.
    private static func moveSentFlag(_ db: Database, stateColumns: [String]) throws -> Bool {
        guard !stateColumns.isEmpty, !stateColumns.contains("sent_through") else { return false }
        try db.execute(sql: "ALTER TABLE serialdb_sync_state ADD COLUMN sent_through INTEGER NOT NULL DEFAULT 0")
        if try columnNames(db, of: "serialdb_sync_outbox").contains("sent") {
            try db.execute(
                sql: """
                    UPDATE serialdb_sync_state
                    SET sent_through = coalesce((SELECT max(seq) FROM serialdb_sync_outbox WHERE sent = 1), 0)
                    """)
        }
        try db.execute(sql: "DROP INDEX IF EXISTS serialdb_sync_outbox_sent")
        return true
    }

    /// Moves the mutations an earlier version kept in the outbox's `mutation` column into
    /// `serialdb_sync_sent`, so that a request sent before the upgrade is retried as it was (the
    /// column stays, empty). They go in batches as large as an upload's, in seq order.
    private static func moveSentMutations(_ db: Database) throws {
        guard try columnNames(db, of: "serialdb_sync_outbox").contains("mutation") else { return }
        let kept = try db.fetchAll(
            Row.self,
            sql: "SELECT seq, mutation FROM serialdb_sync_outbox WHERE sent = 1 AND mutation IS NOT NULL ORDER BY seq")
        var batch: [(seq: Int64, mutation: String)] = []
        var bytes = 0
        func keepBatch() throws {
            guard let first = batch.first?.seq, let last = batch.last?.seq else { return }
            try Outbox.keep(db, first: first, last: last, mutations: batch.map(\.mutation))
            batch = []
            bytes = 0
        }
        for entry in kept {
            let mutation: String = try entry.decode(at: 1)
            if batch.count == SyncLimits.defaultPageSize || bytes + mutation.utf8.count + 1 > Outbox.maximumBatchBytes {
                try keepBatch()
            }
            batch.append((try entry.decode(at: 0), mutation))
            bytes += mutation.utf8.count + 1
        }
        try keepBatch()
        try db.execute(sql: "UPDATE serialdb_sync_outbox SET mutation = NULL WHERE mutation IS NOT NULL")
    }

    /// The highest seq ever sent, as an SQL expression: the outbox entries at or below it are
    /// the ones sent without an answer (see the outbox above).
    static let sentThroughSQL = "(SELECT sent_through FROM serialdb_sync_state WHERE id = 1)"

    /// Runs `block` with the outbox triggers quiet: call inside a transaction only.
    static func applyingServerRows<T>(_ db: Database, _ block: () throws -> T) throws -> T {
        try db.execute(sql: "UPDATE serialdb_sync_state SET applying = 1")
        let result = try block()
        try db.execute(sql: "UPDATE serialdb_sync_state SET applying = 0")
        return result
    }

    /// One row of `TableVersion`.
    struct TableState: Sendable {
        var table: String
        var ownerType: String
        var owner: String
        var structVersion: Int64
        var version: Int64
    }

    static func tableStates(_ db: Database) throws -> [TableState] {
        try db.fetchAll(
            Row.self,
            sql: "SELECT TableName, OwnerType, Owner, StructVersion, Version FROM TableVersion ORDER BY TableName"
        ).map { row in
            TableState(
                table: try row.decode(at: 0), ownerType: try row.decode(at: 1), owner: try row.decode(at: 2),
                structVersion: try row.decode(at: 3), version: try row.decode(at: 4))
        }
    }

    static func tableState(_ db: Database, table: String) throws -> TableState? {
        try tableStates(db).first { $0.table == table }
    }

    /// Moves the cursor of a table.
    static func setVersion(_ db: Database, table: String, version: Int64) throws {
        try db.execute(sql: "UPDATE TableVersion SET Version = ? WHERE TableName = ?", arguments: [version, table])
    }

    /// The server version a key was last seen at, or `nil` when the server never had it.
    static func knownVersion(_ db: Database, table: String, key: String) throws -> Int64? {
        try db.fetchOne(
            Int64.self, sql: "SELECT version FROM serialdb_sync_row WHERE table_name = ? AND key = ?",
            arguments: [table, key])
    }

    /// Records the server version of a key; `nil` forgets it (deleted: the key is new again).
    static func setKnownVersion(_ db: Database, table: String, key: String, version: Int64?) throws {
        if let version {
            try db.execute(
                sql: """
                    INSERT INTO serialdb_sync_row(table_name, key, version) VALUES (?, ?, ?)
                    ON CONFLICT(table_name, key) DO UPDATE SET version = excluded.version
                    """, arguments: [table, key, version])
        } else {
            try db.execute(
                sql: "DELETE FROM serialdb_sync_row WHERE table_name = ? AND key = ?", arguments: [table, key])
        }
    }

    /// Whether the key has local changes the server has not acknowledged.
    static func hasPendingChange(_ db: Database, table: String, key: String) throws -> Bool {
        try db.fetchOne(
            Bool.self, sql: "SELECT EXISTS (SELECT 1 FROM serialdb_sync_outbox WHERE table_name = ? AND key = ?)",
            arguments: [table, key]) ?? false
    }

    // MARK: - A page of keys at a time
    //
    // A downloaded page or an upload batch reads and writes the side tables once, not once per
    // row: its keys travel to SQLite as one JSON array (`json_each`), which costs less than a
    // prepared statement run once per key. A lookup walks the array and probes the side
    // table's index for each key (CROSS JOIN fixes that order): `key IN (SELECT ... json_each)`
    // built a temporary index of the keys first, which cost as much again. A table without
    // entries is not read at all (one index probe), the case of a device's first download.

    /// Keys as a JSON array of strings, for `json_each`.
    static func jsonArray(_ keys: some Collection<String>) -> String {
        jsonArray(keys, bytesEach: 24) { $0.string($1) }
    }

    /// Integers (seqs) as a JSON array, for `json_each`.
    static func jsonArray(integers: some Collection<Int64>) -> String {
        jsonArray(integers, bytesEach: 8) { $0.integer($1) }
    }

    private static func jsonArray<Values: Collection>(
        _ values: Values, bytesEach: Int, _ write: (inout JSONWriter, Values.Element) -> Void
    ) -> String {
        var writer = JSONWriter(capacity: values.count * bytesEach + 2)
        writer.raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { writer.raw(",") }
            write(&writer, value)
        }
        writer.raw("]")
        return writer.string
    }

    /// The keys of `keys` with unsent local changes.
    static func pendingKeys(_ db: Database, table: String, keys: [String]) throws -> Set<String> {
        guard
            try db.fetchOne(
                Bool.self, sql: "SELECT EXISTS (SELECT 1 FROM serialdb_sync_outbox WHERE table_name = ?)",
                arguments: [table]) == true
        else { return [] }
        return Set(
            try db.fetchAll(
                String.self,
                sql: """
                    SELECT DISTINCT entry.key FROM json_each(?2) AS page CROSS JOIN serialdb_sync_outbox AS entry
                    WHERE entry.table_name = ?1 AND entry.key = page.value
                    """, arguments: [table, jsonArray(keys)]))
    }

    /// Whether any key of the table has a known server version.
    static func hasKnownVersions(_ db: Database, table: String) throws -> Bool {
        try db.fetchOne(
            Bool.self, sql: "SELECT EXISTS (SELECT 1 FROM serialdb_sync_row WHERE table_name = ?)",
            arguments: [table]) == true
    }

    /// The server versions the keys of `keys` were last seen at (keys the server never had
    /// are absent).
    static func knownVersions(_ db: Database, table: String, keys: [String]) throws -> [String: Int64] {
        guard try hasKnownVersions(db, table: table) else { return [:] }
        var known: [String: Int64] = [:]
        known.reserveCapacity(keys.count)
        for row in try db.fetchAll(
            Row.self,
            sql: """
                SELECT known.key, known.version FROM json_each(?2) AS page CROSS JOIN serialdb_sync_row AS known
                WHERE known.table_name = ?1 AND known.key = page.value
                """, arguments: [table, jsonArray(keys)])
        {
            known[try row.decode(String.self, at: 0)] = try row.decode(Int64.self, at: 1)
        }
        return known
    }

    /// Records the new server versions of keys (`nil`: deleted, the key is new again), two
    /// statements whatever their number.
    static func setKnownVersions(_ db: Database, table: String, _ versions: [String: Int64?]) throws {
        guard !versions.isEmpty else { return }
        var seen = JSONWriter(capacity: versions.count * 32 + 2)
        var forgotten: [String] = []
        seen.raw("{")
        var first = true
        for (key, version) in versions {
            guard let version else {
                forgotten.append(key)
                continue
            }
            if !first { seen.raw(",") }
            first = false
            seen.string(key)
            seen.raw(":")
            seen.integer(version)
        }
        seen.raw("}")
        if !first {
            // `WHERE true` tells the parser that ON CONFLICT belongs to the INSERT.
            try db.execute(
                sql: """
                    INSERT INTO serialdb_sync_row(table_name, key, version)
                    SELECT ?1, key, value FROM json_each(?2) WHERE true
                    ON CONFLICT(table_name, key) DO UPDATE SET version = excluded.version
                    """, arguments: [table, seen.string])
        }
        if !forgotten.isEmpty {
            try db.execute(
                sql: "DELETE FROM serialdb_sync_row WHERE table_name = ?1 AND key IN (SELECT value FROM json_each(?2))",
                arguments: [table, jsonArray(forgotten)])
        }
    }
}
