import SerialDB

/// One row of the item table as found on disk.
struct StoredItem: Sendable {
    let id: Int
    let author: Int
    let seq: Int
    let payload: String?
    let lastAuthor: Int
    let lastSeq: Int
    /// `nil` when NULL, or when the column does not exist yet.
    let note: String?

    var key: RowKey { RowKey(author: author, seq: seq) }
    var lastWrite: OperationID { OperationID(author: lastAuthor, seq: lastSeq) }

    /// Every row, with `note` when the column exists.
    static func readAll(_ db: Database) throws -> [StoredItem] {
        let table = ItemTable.name.quotedDatabaseIdentifier
        let columns = try db.fetchAll(
            String.self, sql: "SELECT name FROM pragma_table_info(?)", arguments: [ItemTable.name])
        let hasNote = columns.contains("note")
        let sql =
            hasNote
            ? "SELECT id, author, seq, payload, last_author, last_seq, note FROM \(table)"
            : "SELECT id, author, seq, payload, last_author, last_seq, NULL FROM \(table)"
        var items: [StoredItem] = []
        try db.forEachRow(sql: sql) { row in
            items.append(
                StoredItem(
                    id: try row.decode(at: 0), author: try row.decode(at: 1), seq: try row.decode(at: 2),
                    payload: try row.decode(String?.self, at: 3), lastAuthor: try row.decode(at: 4),
                    lastSeq: try row.decode(at: 5), note: try row.decode(String?.self, at: 6)))
        }
        return items
    }
}
