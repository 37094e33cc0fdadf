/// A failure reported by PostgreSQL or libpq, with libpq's message: a connection that cannot be
/// made or was lost, a statement the server refused.
///
/// ``PostgresSyncStore`` throws it; ``SyncService`` answers such a failure with 500 `internal`
/// and leaves the message to the request log. Messages name SQL, never bound values: the
/// connection asks for terse errors, without the DETAIL that would quote a failing row.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What libpq said, on one line.
    public let message: String
    /// The five-character SQLSTATE code PostgreSQL gave, when it gave one
    /// (<https://www.postgresql.org/docs/15/errcodes-appendix.html>).
    public let sqlState: String?
    /// The statement that failed, when one did; its values are never part of it.
    public let sql: String?
    /// Whether the connection was lost (the server went away, or the session was terminated):
    /// the work is retried once on a new connection when it is safe to.
    public let connectionLost: Bool
    /// Whether the connection was lost while COMMIT was on its way, so that the transaction may
    /// or may not have committed.
    var commitOutcomeUnknown = false

    init(_ message: String, sqlState: String? = nil, sql: String? = nil, connectionLost: Bool = false) {
        // libpq's messages end with a newline and sometimes span lines: a log line keeps one.
        self.message = message.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        self.sqlState = sqlState
        self.sql = sql
        self.connectionLost = connectionLost
    }

    /// The message, the SQLSTATE and the statement.
    public var description: String {
        var text = "PostgreSQL: \(message)"
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let sql { text += " in `\(sql.split(whereSeparator: \.isWhitespace).joined(separator: " "))`" }
        return text
    }
}
