import CSQLite

/// One result row: values by index or by column name.
///
/// During a fetch the row reads straight from the statement and is valid only until the next
/// step; ``copy()`` keeps its values. `fetchAll(Row.self, ...)` returns copies.
///
/// ```swift
/// for row in try db.fetchAll(Row.self, sql: "SELECT name, score FROM player") {
///     let name: String = try row.decode(column: "name")
///     let score = row[1]               // DatabaseValue
/// }
/// ```
public struct Row {
    @usableFromInline
    enum Storage {
        case statement(Statement)
        case copied(ColumnLookup, [DatabaseValue])
    }

    @usableFromInline
    let storage: Storage
    /// The statement's handle while the row reads from one, `nil` for a copy. Decoding reads
    /// columns through it without touching `storage`: binding the statement out of the enum
    /// retained and released it for every value, which cost as much as reading the value.
    @usableFromInline
    let statementHandle: OpaquePointer?

    @usableFromInline
    init(statement: Statement) {
        storage = .statement(statement)
        statementHandle = statement.handle
    }

    /// A detached row with these columns and values; handy in tests.
    public init(columns: [String], values: [DatabaseValue]) {
        precondition(columns.count == values.count, "a row needs one value per column")
        storage = .copied(ColumnLookup(names: columns), values)
        statementHandle = nil
    }

    /// The number of columns.
    public var count: Int {
        switch storage {
        case .statement(let statement): return statement.columnCount
        case .copied(_, let values): return values.count
        }
    }

    /// The column names, in order.
    public var columnNames: [String] {
        lookup.names
    }

    /// The column names and their name-to-index table.
    var lookup: ColumnLookup {
        switch storage {
        case .statement(let statement): return statement.lookup
        case .copied(let lookup, _): return lookup
        }
    }

    /// The index of the leftmost column with that name (case-insensitive), or `nil`.
    public func index(ofColumn name: String) -> Int? {
        lookup.index(of: name)
    }

    /// The value at a 0-based column index.
    public subscript(_ index: Int) -> DatabaseValue {
        precondition(index >= 0 && index < count, "column index \(index) out of range 0..<\(count)")
        switch storage {
        case .statement(let statement): return DatabaseValue.column(statement.handle, Int32(index))
        case .copied(_, let values): return values[index]
        }
    }

    /// The value of the named column, or `nil` when there is no such column.
    public subscript(_ column: String) -> DatabaseValue? {
        index(ofColumn: column).map { self[$0] }
    }

    /// Converts the value at `index`.
    ///
    /// - Throws: ``SerialDBError/Code/decodingFailed`` naming the column and what it held when
    ///   the value is NULL or of another kind (use an Optional type to accept NULL).
    // Inlinable so that it is specialized for the caller's type: unspecialized, every call
    // looked up the metadata of `T?` at run time, which cost more than reading the column.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws -> T {
        if let statementHandle {
            if index >= 0 && index < Statement.columnCount(statementHandle),
                let converted = T.fromStatement(statementHandle, column: Int32(index))
            {
                return converted
            }
        } else if case .copied(_, let values) = storage, index >= 0 && index < values.count,
            let converted = T.fromDatabaseValue(values[index])
        {
            return converted
        }
        throw decodingError(at: index, type: T.self)
    }

    /// Why the value at `index` cannot be read as `type` (out of range, NULL, or another kind).
    @usableFromInline
    func decodingError(at index: Int, type: Any.Type) -> SerialDBError {
        guard index >= 0 && index < count else {
            return SerialDBError(
                .decodingFailed, "Column index \(index) is out of range: the row has \(count) column(s).")
        }
        let value = self[index]
        // The names and the values come from the same statement, but an error message must
        // never be the thing that traps: a name that is missing reads as its index.
        let names = columnNames
        let name = index < names.count ? names[index] : "#\(index)"
        return SerialDBError(
            .decodingFailed,
            "Column `\(name)` holds \(value.storageClassName) \(value), which is not a valid \(type)."
                + (value.isNull ? " Decode an Optional to accept NULL." : ""))
    }

    /// Whether the value at `index` is NULL, without building a ``DatabaseValue``.
    func isNull(at index: Int) -> Bool {
        if let statementHandle { return sqlite3_column_type(statementHandle, Int32(index)) == SQLITE_NULL }
        return self[index].isNull
    }

    /// Converts the value of the named column (case-insensitive).
    ///
    /// - Throws: ``SerialDBError/Code/decodingFailed`` when there is no such column, or as
    ///   ``decode(_:at:)``.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, column: String) throws -> T {
        guard let index = index(ofColumn: column) else { throw missingColumnError(column) }
        return try decode(type, at: index)
    }

    @usableFromInline
    func missingColumnError(_ column: String) -> SerialDBError {
        SerialDBError(
            .decodingFailed,
            "The row has no column `\(column)`; its columns are \(columnNames.joined(separator: ", ")).")
    }

    /// A row that keeps its values after the statement moves on.
    public func copy() -> Row {
        switch storage {
        case .copied: return self
        case .statement(let statement):
            return Row(copying: statement)
        }
    }

    private init(copying statement: Statement) {
        let values = (0..<Int32(statement.columnCount)).map { DatabaseValue.column(statement.handle, $0) }
        storage = .copied(statement.lookup, values)
        statementHandle = nil
    }
}

extension Row: RowDecodable {
    /// Fetching `Row` keeps a copy of each row.
    public init(row: Row) throws {
        self = row.copy()
    }
}
