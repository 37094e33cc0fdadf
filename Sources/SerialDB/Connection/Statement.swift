import CSQLite

/// A prepared statement: SQL compiled once, run many times with different arguments.
///
/// Get one with ``Database/makeStatement(sql:)`` (yours alone) or
/// ``Database/cachedStatement(sql:)`` (shared through the connection's cache). A statement
/// belongs to its connection: use it only inside the block that gave you the `Database`.
///
/// ```swift
/// let insert = try db.cachedStatement(sql: "INSERT INTO player(name, score) VALUES (?, ?)")
/// for (name, score) in scores {
///     try insert.execute(arguments: [name, score])
/// }
/// ```
///
/// See <https://www.sqlite.org/c3ref/stmt.html>.
public final class Statement {
    /// The `sqlite3_stmt` handle, for calls SerialDB does not wrap.
    public let handle: OpaquePointer
    /// The SQL of this one statement.
    public let sql: String
    /// Whether the statement leaves the database unchanged (`sqlite3_stmt_readonly`); checked
    /// before every run inside read-only blocks, which is cheaper than toggling a pragma.
    public let isReadOnly: Bool
    unowned let database: Database
    let parameterCount: Int32
    /// The column names, built on first use. SQLite silently re-prepares a statement whose
    /// schema changed (by this connection, another one, or another process) on its next first
    /// step, and the new program may return other columns: `lookupRepreparations` is the
    /// re-prepare count the names were read at, compared again after each run's first step.
    private var columnLookup: ColumnLookup?
    private var lookupRepreparations: Int32 = 0
    /// Set by ``start(arguments:)``: the next step is a run's first, the only one at which
    /// SQLite re-prepares, so the names are checked then (one flag test per step otherwise).
    private var lookupNeedsCheck = false

    init(database: Database, handle: OpaquePointer, sql: String) {
        self.database = database
        self.handle = handle
        self.sql = sql
        self.isReadOnly = sqlite3_stmt_readonly(handle) != 0
        self.parameterCount = sqlite3_bind_parameter_count(handle)
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The number of columns in each result row.
    public var columnCount: Int { Self.columnCount(handle) }

    /// `sqlite3_column_count`, for inlinable code that holds only the handle.
    @usableFromInline
    static func columnCount(_ handle: OpaquePointer) -> Int {
        Int(sqlite3_column_count(handle))
    }

    /// The names of the result columns, as the statement returns them now.
    public var columnNames: [String] {
        forgetLookupIfReprepared()
        return lookup.names
    }

    /// Name-to-index table, built on first use and again after SQLite re-prepared the
    /// statement (see `columnLookup`).
    var lookup: ColumnLookup {
        if let columnLookup { return columnLookup }
        lookupRepreparations = repreparations
        let built = ColumnLookup(
            names: (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) })
        columnLookup = built
        return built
    }

    /// How many times SQLite re-prepared the statement after a schema change.
    /// See <https://www.sqlite.org/c3ref/c_stmtstatus_counter.html>.
    private var repreparations: Int32 {
        sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
    }

    /// Drops the column names when SQLite re-prepared the statement since they were read: the
    /// next use reads the columns the statement returns now.
    private func forgetLookupIfReprepared() {
        if columnLookup != nil && repreparations != lookupRepreparations {
            columnLookup = nil
        }
    }

    /// Runs the statement to completion, discarding any rows.
    ///
    /// - Parameter arguments: values for the statement's parameters.
    /// - Throws: ``DatabaseError`` when SQLite fails; ``SerialDBError`` when the arguments do
    ///   not match the parameters, or the statement writes inside a read-only block.
    public func execute(arguments: StatementArguments = []) throws {
        try start(arguments: arguments)
        try runToCompletion()
    }

    /// Runs the statement to completion with these values bound to its `?` parameters, in
    /// order: the fastest way to run one statement many times, because the values are bound
    /// straight from their types, without building ``StatementArguments``.
    ///
    /// ```swift
    /// let insert = try db.cachedStatement(sql: "INSERT INTO player(name, score) VALUES (?, ?)")
    /// for (name, score) in scores { try insert.execute(values: name, score) }
    /// ```
    ///
    /// - Throws: ``SerialDBError/Code/invalidArguments`` when the number of values differs
    ///   from the number of parameters; ``DatabaseError``.
    public func execute<each Value: DatabaseValueConvertible>(values: repeat each Value) throws {
        var count: Int32 = 0
        for _ in repeat each values { count += 1 }
        guard count == parameterCount else { throw argumentCountError(given: Int(count)) }
        sqlite3_reset(handle)
        try database.checkCanRun(self)
        var index: Int32 = 0
        for value in repeat each values {
            index += 1
            let code = value.bind(to: handle, at: index)
            if code != SQLITE_OK { throw database.error(code: code, statement: self) }
        }
        try runToCompletion()
    }

    /// `execute()` for the statements the connection runs around every transaction (BEGIN,
    /// COMMIT...): no parameters, no reset before (they are always reset after use). The
    /// connection passes itself: loading the `unowned` reference to it, strongly, cost a tenth
    /// of what the connection adds to an empty transaction. Not inlined: inlined, the caller
    /// retained the statement once more around each of the two calls.
    @inline(never)
    func runToCompletion(checkedBy database: Database) throws {
        try database.checkCanRun(self)
        try runToCompletion()
    }

