import SerialDB
import SerialDBSyncWire

/// Brings one table to the definition the server serves, through SerialDB's declarative
/// schema change, without the app restating its schema.
///
/// The core plans against a whole schema, so the desired schema is the live one (every app
/// object; SerialDB's `serialdb_…` objects are never part of it) with this table and its
/// indexes replaced by the server's statements. The plan, the new `TableVersion` row (its
/// cursor back to 0, so the table is fetched again from the start) and the outbox triggers
/// (a rebuild drops them with the old table) commit in one transaction, or not at all.
///
/// The server is the authority for the definition, so its intent is applied: a table or
/// columns it renamed are renamed here with their rows and sync state, and columns it dropped
/// from a table this device already synced are dropped here too. Values those columns held
/// in rows with unsent changes are listed in the change (``SyncSchemaChange/droppedValues``).
enum TableSchemaChange {
    /// Applies the definition, or reports why it is refused (nothing changed then).
    ///
    /// - Parameter previous: the table's `TableVersion` row, or the row under its old name when
    ///   the server renamed it (`schema.renamedFrom`); `nil` for a table new to this device.
    /// - Throws: errors other than a refusal (I/O, a table without primary key...); the
    ///   database is left as it was.
    static func apply(
        _ db: Database, table: CheckUpdateResponse.Table, schema: FetchSchemaResponse,
        previous: SyncMetadata.TableState?
    ) throws -> SyncSchemaChange {
        var change = SyncSchemaChange(
            table: table.table, fromStructVersion: previous?.structVersion, toStructVersion: schema.structVersion,
            steps: [], refusals: [])
        do {
            try db.inSchemaChangeTransaction { db in
                let renamedFrom = previous.map(\.table).flatMap { $0 == table.table ? nil : $0 }
                let source = try renamedFrom.flatMap { try db.tableExists($0) ? $0 : nil } ?? table.table
                var options = SchemaChangeOptions()
                let targetExists = try db.tableExists(table.table)
                if source != table.table && !targetExists {
                    options.renameTable(source, to: table.table)
                }
                if let renamedFrom {
                    // The triggers carry the old name; new ones are made below.
                    try ChangeCapture.remove(db, table: renamedFrom)
                }
                let sourceColumns = try db.tableExists(source) ? try SyncedTable(db, name: source).columns : []
                let hasColumn = { (name: String) in sourceColumns.contains { $0.name.lowercased() == name.lowercased() }
                }
                for (new, old) in schema.renamedColumns where hasColumn(old) && !hasColumn(new) {
                    options.renameColumn(old, to: new, inTable: table.table)
                }
                if previous != nil {
                    let dropped = try droppedColumns(
                        db, source: source, sourceColumns: sourceColumns.map(\.name), schema: schema, options: options)
                    for column in dropped {
                        options.allowDropping(column: column, inTable: source)
                    }
                    change.droppedValues = try unsentValues(
                        db, table: table.table, source: source, sideTableName: previous?.table ?? table.table,
                        columns: dropped)
                }
                let desired = try desiredSchema(db, replacing: [table.table, source], with: schema.schema)
                let plan = try db.planSchemaChange(to: desired, options: options)
                guard !plan.isRefused else { throw Refusal(reasons: plan.refusals) }
                try db.applySchemaChange(plan)
                change.steps = plan.steps.map(\.summary)
                let synced = try SyncedTable(db, name: table.table)
                if let renamedFrom {
                    try moveSyncState(db, from: renamedFrom, to: synced.name)
                }
                if renamedFrom != nil || !options.columnRenames.isEmpty || !options.allowedDrops.isEmpty {
                    try rewriteSentMutations(db, of: synced, renamedColumns: schema.renamedColumns)
                }
                try db.execute(
                    sql: """
                        INSERT INTO TableVersion(TableName, OwnerType, Owner, StructVersion, Version)
                        VALUES (?, ?, ?, ?, 0)
                        ON CONFLICT(TableName) DO UPDATE SET OwnerType = excluded.OwnerType, Owner = excluded.Owner,
                            StructVersion = excluded.StructVersion, Version = 0
                        """, arguments: [table.table, table.scope, table.owner, schema.structVersion])
                if table.scope == "account" {
                    change.capturedRows = try ChangeCapture.install(db, table: synced)
                } else {
                    // Global tables are written by no client: nothing to capture.
                    try ChangeCapture.remove(db, table: table.table)
                }
            }
        } catch let refusal as Refusal {
            change.refusals = refusal.reasons
            change.droppedValues = []
            change.capturedRows = 0
        } catch let error as SerialDBError where error.code == .schemaChangeRefused {
            change.refusals = [error.description]
            change.droppedValues = []
            change.capturedRows = 0
        }
        return change
    }

