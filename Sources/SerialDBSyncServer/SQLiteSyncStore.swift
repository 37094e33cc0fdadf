import Foundation
import SerialDB
import SerialDBSyncWire

/// The embedded sync store: one SQLite file behind a SerialDB writer (a `DatabaseQueue` it
/// opens itself, or the `DatabaseQueue` or `DatabasePool` it is given), in WAL mode with
/// `synchronous = FULL`, so an upload the server acknowledged survives a power loss.
///
/// Every row of every synced table lives in one table keyed by (table, owner, canonical key)
/// and holds its latest state as JSON text, with an index on (table, owner, version) that
/// serves fetches in version order. The rows' values under their tables' UNIQUE constraints
/// live in a table whose primary key is (table, owner, value), so that one owner's two keys
/// never hold one value; the schema each table's rows were last carried into is recorded. A one-row state table holds the version counter and the
/// tombstone purge floor; the counter is read and advanced inside each writing transaction,
/// and SQLite runs one writer at a time, so versions follow commit order. Upload results are
/// remembered per (account, client id, seq) in the same transaction as the change.
///
/// ```swift
/// let store = try SQLiteSyncStore(path: "server.sqlite")
/// let server = try SyncServer(configuration: configuration, store: store)
///
/// // On a pool, fetches and summaries read on reader connections beside the uploads' writes.
/// var configuration = Configuration()
/// configuration.synchronous = .full
/// let pooled = try SQLiteSyncStore(database: try DatabasePool(path: "server.sqlite", configuration: configuration))
/// ```
public final class SQLiteSyncStore: SyncStore {
    /// The store's database; the store's own tables are named `serialdb_sync_…`. Its reads
    /// run through `read` (on a pool's readers) and its changes through `write`.
    public let database: any DatabaseWriter
    /// The time each upload result is recorded at, and that ``purgeResults(olderThan:)`` counts from.
    private let clock: @Sendable () -> Date

    /// Opens (and creates or upgrades) the store at `path`.
    ///
    /// - Parameters:
    ///   - path: the store's SQLite file.
    ///   - clock: the time results are recorded at (the system clock; tests pass their own).
    /// - Throws: `DatabaseError` when the file cannot be opened; `SerialDBError` when its
    ///   schema was written by a newer version of the store.
    public convenience init(path: String, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        try self.init(path: path, clock: clock, trace: nil)
    }

