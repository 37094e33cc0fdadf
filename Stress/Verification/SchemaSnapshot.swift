import SerialDB

/// The schema exactly as SQLite stores it: every row of `sqlite_master`, sorted. Two databases
/// at the same committed step have equal snapshots; a half-applied step cannot match any.
struct SchemaSnapshot: Equatable, Sendable {
    struct Entry: Equatable, Sendable, CustomStringConvertible {
        let type: String
        let name: String
        let table: String
        let sql: String?

        var description: String { "\(type) \(name) on \(table): \(sql ?? "(no SQL)")" }
    }

    let entries: [Entry]

    static func read(_ db: Database) throws -> SchemaSnapshot {
        var entries: [Entry] = []
        // An online copy left by a kill (its shadow table, triggers and bookkeeping), and the old
        // table a swap set aside and had not dropped yet, are SerialDB's own, beside the
        // application's schema: the next upgrade or open resumes or removes them.
        let ownCopy = "LIKE 'serialdb\\_online\\_%' ESCAPE '\\'"
        let shadow = "LIKE 'serialdb\\_new%' ESCAPE '\\'"
        let setAside = "LIKE 'serialdb\\_old\\_%' ESCAPE '\\'"
        let sql = """
            SELECT type, name, tbl_name, sql FROM sqlite_master
            WHERE NOT (name \(ownCopy) OR tbl_name \(ownCopy) OR name \(shadow) OR tbl_name \(shadow)
                OR tbl_name \(setAside))
            ORDER BY type, name
            """
        try db.forEachRow(sql: sql) { row in
            entries.append(
                Entry(
                    type: try row.decode(at: 0), name: try row.decode(at: 1), table: try row.decode(at: 2),
                    sql: try row.decode(String?.self, at: 3)))
        }
        return SchemaSnapshot(entries: entries)
    }
}

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
