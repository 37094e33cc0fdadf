import SerialDB

/// Brings one table to the definition the server serves, through SerialDB's declarative
/// schema change, without the app restating its schema.
///
/// The core plans against a whole schema, so the desired schema is the live one (every app
/// object; SerialDB's `serialdb_…` objects are never part of it) with this table and its
/// indexes replaced by the server's statements. The plan, the new `TableVersion` row (its
/// cursor back to 0, so the table is fetched again from the start) and the outbox triggers
/// (a rebuild drops them with the old table) commit in one transaction, or not at all.
enum TableSchemaChange {
    /// Applies the definition, or reports why it is refused (nothing changed then).
    ///
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
                let desired = try desiredSchema(db, replacing: table.table, with: schema.schema)
                let plan = try db.planSchemaChange(to: desired)
                guard !plan.isRefused else { throw Refusal(reasons: plan.refusals) }
                try db.applySchemaChange(plan)
                change.steps = plan.steps.map(\.summary)
                let synced = try SyncedTable(db, name: table.table)
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
        } catch let error as SerialDBError where error.code == .schemaChangeRefused {
            change.refusals = [error.description]
        }
        return change
    }

    private struct Refusal: Error {
        var reasons: [String]
    }

    /// The live app schema with `table` and its indexes replaced by `sql`: other tables first
    /// (so the new table's foreign keys and the views find them), then the new statements,
    /// then the other indexes, triggers and views.
    static func desiredSchema(_ db: Database, replacing table: String, with sql: String) throws -> String {
        let live = try db.schema()
        let lowered = table.lowercased()
        var statements = live.tables.filter { $0.name.lowercased() != lowered }.map(\.sql)
        statements.append(sql)
        statements += live.indexes.filter { $0.tableName.lowercased() != lowered }.map(\.sql)
        statements += (live.triggers + live.views).map(\.sql)
        return statements.joined(separator: ";\n") + ";"
    }
}
