import CSQLite

extension Database {
    /// Every row of a query, each decoded by ``RowDecodable/init(row:)``; for value types
    /// (`Int`, `String`, ...) the first column of each row.
    ///
    /// ```swift
    /// let names = try db.fetchAll(String.self, sql: "SELECT name FROM player ORDER BY name")
    /// let players = try db.fetchAll(Player.self, sql: "SELECT * FROM player WHERE score > ?", arguments: [10])
    /// ```
    ///
    /// - Throws: ``DatabaseError``, or ``SerialDBError/Code/decodingFailed`` naming the column.
    @inlinable
    public func fetchAll<T: RowDecodable>(
        _ type: T.Type, sql: String, arguments: StatementArguments = []
    ) throws -> [T] {
        try cachedStatement(sql: sql).fetchAll(type, arguments: arguments)
    }

    /// Every row of a query, decoded through `Decodable`: each coding key reads the column of
    /// the same name. Slower than ``RowDecodable``; convenient for plain structs.
    @inlinable
    public func fetchAll<T: Decodable>(
        _ type: T.Type, sql: String, arguments: StatementArguments = []
    ) throws -> [T] {
        try cachedStatement(sql: sql).fetchAll(type, arguments: arguments)
    }

    /// Disambiguates types that are both: ``RowDecodable`` wins, being faster.
    @inlinable
    public func fetchAll<T: RowDecodable & Decodable>(
        _ type: T.Type, sql: String, arguments: StatementArguments = []
    ) throws -> [T] {
        try cachedStatement(sql: sql).fetchAll(type, arguments: arguments)
    }

    /// The first row of a query, or `nil` when there is none. For value types, also `nil` when
    /// the first column is NULL (`SELECT max(score) FROM player` on an empty table).
    public func fetchOne<T: RowDecodable>(
        _ type: T.Type, sql: String, arguments: StatementArguments = []
    ) throws -> T? {
        try cachedStatement(sql: sql).fetchOne(type, arguments: arguments)
    }

    /// The first row of a query decoded through `Decodable`, or `nil` when there is none.
    public func fetchOne<T: Decodable>(
        _ type: T.Type, sql: String, arguments: StatementArguments = []
    ) throws -> T? {
        try cachedStatement(sql: sql).fetchOne(type, arguments: arguments)
    }

    /// Disambiguates types that are both: ``RowDecodable`` wins, being faster.
    public func fetchOne<T: RowDecodable & Decodable>(
        _ type: T.Type, sql: String, arguments: StatementArguments = []
    ) throws -> T? {
        try cachedStatement(sql: sql).fetchOne(type, arguments: arguments)
    }

    /// Iterates over a query one row at a time, without loading all rows: the cursor API.
    ///
    /// The row passed to `body` is valid only during the call (``Row/copy()`` keeps one).
    /// Throw from `body` to stop early. The statement is prepared for this call alone, so
    /// `body` may run other queries, even the same one.
    ///
    /// ```swift
    /// var total = 0
    /// try db.forEachRow(sql: "SELECT score FROM player") { row in total += try row.decode(Int.self, at: 0) }
    /// ```
    public func forEachRow(
        sql: String, arguments: StatementArguments = [], _ body: (Row) throws -> Void
    ) throws {
        let statement = try makeStatement(sql: sql)
        try statement.start(arguments: arguments)
        let row = Row(statement: statement)
        while try statement.step() {
            try body(row)
        }
    }

    /// Iterates over a query one decoded record at a time, without loading all rows.
    public func forEach<T: RowDecodable>(
        _ type: T.Type, sql: String, arguments: StatementArguments = [], _ body: (T) throws -> Void
    ) throws {
        try forEachRow(sql: sql, arguments: arguments) { row in try body(T(row: row)) }
    }
}

extension Statement {
    // The fetchAll methods and `collect` are inlinable so that they are specialized for the
    // caller's record type: unspecialized, every row paid run-time metadata lookups for `[T]`.

    /// Runs the query and decodes every row with ``RowDecodable/init(row:)``.
    @inlinable
    public func fetchAll<T: RowDecodable>(_ type: T.Type, arguments: StatementArguments = []) throws -> [T] {
        try collect(arguments: arguments) { try T(row: $0) }
    }

    /// Runs the query and decodes every row through `Decodable`.
    @inlinable
    public func fetchAll<T: Decodable>(_ type: T.Type, arguments: StatementArguments = []) throws -> [T] {
        // One decoder for all rows (its row reads whichever row the statement is on), made on
        // the first row, when the column names are final.
        var decoder: RowDecoder?
        return try collect(arguments: arguments) { row in
            if let decoder { return try T(from: decoder) }
            let first = RowDecoder(row: row)
            decoder = first
            return try T(from: first)
        }
    }

    /// Disambiguates types that are both: ``RowDecodable`` wins.
    @inlinable
    public func fetchAll<T: RowDecodable & Decodable>(_ type: T.Type, arguments: StatementArguments = []) throws -> [T]
    {
        try collect(arguments: arguments) { try T(row: $0) }
    }

    /// Runs the query and decodes the first row, if any.
    public func fetchOne<T: RowDecodable>(_ type: T.Type, arguments: StatementArguments = []) throws -> T? {
        try first(arguments: arguments) { try T(row: $0) }
    }

    /// Runs the query and decodes the first row through `Decodable`, if any.
    public func fetchOne<T: Decodable>(_ type: T.Type, arguments: StatementArguments = []) throws -> T? {
        try first(arguments: arguments) { try T(from: RowDecoder(row: $0)) }
    }

    /// Disambiguates types that are both: ``RowDecodable`` wins.
    public func fetchOne<T: RowDecodable & Decodable>(_ type: T.Type, arguments: StatementArguments = []) throws -> T? {
        try first(arguments: arguments) { try T(row: $0) }
    }

    /// Runs the query and calls `body` with each row as it is read, without copying any: the
    /// cursor API of ``Database/forEachRow(sql:arguments:_:)`` for a statement kept or cached
    /// for many runs.
    ///
    /// The row is valid only during the call (``Row/copy()`` keeps one). Throw from `body` to
    /// stop early; the statement is reset either way. `body` may run other statements, but
    /// not this one (it would reset it).
    ///
    /// ```swift
    /// let byTeam = try db.cachedStatement(sql: "SELECT name FROM player WHERE team = ?")
    /// try byTeam.forEachRow(arguments: ["red"]) { row in names.append(try row.decode(at: 0)) }
    /// ```
    ///
    /// - Throws: ``DatabaseError``; ``SerialDBError`` when the arguments do not match the
    ///   parameters; what `body` throws.
    public func forEachRow(arguments: StatementArguments = [], _ body: (Row) throws -> Void) throws {
        try start(arguments: arguments)
        defer { reset() }
        let row = Row(statement: self)
        while try step() {
            try body(row)
        }
    }

    @inlinable
    func collect<T>(arguments: StatementArguments, _ decode: (Row) throws -> T) throws -> [T] {
        try start(arguments: arguments)
        defer { reset() }
        let row = Row(statement: self)
        var result: [T] = []
        while try step() {
            result.append(try decode(row))
        }
        return result
    }

    private func first<T>(arguments: StatementArguments, _ decode: (Row) throws -> T) throws -> T? {
        try start(arguments: arguments)
        defer { sqlite3_reset(handle) }
        guard try step() else { return nil }
        if T.self is any DatabaseValueConvertible.Type, sqlite3_column_type(handle, 0) == SQLITE_NULL {
            // A NULL aggregate (max or min of no rows) reads as "no value".
            return nil
        }
        return try decode(Row(statement: self))
    }
}
