import SerialDB

/// Everything a database holds, as text: the schema and every row of every table (with its
/// rowid where it has one), to check that a refused change left the database as it was. The
/// shadow tables of virtual tables count too: they hold a full-text index's rows.
struct DatabaseSnapshot: Equatable, CustomStringConvertible {
    var schema: [String]
    var rows: [String: [String]]

    init(_ db: Database) throws {
        schema = try db.fetchAll(String.self, sql: "SELECT coalesce(sql, name) FROM sqlite_master ORDER BY name")
        rows = [:]
        let tables = try db.fetchAll(
            Row.self,
            sql: "SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'shadow')")
        for table in tables {
            let name: String = try table.decode(at: 0)
            let withoutRowID: Bool = try table.decode(at: 1)
            let select = withoutRowID ? "SELECT *" : "SELECT _rowid_, *"
            rows[name] = try db.fetchAll(Row.self, sql: "\(select) FROM \(name.quotedDatabaseIdentifier)").map { row in
                (0..<row.count).map { "\(row[$0])" }.joined(separator: "|")
            }.sorted()
        }
    }

    var description: String { "\(schema) \(rows.mapValues(\.count))" }
}
