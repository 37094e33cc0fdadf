import CSQLite
import Foundation

/// One SQLite connection.
///
/// You normally receive a `Database` inside a ``DatabaseQueue`` block and use it only there.
/// It is not `Sendable`: a connection must be used by one thread at a time, and the queue is
/// what guarantees that. A standalone `Database` is for tools and single-threaded programs.
///
/// ```swift
/// try queue.inDatabase { db in
///     try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: ["Ann", 10])
///     let count = try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player")
/// }
/// ```
///
/// See <https://www.sqlite.org/c3ref/sqlite3.html>.
public final class Database {
    /// How the connection was opened.
    public let configuration: Configuration
    /// The file path, or `":memory:"`.
    public let path: String
    /// The `sqlite3` handle, for calls SerialDB does not wrap. Do not close it.
    // Unchecked exclusivity: every statement reads it (the transaction guard, `isClosed`), and
    // the run-time check of those reads cost about 150 instructions per empty read
    // transaction. Accesses cannot overlap: it is only ever read or assigned whole (never
    // passed inout), by the one thread that uses the connection at a time.
    @exclusivity(unchecked)
    public private(set) var handle: OpaquePointer?

    /// Statements prepared by `execute` and `fetch*`, keyed by SQL.
    private var statementCache: [String: Statement] = [:]
    private static let statementCacheLimit = 512
    /// The cached statement used last and its SQL, checked before `statementCache`: loops run
    /// the same SQL again and again, and comparing a string with itself (the same literal, or
    /// equal bytes) costs a fraction of hashing it for the dictionary.
    private var recentSQL = ""
    private var recentStatement: Statement?
    /// BEGIN / COMMIT / ROLLBACK, prepared once: every queue call runs them. Indexed by
    /// ``TransactionStatement/slot``: a dictionary keyed by the enum hashed its String raw value
    /// on every BEGIN and COMMIT, which cost a tenth of an empty transaction.
    /// Unchecked exclusivity: the run-time check cost more than a third of what this connection
    /// adds to an empty transaction, and accesses cannot overlap (`run` reads the statement
    /// into a local before executing it, and the connection is used by one thread at a time).
    /// Unmanaged: each is retained once when prepared and released by `close()` (which `deinit`
    /// calls), so that running one borrows it without a retain and a release, four atomic
    /// operations per transaction. Nothing can release one while it runs: only `close()` does,
    /// and BEGIN, COMMIT and ROLLBACK call no code of the library's users.
    @exclusivity(unchecked)
    private var transactionStatements = [Unmanaged<Statement>?](
        repeating: nil, count: TransactionStatement.allCases.count)
    /// Depth of read-only blocks; statements that write are refused while positive.
    var readOnlyDepth = 0
    /// The functions and collations registered on this connection, the latest of each name
    /// last, so that a scratch connection can be given the same (``addRegistrations(of:)``).
    var registeredFunctions: [DatabaseFunction] = []
    var registeredCollations: [DatabaseCollation] = []
    /// The connection's one authorizer, shared by transaction-control refusal, read tracking
    /// for observations and schema-change watching.
    let authorizer = DatabaseAuthorizer()
    /// Depth of savepoints opened by `inSavepoint(_:)`, to name them uniquely.
    private var savepointDepth = 0
    // Three hooks that a higher layer sets and this connection calls back: `isCancelled`
    // (the serializer, while an async block runs), `willClose` (the queue or pool that owns the
    // connection) and `progressObserver` (the migrator or applySchemaChange's caller). A field
    // is simpler than a context passed through every execute and fetch; the connection names
    // only closure types, and whoever sets a hook restores it when its block ends.

    /// Set by the queue while an async block runs, so cancellation is seen between statements.
    var isCancelled: (@Sendable () -> Bool)?
    /// True while a block runs inside a transaction that SerialDB opened for it (`inTransaction`,
    /// `read`, `write`, `inSavepoint`, a migration step): every statement then checks that the
    /// transaction is still open (`sqlite3_get_autocommit`, one load of a connection field), so
    /// that none runs in autocommit after SQLite ended the transaction by itself.
    private var guardsTransaction = false
    /// The error after which SQLite ended the guarded transaction, reported with every
    /// statement refused after it.
    private var transactionEndCause: DatabaseError?
    /// Set by the queue that owns the connection; called by `close()` before the handle is
    /// freed, so the queue forgets the handle first, whoever closes it.
    var willClose: (() -> Void)?
    /// Set by the migrator while a step runs; receives ``reportProgress(completed:total:)``.
    var progressObserver: ((Int, Int) -> Void)?
    private var traceBox: TraceBox?

