import SerialDB

/// What each committed step of the plan leaves in `sqlite_master`: steps 1...N applied to an
/// empty in-memory database by the same migrator, so SQLite itself says what step N looks like.
struct ExpectedSchemas: Sendable {
    /// Index 0 is step 1.
    let snapshots: [SchemaSnapshot]

    init() throws {
        let migrator = UpgradePlan().migrator()
        snapshots = try UpgradePlan.identifiers.map { identifier in
            let queue = try DatabaseQueue()
            try queue.migrate(migrator, upTo: identifier)
            return try queue.inDatabase { db in try SchemaSnapshot.read(db) }
        }
    }
}
