import SerialDB

/// What the sync needs to know of one app table, read from `PRAGMA table_xinfo`: its
/// columns with their declared types and its primary key. Generated and hidden columns are
/// left out: they cannot be written and are not part of a row on the wire.
///
/// A class, immutable: a batch or a page uses one for every row, and copying a struct of this
/// many references retained and released each of them per row.
final class SyncedTable: Sendable {
    struct Column: Sendable {
        var name: String
        var declaredType: String
        /// The declared type's affinity, worked out once: every downloaded value is converted by it.
        var affinity: ColumnAffinity
    }

    let name: String
    let columns: [Column]
    /// The primary-key columns, in key order.
    let primaryKey: [String]
    /// The primary-key columns' affinities, in key order: every downloaded row's key is
    /// converted by them.
    private let keyAffinities: [ColumnAffinity]
    /// Column positions by lowercased name: a page looks up every column of every row.
    private let columnIndex: [String: Int]
    /// The columns in the order a row travels in (by name): an upload writes each row it reads
    /// in this order, straight from the values (``fetchWireRow(_:key:)``).
    let wireLayout: WireRowLayout
    /// The statements of the per-row paths, built once per table instead of once per row.
    /// The SELECT returns the columns in ``wireLayout`` order.
    private let selectWireRowSQL: String
    private let deleteRowSQL: String
    /// The upsert of a row that carries every column, the shape the server sends, its
    /// parameters in column order.
    let fullUpsertSQL: String
    /// The statement that computes a row's canonical key from its key values.
    private let canonicalKeySQL: String

