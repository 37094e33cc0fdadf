import Foundation
import PostgresHarness
import SerialDB
import SerialDBSyncServer

/// A store of the scale series, and how it is grown: rows go straight into the store's own
/// tables by SQL (a million uploads through HTTP would take the series an hour), shaped exactly
/// as the store writes them, each with the upload result a client's request would have left
/// within the retention window, and the counter moved past them. Only the growing bypasses the
/// server; everything measured goes through it.
struct ScaleStore {
    /// Which store.
    let kind: SyncSide.Store
    /// The store the server runs on.
    let store: any SyncStore
    /// Where a PostgreSQL store lives, to grow it on a session of its own.
    private let postgresURL: String?

    /// A new, empty store: a file in `directory`, or a fresh database on ``ScratchPostgres``'s server.
    init(_ kind: SyncSide.Store, in directory: String) throws {
        self.kind = kind
        switch kind {
        case .sqlite:
            store = try SQLiteSyncStore(path: directory + "/scale.sqlite")
            postgresURL = nil
        case .postgres:
            let url = try ScratchPostgres.makeDatabase(prefix: "serialdb_scale")
            store = try PostgresSyncStore(url: url)
            postgresURL = url
        }
    }

    /// The name the table and the chart give the store.
    var name: String { kind == .postgres ? "PostgreSQL" : "SQLite" }

    /// Adds the rows with versions `versions` to table `t`: row `v` has key `[v]` and belongs to
    /// `acct(v % accounts)`, or to `owner` when one is given; the counter ends at the last version.
    func grow(versions: ClosedRange<Int>, accounts: Int, owner: String? = nil) throws {
        switch kind {
        case .sqlite: try growSQLite(versions: versions, accounts: accounts, owner: owner)
        case .postgres: try growPostgres(versions: versions, accounts: accounts, owner: owner)
        }
    }

    private func growSQLite(versions: ClosedRange<Int>, accounts: Int, owner: String?) throws {
        guard let database = (store as? SQLiteSyncStore)?.database else {
            throw BenchError.setup("not an SQLite store")
        }
        let now = Int64(Date().timeIntervalSince1970)
        let series = """
            WITH RECURSIVE g(v) AS (SELECT ?1 UNION ALL SELECT v + 1 FROM g WHERE v < ?2),
                 o(v, owner) AS (SELECT v, coalesce(?3, 'acct' || (v % ?4)) FROM g)

            """
        let arguments: StatementArguments = [versions.lowerBound, versions.upperBound, owner, accounts]
        let withTime: StatementArguments = [versions.lowerBound, versions.upperBound, owner, accounts, now]
        try database.write { db in
            try db.execute(
                sql: series + """
                    INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row)
                    SELECT 't', owner, '[' || v || ']', v, 0,
                           '{"id":' || v || ',"a":' || v || ',"b":"row-' || v || '","c":' || (v * 0.5) || '}'
                    FROM o
                    """, arguments: arguments)
            try db.execute(
                sql: series + """
                    INSERT INTO serialdb_sync_applied(account, client_id, seq, status, version, recorded_at)
                    SELECT owner, 'device', v, 'applied', v, ?5 FROM o
                    """, arguments: withTime)
            try db.execute(
                sql: series + """
                    INSERT INTO serialdb_sync_client(account, client_id, highest_seq)
                    SELECT owner, 'device', max(v) FROM o WHERE true GROUP BY owner
                    ON CONFLICT (account, client_id) DO UPDATE SET highest_seq = max(highest_seq, excluded.highest_seq)
                    """, arguments: arguments)
            try db.execute(
                sql: "UPDATE serialdb_sync_state SET version = max(version, ?)", arguments: [versions.upperBound])
        }
    }

    private func growPostgres(versions: ClosedRange<Int>, accounts: Int, owner: String?) throws {
        guard let url = postgresURL else { throw BenchError.setup("not a PostgreSQL store") }
        let session = try ScratchPostgresSession(url: url)
        // Numbers only are written into the SQL; the one text (the owner) is a constant of the bench.
        let ownerExpression = owner.map { "'\($0)'" } ?? "'acct' || (v % \(accounts))"
        let series = """
            FROM (SELECT v, \(ownerExpression) AS owner
                  FROM generate_series(\(versions.lowerBound)::bigint, \(versions.upperBound)::bigint) AS v) AS o
            """
        try session.query(
            """
            BEGIN;
            INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row_json)
            SELECT 't', owner, '[' || v || ']', v, false,
                   '{"id":' || v || ',"a":' || v || ',"b":"row-' || v || '","c":' || (v * 0.5) || '}'
            \(series);
            INSERT INTO serialdb_sync_applied(account, client_id, seq, status, version, recorded_at)
            SELECT owner, 'device', v, 'applied', v, extract(epoch FROM now())::bigint \(series);
            INSERT INTO serialdb_sync_client(account, client_id, highest_seq)
            SELECT owner, 'device', max(v) \(series) GROUP BY owner
            ON CONFLICT (account, client_id)
            DO UPDATE SET highest_seq = greatest(serialdb_sync_client.highest_seq, excluded.highest_seq);
            UPDATE serialdb_sync_state SET version = greatest(version, \(versions.upperBound)) WHERE id = 1;
            COMMIT;
            """)
        // What autovacuum does after a bulk load, done now so that every run plans alike; and
        // the checkpoint the load's WAL would trigger, so that it does not run during the timings.
        try session.query("VACUUM ANALYZE")
        try session.query("CHECKPOINT")
    }

    func close() throws {
        try store.close()
    }
}
