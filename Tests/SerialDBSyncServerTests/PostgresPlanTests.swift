import Foundation
import Testing

@testable import SerialDBSyncServer

/// Every statement an upload or a fetch runs on PostgreSQL reaches the rows through an index,
/// on a store of a million rows, under the plan PostgreSQL builds for the values at hand (a
/// custom plan) and under the one it falls back to after a few executions (a generic plan,
/// which knows neither the values nor how many the arrays hold). A hash join over a sequential
/// scan of the rows makes an upload's cost grow with the store instead of with the upload.
/// The purges (tombstones, expired results) are checked too. Left out: the statements that
/// carry a table into a new definition at start, which read all of that table's rows by design.
@Suite(.timeLimit(.minutes(5))) struct PostgresPlanTests {
    /// A statement, harmless values that prepare it, and values to plan it with.
    private struct Case {
        let statement: PostgresStatement
        /// Executed once, to prepare the statement in the session: changes nothing.
        let prepare: [String?]
        /// The arguments of `EXPLAIN EXECUTE`, as SQL literals.
        let explain: [String]
        /// The index the plan must use; `nil` for the one-row state table, read by a scan.
        let index: String?
        /// What an `Index Cond` of the plan must hold: the lookup goes down to the row, instead
        /// of reading a range and filtering it.
        var condition: String? = nil
        /// Checked only once the statistics describe the rows: the purge of expired results,
        /// run by an operator, not by an upload or a fetch, reads a table PostgreSQL still
        /// believes empty sequentially, as it should, and autovacuum's ANALYZE soon follows
        /// any growth.
        var analyzedOnly = false
    }

    /// The stores planned against: 20,000 rows (where a hash join first looks cheaper) with the
    /// statistics of the empty store, then with their own, then a million rows.
    private static let stages: [(rows: Int, analyze: Bool)] = [(20_000, false), (20_000, true), (1_000_000, true)]
    private static let uploadRows = 2_000

    /// A text array literal, quoted for SQL.
    private static func array(_ values: [String]) -> String {
        "'\(PostgresArray.text(values))'"
    }

    private static func cases(keys: Int) -> [Case] {
        let tables = array(Array(repeating: "note", count: keys))
        let owners = array(Array(repeating: "acct7", count: keys))
        let newKeys = array((0..<keys).map { "new\($0)" })
        let values = array((0..<keys).map { #"["title \#($0)"]"# })
        let seqs = "'\(PostgresArray.bigint((0..<keys).map { Int64($0) + 1 }))'"
        let versions = "'\(PostgresArray.bigint((0..<keys).map { Int64($0) + 2_000_000 }))'"
        let flags = "'\(PostgresArray.boolean(Array(repeating: false, count: keys)))'"
        let rows = array((0..<keys).map { #"{"id":"new\#($0)"}"# })
        let texts = array(Array(repeating: "applied", count: keys))
        let nulls = "'\(PostgresArray.text(Array(repeating: nil, count: keys)))'"
        let none = PostgresArray.text([])
        return [
            Case(
                statement: PostgresSyncStore.findApplied, prepare: ["a", "c", PostgresArray.bigint([])],
                explain: ["'acct7'", "'client'", seqs], index: "serialdb_sync_applied_pkey",
                condition: "(seq = s.seq)"),
            Case(
                statement: PostgresSyncStore.findCurrent, prepare: [none, none, none],
                explain: [tables, owners, newKeys], index: "serialdb_sync_row_pkey",
                condition: "(key = k.key)"),
            Case(
                statement: PostgresSyncStore.findUnique, prepare: [none, none, none, none, none, none],
                explain: [tables, owners, values, tables, owners, newKeys], index: "serialdb_sync_unique_value",
                condition: "(md5(value) = md5(v.value))"),
            Case(
                statement: PostgresSyncStore.findUnique, prepare: [none, none, none, none, none, none],
                explain: [tables, owners, values, tables, owners, newKeys], index: "serialdb_sync_unique_by_key",
                condition: "(md5(key) = md5(k.key))"),
            Case(
                statement: PostgresSyncStore.releaseUnique, prepare: [none, none, none],
                explain: [tables, owners, newKeys], index: "serialdb_sync_unique_by_key",
                condition: "(md5(key) = md5(k.key))"),
            Case(
                statement: PostgresSyncStore.holdUnique, prepare: [none, none, none, none],
                explain: [tables, owners, values, newKeys], index: nil),
            Case(
                statement: PostgresSyncStore.writeRows,
                prepare: [
                    none, none, none, PostgresArray.bigint([]), PostgresArray.boolean([]), none,
                ],
                explain: [tables, owners, newKeys, versions, flags, rows], index: "serialdb_sync_row_pkey"),
            Case(
                statement: PostgresSyncStore.recordApplied,
                prepare: [
                    "a", "c", PostgresArray.bigint([]), none, PostgresArray.bigint([]), PostgresArray.boolean([]),
                    none, none, "0",
                ],
                explain: ["'acct7'", "'client'", seqs, texts, versions, flags, nulls, nulls, "'0'"], index: nil),
            Case(
                statement: PostgresSyncStore.lockForUpload, prepare: ["a", "c"], explain: ["'acct7'", "'client'"],
                index: "serialdb_sync_client_pkey", condition: "(client_id = "),
            Case(
                statement: PostgresSyncStore.insertRows,
                prepare: [
                    none, none, none, PostgresArray.bigint([]), PostgresArray.boolean([]), none,
                ],
                explain: [tables, owners, newKeys, versions, flags, rows], index: nil),
            Case(
                statement: PostgresSyncStore.purge, prepare: ["0"], explain: ["'20'"],
                index: "serialdb_sync_tombstone"),
            Case(
                statement: PostgresSyncStore.purgeResults, prepare: ["0"], explain: ["'20'"],
                index: "serialdb_sync_applied_by_age", analyzedOnly: true),
            Case(
                statement: PostgresSyncStore.raiseHighest, prepare: ["a", "c", "0"],
                explain: ["'acct7'", "'client'", "'5'"], index: "serialdb_sync_client_pkey"),
            Case(statement: PostgresSyncStore.lockCounter, prepare: [], explain: [], index: nil),
            Case(statement: PostgresSyncStore.advanceCounter, prepare: ["0"], explain: ["0"], index: nil),
            Case(
                statement: PostgresSyncStore.page, prepare: ["none", "none", "0", "1", "1", "1"],
                explain: ["'note'", "'acct7'", "'900000'", "'501'", "'4194304'", "'40'"],
                index: "serialdb_sync_row_by_version"),
            Case(
                statement: PostgresSyncStore.page, prepare: ["none", "none", "0", "1", "1", "1"],
                explain: ["'note'", "'acct7'", "'0'", "'5001'", "'4194304'", "'40'"],
                index: "serialdb_sync_row_by_version"),
            Case(
                statement: PostgresSyncStore.latest, prepare: [none, none],
                explain: [tables, owners], index: "serialdb_sync_row_by_version"),
            Case(statement: PostgresSyncStore.purgeFloor, prepare: [], explain: [], index: nil),
        ]
    }

    @Test func everyUploadAndFetchStatementLooksItsRowsUpThroughAnIndexWhateverTheStoreSizeStatisticsAndPlan() throws {
        let url = try TestPostgres.makeDatabase()
        try PostgresSyncStore(url: url).close()
        let connection = try PostgresConnection(url: url)
        try connection.execute("ANALYZE")
        var filled = 0
        for (size, analyze) in Self.stages {
            // Rows over a thousand owners, each holding a unique value, and as many remembered
            // results; then (or not yet) the statistics autovacuum would gather.
            try connection.execute(
                """
                INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row_json)
                SELECT 'note', 'acct' || (g % 1000), 'k' || g, g, g % 10 = 0, '{"id":"k' || g || '"}'
                FROM generate_series(\(filled + 1), \(size)) AS g;
                INSERT INTO serialdb_sync_unique(table_name, owner, value, key)
                SELECT 'note', 'acct' || (g % 1000), '["t' || g || '"]', 'k' || g
                FROM generate_series(\(filled + 1), \(size)) AS g;
                INSERT INTO serialdb_sync_client(account, client_id, highest_seq)
                SELECT 'acct' || (g % 1000), 'client' || g, g FROM generate_series(\(filled + 1), \(size)) AS g;
                INSERT INTO serialdb_sync_applied(account, client_id, seq, status, version, recorded_at)
                SELECT 'acct' || (g % 1000), 'client', g, 'applied', g, g
                FROM generate_series(\(filled + 1), \(size)) AS g;
                UPDATE serialdb_sync_state SET version = \(size) WHERE id = 1
                """)
            if analyze { try connection.execute("ANALYZE") }
            filled = size
            try expectIndexedPlans(on: connection, analyzed: analyze, stage: "\(size) rows, analyzed: \(analyze)")
        }
    }

    private func expectIndexedPlans(on connection: PostgresConnection, analyzed: Bool, stage: String) throws {
        for mode in ["force_custom_plan", "force_generic_plan"] {
            try connection.execute("SET plan_cache_mode = \(mode)")
            for keys in [1, Self.uploadRows] {
                for planned in Self.cases(keys: keys) where analyzed || !planned.analyzedOnly {
                    try connection.run(planned.statement, planned.prepare)
                    let arguments = planned.explain.isEmpty ? "" : "(\(planned.explain.joined(separator: ", ")))"
                    let result = try connection.execute("EXPLAIN EXECUTE \(planned.statement.name)\(arguments)")
                    let plan = (0..<result.count).compactMap { result.string($0, 0) }.joined(separator: "\n")
                    let context = Comment(
                        rawValue: "\(planned.statement.name), \(mode), \(keys) keys, \(stage):\n\(plan)")
                    for table in [
                        "serialdb_sync_row", "serialdb_sync_unique", "serialdb_sync_applied", "serialdb_sync_client",
                    ] {
                        #expect(!plan.contains("Seq Scan on \(table)"), context)
                    }
                    if let index = planned.index {
                        #expect(
                            plan.contains("Index Scan using \(index) ")
                                || plan.contains("Bitmap Index Scan on \(index) ")
                                || plan.contains("Index Only Scan using \(index) ")
                                || plan.contains("Index Only Scan Backward using \(index) ")
                                || plan.contains("Index Scan Backward using \(index) ")
                                || plan.contains("Conflict Arbiter Indexes: \(index)"), context)
                    }
                    if let condition = planned.condition {
                        let lines = plan.split(separator: "\n")
                        #expect(lines.contains { $0.contains("Index Cond: ") && $0.contains(condition) }, context)
                    }
                }
            }
        }
    }
}
