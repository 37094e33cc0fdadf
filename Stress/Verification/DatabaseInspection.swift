import SerialDB

/// A database file examined the way an application restarting after a crash would find it:
/// opened afresh through the default VFS (which replays or discards the WAL), then checked.
struct DatabaseInspection: Sendable {
    let integrity: [String]
    let foreignKeyViolations: Int
    let appliedSteps: [String]
    let schema: SchemaSnapshot
    let items: [StoredItem]

    var isIntact: Bool { integrity == ["ok"] }

    /// Opens `path` with a new queue and reads everything the checks need.
    static func inspect(path: String) throws -> DatabaseInspection {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.inDatabase { db in
            DatabaseInspection(
                integrity: try db.fetchAll(String.self, sql: "PRAGMA integrity_check"),
                foreignKeyViolations: try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check").count,
                appliedSteps: try UpgradePlan().migrator().appliedMigrations(db),
                schema: try SchemaSnapshot.read(db),
                items: try StoredItem.readAll(db))
        }
    }

    /// The committed step the database is at (1-based), or `nil` when it is in between: the
    /// recorded steps must be exactly the plan's first N and the schema exactly step N's.
    func committedStep(_ expected: ExpectedSchemas) -> Int? {
        let count = appliedSteps.count
        guard count >= 1, count <= UpgradePlan.identifiers.count,
            appliedSteps == Array(UpgradePlan.identifiers.prefix(count)),
            expected.snapshots[count - 1] == schema
        else { return nil }
        return count
    }

    /// Why `committedStep` found no step, for the report.
    func describeMismatch(_ expected: ExpectedSchemas) -> String {
        let count = appliedSteps.count
        guard count >= 1, count <= UpgradePlan.identifiers.count else {
            return "recorded steps: \(appliedSteps)"
        }
        let wanted = expected.snapshots[count - 1].entries
        let extra = schema.entries.filter { !wanted.contains($0) }.map(\.description)
        let missing = wanted.filter { !schema.entries.contains($0) }.map(\.description)
        return "recorded steps \(appliedSteps); unexpected: \(extra); missing: \(missing)"
    }
}
