import CLibPQ
import Foundation

/// One libpq connection (`PGconn`) and the statements prepared on it. Used by one thread at a
/// time: ``PostgresConnectionPool`` lends it out.
final class PostgresConnection {
    private let handle: OpaquePointer
    /// The names of the statements prepared in this session.
    private var prepared: Set<String> = []

    /// Connects to `url` (a `postgresql://` URL or a `key=value` connection string).
    ///
    /// - Throws: ``PostgresError`` with libpq's reason when the server cannot be reached or
    ///   refuses the connection.
    init(url: String) throws {
        // Defaults first: what the URL itself says comes later and wins. A connection attempt
        // gives up after 10 s instead of hanging on an address that never answers.
        let keywords = ["connect_timeout", "fallback_application_name", "client_encoding", "dbname", nil]
        let values = ["10", "serialdb-sync-server", "UTF8", url, nil]
        let connection = try withCStrings(keywords) { keywords in
            try withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else { throw PostgresError("cannot connect: libpq is out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError("cannot connect: \(message)", connectionLost: true)
        }
        handle = connection
        // PostgreSQL's notices ("relation already exists, skipping") would go to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // Errors without their DETAIL, HINT and CONTEXT: those quote values ("Failing row
        // contains (...)", "Key (key)=(...) already exists"), and the message reaches the
        // request log and the status page, which never show a row's value.
        PQsetErrorVerbosity(handle, PQERRORS_TERSE)
        // Left to choose, PostgreSQL keeps planning the fetches anew at every execution (their
        // generic plan is costed above the custom ones), and planning grows with the table:
        // at a million rows it took longer than running the plan. The generic plans use the
        // same indexes (PostgresPlanTests holds every statement to them under both kinds).
        // PostgreSQL 11 and older have no such setting and plan as they always did.
        if PQserverVersion(handle) >= 120_000 {
            try execute("SET plan_cache_mode = force_generic_plan")
        }
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection is gone: it cannot be used again.
    var isBroken: Bool { PQstatus(handle) != CONNECTION_OK }

    /// Runs constant SQL, one statement or several, without parameters (`PQexec`): transaction
    /// control and the schema.
    @discardableResult
    func execute(_ sql: String) throws -> PostgresResult {
        try check(PQexec(handle, sql), sql: sql)
    }

    /// Runs a prepared statement (preparing it first in this session) with `values` as its
    /// parameters, in text format; `nil` is NULL.
    @discardableResult
    func run(_ statement: PostgresStatement, _ values: [String?]) throws -> PostgresResult {
        if !prepared.contains(statement.name) {
            _ = try check(
                PQprepare(handle, statement.name, statement.sql, Int32(values.count), nil), sql: statement.sql)
            prepared.insert(statement.name)
        }
        return try withCStrings(values) { pointers in
            try check(
                PQexecPrepared(handle, statement.name, Int32(values.count), pointers, nil, nil, 0), sql: statement.sql)
        }
    }

    /// Runs `body` in a transaction opened by `begin`: committed when it returns, rolled back
    /// when it throws.
    ///
    /// - Throws: what `body` threw; a ``PostgresError`` whose `commitOutcomeUnknown` is set when
    ///   the connection was lost while COMMIT was on its way.
    func transaction<T>(_ begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
        try execute(begin)
        let value: T
        do {
            value = try body()
        } catch {
            // The failure is what the caller needs to know; the transaction is gone either way
            // (a lost connection has no transaction left to roll back).
            if !isBroken { _ = try? execute("ROLLBACK") }
            throw error
        }
        do {
            try execute("COMMIT")
        } catch var error as PostgresError {
            error.commitOutcomeUnknown = error.connectionLost
            throw error
        }
        return value
    }

    /// Turns a result into ``PostgresResult``, or its failure into ``PostgresError``.
    private func check(_ result: OpaquePointer?, sql: String) throws -> PostgresResult {
        guard let result else {
            throw PostgresError(String(cString: PQerrorMessage(handle)), sql: sql, connectionLost: isBroken)
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = String(cString: PQresultErrorMessage(result))
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            PQclear(result)
            throw PostgresError(
                message.isEmpty ? String(cString: PQerrorMessage(handle)) : message, sqlState: sqlState, sql: sql,
                connectionLost: isBroken)
        }
        return PostgresResult(result)
    }
}

/// Calls `body` with C copies of `strings` (`nil` stays a null pointer), freed afterwards.
///
/// - Throws: ``PostgresError`` when a string holds a NUL character: PostgreSQL text cannot
///   store one, and a C string would silently end there.
private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) throws -> R) throws -> R {
    if strings.contains(where: { $0?.utf8.contains(0) == true }) {
        throw PostgresError("a value holds a NUL character, which PostgreSQL text cannot store")
    }
    let copies = strings.map { $0.flatMap { strdup($0) } }
    defer { for copy in copies { free(copy) } }
    return try body(copies.map { $0.map { UnsafePointer($0) } })
}
