import Foundation
import SerialDB
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// Every statement the SQLite store runs for uploads (new rows, changes, deletes, unique
/// values, retries), fetches, check-updates and purges reaches its rows through the index
/// meant for it, on a store of 100,000 rows over a thousand owners, before and after ANALYZE
/// (which lets SQLite weigh the sizes). The statements are the ones the store really runs, with
/// their values, as its connection traces them; a statement that reads a whole sync table, or
/// one of the expected statements no longer run, fails the test.
@Suite(.timeLimit(.minutes(5))) struct SQLitePlanTests {
    /// A statement the store must run, told by a piece of its SQL, and the index and the
    /// constraints a SEARCH of its plan must name (`INDEX name (column=? ...)` or `PRIMARY KEY (...)`).
    private struct Expectation {
        let sql: String
        let plan: String
    }

    private static let rows = 100_000

    private static let expectations = [
        // fetch-data: the owner's rows above the cursor, in version order, from the index.
        Expectation(
            sql: "ORDER BY version LIMIT",
            plan: "INDEX serialdb_sync_row_by_version (table_name=? AND owner=? AND version>?)"),
        // check-update: the owner's highest version, the last entry of the index.
        Expectation(
            sql: "SELECT max(version) FROM serialdb_sync_row",
            plan: "INDEX serialdb_sync_row_by_version (table_name=? AND owner=?)"),
        // An upload: each key's state, each retried seq's result, the client's mark, unique values.
        Expectation(
            sql: "SELECT version, deleted, row FROM serialdb_sync_row WHERE table_name = ",
            plan: "INDEX sqlite_autoindex_serialdb_sync_row_1 (table_name=? AND owner=? AND key=?)"),
        Expectation(
            sql: "FROM serialdb_sync_applied\nWHERE account",
            plan: "PRIMARY KEY (account=? AND client_id=? AND seq=?)"),
        Expectation(
            sql: "SELECT highest_seq FROM serialdb_sync_client",
            plan: "PRIMARY KEY (account=? AND client_id=?)"),
        Expectation(
            sql: "SELECT key FROM serialdb_sync_unique",
            plan: "PRIMARY KEY (table_name=? AND owner=? AND value=?)"),
        Expectation(
            sql: "DELETE FROM serialdb_sync_unique WHERE table_name = ",
            plan: "INDEX serialdb_sync_unique_by_key (table_name=? AND owner=? AND key=?)"),
        // The purges: tombstones up to the floor, results older than the window.
        Expectation(
            sql: "DELETE FROM serialdb_sync_row WHERE deleted",
            plan: "INDEX serialdb_sync_tombstone (version<?)"),
        Expectation(
            sql: "DELETE FROM serialdb_sync_applied WHERE recorded_at",
            plan: "INDEX serialdb_sync_applied_by_age (recorded_at<?)"),
    ]

    @Test func everyStatementOfTheSQLiteStoreUsesItsIndexOnALargeStoreWithAndWithoutStatistics() throws {
        let directory = try TemporaryDirectory()
        let traced = Locked<[String]?>(nil)
        let store = try SQLiteSyncStore(
            path: directory.path("server.sqlite"), clock: { Date() },
            trace: { sql in traced.withLock { $0?.append(sql) } })
        defer { try? store.close() }
        let service = try SyncService(configuration: try SyncFixtures.constrained(), store: store)
        try fill(store)
        for analyzed in [false, true] {
            if analyzed { try store.database.write { db in try db.execute(sql: "ANALYZE") } }
            traced.withLock { $0 = [] }
            try exercise(service, store: store, round: analyzed ? 2 : 1)
            let statements = Set(
                traced.withLock { recorded in
                    defer { recorded = nil }
                    return recorded ?? []
                })
            try expectIndexedPlans(of: statements, in: store, stage: analyzed ? "after ANALYZE" : "without statistics")
        }
    }

    /// Rows of `person` over a thousand owners, each holding a unique e-mail, one remembered
    /// result each, and a mark per owner: straight into the store's tables.
    private func fill(_ store: SQLiteSyncStore) throws {
        let series = """
            WITH RECURSIVE g(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM g WHERE v < \(Self.rows))

            """
        try store.database.write { db in
            try db.execute(
                sql: series + """
                    INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row)
                    SELECT 'person', 'acct' || (v % 1000), '[' || v || ']', v, v % 10 = 0,
                           '{"id":' || v || ',"email":"p' || v || '@example.com","nick":null,"code":null,"score":null}'
                    FROM g
                    """)
            try db.execute(
                sql: series + """
                    INSERT INTO serialdb_sync_unique(table_name, owner, value, key)
                    SELECT 'person', 'acct' || (v % 1000), '["p' || v || '@example.com"]', '[' || v || ']' FROM g
                    """)
            try db.execute(
                sql: series + """
                    INSERT INTO serialdb_sync_applied(account, client_id, seq, status, version, recorded_at)
                    SELECT 'acct' || (v % 1000), 'device', v, 'applied', v, v FROM g
                    """)
            try db.execute(
                sql: series + """
                    INSERT INTO serialdb_sync_client(account, client_id, highest_seq)
                    SELECT 'acct' || (v % 1000), 'device', max(v) FROM g GROUP BY 1
                    """)
            try db.execute(sql: "UPDATE serialdb_sync_state SET version = ?", arguments: [Self.rows])
        }
    }

    /// Uploads (a new row, a change of it, a retry, a delete), fetches, a check-update and
    /// both purges, through the service as a request from alice.
    private func exercise(_ service: SyncService, store: SQLiteSyncStore, round: Int) throws {
        func call(_ path: String, _ body: String) throws -> JSONValue {
            let response = service.handle(
                SyncRequest(method: "POST", path: path, authorization: "Bearer t-alice", body: Data(body.utf8)))
            #expect(response.status == 200, "\(path): \(String(decoding: response.body, as: UTF8.self))")
            return try JSONValue.parse(response.body)
        }
        let client = "plan-\(round)"
        let row = #"{"id": \#(round), "email": "alice\#(round)@example.com", "nick": "a\#(round)"}"#
        let first = try call(
            "/v1/post-data", #"{"client_id": "\#(client)", "mutations": [\#(upsert(1, "person", row))]}"#)
        let version = first.objectValue?["results"]?.arrayValue?.first?.objectValue?["version"]?.integerValue ?? 0
        #expect(version > 0, "the new row was applied")
        let changed = #"{"id": \#(round), "email": "alice\#(round)@example.org", "nick": "a\#(round)"}"#
        let change = upsert(2, "person", changed, base: version)
        _ = try call("/v1/post-data", #"{"client_id": "\#(client)", "mutations": [\#(change)]}"#)
        // The retry of both is answered from the remembered results.
        _ = try call(
            "/v1/post-data",
            #"{"client_id": "\#(client)", "mutations": [\#(upsert(1, "person", row)), \#(change)]}"#)
        let deletion = delete(3, "person", #"{"id": \#(round)}"#, base: version + 1)
        _ = try call("/v1/post-data", #"{"client_id": "\#(client)", "mutations": [\#(deletion)]}"#)
        _ = try call("/v1/check-update", #"{"tables": [{"table": "person", "struct_version": 1, "version": 0}]}"#)
        _ = try call("/v1/fetch-data", #"{"table": "person", "since": 0}"#)
        _ = try call("/v1/fetch-data", #"{"table": "person", "since": \#(Self.rows - 50)}"#)
        _ = try store.purgeTombstones(through: 20)
        _ = try store.purgeResults(olderThan: Date().timeIntervalSince1970 - 20)
    }

    private func expectIndexedPlans(of statements: Set<String>, in store: SQLiteSyncStore, stage: String) throws {
        var seen = Set<String>()
        for sql in statements.sorted() where sql.contains("serialdb_sync_") {
            // In a write block: SerialDB refuses a statement that would write (EXPLAIN runs nothing).
            let plan = try store.database.write { db in
                try db.fetchAll(Row.self, sql: "EXPLAIN QUERY PLAN " + sql).map { row -> String in
                    try row.decode(at: 3)
                }
            }
            let context = Comment(rawValue: "\(stage):\n\(sql)\n" + plan.joined(separator: "\n"))
            for table in ["serialdb_sync_row", "serialdb_sync_applied", "serialdb_sync_unique", "serialdb_sync_client"]
            {
                #expect(!plan.contains { $0.hasPrefix("SCAN \(table)") }, context)
            }
            for expectation in Self.expectations where sql.contains(expectation.sql) {
                seen.insert(expectation.sql)
                #expect(plan.contains { $0.hasPrefix("SEARCH ") && $0.contains(expectation.plan) }, context)
            }
        }
        for expectation in Self.expectations where !seen.contains(expectation.sql) {
            Issue.record("\(stage): the store ran no statement with `\(expectation.sql)`; ran:\n\(statements.sorted())")
        }
    }
}