    /// The store at `path`, handing every statement it runs, with its values, to `trace`: the
    /// tests read the plans of the store's statements from it.
    convenience init(path: String, clock: @escaping @Sendable () -> Date, trace: (@Sendable (String) -> Void)?) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.synchronous = .full
        configuration.label = "sync store"
        if let trace {
            configuration.trace = trace
            configuration.publicStatementArguments = true
        }
        try self.init(database: try DatabaseQueue(path: path, configuration: configuration), clock: clock)
    }

    /// An in-memory store, gone when closed: for tests and trials.
    public convenience init(clock: @escaping @Sendable () -> Date = { Date() }) throws {
        var configuration = Configuration()
        configuration.label = "sync store (in memory)"
        try self.init(database: try DatabaseQueue(configuration: configuration), clock: clock)
    }

    /// The store in `database`, whose tables it creates or upgrades: a `DatabasePool` lets
    /// fetches, version checks and summaries run on its readers while an upload writes.
    ///
    /// The writer is used as it was opened: for the durability ``init(path:clock:)`` gives
    /// (an acknowledged upload survives a power loss), open it with `synchronous = .full`
    /// (the default) in WAL mode. The store's other tables and the app's may share the file;
    /// ``close()`` closes the writer.
    ///
    /// - Parameters:
    ///   - database: a `DatabaseQueue` or `DatabasePool`, open.
    ///   - clock: the time results are recorded at (the system clock; tests pass their own).
    /// - Throws: `SerialDBError` when its store schema was written by a newer version of the
    ///   store, or the writer is closed; `DatabaseError` when the tables cannot be made.
    public init(database: some DatabaseWriter, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.clock = clock
        self.database = database
        try database.migrate(Self.migrator(clock: clock))
    }

    static func migrator(clock: @escaping @Sendable () -> Date) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("sync-store-1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE serialdb_sync_state(
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        version INTEGER NOT NULL,
                        purge_floor INTEGER NOT NULL);
                    INSERT INTO serialdb_sync_state(id, version, purge_floor) VALUES (1, 0, 0);
                    CREATE TABLE serialdb_sync_row(
                        table_name TEXT NOT NULL,
                        owner TEXT NOT NULL,
                        key TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        deleted INTEGER NOT NULL,
                        row TEXT NOT NULL,
                        UNIQUE (table_name, owner, key));
                    CREATE INDEX serialdb_sync_row_by_version ON serialdb_sync_row(table_name, owner, version);
                    CREATE INDEX serialdb_sync_tombstone ON serialdb_sync_row(version) WHERE deleted;
                    CREATE TABLE serialdb_sync_applied(
                        account TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        status TEXT NOT NULL,
                        version INTEGER,
                        deleted INTEGER,
                        row TEXT,
                        message TEXT,
                        PRIMARY KEY (account, client_id, seq)) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("sync-store-2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE serialdb_sync_unique(
                        table_name TEXT NOT NULL,
                        owner TEXT NOT NULL,
                        value TEXT NOT NULL,
                        key TEXT NOT NULL,
                        PRIMARY KEY (table_name, owner, value)) WITHOUT ROWID;
                    CREATE INDEX serialdb_sync_unique_by_key ON serialdb_sync_unique(table_name, owner, key);
                    CREATE TABLE serialdb_sync_definition(
                        table_name TEXT PRIMARY KEY NOT NULL,
                        schema TEXT NOT NULL);
                    """)
        }
        // Results age out (purgeResults); the highest seq answered per client stays. Results
        // recorded before this step count as recorded now, and set their clients' marks.
        migrator.registerMigration("sync-store-3") { db in
            try db.execute(
                sql: """
                    ALTER TABLE serialdb_sync_applied ADD COLUMN recorded_at INTEGER NOT NULL DEFAULT 0;
                    UPDATE serialdb_sync_applied SET recorded_at = ?;
                    CREATE INDEX serialdb_sync_applied_by_age ON serialdb_sync_applied(recorded_at);
                    CREATE TABLE serialdb_sync_client(
                        account TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        highest_seq INTEGER NOT NULL,
                        PRIMARY KEY (account, client_id)) WITHOUT ROWID;
                    INSERT INTO serialdb_sync_client(account, client_id, highest_seq)
                    SELECT account, client_id, max(seq) FROM serialdb_sync_applied GROUP BY account, client_id;
                    """, arguments: [ResultClock.seconds(clock())])
        }
        return migrator
    }

    /// The highest version of each (table, owner) pair, 0 for one with no rows.
    public func latestVersions(of tables: [(table: String, owner: String)]) throws -> [Int64] {
        try database.read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT max(version) FROM serialdb_sync_row WHERE table_name = ? AND owner = ?")
            return try tables.map { try statement.fetchOne(Int64.self, arguments: [$0.table, $0.owner]) ?? 0 }
        }
    }

    /// The changes of one table and owner above `since`, in version order, at most `limit` and
    /// `maximumBytes`: read one row at a time, stopping at the first that does not fit (the
    /// most held beyond the page is that one row).
    public func changes(
        table: String, owner: String, since: Int64, limit: Int, maximumBytes: Int
    ) throws -> SyncChangePage {
        try database.read { db in
            let floor = try db.fetchOne(Int64.self, sql: "SELECT purge_floor FROM serialdb_sync_state") ?? 0
            var changes: [SyncEncodedChange] = []
            var bytes = 0
            do {
                try db.forEachRow(
                    sql: """
                        SELECT version, deleted, row FROM serialdb_sync_row
                        WHERE table_name = ? AND owner = ? AND version > ? ORDER BY version LIMIT ?
                        """, arguments: [table, owner, since, limit + 1]
                ) { row in
                    guard changes.count < limit else { throw PageFull() }
                    let change = try StoredChange(row: row).change
                    guard changes.isEmpty || bytes + change.wireSize <= maximumBytes else { throw PageFull() }
                    changes.append(change)
                    bytes += change.wireSize
                }
            } catch is PageFull {
                return SyncChangePage(changes: changes, hasMore: true, floor: floor)
            }
            return SyncChangePage(changes: changes, hasMore: false, floor: floor)
        }
    }

    /// Applies an upload in one IMMEDIATE transaction; see ``SyncStore``.
    public func apply(account: String, clientID: String?, mutations: [SyncStoreMutation]) throws -> [SyncUploadOutcome]
    {
        try database.write { db in
            var version = try db.fetchOne(Int64.self, sql: "SELECT version FROM serialdb_sync_state") ?? 0
            let startVersion = version
            let findApplied = try db.cachedStatement(
                sql: """
                    SELECT status, version, deleted, row, message FROM serialdb_sync_applied
                    WHERE account = ? AND client_id = ? AND seq = ?
                    """)
            let recordApplied = try db.cachedStatement(
                sql: """
                    INSERT INTO serialdb_sync_applied(
                        account, client_id, seq, status, version, deleted, row, message, recorded_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            let now = ResultClock.seconds(clock())
            // The highest seq answered to the client, nil when none was (a first seq may be 0).
            let highest = try clientID.flatMap { clientID in
                try db.fetchOne(
                    Int64.self, sql: "SELECT highest_seq FROM serialdb_sync_client WHERE account = ? AND client_id = ?",
                    arguments: [account, clientID])
            }
            let findCurrent = try db.cachedStatement(
                sql:
                    "SELECT version, deleted, row FROM serialdb_sync_row WHERE table_name = ? AND owner = ? AND key = ?"
            )
            let write = try db.cachedStatement(
                sql: """
                    INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (table_name, owner, key)
                    DO UPDATE SET version = excluded.version, deleted = excluded.deleted, row = excluded.row
                    """)
            let unique = try mutations.contains(where: \.checksUniqueness) ? UniqueStatements(db) : nil
            var results: [SyncUploadOutcome] = []
            results.reserveCapacity(mutations.count)
            for mutation in mutations {
                // A result is recorded in the transaction that raises the mark to its seq or
                // above: a seq above the mark has none, and needs no lookup.
                if let clientID, SyncUploadRule.wasAnswered(mutation.seq, highestAnswered: highest),
                    let answer = SyncUploadRule.earlierAnswer(
                        remembered: try findApplied.fetchOne(
                            StoredResult.self, arguments: [account, clientID, mutation.seq]
                        )?.result(), seq: mutation.seq, highestAnswered: highest)
                {
                    results.append(answer)
                    continue
                }
                let result: SyncUploadOutcome
                switch mutation.action {
                case .reject(let message):
                    result = .rejected(message: message)
                case .upsert(let key, let keyJSON, let rowJSON):
                    result = try change(
                        mutation, key: key, keyJSON: keyJSON, deleted: false, rowJSON: rowJSON, version: &version,
                        find: findCurrent, write: write, unique: unique)
                case .delete(let key, let keyJSON):
                    result = try change(
                        mutation, key: key, keyJSON: keyJSON, deleted: true, rowJSON: keyJSON, version: &version,
                        find: findCurrent, write: write, unique: unique)
                }
                if let clientID {
                    try record(
                        result, of: mutation, account: account, clientID: clientID, at: now, with: recordApplied)
                }
                results.append(result)
            }
            if version != startVersion {
                try db.execute(sql: "UPDATE serialdb_sync_state SET version = ?", arguments: [version])
            }
            if let clientID, let top = mutations.map(\.seq).max(),
                !SyncUploadRule.wasAnswered(top, highestAnswered: highest)
            {
                try db.execute(
                    sql: """
                        INSERT INTO serialdb_sync_client(account, client_id, highest_seq) VALUES (?, ?, ?)
                        ON CONFLICT (account, client_id) DO UPDATE SET highest_seq = excluded.highest_seq
                        """, arguments: [account, clientID, top])
            }
            return results
        }
    }

    /// Writes one row change unless its base version is stale or another key of the owner
    /// holds one of its unique values, advancing `version`.
    private func change(
        _ mutation: SyncStoreMutation, key: String, keyJSON: String, deleted: Bool, rowJSON: String,
        version: inout Int64, find: Statement, write: Statement, unique: UniqueStatements?
    ) throws -> SyncUploadOutcome {
        let current = try find.fetchOne(StoredChange.self, arguments: [mutation.table, mutation.owner, key])?.change
        if let conflict = SyncUploadRule.conflict(baseVersion: mutation.baseVersion, current: current, keyJSON: keyJSON)
        {
            return conflict
        }
        if let unique, mutation.checksUniqueness {
            if !deleted {
                for value in mutation.uniqueValues {
                    let holder = try unique.find.fetchOne(
                        String.self, arguments: [mutation.table, mutation.owner, value.value])
                    // By bytes, as SQLite compares them: Swift's == would take canonically equivalent texts for one.
                    if let holder, !holder.utf8.elementsEqual(key.utf8) { return value.rejection }
                }
            }
            try unique.release.execute(values: mutation.table, mutation.owner, key)
            for value in deleted ? [] : mutation.uniqueValues {
                try unique.hold.execute(values: mutation.table, mutation.owner, value.value, key)
            }
        }
        version += 1
        try write.execute(values: mutation.table, mutation.owner, key, version, deleted, rowJSON)
        return .applied(version: version)
    }

    private func record(
        _ result: SyncUploadOutcome, of mutation: SyncStoreMutation, account: String, clientID: String, at now: Int64,
        with statement: Statement
    ) throws {
        guard let record = result.record else { return }
        try statement.execute(arguments: [
            account, clientID, mutation.seq, record.status, record.version, record.deleted, record.row, record.message,
            now,
        ])
    }

    /// Drops the results recorded more than `retention` seconds ago; see ``SyncStore``.
    public func purgeResults(olderThan retention: TimeInterval) throws -> Int {
        let cutoff = ResultClock.seconds(clock()) - ResultClock.seconds(retention)
        return try database.write { db in
            try db.execute(sql: "DELETE FROM serialdb_sync_applied WHERE recorded_at < ?", arguments: [cutoff])
            return db.changesCount
        }
    }

    /// The purge floor.
    public func purgeFloor() throws -> Int64 {
        try database.read { db in try db.fetchOne(Int64.self, sql: "SELECT purge_floor FROM serialdb_sync_state") ?? 0 }
    }

    /// Carries the rows of `table` into `schema` in one IMMEDIATE transaction; see ``SyncStore``.
    public func adoptDefinition(
        table: String, schema: String, renamedFrom: String?, carryOver: ([SyncStoredRow]) throws -> [SyncStoredRow]
    ) throws {
        try database.write { db in
            let recorded = try db.fetchOne(
                String.self, sql: "SELECT schema FROM serialdb_sync_definition WHERE table_name = ?", arguments: [table]
            )
            guard recorded != schema else { return }
            if let renamedFrom, recorded == nil {
                try db.execute(
                    sql: "UPDATE serialdb_sync_row SET table_name = ? WHERE table_name = ?",
                    arguments: [table, renamedFrom])
                try db.execute(
                    sql: "DELETE FROM serialdb_sync_unique WHERE table_name = ?; "
                        + "DELETE FROM serialdb_sync_definition WHERE table_name = ?",
                    arguments: [renamedFrom, renamedFrom])
            }
            let stored = try db.fetchAll(
                StoredRow.self,
                sql:
                    "SELECT owner, key, version, deleted, row FROM serialdb_sync_row WHERE table_name = ? ORDER BY version",
                arguments: [table]
            ).map(\.row)
            let carried = try carryOver(stored)
            try db.execute(
                sql:
                    "DELETE FROM serialdb_sync_row WHERE table_name = ?; DELETE FROM serialdb_sync_unique WHERE table_name = ?",
                arguments: [table, table])
            let insertRow = try db.makeStatement(
                sql:
                    "INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row) VALUES (?, ?, ?, ?, ?, ?)"
            )
            let hold = try UniqueStatements(db).hold
            for row in carried {
                try insertRow.execute(values: table, row.owner, row.key, row.version, row.deleted, row.rowJSON)
                for value in row.uniqueValues {
                    try hold.execute(values: table, row.owner, value.value, row.key)
                }
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO serialdb_sync_definition(table_name, schema) VALUES (?, ?)",
                arguments: [table, schema])
        }
    }

    /// Removes tombstones up to `version` (capped at the current version) and raises the floor.
    public func purgeTombstones(through version: Int64) throws -> (purged: Int, floor: Int64) {
        try database.write { db in
            let state = try db.fetchOne(Row.self, sql: "SELECT version, purge_floor FROM serialdb_sync_state")
            let current: Int64 = try state?.decode(at: 0) ?? 0
            let oldFloor: Int64 = try state?.decode(at: 1) ?? 0
            let floor = max(oldFloor, min(version, current))
            try db.execute(sql: "DELETE FROM serialdb_sync_row WHERE deleted AND version <= ?", arguments: [floor])
            let purged = db.changesCount
            try db.execute(sql: "UPDATE serialdb_sync_state SET purge_floor = ?", arguments: [floor])
            return (purged, floor)
        }
    }

    /// The version counter.
    public func currentVersion() throws -> Int64 {
        try database.read { db in try db.fetchOne(Int64.self, sql: "SELECT version FROM serialdb_sync_state") ?? 0 }
    }

    /// Counts the rows, tombstones and owners of every table, in one read transaction.
    public func summary() throws -> SyncStoreSummary {
        try database.read { db in
            var tables: [String: SyncStoreSummary.Table] = [:]
            try db.forEachRow(
                sql: """
                    SELECT table_name, sum(NOT deleted), sum(deleted), max(version)
                    FROM serialdb_sync_row GROUP BY table_name
                    """
            ) { row in
                tables[try row.decode(at: 0)] = SyncStoreSummary.Table(
                    rows: try row.decode(at: 1), tombstones: try row.decode(at: 2),
                    highestVersion: try row.decode(at: 3))
            }
            let accounts =
                try db.fetchOne(Int.self, sql: "SELECT count(DISTINCT owner) FROM serialdb_sync_row WHERE owner <> ''")
                ?? 0
            return SyncStoreSummary(tables: tables, accounts: accounts)
        }
    }

    /// Waits for the work in progress and closes the database.
    public func close() throws {
        try database.close()
    }
}