    /// Steps until done, then resets, so the statement holds no lock afterwards.
    private func runToCompletion() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    private func argumentCountError(given count: Int) -> SerialDBError {
        SerialDBError(
            .invalidArguments,
            "The statement expects \(parameterCount) argument(s) but \(count) were given: `\(sql)`. "
                + "Pass one value per `?`.")
    }

    /// Resets, checks access, and binds: everything that precedes the first step.
    @usableFromInline
    func start(arguments: StatementArguments) throws {
        sqlite3_reset(handle)
        lookupNeedsCheck = true
        try database.checkCanRun(self)
        switch arguments.storage {
        case .positional(let values): try bind(positional: values)
        case .values(let values): try bind(values: values)
        case .named(let values) where values.isEmpty: try bind(positional: [])
        case .named(let values): try bind(named: values)
        }
    }

    /// Advances to the next row; `false` when done.
    @usableFromInline
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if lookupNeedsCheck {
            lookupNeedsCheck = false
            forgetLookupIfReprepared()
        }
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(code: code, statement: self)
        }
    }

    /// Ends a run early or after its last row (`sqlite3_reset`); bindings are kept.
    @usableFromInline
    func reset() {
        sqlite3_reset(handle)
    }

    /// Binds exactly `parameterCount` positional values.
    func bind(positional values: [(any DatabaseValueConvertible)?]) throws {
        guard values.count == Int(parameterCount) else { throw argumentCountError(given: values.count) }
        // Through the buffer each existential is copied out once to be bound; iterating the
        // array copied it twice, and the copies cost more per row than SQLite's bind calls.
        let code = values.withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return SQLITE_OK }
            for offset in 0..<buffer.count {
                let index = Int32(offset + 1)
                let code = base[offset]?.bind(to: handle, at: index) ?? sqlite3_bind_null(handle, index)
                if code != SQLITE_OK { return code }
            }
            return SQLITE_OK
        }
        if code != SQLITE_OK { throw database.error(code: code, statement: self) }
    }

    /// Binds exactly `parameterCount` values by their case, with no existential on the way.
    func bind(values: [DatabaseValue]) throws {
        guard values.count == Int(parameterCount) else { throw argumentCountError(given: values.count) }
        let code = values.withUnsafeBufferPointer { buffer -> Int32 in
            for offset in buffer.indices {
                let code = buffer[offset].bind(to: handle, at: Int32(offset + 1))
                if code != SQLITE_OK { return code }
            }
            return SQLITE_OK
        }
        if code != SQLITE_OK { throw database.error(code: code, statement: self) }
    }

    /// Binds every parameter by name; a parameter without a value is an error.
    func bind(named values: [String: (any DatabaseValueConvertible)?]) throws {
        guard parameterCount > 0 else { return }
        for index in 1...parameterCount {
            guard let rawName = sqlite3_bind_parameter_name(handle, index) else {
                throw SerialDBError(
                    .invalidArguments,
                    "Parameter \(index) of `\(sql)` is positional (`?`) but named arguments were given. "
                        + "Use `:name` parameters, or pass an array.")
            }
            let name = String(String(cString: rawName).dropFirst())
            guard let value = values[name] else {
                throw SerialDBError(
                    .invalidArguments,
                    "No value for parameter `\(name)` of `\(sql)`. Add \"\(name)\" to the arguments.")
            }
            let code = value?.bind(to: handle, at: index) ?? sqlite3_bind_null(handle, index)
            if code != SQLITE_OK { throw database.error(code: code, statement: self) }
        }
    }
}

/// Column names of a statement and a fast name-to-index table.
@usableFromInline
final class ColumnLookup {
    let names: [String]
    /// Whether each column's name appears at no column before it (compared exactly): only
    /// such a column is what ``index(of:)`` finds for its name.
    private let isFirstOfItsName: [Bool]
    /// Each name's length and first byte, compared before the name itself: two different
    /// names rarely share both, and comparing two different Strings costs several times more.
    private let fingerprints: [Int]
    /// Only for wide rows: up to `scanLimit` columns, scanning the fingerprints is cheaper than
    /// hashing the name asked for.
    private let exact: [String: Int]?
    private static let scanLimit = 16

    init(names: [String]) {
        self.names = names
        fingerprints = names.map(Self.fingerprint)
        var seen = Set<String>()
        isFirstOfItsName = names.map { seen.insert($0).inserted }
        if names.count > Self.scanLimit {
            var exact: [String: Int] = [:]
            for (index, name) in names.enumerated() where exact[name] == nil {
                exact[name] = index  // the leftmost column wins, as in SQL
            }
            self.exact = exact
        } else {
            exact = nil
        }
    }

    private static func fingerprint(_ name: String) -> Int {
        let utf8 = name.utf8
        return utf8.count << 8 | Int(utf8.first ?? 0)
    }

    /// Whether `index(of: name)` is `index`, checked with one comparison: the column at `index`
    /// has exactly this name, and no column before it does. `false` for an index out of range.
    func isLeftmost(_ name: String, at index: Int) -> Bool {
        index < names.count && isFirstOfItsName[index] && names[index] == name
    }

    /// Exact match first (the common case; the leftmost column wins, as in SQL), then SQLite's
    /// case-insensitive rule.
    func index(of name: String) -> Int? {
        if let exact {
            if let index = exact[name] { return index }
        } else {
            let fingerprint = Self.fingerprint(name)
            for index in fingerprints.indices where fingerprints[index] == fingerprint && names[index] == name {
                return index
            }
        }
        let lowered = name.lowercased()
        return names.firstIndex { $0.lowercased() == lowered }
    }
}