    /// Reads the table's shape.
    ///
    /// - Throws: ``SyncError/Code/unsupportedTable`` when it has no PRIMARY KEY or does not exist.
    init(_ db: Database, name: String) throws {
        let rows = try db.fetchAll(
            Row.self, sql: "SELECT name, type, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid", arguments: [name])
        var columns: [Column] = []
        var keyed: [(Int, String)] = []
        for row in rows where try row.decode(Int.self, at: 3) == 0 {
            let declaredType: String = try row.decode(at: 1)
            let column = Column(
                name: try row.decode(at: 0), declaredType: declaredType,
                affinity: ColumnAffinity(declaredType: declaredType))
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
        let primaryKey = keyed.sorted { $0.0 < $1.0 }.map(\.1)
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        let columnIndex = Dictionary(
            columns.enumerated().map { ($1.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        self.columnIndex = columnIndex
        keyAffinities = primaryKey.map { columnIndex[$0.lowercased()].map { columns[$0].affinity } ?? .blob }
        let keyCondition = primaryKey.map { "\($0.quotedDatabaseIdentifier) IS ?" }.joined(separator: " AND ")
        let table = name.quotedDatabaseIdentifier
        wireLayout = WireRowLayout(columns: columns.map(\.name))
        selectWireRowSQL =
            "SELECT \(wireLayout.names.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(table) WHERE \(keyCondition)"
        deleteRowSQL = "DELETE FROM \(table) WHERE \(keyCondition)"
        fullUpsertSQL = Self.upsertSQL(table: name, columns: columns.map(\.name), primaryKey: primaryKey)
        canonicalKeySQL = CanonicalKey.selectSQL(count: primaryKey.count)
    }

    /// The column with this name (case-insensitive).
    func column(named name: String) -> Column? {
        columnIndex[name.lowercased()].map { columns[$0] }
    }

    /// The canonical key of a wire row (its key columns converted by affinity).
    ///
    /// - Throws: ``SyncError/Code/invalidResponse`` when a key column is missing.
    func canonicalKey(_ db: Database, of row: [String: SyncValue]) throws -> (key: String, values: [DatabaseValue]) {
        let values = try keyValues(of: row)
        return (try CanonicalKey.make(db, values: values, sql: canonicalKeySQL), values)
    }

    /// The key columns' values of a wire row, converted by affinity.
    ///
    /// - Throws: ``SyncError/Code/invalidResponse`` when a key column is missing.
    func keyValues(of row: [String: SyncValue]) throws -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        values.reserveCapacity(primaryKey.count)
        for (column, affinity) in zip(primaryKey, keyAffinities) {
            guard let value = Self.value(of: column, in: row) else {
                throw SyncError(
                    .invalidResponse,
                    "A row of \(name.quotedDatabaseIdentifier) lacks its key column \(column.quotedDatabaseIdentifier)."
                )
            }
            values.append(value.converted(to: affinity).databaseValue)
        }
        return values
    }

    /// The key columns of a key's values, for the wire.
    func wireKey(_ values: [DatabaseValue]) -> [String: SyncValue] {
        Dictionary(uniqueKeysWithValues: zip(primaryKey, values.map(SyncValue.init)))
    }

    /// The local row with this key, every column, or `nil`.
    func fetchRow(_ db: Database, key values: [DatabaseValue]) throws -> [String: SyncValue]? {
        try fetchWireRow(db, key: values).map { Dictionary(uniqueKeysWithValues: zip(wireLayout.names, $0)) }
    }

    /// The values of the local row with this key in ``wireLayout`` order, or `nil`: read in
    /// place from one cached statement, for an upload that reads a row per outbox entry.
    func fetchWireRow(_ db: Database, key values: [DatabaseValue]) throws -> [SyncValue]? {
        var found: [SyncValue]?
        try db.cachedStatement(sql: selectWireRowSQL).forEachRow(arguments: StatementArguments(values)) { row in
            // A key with NULL in it may match more than one row (`IS`): the first, as before.
            guard found == nil else { return }
            var values: [SyncValue] = []
            values.reserveCapacity(row.count)
            for index in 0..<row.count {
                values.append(SyncValue(row[index]))
            }
            found = values
        }
        return found
    }

    /// Inserts or updates a server row in place (never REPLACE, which would delete first and
    /// cascade into child rows). Columns the row lacks keep their value, or their default.
    ///
    /// - Throws: ``SyncError/Code/invalidResponse`` for a column this table does not have, or one
    ///   sent twice under names that differ only in case.
    func upsert(_ db: Database, row: [String: SyncValue], full: Statement? = nil) throws {
        var values: [DatabaseValue] = []
        try upsert(db, row: row, full: full, reusing: &values)
    }

    /// ``upsert(_:row:full:)`` with the array the values are bound from passed in: a page
    /// passes the same one for every row, so that its storage is allocated once per page.
    func upsert(_ db: Database, row: [String: SyncValue], full: Statement?, reusing values: inout [DatabaseValue])
        throws
    {
        if let full, valuesOfEveryColumn(row, into: &values) {
            return try full.execute(arguments: StatementArguments(values))
        }
        var present: [(position: Int, value: SyncValue)] = []
        present.reserveCapacity(row.count)
        for (columnName, value) in row {
            guard let position = columnIndex[columnName.lowercased()] else {
                throw SyncError(
                    .invalidResponse,
                    "The server sent column \(columnName.quotedDatabaseIdentifier) for table "
                        + "\(name.quotedDatabaseIdentifier), which has no such column here. Sync again to fetch its definition."
                )
            }
            present.append((position, value))
        }
        // Column order, so that one statement serves every row of the same shape.
        present.sort { $0.position < $1.position }
        for (previous, next) in zip(present, present.dropFirst()) where previous.position == next.position {
            throw SyncError(
                .invalidResponse,
                "The server sent column \(columns[next.position].name.quotedDatabaseIdentifier) of table "
                    + "\(name.quotedDatabaseIdentifier) twice in one row, under names that differ only in case.")
        }
        let presentValues = present.map { $0.value.converted(to: columns[$0.position].affinity).databaseValue }
        let sql =
            present.count == columns.count
            ? fullUpsertSQL
            : Self.upsertSQL(table: name, columns: present.map { columns[$0.position].name }, primaryKey: primaryKey)
        try db.execute(sql: sql, arguments: StatementArguments(presentValues))
    }

    /// Puts in `values` the values of a row that holds exactly this table's columns under their
    /// own names (what the server sends), in column order and converted; `false` for any other
    /// row. No lowercased name and no sort; the values stay ``DatabaseValue``s, which
    /// ``StatementArguments`` binds without boxing them.
    ///
    /// Up to `scanLimit` columns each of the row's names is found by comparing it with the
    /// column names, from the column after the last one found (a name the parser read is most
    /// often a small string, compared in two words): cheaper than hashing it. Every name found
    /// at a distinct column, and as many names as columns, means every column is there.
    private func valuesOfEveryColumn(_ row: [String: SyncValue], into values: inout [DatabaseValue]) -> Bool {
        values.removeAll(keepingCapacity: true)
        let count = columns.count
        guard row.count == count else { return false }
        guard count <= Self.scanLimit else {
            for column in columns {
                guard let value = row[column.name] else { return false }
                values.append(value.converted(to: column.affinity).databaseValue)
            }
            return true
        }
        values.append(contentsOf: repeatElement(.null, count: count))
        var position = 0
        for (name, value) in row {
            var scanned = 0
            while columns[position].name != name {
                scanned += 1
                guard scanned < count else { return false }
                position = position + 1 == count ? 0 : position + 1
            }
            values[position] = value.converted(to: columns[position].affinity).databaseValue
            position = position + 1 == count ? 0 : position + 1
        }
        return true
    }

    /// The widest row whose names ``valuesOfEveryColumn(_:into:)`` finds by comparing them.
    private static let scanLimit = 16

    /// `INSERT INTO t(cols) VALUES (?, ...) ON CONFLICT(key) DO UPDATE SET` the other columns.
    private static func upsertSQL(table: String, columns: [String], primaryKey: [String]) -> String {
        let keyNames = Set(primaryKey.map { $0.lowercased() })
        let updates = columns.filter { !keyNames.contains($0.lowercased()) }.map {
            "\($0.quotedDatabaseIdentifier) = excluded.\($0.quotedDatabaseIdentifier)"
        }
        let conflictAction = updates.isEmpty ? "NOTHING" : "UPDATE SET " + updates.joined(separator: ", ")
        return
            "INSERT INTO \(table.quotedDatabaseIdentifier)(\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) "
            + "VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", "))) "
            + "ON CONFLICT(\(primaryKey.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) DO \(conflictAction)"
    }

    /// Deletes the local row with this key; returns whether there was one.
    @discardableResult
    func delete(_ db: Database, key values: [DatabaseValue]) throws -> Bool {
        try db.execute(sql: deleteRowSQL, arguments: StatementArguments(values))
        return db.changesCount > 0
    }

    /// The value of a column of a wire row, whatever the case of its name.
    static func value(of column: String, in row: [String: SyncValue]) -> SyncValue? {
        if let value = row[column] { return value }
        let lowered = column.lowercased()
        return row.first { $0.key.lowercased() == lowered }?.value
    }
}
