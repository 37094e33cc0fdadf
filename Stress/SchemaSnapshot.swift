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
        try db.forEachRow(sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name") { row in
            entries.append(
                Entry(
                    type: try row.decode(at: 0), name: try row.decode(at: 1), table: try row.decode(at: 2),
                    sql: try row.decode(String?.self, at: 3)))
        }
        return SchemaSnapshot(entries: entries)
    }
}