    private struct Refusal: Error {
        var reasons: [String]
    }

    /// The live app schema with the `tables` and their indexes replaced by `sql`: other tables
    /// first (so the new table's foreign keys and the views find them), then the new
    /// statements, then the virtual tables (a full-text index of the app's is kept, not
    /// dropped as absent), the other indexes, triggers and views.
    static func desiredSchema(_ db: Database, replacing tables: Set<String>, with sql: String) throws -> String {
        let live = try db.schema()
        let lowered = Set(tables.map { $0.lowercased() })
        var statements = live.tables.filter { !lowered.contains($0.name.lowercased()) }.map(\.sql)
        statements.append(sql)
        statements += live.virtualTables.filter(\.isManaged).map(\.sql)
        statements += live.indexes.filter { !lowered.contains($0.tableName.lowercased()) }.map(\.sql)
        statements += (live.triggers + live.views).map(\.sql)
        return statements.joined(separator: ";\n") + ";"
    }

    /// Columns of the local table that the server's definition no longer has (renames
    /// accounted for). Read from the definition created in a scratch in-memory database; a
    /// definition that does not run there alone drops nothing (the plan then says why).
    private static func droppedColumns(
        _ db: Database, source: String, sourceColumns: [String], schema: FetchSchemaResponse,
        options: SchemaChangeOptions
    ) throws -> [String] {
        guard !sourceColumns.isEmpty else { return [] }
        let scratch = try Database(path: ":memory:")
        guard (try? scratch.execute(sql: schema.schema)) != nil,
            let desired = try DatabaseSchema(scratch).table(named: schema.table)
        else { return [] }
        let renamedAway = Set(
            schema.renamedColumns.values.map { $0.lowercased() }.filter { old in
                sourceColumns.contains { $0.lowercased() == old }
            })
        return sourceColumns.filter { desired.column(named: $0) == nil && !renamedAway.contains($0.lowercased()) }
    }

    /// The non-NULL values of `columns` in rows with unsent changes: dropping the columns loses them.
    private static func unsentValues(
        _ db: Database, table: String, source: String, sideTableName: String, columns: [String]
    ) throws -> [SyncDroppedValue] {
        guard !columns.isEmpty else { return [] }
        let local = try SyncedTable(db, name: source)
        let key = CanonicalKey.expression(columns: local.primaryKey, prefix: "local.")
        var values: [SyncDroppedValue] = []
        for column in columns {
            let rows = try db.fetchAll(
                Row.self,
                sql: """
                    SELECT DISTINCT outbox.key, local.\(column.quotedDatabaseIdentifier)
                    FROM \(source.quotedDatabaseIdentifier) AS local
                    JOIN serialdb_sync_outbox AS outbox ON outbox.table_name = ? AND outbox.key = \(key)
                    WHERE local.\(column.quotedDatabaseIdentifier) IS NOT NULL ORDER BY outbox.key
                    """, arguments: [sideTableName])
            for row in rows {
                let keyValues = CanonicalKey.parse(try row.decode(String.self, at: 0)) ?? []
                values.append(
                    SyncDroppedValue(
                        table: table, key: Dictionary(uniqueKeysWithValues: zip(local.primaryKey, keyValues)),
                        column: column, value: row[1]))
            }
        }
        return values
    }

    /// Moves the sync state of a table the server renamed to its new name: known versions,
    /// outbox, resync, `TableVersion` and the trigger registration.
    private static func moveSyncState(_ db: Database, from old: String, to new: String) throws {
        for sideTable in ["serialdb_sync_row", "serialdb_sync_outbox", "serialdb_sync_seen", "serialdb_sync_resync"] {
            try db.execute(sql: "UPDATE \(sideTable) SET table_name = ? WHERE table_name = ?", arguments: [new, old])
        }
        try db.execute(sql: "DELETE FROM TableVersion WHERE TableName = ?", arguments: [old])
        try db.execute(sql: "DELETE FROM serialdb_sync_table WHERE name = ?", arguments: [new])
        try db.execute(sql: "UPDATE serialdb_sync_table SET name = ? WHERE name = ?", arguments: [new, old])
    }

