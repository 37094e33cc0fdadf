import SerialDB

/// What the sync needs to know of one app table, read from `PRAGMA table_xinfo`: its
/// columns with their declared types and its primary key. Generated and hidden columns are
/// left out: they cannot be written and are not part of a row on the wire.
struct SyncedTable: Sendable {
    struct Column: Sendable {
        var name: String
        var declaredType: String
    }

    let name: String
    let columns: [Column]
    /// The primary-key columns, in key order.
    let primaryKey: [String]

    /// Reads the table's shape.
    ///
    /// - Throws: ``SyncError/Code/unsupportedTable`` when it has no PRIMARY KEY or does not exist.
    init(_ db: Database, name: String) throws {
        let rows = try db.fetchAll(
            Row.self, sql: "SELECT name, type, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid", arguments: [name])
        var columns: [Column] = []
        var keyed: [(Int, String)] = []
        for row in rows where try row.decode(Int.self, at: 3) == 0 {
            let column = Column(name: try row.decode(at: 0), declaredType: try row.decode(at: 1))
            columns.append(column)
            let keyIndex: Int = try row.decode(at: 2)
            if keyIndex > 0 { keyed.append((keyIndex, column.name)) }
        }
        guard !keyed.isEmpty else {
            throw SyncError(
                .unsupportedTable,
                "Table \(name.quotedDatabaseIdentifier) "
                    + (columns.isEmpty ? "does not exist locally" : "has no PRIMARY KEY")
                    + ", so its rows cannot be synced. Declare the table with a PRIMARY KEY on the server.")
        }
        self.name = name
        self.columns = columns
        self.primaryKey = keyed.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The column with this name (case-insensitive).
    func column(named name: String) -> Column? {
        let lowered = name.lowercased()
        return columns.first { $0.name.lowercased() == lowered }
    }

    /// `"a" IS ? AND "b" IS ?` for the key columns (IS, because a non-INTEGER primary key of a
    /// rowid table may hold NULL).
    var keyCondition: String {
        primaryKey.map { "\($0.quotedDatabaseIdentifier) IS ?" }.joined(separator: " AND ")
    }

    /// The canonical key of a wire row (its key columns converted by affinity).
    ///
    /// - Throws: ``SyncError/Code/invalidResponse`` when a key column is missing.
    func canonicalKey(_ db: Database, of row: [String: SyncValue]) throws -> (key: String, values: [DatabaseValue]) {
        let values = try primaryKey.map { column -> DatabaseValue in
            guard let value = Self.value(of: column, in: row) else {
                throw SyncError(
                    .invalidResponse,
                    "A row of \(name.quotedDatabaseIdentifier) lacks its key column \(column.quotedDatabaseIdentifier)."
                )
            }
            return value.converted(toAffinityOf: self.column(named: column)?.declaredType ?? "").databaseValue
        }
        return (try CanonicalKey.make(db, values: values), values)
    }

    /// The key columns of a key's values, for the wire.
    func wireKey(_ values: [DatabaseValue]) -> [String: SyncValue] {
        Dictionary(uniqueKeysWithValues: zip(primaryKey, values.map(SyncValue.init)))
    }

    /// The local row with this key, every column, or `nil`.
    func fetchRow(_ db: Database, key values: [DatabaseValue]) throws -> [String: SyncValue]? {
        let names = columns.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
        guard
            let row = try db.fetchOne(
                Row.self, sql: "SELECT \(names) FROM \(name.quotedDatabaseIdentifier) WHERE \(keyCondition)",
                arguments: StatementArguments(values))
        else { return nil }
        var result: [String: SyncValue] = [:]
        for (index, column) in columns.enumerated() {
            result[column.name] = SyncValue(row[index])
        }
        return result
    }

    /// Inserts or updates a server row in place (never REPLACE, which would delete first and
    /// cascade into child rows). Columns the row lacks keep their value, or their default.
    ///
    /// - Throws: ``SyncError/Code/invalidResponse`` for a column this table does not have.
    func upsert(_ db: Database, row: [String: SyncValue]) throws {
        var names: [String] = []
        var values: [DatabaseValue] = []
        for (columnName, value) in row.sorted(by: { $0.key < $1.key }) {
            guard let column = column(named: columnName) else {
                throw SyncError(
                    .invalidResponse,
                    "The server sent column \(columnName.quotedDatabaseIdentifier) for table "
                        + "\(name.quotedDatabaseIdentifier), which has no such column here. Sync again to fetch its definition."
                )
            }
            names.append(column.name)
            values.append(value.converted(toAffinityOf: column.declaredType).databaseValue)
        }
        let keyNames = Set(primaryKey.map { $0.lowercased() })
        let updates = names.filter { !keyNames.contains($0.lowercased()) }.map {
            "\($0.quotedDatabaseIdentifier) = excluded.\($0.quotedDatabaseIdentifier)"
        }
        let conflictAction = updates.isEmpty ? "NOTHING" : "UPDATE SET " + updates.joined(separator: ", ")
        let sql =
            "INSERT INTO \(name.quotedDatabaseIdentifier)(\(names.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) "
            + "VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", "))) "
            + "ON CONFLICT(\(primaryKey.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) DO \(conflictAction)"
        try db.execute(sql: sql, arguments: StatementArguments(values))
    }

    /// Deletes the local row with this key; returns whether there was one.
    @discardableResult
    func delete(_ db: Database, key values: [DatabaseValue]) throws -> Bool {
        try db.execute(
            sql: "DELETE FROM \(name.quotedDatabaseIdentifier) WHERE \(keyCondition)",
            arguments: StatementArguments(values))
        return db.changesCount > 0
    }

    /// The value of a column of a wire row, whatever the case of its name.
    static func value(of column: String, in row: [String: SyncValue]) -> SyncValue? {
        if let value = row[column] { return value }
        let lowered = column.lowercased()
        return row.first { $0.key.lowercased() == lowered }?.value
    }
}