    /// Opens (and by default creates) a database file, or an in-memory database for `":memory:"`.
    ///
    /// The connection is set up from `configuration`: busy timeout, journal mode (files only),
    /// `synchronous`, foreign keys, then ``Configuration/prepareDatabase``.
    ///
    /// - Parameters:
    ///   - path: a file path, or `":memory:"`.
    ///   - configuration: how to open and set up the connection.
    /// - Throws: ``DatabaseError``; `SQLITE_NOTADB` when the file is not a SQLite database
    ///   (it is left untouched), `SQLITE_CANTOPEN` when it cannot be opened.
    ///   See <https://www.sqlite.org/c3ref/open.html>.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        var flags =
            configuration.readOnly
            ? SQLITE_OPEN_READONLY
            : SQLITE_OPEN_READWRITE | (configuration.createsMissingFile ? SQLITE_OPEN_CREATE : 0)
        // The queue serializes all use of the connection, so SQLite's own mutex is redundant.
        flags |= SQLITE_OPEN_NOMUTEX
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, flags, configuration.vfsName)
        guard code == SQLITE_OK, let connection else {
            let error = DatabaseError.fromConnection(connection, code: code)
            sqlite3_close(connection)
            throw DatabaseError(
                extendedResultCode: error.extendedResultCode,
                message: "cannot open database at \(path): \(error.message)")
        }
        handle = connection
        do {
            try setUp()
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    private func setUp() throws {
        guard let handle else { return }
        sqlite3_extended_result_codes(handle, 1)
        // Clamped, never trapping: more than SQLite's Int32 milliseconds (24 days) means "as
        // long as SQLite can wait"; the former `seconds * 1000` overflowed for huge durations.
        let milliseconds = min(max(configuration.busyTimeout / .milliseconds(1), 0), Double(Int32.max))
        sqlite3_busy_timeout(handle, Int32(milliseconds))
        // Read the schema first: a file that is not a database fails here, before any
        // pragma could write to it.
        do {
            _ = try fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw DatabaseError(
                extendedResultCode: error.extendedResultCode,
                message: "\(path) is not a SQLite database (\(error.message)). SerialDB left it untouched: "
                    + "check the path, or move the file away if it is not needed.")
        }
        if let trace = configuration.trace {
            installTrace(trace)
        }
        if let journalMode = configuration.journalMode, !configuration.readOnly && !isInMemory {
            let mode = try fetchOne(String.self, sql: "PRAGMA journal_mode = " + journalMode.rawValue)
            guard mode?.uppercased() == journalMode.rawValue else {
                throw SerialDBError(
                    .invalidArguments,
                    "\(path) could not switch to journal mode \(journalMode.rawValue) "
                        + "(it stays \(mode ?? "unknown")). Close other connections to it and retry.")
            }
        }
        try execute(sql: "PRAGMA synchronous = " + configuration.synchronous.rawValue)
        try execute(sql: "PRAGMA foreign_keys = " + (configuration.foreignKeysEnabled ? "ON" : "OFF"))
        try configuration.prepareDatabase?(self)
    }

    /// Whether this is an in-memory database.
    public var isInMemory: Bool {
        guard let handle else { return path == ":memory:" || path.isEmpty }
        let filename = sqlite3_db_filename(handle, "main")
        return filename == nil || filename!.pointee == 0
    }

    /// Closes the connection. Cached statements are finalized first; statements you prepared
    /// yourself must be released before, or SQLite defers the close until they are
    /// (`sqlite3_close_v2`). Later use fails with ``SerialDBError/Code/closed``.
    /// Calling it twice is harmless.
    public func close() {
        guard let handle else { return }
        willClose?()
        statementCache.removeAll()
        recentStatement = nil
        for statement in transactionStatements { statement?.release() }
        transactionStatements = [Unmanaged<Statement>?](repeating: nil, count: TransactionStatement.allCases.count)
        if traceBox != nil {
            sqlite3_trace_v2(handle, 0, nil, nil)
            traceBox = nil
        }
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Whether `close()` has run.
    public var isClosed: Bool { handle == nil }

    func openHandle() throws -> OpaquePointer {
        guard let handle else {
            throw SerialDBError(.closed, "The database \(path) is closed. Open a new connection to use it.")
        }
        return handle
    }

    // MARK: - Statements

    /// Compiles one statement that belongs to you alone.
    ///
    /// - Throws: ``DatabaseError`` for SQL that does not compile; ``SerialDBError`` when
    ///   `sql` holds more than one statement (use ``execute(sql:arguments:)`` for scripts).
    ///   See <https://www.sqlite.org/c3ref/prepare.html>.
    public func makeStatement(sql: String) throws -> Statement {
        let handle = try openHandle()
        return try sql.withCString { start in
            var statementHandle: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(handle, start, -1, 0, &statementHandle, &tail)
            guard code == SQLITE_OK else { throw error(code: code, sql: sql) }
            guard let statementHandle else {
                throw SerialDBError(.invalidArguments, "The SQL holds no statement: `\(sql)`.")
            }
            let statement = Statement(database: self, handle: statementHandle, sql: sql)
            if let tail, !Self.isBlank(tail) {
                throw SerialDBError(
                    .invalidArguments,
                    "`\(sql)` holds more than one statement. Prepare them one by one, or use execute(sql:).")
            }
            return statement
        }
    }

    /// A statement from the connection's cache, compiled on first use.
    ///
    /// Cached statements are shared: do not hold one across another call that may run the
    /// same SQL (a nested fetch of the same query would reset it).
    public func cachedStatement(sql: String) throws -> Statement {
        if let recentStatement, sql == recentSQL { return recentStatement }
        if let statement = statementCache[sql] {
            remember(statement, sql: sql)
            return statement
        }
        let statement = try makeStatement(sql: sql)
        cache(statement, sql: sql)
        return statement
    }

    private func cache(_ statement: Statement, sql: String) {
        if statementCache.count >= Self.statementCacheLimit {
            // Generated SQL must not grow the cache without bound; recompiling is cheap.
            statementCache.removeAll(keepingCapacity: true)
        }
        statementCache[sql] = statement
        remember(statement, sql: sql)
    }

    private func remember(_ statement: Statement, sql: String) {
        recentSQL = sql
        recentStatement = statement
    }

    /// Runs one or several statements separated by semicolons.
    ///
    /// Positional arguments are consumed in order across the statements; named arguments are
    /// shared by all of them.
    ///
    /// ```swift
    /// try db.execute(sql: """
    ///     CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
    ///     INSERT INTO player(name, score) VALUES (?, ?);
    ///     """, arguments: ["Ann", 10])
    /// ```
    ///
    /// - Throws: ``DatabaseError`` for the first statement that fails (the ones before it have
    ///   run); ``SerialDBError`` for arguments that do not match.
    ///   See <https://www.sqlite.org/c3ref/exec.html>.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        if let recentStatement, sql == recentSQL {
            return try recentStatement.execute(arguments: arguments)
        }
        if let statement = statementCache[sql] {
            remember(statement, sql: sql)
            return try statement.execute(arguments: arguments)
        }
        let handle = try openHandle()
        var positional = arguments.positional[...]
        try sql.withCString { start in
            var current: UnsafePointer<CChar>? = start
            while let cursor = current, cursor.pointee != 0 {
                var statementHandle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v3(handle, cursor, -1, 0, &statementHandle, &tail)
                guard code == SQLITE_OK else { throw error(code: code, sql: sql) }
                current = tail
                guard let statementHandle else { continue }  // only whitespace or a comment
                let isWholeSQL = cursor == start && (tail.map(Self.isBlank) ?? true)
                let text = isWholeSQL ? sql : Self.text(from: cursor, to: tail)
                let statement = Statement(database: self, handle: statementHandle, sql: text)
                if isWholeSQL {
                    // One statement: cache it, and it consumes all the arguments.
                    cache(statement, sql: sql)
                    positional = []
                    return try statement.execute(arguments: arguments)
                }
                if arguments.named.isEmpty {
                    let count = min(Int(statement.parameterCount), positional.count)
                    try statement.execute(arguments: StatementArguments(Array(positional.prefix(count))))
                    positional = positional.dropFirst(count)
                } else {
                    try statement.execute(arguments: arguments)
                }
            }
        }
        if !positional.isEmpty {
            throw SerialDBError(
                .invalidArguments,
                "\(positional.count) argument(s) left over after running every statement of `\(sql)`. "
                    + "Pass one value per `?`.")
        }
    }

    private static func isBlank(_ text: UnsafePointer<CChar>) -> Bool {
        var pointer = text
        while pointer.pointee != 0 {
            switch pointer.pointee {
            case 32, 9, 10, 13, 59: pointer += 1  // space, tab, newlines, semicolon
            default: return false
            }
        }
        return true
    }

    private static func text(from start: UnsafePointer<CChar>, to end: UnsafePointer<CChar>?) -> String {
        guard let end else { return String(cString: start) }
        let count = end - start
        // A statement of a script reads as written, without the `;` that separates it from
        // the next one.
        return start.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: ";")))
    }

    /// Called before a statement runs: refuses writes in read-only blocks, statements of a
    /// block whose transaction is gone, and work whose async task was cancelled. Unless one
    /// fails, each check is a load and a branch (`sqlite3_get_autocommit` reads one field).
    func checkCanRun(_ statement: Statement) throws {
        if readOnlyDepth > 0 {
            try checkReadOnlyBlockMayRun(statement)
        }
        if guardsTransaction, let handle, sqlite3_get_autocommit(handle) != 0 {
            throw transactionEndedError(refusing: statement.sql)
        }
        if let isCancelled, isCancelled(), !onlyEndsOrUndoesWork(statement) {
            throw SerialDBError(.cancelled, "The task was cancelled; `\(statement.sql)` did not run.")
        }
    }

    /// Runs `body` with the transaction that is open now guarded: a statement that finds it
    /// gone throws ``SerialDBError/Code/transactionAborted`` instead of running in autocommit.
    func guardingTransaction<T>(_ body: () throws -> T) rethrows -> T {
        let wasGuarding = beginGuard()
        defer { endGuard(wasGuarding: wasGuarding) }
        return try body()
    }

    /// Starts guarding the transaction that is open now; returns whether it was guarded
    /// already, to give to ``endGuard(wasGuarding:)``.
    func beginGuard() -> Bool {
        let wasGuarding = guardsTransaction
        guardsTransaction = true
        return wasGuarding
    }

    /// Leaves the guard as ``beginGuard()`` found it.
    func endGuard(wasGuarding: Bool) {
        guardsTransaction = wasGuarding
        // Tested first: assigning nil releases the old value's fields whether or not there is one.
        if !wasGuarding && transactionEndCause != nil { transactionEndCause = nil }
    }

    /// The error for `sql`, refused because the guarded transaction is gone.
    func transactionEndedError(refusing sql: String?) -> SerialDBError {
        let refused = sql.map { "`\($0)` did not run and " } ?? ""
        if let cause = transactionEndCause {
            return SerialDBError(
                .transactionAborted,
                "The transaction was aborted: SQLite rolled it back by itself when `\(cause.sql ?? "a statement")` "
                    + "failed with SQLite error \(cause.resultCode), so \(refused)nothing of this block is "
                    + "committed. Let that error end the block, or run the work again in a new transaction.",
                underlying: cause)
        }
        return SerialDBError(
            .transactionAborted,
            "The transaction was aborted: a statement of the block ended it (COMMIT, END, ROLLBACK or RELEASE), so "
                + "\(refused)the block cannot go on outside its transaction. Do not end the block's transaction "
                + "yourself; nest with inSavepoint.")
    }

    /// In a read-only block, refuses a statement that writes or a pragma that assigns.
    ///
    /// `sqlite3_stmt_readonly` decides, with two corrections for pragmas: `PRAGMA journal_mode`
    /// without an argument only reads, though SQLite marks it as writing (the query shares its
    /// opcode with the assignment); and a pragma given a value assigns, though SQLite marks
    /// some of them read-only (`PRAGMA foreign_keys = OFF`).
    private func checkReadOnlyBlockMayRun(_ statement: Statement) throws {
        // Only pragmas pay for parsing: other statements start with another keyword.
        guard let pragma = PragmaStatement(sql: statement.sql) else {
            if statement.isReadOnly { return }
            throw SerialDBError(
                .writeInReadOnlyBlock,
                "`\(statement.sql)` writes, but it runs inside a read-only block. Use write or inTransaction.")
        }
        if pragma.isQuery && (statement.isReadOnly || pragma.name == "journal_mode") { return }
        throw SerialDBError(
            .writeInReadOnlyBlock,
            "`\(statement.sql)` \(pragma.argument == nil ? "runs" : "assigns") the pragma \(pragma.name), which "
                + "a read-only block does not allow; pragma queries without a value are allowed. Run it in "
                + "write or inDatabase.")
    }

    /// Whether `statement` can only end or undo work, so that a cancelled task may still run it:
    /// ROLLBACK (also TO a savepoint) always; COMMIT, END and RELEASE while the transaction
    /// has written nothing, so that they commit nothing.
    private func onlyEndsOrUndoesWork(_ statement: Statement) -> Bool {
        guard let first = SQLTokenizer.tokenize(statement.sql).first, first.kind == .word else { return false }
        switch first.normalized {
        case "rollback":
            return true
        case "commit", "end", "release":
            guard let handle else { return true }
            return sqlite3_txn_state(handle, nil) != SQLITE_TXN_WRITE
        default:
            return false
        }
    }

    // MARK: - State

    /// Rows changed by the last INSERT, UPDATE or DELETE. See <https://www.sqlite.org/c3ref/changes.html>.
    public var changesCount: Int {
        guard let handle else { return 0 }
        return Int(clamping: sqlite3_changes64(handle))  // clamped where Int has 32 bits
    }

    /// Rows changed since the connection opened. See <https://www.sqlite.org/c3ref/total_changes.html>.
    public var totalChangesCount: Int {
        guard let handle else { return 0 }
        return Int(clamping: sqlite3_total_changes64(handle))
    }

    /// Whether the open transaction holds foreign-key violations its COMMIT would refuse:
    /// deferred ones (`DEFERRABLE INITIALLY DEFERRED`, `PRAGMA defer_foreign_keys = ON`) not
    /// resolved yet. A counter SQLite keeps, so it costs nothing to ask; `PRAGMA
    /// foreign_key_check` names the rows. See <https://www.sqlite.org/c3ref/c_dbstatus_options.html>
    /// (`SQLITE_DBSTATUS_DEFERRED_FKS`).
    public var hasUnresolvedForeignKeys: Bool {
        guard let handle else { return false }
        var current: Int32 = 0
        var highwater: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highwater, 0)
        return current != 0
    }

    /// The rowid of the last successful INSERT. See <https://www.sqlite.org/c3ref/last_insert_rowid.html>.
    public var lastInsertedRowID: Int64 {
        guard let handle else { return 0 }
        return sqlite3_last_insert_rowid(handle)
    }

    /// Whether the main database has a table with this name (case-insensitive, as in SQL).
    public func tableExists(_ name: String) throws -> Bool {
        try fetchOne(
            Int.self, sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND lower(name) = lower(?)",
            arguments: [name]) != nil
    }

    /// Whether a transaction is open. See <https://www.sqlite.org/c3ref/get_autocommit.html>.
    public var isInsideTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// A handle another thread may use to interrupt this connection while it is open.
    var interruptHandle: InterruptHandle? { handle.map(InterruptHandle.init) }

    /// Makes the running statement fail with `SQLITE_INTERRUPT` as soon as possible.
    /// ``DatabaseQueue/interrupt()`` does the same from any thread.
    /// See <https://www.sqlite.org/c3ref/interrupt.html>.
    public func interrupt() {
        if let handle { sqlite3_interrupt(handle) }
    }

    /// Runs `block` with writes refused: any statement that is not read-only throws
    /// ``SerialDBError/Code/writeInReadOnlyBlock`` before it runs.
    public func readOnly<T>(_ block: () throws -> T) rethrows -> T {
        readOnlyDepth += 1
        defer { readOnlyDepth -= 1 }
        return try block()
    }

    // MARK: - Errors

    func error(code: Int32, sql: String? = nil) -> DatabaseError {
        noteTransactionEnd(DatabaseError.fromConnection(handle, code: code, sql: sql))
    }

    func error(code: Int32, statement: Statement) -> DatabaseError {
        var arguments: String?
        if configuration.publicStatementArguments, let expanded = sqlite3_expanded_sql(statement.handle) {
            arguments = String(cString: expanded)
            sqlite3_free(expanded)
        }
        return noteTransactionEnd(
            DatabaseError.fromConnection(
                handle, code: code, sql: statement.sql, arguments: arguments.map { "(expanded: \($0))" }))
    }

    /// Remembers `error` as the reason the guarded transaction is gone, when SQLite ended it
    /// while failing (only errors pay for this check).
    private func noteTransactionEnd(_ error: DatabaseError) -> DatabaseError {
        if guardsTransaction, transactionEndCause == nil, let handle, sqlite3_get_autocommit(handle) != 0 {
            transactionEndCause = error
        }
        return error
    }

    // MARK: - Trace

    private func installTrace(_ trace: @escaping @Sendable (String) -> Void) {
        guard let handle else { return }
        let box = TraceBox(trace: trace, expanded: configuration.publicStatementArguments)
        traceBox = box
        sqlite3_trace_v2(
            handle, UInt32(SQLITE_TRACE_STMT),
            { _, context, statement, _ in
                guard let context, let statement else { return 0 }
                let box = Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue()
                box.report(statement: OpaquePointer(statement))
                return 0
            }, Unmanaged.passUnretained(box).toOpaque())
    }

    // MARK: - Transaction statements

    enum TransactionStatement: String, CaseIterable {
        case beginDeferred = "BEGIN DEFERRED TRANSACTION"
        case beginImmediate = "BEGIN IMMEDIATE TRANSACTION"
        case beginExclusive = "BEGIN EXCLUSIVE TRANSACTION"
        case commit = "COMMIT TRANSACTION"
        case rollback = "ROLLBACK TRANSACTION"

        /// The statement's place in `transactionStatements`.
        var slot: Int {
            switch self {
            case .beginDeferred: return 0
            case .beginImmediate: return 1
            case .beginExclusive: return 2
            case .commit: return 3
            case .rollback: return 4
            }
        }
    }

    /// Runs BEGIN, COMMIT or ROLLBACK. They are private to the connection and always reset
    /// after use, so they need no reset before, and have no parameters.
    ///
    /// Every queue call runs two of them, so the common case is one straight line: when the
    /// statement is prepared and none of ``checkCanRun(_:)``'s checks can refuse it (no
    /// read-only block, no async task to be cancelled, the guarded transaction still open),
    /// it is stepped and reset right here. Everything else takes the general path, which
    /// prepares on first use and runs the checks. The straight line cost 100 instructions less
    /// per statement than the general path (two calls, the checks, a `defer`).
    @inline(__always)
    func run(_ kind: TransactionStatement) throws {
        guard readOnlyDepth == 0, isCancelled == nil, let statement = transactionStatements[kind.slot],
            let handle, !guardsTransaction || sqlite3_get_autocommit(handle) == 0
        else { return try runChecked(kind) }
        let statementHandle = statement._withUnsafeGuaranteedRef { $0.handle }
        let code = sqlite3_step(statementHandle)
        guard code == SQLITE_DONE else { throw failure(code: code, of: statement) }
        sqlite3_reset(statementHandle)
    }

    /// ``run(_:)`` through the general path: prepared on first use, checked by
    /// ``checkCanRun(_:)``.
    @inline(never)
    private func runChecked(_ kind: TransactionStatement) throws {
        if let statement = transactionStatements[kind.slot] {
            return try statement._withUnsafeGuaranteedRef { try $0.runToCompletion(checkedBy: self) }
        }
        let statement = try makeStatement(sql: kind.rawValue)
        transactionStatements[kind.slot] = Unmanaged.passRetained(statement)
        try statement.runToCompletion(checkedBy: self)
    }

    /// The error of a transaction statement that failed in ``run(_:)``'s straight line, read
    /// before the statement is reset (as ``Statement/step()`` does), which then holds no lock.
    @inline(never)
    private func failure(code: Int32, of statement: Unmanaged<Statement>) -> DatabaseError {
        statement._withUnsafeGuaranteedRef { statement in
            let failure = error(code: code, statement: statement)
            sqlite3_reset(statement.handle)
            return failure
        }
    }

    var nextSavepointName: String {
        "serialdb_savepoint_\(savepointDepth)"
    }

    func enterSavepoint() { savepointDepth += 1 }
    func leaveSavepoint() { savepointDepth -= 1 }
}

/// Keeps the trace closure alive for SQLite's C callback.
private final class TraceBox {
    let trace: @Sendable (String) -> Void
    let expanded: Bool

    init(trace: @escaping @Sendable (String) -> Void, expanded: Bool) {
        self.trace = trace
        self.expanded = expanded
    }

    func report(statement: OpaquePointer) {
        if expanded, let text = sqlite3_expanded_sql(statement) {
            trace(String(cString: text))
            sqlite3_free(text)
        } else if let text = sqlite3_sql(statement) {
            trace(String(cString: text))
        }
    }
}