    /// Rewrites the mutations sent without an answer in the table's new names: its own, its
    /// renamed columns (`renamedColumns`: new → old), without the columns it no longer has. A
    /// retry of a seq the server already applied gets its first result whatever the body; one
    /// the server never received must fit the definition it now serves.
    private static func rewriteSentMutations(
        _ db: Database, of table: SyncedTable, renamedColumns: [String: String]
    ) throws {
        let newNames = Dictionary(
            renamedColumns.map { ($1.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        func rewritten(_ row: [String: SyncValue]) -> [String: SyncValue] {
            var result: [String: SyncValue] = [:]
            for (name, value) in row {
                if let column = table.column(named: newNames[name.lowercased()] ?? name) {
                    result[column.name] = value
                }
            }
            return result
        }
        // The table's entries sent without an answer (moved to its new name already), and the
        // kept batches that hold them. The sent entries are the outbox's first: found by seq,
        // not among the table's unsent ones.
        let seqs = Set(
            try db.fetchAll(
                Int64.self,
                sql: """
                    SELECT seq FROM serialdb_sync_outbox
                    WHERE seq <= \(SyncMetadata.sentThroughSQL) AND +table_name = ?
                    """,
                arguments: [table.name]))
        guard !seqs.isEmpty else { return }
        for kept in try db.fetchAll(Row.self, sql: "SELECT first_seq, mutations FROM serialdb_sync_sent") {
            let first: Int64 = try kept.decode(at: 0)
            var rewrote = false
            var writer = JSONWriter(capacity: 4096)
            writer.raw("[")
            for (index, element) in try (JSONValue.parse(try kept.decode(String.self, at: 1).utf8).arrayValue ?? [])
                .enumerated()
            {
                var mutation = try SyncMutation(json: element, context: "upload \(first)")
                if seqs.contains(mutation.seq) {
                    rewrote = true
                    mutation.table = table.name
                    mutation.row = mutation.row.map(rewritten)
                    mutation.key = mutation.key.map(rewritten)
                }
                if index > 0 { writer.raw(",") }
                try mutation.write(to: &writer)
            }
            writer.raw("]")
            guard rewrote else { continue }  // a batch of other tables only
            try db.execute(
                sql: "UPDATE serialdb_sync_sent SET mutations = ? WHERE first_seq = ?",
                arguments: [writer.string, first])
        }
    }

    /// Stops syncing a table the server no longer serves: its triggers and sync state go, its
    /// local table and rows stay. Unsent changes leave the outbox and are returned as
    /// rejections; mutations sent without an answer stay, so that their retry gets its answer.
    static func stopSyncing(_ db: Database, table name: String) throws -> [SyncRejection] {
        try ChangeCapture.remove(db, table: name)
        let primaryKey = (try? SyncedTable(db, name: name))?.primaryKey ?? []
        let unsent = try db.fetchAll(
            Row.self,
            sql: """
                SELECT key, op FROM serialdb_sync_outbox WHERE table_name = ? AND \(ChangeCapture.unsent) ORDER BY seq
                """,
            arguments: [name])
        let rejected = try unsent.map { entry in
            SyncRejection(
                table: name,
                key: Dictionary(
                    uniqueKeysWithValues: zip(
                        primaryKey, CanonicalKey.parse(try entry.decode(String.self, at: 0)) ?? [])),
                operation: try entry.decode(String.self, at: 1) == "delete" ? .delete : .upsert,
                message:
                    "not sent: the server no longer syncs table \(JSONWriter.quoted(name)); the local table and "
                    + "its rows are kept, unsynced")
        }
        try db.execute(
            sql: "DELETE FROM serialdb_sync_outbox WHERE table_name = ? AND \(ChangeCapture.unsent)", arguments: [name])
        for sideTable in ["serialdb_sync_row", "serialdb_sync_seen", "serialdb_sync_resync"] {
            try db.execute(sql: "DELETE FROM \(sideTable) WHERE table_name = ?", arguments: [name])
        }
        try db.execute(sql: "DELETE FROM TableVersion WHERE TableName = ?", arguments: [name])
        return rejected
    }
}