/// Thrown to stop reading a page that is full.
private struct PageFull: Error {}

/// The statements that keep `serialdb_sync_unique`.
private struct UniqueStatements {
    /// The key that holds (table, owner, value).
    let find: Statement
    /// Drops every value a key holds.
    let release: Statement
    /// Records that a key holds a value.
    let hold: Statement

    init(_ db: Database) throws {
        find = try db.cachedStatement(
            sql: "SELECT key FROM serialdb_sync_unique WHERE table_name = ? AND owner = ? AND value = ?")
        release = try db.cachedStatement(
            sql: "DELETE FROM serialdb_sync_unique WHERE table_name = ? AND owner = ? AND key = ?")
        hold = try db.cachedStatement(
            sql: "INSERT INTO serialdb_sync_unique(table_name, owner, value, key) VALUES (?, ?, ?, ?)")
    }
}

/// A whole row of `serialdb_sync_row`.
private struct StoredRow: RowDecodable {
    let row: SyncStoredRow

    init(row: Row) throws {
        self.row = SyncStoredRow(
            owner: try row.decode(at: 0), key: try row.decode(at: 1), version: try row.decode(at: 2),
            deleted: try row.decode(at: 3), rowJSON: try row.decode(at: 4))
    }
}

/// A row of `serialdb_sync_row` as a change.
private struct StoredChange: RowDecodable {
    let change: SyncEncodedChange

    init(row: Row) throws {
        change = SyncEncodedChange(
            version: try row.decode(at: 0), deleted: try row.decode(at: 1), rowJSON: try row.decode(at: 2))
    }
}

/// A remembered upload result.
private struct StoredResult: RowDecodable {
    let record: SyncUploadOutcome.Record

    init(row: Row) throws {
        record = SyncUploadOutcome.Record(
            status: try row.decode(at: 0), version: try row.decode(at: 1), deleted: try row.decode(at: 2),
            row: try row.decode(at: 3), message: try row.decode(at: 4))
    }

    func result() throws -> SyncUploadOutcome { try SyncUploadOutcome.stored(record) }
}
