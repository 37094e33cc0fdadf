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

    /// How rows whose column names are `names`, in that order, map onto the table (see
    /// ``RowShape``): worked out once for all the rows of a page that share them.
    ///
    /// - Throws: ``SyncError/Code/invalidResponse`` when a key column is missing.
    func rowShape(of names: [String]) throws -> RowShape {
        var keyPositions: [Int] = []
        keyPositions.reserveCapacity(primaryKey.count)
        for column in primaryKey {
            guard let position = Self.position(of: column, in: names) else {
                throw SyncError(
                    .invalidResponse,
                    "A row of \(name.quotedDatabaseIdentifier) lacks its key column \(column.quotedDatabaseIdentifier)."
                )
            }
            keyPositions.append(position)
        }
        var columnPositions: [Int]? = nil
        if names.count == columns.count {
            // Every column under its own name, each once (as many names as columns).
            let positions = columns.compactMap { column in names.firstIndex(of: column.name) }
            if positions.count == columns.count { columnPositions = positions }
        }
        return RowShape(keyPositions: keyPositions, columnPositions: columnPositions)
    }

    /// Where a column's value is in a row with these names: under its own name, else under a
    /// name that differs only in case; the last one when a row names it twice, whose value a
    /// JSON object keeps.
    private static func position(of column: String, in names: [String]) -> Int? {
        if let exact = names.lastIndex(of: column) { return exact }
        let lowered = column.lowercased()
        return names.lastIndex { $0.lowercased() == lowered }
    }

    /// The canonical key of a row of `shape` whose values are `values` (its key columns
    /// converted by affinity).
    func canonicalKey(_ db: Database, of values: ArraySlice<SyncValue>, shape: RowShape) throws -> String {
        // The usual key, one INTEGER column: no array of key values.
        if shape.keyPositions.count == 1,
            case .integer(let integer) = values[values.startIndex + shape.keyPositions[0]].converted(
                to: keyAffinities[0])
        {
            return CanonicalKey.integer(integer)
        }
        return try CanonicalKey.make(db, values: keyValues(of: values, shape: shape), sql: canonicalKeySQL)
    }

    /// The key columns' values of a row of `shape`, converted by affinity, in key order.
    func keyValues(of values: ArraySlice<SyncValue>, shape: RowShape) -> [DatabaseValue] {
        zip(shape.keyPositions, keyAffinities).map { position, affinity in
            values[values.startIndex + position].converted(to: affinity).databaseValue
        }
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
    func upsert(_ db: Database, row: [String: SyncValue]) throws {
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

    /// ``upsert(_:row:)`` for a row of a `shape` that holds every column under its own name
    /// (``RowShape/columnPositions``, what the server sends): its values are placed by
    /// position, converted, and bound unboxed through `full` (``fullUpsertSQL``); `buffer` is
    /// the array they are bound from, passed in so that a page allocates it once.
    func upsert(
        _ db: Database, values: ArraySlice<SyncValue>, shape: RowShape, full: Statement,
        reusing buffer: inout [DatabaseValue]
    ) throws {
        guard let positions = shape.columnPositions else {
            preconditionFailure("a row shape without every column goes through upsert(_:row:)")
        }
        buffer.removeAll(keepingCapacity: true)
        for (column, position) in zip(columns, positions) {
            buffer.append(values[values.startIndex + position].converted(to: column.affinity).databaseValue)
        }
        try full.execute(arguments: StatementArguments(buffer))
    }

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

    /// How the rows of one shape of a page (their column names, in order) map onto the table.
    struct RowShape: Sendable {
        /// The row position of each primary-key column, in key order.
        let keyPositions: [Int]
        /// The row position of each of the table's columns, in the table's order, when the
        /// row holds exactly the table's columns under their own names (what the server
        /// sends); `nil` for any other row, which ``upsert(_:row:)`` writes.
        let columnPositions: [Int]?
    }
}
